"""The run_script tool: a short JavaScript program that chains catalog calls, run in the sandbox.

Every run first calls the whoami function with the caller's credentials, so a caller the API does not accept
never takes a script slot, then asks the caller policy whether scripts are the caller's (the operator's `allow`
hook). The policy bounds how many scripts one caller runs at once (`Limits.scripts_per_caller`, claimed before
the whoami call). The script's `api` object lists the caller's own functions only, and its calls go through the
gateway's Dispatcher with the caller's REST headers, so visibility, validation, auth and timeouts are the same as
call_function's; the sandbox never sees credentials.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from catalog.model import Function
from gateway.arguments import oversized
from gateway.errors import ConfigError, LimitError, RestError, ToolError
from gateway.flags import cli
from gateway.mcp.progress import report as report_progress
from gateway.mcp.toolspec import TextContent, ToolResult, ToolSpec
from gateway.observability import observe_script
from gateway.policy import CallerPolicy, ScriptRules
from gateway.requests import RestContext
from gateway.rest.dispatcher import Dispatcher, decode_body
from gateway.tools.catalog_resources import TYPES_URI
from gateway.types import ErrorHook, RestContextFor
from sandbox import CallError, Sandbox, ScriptFailure, ScriptLimits, ScriptResult
from sandbox.errors import BusyError, SourceError
from sandbox.language import LANGUAGE

__all__ = ["AllowHook", "ScriptConfig", "ScriptTool"]

AllowHook = Callable[[Any], bool | Awaitable[bool]]
"""Decides from the caller's whoami answer (decoded JSON) whether it may run scripts; sync or async."""


TOOL_NAME = "run_script"
#: Room kept in the tool's output for the failure text and the console header around the result.
_OUTPUT_MARGIN = 600


@dataclass(frozen=True, kw_only=True)
class ScriptConfig:
    """Turns on run_script. The defaults: read-only functions only, every caller whoami accepts, ScriptLimits().

    `allow_writes` lets scripts call functions that change data. `allow` limits scripts to some callers, e.g.
    `allow=lambda me: me.get("role") == "admin"`.
    """

    allow_writes: bool = field(
        default=False,
        metadata=cli(
            "let scripts call functions that change data (implies --scripts)",
            name="scripts-allow-writes",
            env="SCRIPTS_ALLOW_WRITES",
        ),
    )
    allow: AllowHook | None = None
    limits: ScriptLimits = field(default_factory=ScriptLimits)

    def __post_init__(self) -> None:
        if not isinstance(self.allow_writes, bool):
            raise ConfigError(f"ScriptConfig.allow_writes must be True or False, got {self.allow_writes!r}")
        if self.allow is not None and not callable(self.allow):
            raise ConfigError(f"ScriptConfig.allow must be a function of the whoami answer, got {self.allow!r}")
        if not isinstance(self.limits, ScriptLimits):
            raise ConfigError(f"ScriptConfig.limits must be a sandbox.ScriptLimits, got {self.limits!r}")


class ScriptTool:
    """The run_script tool of one gateway: its spec, its runner, and the sandbox it owns."""

    def __init__(
        self,
        *,
        config: ScriptConfig,
        dispatcher: Dispatcher,
        rest_context: RestContextFor,
        whoami: str,
        max_output_bytes: int,
        on_error: ErrorHook | None = None,
    ) -> None:
        self.config = config
        self.dispatcher = dispatcher
        self.rest_context = rest_context
        self.on_error = on_error
        self.max_output_bytes = max_output_bytes
        try:
            self.whoami = dispatcher.function(whoami)
        except ToolError:
            raise ConfigError(f"whoami: the catalog has no function {whoami!r}; run_script needs one") from None
        limits = config.limits
        result_cap = max(min(limits.max_result_bytes, max_output_bytes - _OUTPUT_MARGIN), 256)
        self.limits = replace(limits, max_result_bytes=result_cap)
        functions = dispatcher.catalog.functions()
        arguments = {function.name: argument_names(function) for function in functions}
        self.sandbox = Sandbox(
            [function.name for function in functions],
            self.limits,
            arguments={name: names for name, names in arguments.items() if names is not None},
        )
        self.spec = _spec(config, self.limits)
        #: What the caller policy needs to know of scripts: the tool, writes, and the `allow` hook.
        self.rules = ScriptRules(tool=TOOL_NAME, allow_writes=config.allow_writes, allow=config.allow)

    async def start(self) -> None:
        """Warm the sandbox's worker processes."""
        await self.sandbox.start()

    async def aclose(self) -> None:
        """Stop the sandbox's worker processes."""
        await self.sandbox.aclose()

    async def __call__(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        """Run the script in `args["code"]` for `caller`."""
        context = await self.rest_context(caller.request)
        try:
            lease = caller.run_script()
        except LimitError as error:
            raise ToolError(str(error)) from None
        with lease:
            await caller.identity()  # a caller the API does not accept is refused here, with whoami's answer
            if not await caller.may_run_scripts():
                raise ToolError("run_script is not enabled for this caller; use call_function for each call instead")
            functions = caller.function_names if caller.policy.visibility.active else None
            try:
                calls = self._caller_for(context, caller)
                result = await self.sandbox.run(args["code"], calls, report=self._report, functions=functions)
            except (SourceError, BusyError) as error:
                raise ToolError(str(error)) from None
        observe_script(result)
        return render(result, self.max_output_bytes)

    async def identify(self, caller: CallerPolicy) -> Any:
        """The caller's whoami answer, for the caller policy; ToolError saying what to fix when whoami fails."""
        return await self._whoami(await self.rest_context(caller.request))

    async def _whoami(self, context: RestContext) -> Any:
        name = self.whoami.name
        try:
            outcome = await self.dispatcher.call(self.whoami, {}, context)
            return outcome.value if outcome.response is None else decode_body(outcome.response, function=self.whoami)
        except RestError as error:
            raise ToolError(
                f"run_script needs credentials the API accepts, and {name} answered HTTP {error.status}; "
                "connect with a valid token (Authorization: Bearer ...) and try again"
            ) from None
        except ToolError as error:
            raise ToolError(f"run_script could not check who is calling ({name} failed: {error})") from None

    def _caller_for(
        self, context: RestContext, caller: CallerPolicy
    ) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
        """The sandbox's function caller: the Dispatcher with this context, reaching only the caller's functions
        (others are unknown, and no suggestion names a hidden one), writes only where the policy allows them."""

        async def call(name: str, args: dict[str, Any]) -> Any:
            try:
                function = caller.function(name)
            except ToolError as error:
                raise CallError(str(error)) from None
            refusal = caller.script_refusal(function)
            if refusal is not None:
                raise CallError(refusal)
            # The bounds a tool call's arguments meet at the endpoint, for the calls that enter here instead.
            too_big = oversized(args, caller.policy.limits)
            if too_big is not None:
                raise CallError(f"Invalid arguments for {function.name}: {too_big}.")
            try:
                return await _call(self.dispatcher, function, args, context)
            finally:
                await report_progress(f"run_script called {function.name}")

        return call

    async def _report(self, error: Exception) -> None:
        if self.on_error is not None:
            await self.on_error(TOOL_NAME, error)


async def _call(dispatcher: Dispatcher, function: Function, args: dict[str, Any], context: RestContext) -> Any:
    try:
        outcome = await dispatcher.call(function, args, context)
        if outcome.response is None:
            return outcome.value
        body = decode_body(outcome.response, function=function)
    except RestError as error:
        raise CallError(str(error), status=error.status, body=error.body) from None
    except ToolError as error:
        raise CallError(str(error)) from None
    if isinstance(body, bytes):
        media = outcome.response.content_type or "binary data"
        raise CallError(
            f"{function.name} returned {len(body)} bytes of {media}, which a script cannot use; "
            "call it with call_function instead"
        )
    return body


def argument_names(function: Function) -> tuple[str, ...] | None:
    """The argument names call_function accepts for `function` (its input schema's properties), or None when it
    accepts others too (a composite whose schema allows more)."""
    if function.composite is None:
        return tuple(dict.fromkeys(arg.name for arg in function.args))
    schema = function.composite.input_schema
    properties = schema.get("properties")
    if schema.get("additionalProperties") is not False or not isinstance(properties, dict):
        return None
    return tuple(properties)


def _spec(config: ScriptConfig, limits: ScriptLimits) -> ToolSpec:
    reach = (
        "Scripts may call any function, including ones that change data."
        if config.allow_writes
        else "Scripts may call only read-only functions; make changes with call_function."
    )
    description = (
        f"Run a short JavaScript program ({LANGUAGE}) that calls API functions and returns only what you need: "
        "filter, join and aggregate data without passing every response through the conversation.\n"
        "- `await api.<module>.<function>({...args})` or `await call('module.function', {...args})` calls a "
        "function with your credentials and returns its parsed JSON. A failed call throws an Error with "
        "`status` and `body`, which you can catch.\n"
        "- `await callAll([{name, args}, ...])` runs calls concurrently; results (or Error objects) in order.\n"
        "- `console.log(...)` lines come back after the result.\n"
        "- The result is the value of a top-level `return`, or else of the last expression; objects come back "
        "as JSON. Top-level await works. There is no network, file, timer or module access.\n"
        f"Limits: {limits.timeout:g} s, {limits.max_calls} calls, a {limits.max_result_bytes}-byte result. {reach} "
        "Find functions with search_functions and their arguments with describe_function first; its format "
        f"'typescript' (all functions: the resource {TYPES_URI}) declares `api` in TypeScript, and a call of a "
        "function or argument that does not exist is refused before the script runs."
    )
    return ToolSpec(
        name=TOOL_NAME,
        title="Run a script",
        description=description,
        input_schema={
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "JavaScript; e.g. const o = await api.orders.list_orders({status: 'paid'}); "
                    "o.items.length",
                }
            },
            "required": ["code"],
            "additionalProperties": False,
        },
        read_only=not config.allow_writes,
        destructive=config.allow_writes,
        idempotent=False,
        open_world=True,
    )


def render(result: ScriptResult, max_output_bytes: int) -> ToolResult:
    """The tool result: the result (or the failure) first, then the console lines, cut to the output cap.

    The cut falls on the console lines: the result cap keeps the result itself under the output cap.
    """
    if result.failure is not None:
        head = _failure_text(result.failure)
    elif result.value is None and result.text == "":
        head = "(no result: end the script with an expression, or return a value)"
    else:
        head = result.text
    if result.logs or result.dropped_logs:
        more = f", {result.dropped_logs} more not kept" if result.dropped_logs else ""
        head += f"\n\n--- console ({len(result.logs)} lines{more}) ---\n" + "\n".join(result.logs)
    encoded = head.encode()
    if len(encoded) > max_output_bytes:
        note = "\n… [output cut at the size limit]"
        head = encoded[: max_output_bytes - len(note.encode())].decode("utf-8", "ignore") + note
    return ToolResult(content=(TextContent(text=head),), is_error=result.failure is not None)


def _failure_text(failure: ScriptFailure) -> str:
    where = f" (line {failure.line})" if failure.line else ""
    message = failure.message.rstrip()
    if not message.endswith((".", "!", "?")):
        message += "."
    if failure.kind == "syntax":
        return f"The script does not compile{where}: {failure.name}: {message} Fix it and run it again."
    if failure.kind == "refused":
        return (
            f"The script was not run: {message} describe_function with format 'typescript' gives the functions' "
            f"exact names and arguments (all of them: the resource {TYPES_URI})."
        )
    if failure.kind != "error":
        return f"The script failed: {message}"
    lines = [f"The script threw {failure.name}{where}: {message}"]
    if failure.status is not None:
        lines.append(f"status: {failure.status}")
    if failure.body is not None:
        body = json.dumps(failure.body, ensure_ascii=False)
        lines.append(f"body: {body[:2000]}" + ("…" if len(body) > 2000 else ""))
    if failure.stack and "\n" in failure.stack:
        lines.append("stack:\n  " + failure.stack.replace("\n", "\n  "))
    lines.append("Catch errors with try/catch to handle them in the script.")
    return "\n".join(lines)
