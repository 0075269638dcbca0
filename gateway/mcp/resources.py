"""MCP resources an endpoint serves read-only: fixed resources and URI templates, listed in pages, read by URI.

`Resource` is one fixed URI; `ResourceTemplate` a family of URIs (`catalog://functions/{name}`, RFC 6570 simple
expansions only), each variable with the candidates completion/complete offers. Either may be `offered` only to
some clients (MCP Apps views to clients that render them): to the others it does not exist. `ResourceSet` holds both: it
lists every fixed resource and every instance a template names (`ResourceTemplate.entries`), reads a URI by exact
match first and then by template, and raises `RequestError` (JSON-RPC -32602, the URI in `data`, SEP-2164) for a
URI it does not serve. No MCP SDK types in here: `gateway.mcp.endpoint` turns these into the wire shapes.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import quote, unquote

from gateway.errors import ConfigError, RequestError
from gateway.mcp.listing import PAGE_SIZE, Completion, complete, page
from gateway.policy import CallerPolicy

__all__ = [
    "Resource",
    "ResourceContents",
    "ResourceEntry",
    "ResourceSet",
    "ResourceTemplate",
    "expand",
]

_VARIABLE: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_URI: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


def expand(uri_template: str, values: Mapping[str, str]) -> str:
    """The URI `uri_template` names for `values`, each percent-encoded as RFC 6570 simple expansion does."""
    return _VARIABLE.sub(lambda match: quote(values[match[1]], safe=""), uri_template)


@dataclass(frozen=True, kw_only=True)
class ResourceContents:
    """What reading a resource gives: text or bytes, with its URI and media type."""

    uri: str
    mime_type: str
    text: str | None = None
    blob: bytes | None = None
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ConfigError(f"resource {self.uri!r}: contents are text or a blob, exactly one of them")


@dataclass(frozen=True, kw_only=True)
class ResourceEntry:
    """One resource as resources/list shows it."""

    uri: str
    name: str
    title: str
    description: str
    mime_type: str


def _check_uri(uri: str) -> None:
    if not _URI.match(uri):
        raise ConfigError(f"resource URI {uri!r} is not a URI (scheme://path, no spaces), e.g. 'catalog://overview'")


#: Whether the client of the request being served is offered a resource (None: every client is).
Offered = Callable[[], bool] | None


@dataclass(frozen=True, kw_only=True)
class Resource(ResourceEntry):
    """A fixed resource: `read(caller)` gives its text (str) or bytes, as the caller may see it; `meta` is its
    contents' `_meta`."""

    read: Callable[[CallerPolicy], Awaitable[str | bytes]] = field(repr=False)
    offered: Offered = field(default=None, repr=False)
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _check_uri(self.uri)


@dataclass(frozen=True, kw_only=True)
class ResourceTemplate:
    """URIs of one shape: `read(values, caller)` reads the one `values` (the variables, decoded) name.

    `read` raises `RequestError` for values that name nothing (or nothing the caller sees). `complete` maps
    variables to the candidates completion/complete offers a caller for them (by prefix); `entries` lists the
    instances resources/list shows a caller.
    """

    uri_template: str
    name: str
    title: str
    description: str
    mime_type: str
    read: Callable[[Mapping[str, str], CallerPolicy], Awaitable[str | bytes]] = field(repr=False)
    complete: Mapping[str, Callable[[CallerPolicy], Sequence[str]]] = field(default_factory=dict, repr=False)
    entries: Callable[[CallerPolicy], Sequence[ResourceEntry]] | None = field(default=None, repr=False)
    offered: Offered = field(default=None, repr=False)
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        variables = self.variables
        if not variables:
            raise ConfigError(f"resource template {self.uri_template!r} has no {{variable}}; make it a Resource")
        if len(set(variables)) != len(variables):
            raise ConfigError(f"resource template {self.uri_template!r} names a variable twice")
        rest = _VARIABLE.sub("x", self.uri_template)
        if "{" in rest or "}" in rest:
            raise ConfigError(
                f"resource template {self.uri_template!r}: only simple {{name}} variables are supported (RFC 6570 "
                "level 1)"
            )
        _check_uri(rest)
        unknown = sorted(set(self.complete) - set(variables))
        if unknown:
            raise ConfigError(
                f"resource template {self.uri_template!r}: complete names {', '.join(unknown)}, which are not its "
                f"variables ({', '.join(variables)})"
            )

    @property
    def variables(self) -> tuple[str, ...]:
        """The template's variable names, in order."""
        return tuple(_VARIABLE.findall(self.uri_template))

    def match(self, uri: str) -> dict[str, str] | None:
        """The decoded variables of `uri` when this template names it, else None."""
        parts = _VARIABLE.split(self.uri_template)
        pattern = "".join(
            re.escape(part) if index % 2 == 0 else f"(?P<{part}>[^/?#]+)" for index, part in enumerate(parts)
        )
        found = re.fullmatch(pattern, uri)
        if found is None:
            return None
        return {name: unquote(value) for name, value in found.groupdict().items()}


class ResourceSet:
    """The resources and resource templates of one endpoint; construction refuses duplicates with ConfigError."""

    def __init__(
        self,
        resources: Sequence[Resource] = (),
        templates: Sequence[ResourceTemplate] = (),
        *,
        page_size: int = PAGE_SIZE,
    ) -> None:
        if page_size < 1:
            raise ConfigError(f"page_size must be at least 1, got {page_size!r}")
        self._resources: dict[str, Resource] = {}
        for resource in resources:
            if not isinstance(resource, Resource):
                raise ConfigError(f"resources must be Resource values, got {resource!r}")
            if resource.uri in self._resources:
                raise ConfigError(f"resource URI {resource.uri!r} is given twice; URIs are unique")
            self._resources[resource.uri] = resource
        self._templates: dict[str, ResourceTemplate] = {}
        for template in templates:
            if not isinstance(template, ResourceTemplate):
                raise ConfigError(f"templates must be ResourceTemplate values, got {template!r}")
            if template.uri_template in self._templates:
                raise ConfigError(f"resource template {template.uri_template!r} is given twice")
            self._templates[template.uri_template] = template
        self.page_size = page_size

    def resources(self) -> tuple[Resource, ...]:
        """The fixed resources offered to the client of the request being served, in order."""
        return tuple(resource for resource in self._resources.values() if _offered(resource.offered))

    def templates(self) -> tuple[ResourceTemplate, ...]:
        """The resource templates offered to the client of the request being served, in order."""
        return tuple(template for template in self._templates.values() if _offered(template.offered))

    def entries(self, caller: CallerPolicy) -> tuple[ResourceEntry, ...]:
        """Everything resources/list shows `caller`, in order: the fixed resources, then each template's instances."""
        listed: list[ResourceEntry] = list(self.resources())
        for template in self.templates():
            if template.entries is not None:
                listed.extend(template.entries(caller))
        return tuple(listed)

    def list_page(self, cursor: str | None, caller: CallerPolicy) -> tuple[Sequence[ResourceEntry], str | None]:
        """One page of `entries(caller)` and the next page's cursor; RequestError for a cursor this set did not
        give."""
        return page(self.entries(caller), cursor, self.page_size)

    def templates_page(self, cursor: str | None) -> tuple[Sequence[ResourceTemplate], str | None]:
        """One page of the templates and the next page's cursor."""
        return page(self.templates(), cursor, self.page_size)

    async def read(self, uri: str, caller: CallerPolicy) -> ResourceContents:
        """The contents of `uri` for `caller`: a fixed resource, else the first template that names it;
        RequestError if none."""
        resource = self._resources.get(uri)
        if resource is not None and _offered(resource.offered):
            return _contents(uri, resource.mime_type, await resource.read(caller), resource.meta)
        for template in self.templates():
            values = template.match(uri)
            if values is not None:
                try:
                    body = await template.read(values, caller)
                except RequestError as error:
                    raise RequestError(str(error), data={"uri": uri, **error.data}) from None
                return _contents(uri, template.mime_type, body, template.meta)
        served = ", ".join([*(r.uri for r in self.resources()), *(t.uri_template for t in self.templates())][:8])
        raise RequestError(
            f"resource {uri!r} not found; this server serves {served or 'no resources'} "
            "(resources/list and resources/templates/list show them all)",
            data={"uri": uri},
        )

    def complete(self, uri_template: str, variable: str, value: str, caller: CallerPolicy) -> Completion:
        """Candidates for `caller` for `variable` of the template `uri_template` that start with `value`.

        RequestError for a template this set does not have or a variable it does not name; a variable without
        candidates completes to nothing.
        """
        template = self._templates.get(uri_template)
        if template is None or not _offered(template.offered):
            listed = ", ".join(t.uri_template for t in self.templates()) or "none"
            raise RequestError(
                f"no resource template {uri_template!r}; the templates are {listed}", data={"uri": uri_template}
            )
        if variable not in template.variables:
            raise RequestError(
                f"resource template {uri_template!r} has no variable {variable!r}; its variables are "
                f"{', '.join(template.variables)}",
                data={"uri": uri_template, "argument": variable},
            )
        candidates = template.complete.get(variable)
        return complete(candidates(caller) if candidates is not None else (), value)


def _offered(offered: Offered) -> bool:
    return offered is None or offered()


def _contents(uri: str, mime_type: str, body: str | bytes, meta: Mapping[str, Any] | None) -> ResourceContents:
    if isinstance(body, bytes):
        return ResourceContents(uri=uri, mime_type=mime_type, blob=body, meta=meta)
    return ResourceContents(uri=uri, mime_type=mime_type, text=body, meta=meta)
