"""The run_script tool: a short JavaScript program that chains catalog calls, run in the sandbox.

Every run first calls the whoami function with the caller's credentials, so a caller the API does not accept
never takes a script slot, then asks the operator's `allow` hook. Each caller runs one script at a time: a caller
is the hash of its bearer token, claimed before the whoami call, or, without a token (stdio, in-process), the
hash of its whoami answer. The script's calls go through the gateway's Dispatcher with the caller's REST
headers, so validation, auth and timeouts are the same as call_function's; the sandbox never sees credentials.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from catalog.errors import UnknownNameError, shown
from catalog.model import Function
from gateway.caller import RequestInfo, RestContext
from gateway.dispatcher import Dispatcher, decode_body
from gateway.errors import ConfigError, RestError, ToolError
from gateway.observability import observe_script
from gateway.progress import report as report_progress
from gateway.toolspec import TextContent, ToolResult, ToolSpec
from gateway.types import ErrorHook, RestContextFor
from gateway.visibility import Surface, View
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

    allow_writes: bool = False
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
        surface: Surface | None = None,
    ) -> None:
        self.config = config
        self.dispatcher = dispatcher
        self.surface = surface if surface is not None else Surface(dispatcher.catalog)
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
        self.sandbox = Sandbox([function.name for function in dispatcher.catalog.functions()], self.limits)
        self.spec = _spec(config, self.limits)
        self._running: set[str] = set()

    async def start(self) -> None:
        """Warm the sandbox's worker processes."""
        await self.sandbox.start()

    async def aclose(self) -> None:
        """Stop the sandbox's worker processes."""
        await self.sandbox.aclose()

    async def __call__(self, args: dict[str, Any], request: RequestInfo) -> ToolResult:
        """Run the script in `args["code"]` for the caller of `request`."""
        context = await self.rest_context(request)
        token = request.bearer_token
        with self._caller(_key("token", token) if token else None):
            me = await self._whoami(context)
            with self._caller(None if token else _key("whoami", json.dumps(me, sort_keys=True, default=str))):
                if not await self._allowed(me):
                    raise ToolError(
                        "run_script is not enabled for this caller; use call_function for each call instead"
                    )
                try:
                    calls = self._caller_for(context, self.surface.view(request))
                    result = await self.sandbox.run(args["code"], calls, report=self._report)
                except (SourceError, BusyError) as error:
                    raise ToolError(str(error)) from None
        observe_script(result)
        return render(result, self.max_output_bytes)

    @contextmanager
    def _caller(self, key: str | None) -> Iterator[None]:
        """Claim `key` for the run (nothing when None); ToolError when that caller already runs a script."""
        if key is None:
            yield
            return
        if key in self._running:
            raise ToolError(
                "you already have a script running; each caller runs one script at a time, so wait for its "
                "result and then run the next"
            )
        self._running.add(key)
        try:
            yield
        finally:
            self._running.discard(key)

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

    async def offered_to(self, request: RequestInfo) -> bool:
        """Whether run_script is offered to the caller of `request`: the `allow` hook (after whoami) says yes.

        Without a hook every caller is offered it; a caller whoami refuses is not (its run would fail).
        """
        if self.config.allow is None:
            return True
        try:
            me = await self._whoami(await self.rest_context(request))
        except ToolError:
            return False
        return await self._allowed(me)

    async def _allowed(self, me: Any) -> bool:
        allow = self.config.allow
        if allow is None:
            return True
        verdict = allow(me)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return verdict is True

    def _caller_for(self, context: RestContext, view: View) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
        """The sandbox's function caller: the Dispatcher with this context, read-only unless writes are allowed,
        reaching only the functions of the caller's `view` (others are unknown)."""

        async def call(name: str, args: dict[str, Any]) -> Any:
            try:
                # A function off the caller's view is unknown to it, and no suggestion names a hidden one.
                function = self.dispatcher.function(name) if view.complete else view.catalog.function(name)
            except ToolError as error:
                raise CallError(str(error)) from None
            except UnknownNameError as error:
                hint = f" Did you mean {', '.join(error.suggestions)}?" if error.suggestions else ""
                raise CallError(
                    f"Unknown function {shown(name)}.{hint} Call search_functions to find functions."
                ) from None
            if not function.read_only and not self.config.allow_writes:
                raise CallError(
                    f"{name} changes data, and scripts on this server may only call read-only functions; "
                    "call it with call_function instead"
                )
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


def _key(kind: str, value: str) -> str:
    return f"{kind}:{hashlib.sha256(value.encode('utf-8', 'replace')).hexdigest()}"


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
        "Find functions with search_functions and their arguments with describe_function first."
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
