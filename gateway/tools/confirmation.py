"""Calls that wait for a person's approval (`Effects.approval`), in two ways, by what the client declares.

Without MCP Apps, the first call_function (or promoted tool) call of such a function runs nothing: it answers
what would happen (function, HTTP method and path, effect, arguments) and asks the agent to put it to the person,
then to call again with the same arguments and `confirmation`, a one-time handle bound to caller, function and
arguments. With MCP Apps (`gateway.mcp.capabilities`), the first call answers `awaiting_approval`, the handle in
the result's `_meta` (`io.modelcontextprotocol/approval`), which the client hands its app and never the model; the
app then calls `approve_call` (with the arguments the person approved, maybe changed) or `cancel_call`, tools
listed to such clients alone. run_script refuses these functions (the caller policy's `script_refusal`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from catalog.model import Function
from gateway.errors import ToolError
from gateway.mcp.capabilities import renders_ui
from gateway.mcp.toolspec import TextContent, ToolResult, ToolSpec
from gateway.policy import CallerPolicy
from gateway.rest.dispatcher import Dispatcher

if TYPE_CHECKING:
    # The store machinery (and OAuth's outage watch) loads with approval only: building a gateway without it, as
    # `snapshot check` does, imports neither.
    from gateway.tools.approvals import Approvals, Handle

__all__ = [
    "APPROVAL_META",
    "APPROVE_TOOL",
    "CANCEL_TOOL",
    "CONFIRMATION",
    "Confirmation",
    "Run",
    "app_tool_specs",
    "confirmation_property",
    "effect_of",
]

APPROVAL_META: Final = "io.modelcontextprotocol/approval"
"""The result `_meta` key of a call awaiting approval in a form: `{"handle": ..., "expiresAt": ...}`."""
APPROVE_TOOL: Final = "approve_call"
CANCEL_TOOL: Final = "cancel_call"
CONFIRMATION: Final = "confirmation"
"""The argument of call_function and promoted tools that carries a person's approval, relayed by the agent."""

Run = Callable[[Function, Mapping[str, Any]], Awaitable[ToolResult]]
"""Runs a call of the function with these arguments (validated) and answers as the tool does."""

_APP_ONLY: Final = {"ui": {"visibility": ["app"]}}


def confirmation_property() -> dict[str, Any]:
    """The JSON Schema of the `confirmation` argument."""
    return {
        "type": "string",
        "description": "Only after a person approved this exact call: the confirmation handle the first call "
        "answered. Leave it out otherwise.",
    }


def effect_of(function: Function) -> Literal["read", "write", "destructive"]:
    """What a call of `function` does, in search_functions' words."""
    if function.read_only:
        return "read"
    return "destructive" if function.destructive else "write"


def app_tool_specs() -> list[ToolSpec]:
    """approve_call and cancel_call: called by the approval form of an MCP Apps client, never by the model."""
    handle = {"type": "string", "description": "The handle of the call, from the result's _meta."}
    return [
        ToolSpec(
            name=APPROVE_TOOL,
            title="Approve a call",
            description="Run a call that waits for approval, with the arguments the person approved; answers what "
            "call_function would.",
            input_schema={
                "type": "object",
                "properties": {
                    "handle": handle,
                    "arguments": {"type": "object", "description": "The function's arguments, as approved."},
                },
                "required": ["handle", "arguments"],
                "additionalProperties": False,
            },
            read_only=False,
            destructive=True,
            idempotent=False,
            open_world=True,
            meta=_APP_ONLY,
        ),
        ToolSpec(
            name=CANCEL_TOOL,
            title="Cancel a call",
            description="Drop a call that waits for approval: nothing runs.",
            input_schema={
                "type": "object",
                "properties": {"handle": handle},
                "required": ["handle"],
                "additionalProperties": False,
            },
            read_only=False,
            destructive=False,
            idempotent=True,
            open_world=False,
            meta=_APP_ONLY,
        ),
    ]


class Confirmation:
    """The approval step of one gateway's calls: handles from `approvals`, arguments checked by `dispatcher`."""

    def __init__(self, approvals: Approvals, dispatcher: Dispatcher) -> None:
        self.approvals = approvals
        self.dispatcher = dispatcher

    async def call(
        self,
        function: Function,
        arguments: Mapping[str, Any],
        confirmation: object,
        caller: CallerPolicy,
        *,
        tool: str,
        run: Run,
    ) -> ToolResult:
        """A call of `function` (the caller's, needing approval) through `tool`: with a valid `confirmation` for
        these arguments, `run`; without one, what would happen and how to ask (nothing runs)."""
        if confirmation is not None and not isinstance(confirmation, str):
            raise ToolError(f"confirmation must be the handle string the first call answered, not {confirmation!r}")
        again = f"Call {tool} without confirmation to ask the person again."
        if confirmation is not None:
            pending = await self.approvals.pending(caller, confirmation, kind="confirmation", refusal=again)
            if pending.function != function.name:
                raise ToolError(
                    f"confirmation {confirmation!r} approves a call of {pending.function}, not {function.name}; "
                    f"nothing ran. {again}"
                )
            if not pending.approves(arguments):
                raise ToolError(
                    f"confirmation {confirmation!r} approves {function.name} with other arguments than these; nothing "
                    "ran. Call again with exactly the arguments the person approved, or, for these, call without "
                    "confirmation and ask the person about them."
                )
            self.dispatcher.validate(function, arguments)
            await self.approvals.spend(caller, pending, refusal=again)
            return await run(function, arguments)
        self.dispatcher.validate(function, arguments)  # the person is asked about a call that can run
        if renders_ui.get():
            handle = await self.approvals.issue(caller, function, arguments, kind="form")
            return _awaiting(function, arguments, handle)
        handle = await self.approvals.issue(caller, function, arguments, kind="confirmation")
        return _confirm(function, arguments, handle, tool, self.approvals.ttl)

    async def approve(self, args: Mapping[str, Any], caller: CallerPolicy, run: Run) -> ToolResult:
        """approve_call: run the form's call with the arguments the person approved, checked as any call's."""
        refusal = "Ask the agent to make the call again."
        pending = await self.approvals.pending(caller, args["handle"], kind="form", refusal=refusal)
        function = caller.function(pending.function)
        arguments = args["arguments"]
        self.dispatcher.validate(function, arguments)
        await self.approvals.spend(caller, pending, refusal=refusal)
        return await run(function, arguments)

    async def cancel(self, args: Mapping[str, Any], caller: CallerPolicy) -> ToolResult:
        """cancel_call: spend the form's handle; nothing runs."""
        refusal = "Nothing is waiting under it, so there is nothing to cancel."
        pending = await self.approvals.pending(caller, args["handle"], kind="form", refusal=refusal)
        await self.approvals.spend(caller, pending, refusal=refusal)
        return ToolResult.text(
            f"Cancelled: {pending.function} did not run.",
            structured={"status": "cancelled", "function": pending.function},
        )


def _shown(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "))


def _awaiting(function: Function, arguments: Mapping[str, Any], handle: Handle) -> ToolResult:
    """The first answer to a client that renders MCP Apps: the person is asked in a form; the handle is in `_meta`."""
    effect = effect_of(function)
    text = (
        f"Nothing has happened yet: {function.name} ({function.method} {function.path}, {effect}) needs a person's "
        f"approval, and the person is being asked in a form, where they may change the arguments "
        f"{_shown(arguments)}. The form runs the call or cancels it; do not call {function.name} again for this."
    )
    return ToolResult(
        content=(TextContent(text=text),),
        structured={
            "status": "awaiting_approval",
            "function": function.name,
            "arguments": dict(arguments),
            "effect": effect,
        },
        meta={APPROVAL_META: {"handle": handle.value, "expiresAt": handle.expires_iso}},
    )


def _confirm(function: Function, arguments: Mapping[str, Any], handle: Handle, tool: str, ttl: float) -> ToolResult:
    """The first answer to a client without MCP Apps: what would happen, and how to confirm once the person agrees."""
    effect = effect_of(function)
    what = "deletes or overwrites data" if effect == "destructive" else "changes data"
    text = (
        f"Not run: {function.name} needs a person's approval first. It {what}: {function.method} {function.path} "
        f"with the arguments {_shown(arguments)}.\n"
        f"Ask the person whether to do this, telling them what it does. If they agree, call {tool} again with "
        f'exactly the same arguments and "{CONFIRMATION}": "{handle.value}" (valid once, for {ttl / 60:g} '
        "minutes). If they do not, do not call it."
    )
    return ToolResult.text(
        text,
        structured={
            "status": "confirmation_required",
            "function": function.name,
            "method": function.method,
            "path": function.path,
            "effect": effect,
            "arguments": dict(arguments),
            CONFIRMATION: handle.value,
            "expiresAt": handle.expires_iso,
        },
    )
