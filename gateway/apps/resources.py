"""The views as MCP Apps resources, and the `_meta` that links tools and results to them.

Served only to clients that declare the UI extension (`gateway.mcp.capabilities`); to any other client
these resources do not exist and no tool or result mentions them.

- `ui://views/call_function`: the page call_function's definition points at (hosts read a tool's `resourceUri`
  at tools/list time, before they know which function a call names). It carries no view of its own: each
  call_function result brings its function's view in `_meta["openapi-mcp-gateway/view"]`, which hosts pass to
  the page with the result and do not show the model.
- `ui://views/{function}` (e.g. `ui://views/orders.list_orders`): the page of one function, its view inside; a
  promoted tool's definition points at its function's page. A function the caller does not see has no page
  (not found, in the same words as a function that does not exist).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

from catalog.errors import UnknownNameError
from catalog.model import Catalog, Function
from gateway.apps.page import view_page
from gateway.apps.views import View, view_of
from gateway.errors import RequestError
from gateway.mcp.capabilities import APP_MIME_TYPE, renders_ui
from gateway.mcp.resources import Resource, ResourceTemplate
from gateway.policy import CallerPolicy

__all__ = ["CALL_FUNCTION_VIEW", "VIEW_KEY", "VIEW_TEMPLATE", "AppViews"]

CALL_FUNCTION_VIEW: Final = "ui://views/call_function"
VIEW_TEMPLATE: Final = "ui://views/{function}"
#: The `_meta` key of a call_function result that carries its function's view.
VIEW_KEY: Final = "openapi-mcp-gateway/view"
#: MCP Apps resource metadata: no outside origin for anything (the page loads nothing), a border around it.
RESOURCE_META: Final = {"ui": {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": True}}


class AppViews:
    """The views of one catalog's functions; `promoted` maps promoted tool names to their functions."""

    def __init__(self, catalog: Catalog, promoted: Mapping[str, Function]) -> None:
        self.catalog = catalog
        self._tools = {function.name: tool for tool, function in promoted.items()}

    def view(self, function: Function) -> View:
        """`function`'s view (made once)."""
        return self._view(function.name)

    @functools.cache  # noqa: B019 - one per gateway, as long-lived as its catalog
    def _view(self, name: str) -> View:
        return view_of(self.catalog.function(name), tool=self._tools.get(name))

    @functools.cache  # noqa: B019
    def _page(self, name: str) -> str:
        return view_page(self._view(name))

    def tool_ui(self, tool: str) -> dict[str, Any] | None:
        """The `_meta.ui` of tool `tool`: call_function's page, or a promoted tool's function's page; else None."""
        if tool == "call_function":
            return {"resourceUri": CALL_FUNCTION_VIEW}
        for name, promoted in self._tools.items():
            if promoted == tool:
                return {"resourceUri": f"ui://views/{name}"}
        return None

    def result_meta(self, function: Function) -> dict[str, Any]:
        """The `_meta` of a call_function result of `function` for a client that renders views."""
        return {VIEW_KEY: self.view(function)}

    def resources(self) -> tuple[Resource, ...]:
        """call_function's page."""

        async def read(caller: CallerPolicy) -> str:
            return view_page(None)

        return (
            Resource(
                uri=CALL_FUNCTION_VIEW,
                name="call_function view",
                title="Results of call_function",
                description="The view hosts render call_function's results in: a table, a detail or the answer "
                "as text, with each result's function's view in the result's _meta.",
                mime_type=APP_MIME_TYPE,
                read=read,
                offered=renders_ui.get,
                meta=RESOURCE_META,
            ),
        )

    def templates(self) -> tuple[ResourceTemplate, ...]:
        """The page of each function the caller sees."""

        async def read(values: Mapping[str, str], caller: CallerPolicy) -> str:
            name = values["function"]
            try:
                function = caller.catalog.function(name)
            except UnknownNameError:
                # A hidden function and a missing one answer alike: no suggestions, which could name either.
                raise RequestError(
                    f"no view of {name!r}: the server has no such function; search_functions finds functions"
                ) from None
            return self._page(function.name)

        return (
            ResourceTemplate(
                uri_template=VIEW_TEMPLATE,
                name="function view",
                title="Results of one function",
                description="The view of one function's results (a table, a detail or the answer as text) and of "
                "its arguments as a form; promoted tools link theirs.",
                mime_type=APP_MIME_TYPE,
                read=read,
                complete={"function": lambda caller: caller.function_names},
                offered=renders_ui.get,
                meta=RESOURCE_META,
            ),
        )
