"""`CallGate`: what every call from one script passes on the host, whatever the worker claims.

A call reaches the caller only for a function the sandbox was given, within the script's call budget, with
arguments that are a JSON object under `max_arg_bytes`, and at most `max_parallel_calls` at once. Each refusal,
an API error, an answer over `max_response_bytes` and a crash in the caller come back as an error the script can
catch; a crash's details go to the reporter, never to the script.
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from sandbox.errors import CallError
from sandbox.limits import ScriptLimits

__all__ = ["CallGate", "ErrorReporter", "FunctionCaller", "report_failure"]

logger = logging.getLogger("sandbox")

FunctionCaller = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Runs catalog function `name` with `args` for the script: returns JSON data, or raises CallError (the script
can catch it); any other exception reaches the script as a generic error and the reporter with its details."""

ErrorReporter = Callable[[Exception], Awaitable[None]]
"""Receives failures the agent sees only as generic text: a crash in a host call, a worker that died."""

#: The longest function name an error repeats back: the name comes from the script.
_NAME_SHOWN = 200


class CallGate:
    """The calls of one script to `functions`, answered by `caller` within `limits`; `made` counts them."""

    def __init__(
        self,
        functions: tuple[str, ...],
        limits: ScriptLimits,
        caller: FunctionCaller,
        report: ErrorReporter | None = None,
    ) -> None:
        self.functions = functions
        self.limits = limits
        self.made = 0
        self._known = frozenset(functions)
        self._caller = caller
        self._report = report
        self._parallel = anyio.CapacityLimiter(limits.max_parallel_calls)

    async def perform(self, name: str, payload: bytes) -> tuple[bool, str]:
        """Check and run one call with `payload` (its arguments as JSON): (True, the answer as JSON) or
        (False, the error's JSON: message, function, and the API's status and body when it answered).
        Never raises but cancellation."""
        limits = self.limits
        if name not in self._known:
            shown = name[:_NAME_SHOWN]
            close = difflib.get_close_matches(name, self.functions)  # at most three, at least 0.6 alike
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            return _error(shown, f"Unknown function {shown!r}.{hint} Call only the catalog's functions.")
        if self.made >= limits.max_calls:
            return _error(
                name,
                f"this script already made {limits.max_calls} calls, the most one script may make; make fewer calls",
            )
        self.made += 1
        if len(payload) > limits.max_arg_bytes:
            return _error(
                name, f"the arguments of {name} are {len(payload)} bytes, over the {limits.max_arg_bytes}-byte limit"
            )
        try:
            args = json.loads(payload)
        except ValueError:
            args = None
        except RecursionError:
            return _error(name, f"the arguments of {name} nest too deeply (past about 900 levels); flatten them")
        if not isinstance(args, dict):
            return _error(name, f"the arguments of {name} must be a JSON object")
        async with self._parallel:
            try:
                value = await self._caller(name, args)
            except CallError as error:
                return _error(name, str(error), status=error.status, body=error.body, cap=limits.max_response_bytes)
            except Exception as error:
                # Boundary: a failing host call must not take the script runner down.
                logger.exception("the call to %s from a script failed", name)
                await report_failure(self._report, error)
                return _error(name, f"the call to {name} failed inside the server, which reported it; try again later")
        try:
            text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError, RecursionError) as error:
            return _error(name, f"the answer of {name} cannot be passed to a script as JSON ({error})")
        if len(text) > limits.max_response_bytes:
            return _error(
                name,
                f"{name} answered with {len(text)} bytes of JSON, over the {limits.max_response_bytes}-byte limit "
                "for one answer in a script; ask for less (a smaller limit or page size, or filters)",
            )
        return True, text


def _error(
    function: str, message: str, *, status: int | None = None, body: object = None, cap: int = 64 * 1024
) -> tuple[bool, str]:
    """(False, the error's JSON, in ASCII as the worker's pipe needs) for a call the script can catch; a `body`
    over `cap` bytes of JSON is cut to that many characters of text."""
    info: dict[str, Any] = {"message": message, "function": function}
    if status is not None:
        info["status"] = status
    if body is not None:
        try:
            text = json.dumps(body, ensure_ascii=True, allow_nan=False)
        except (TypeError, ValueError):
            text = json.dumps(str(body), ensure_ascii=True)
        info["body"] = json.loads(text) if len(text) <= cap else text[:cap]
    return False, json.dumps(info, ensure_ascii=True)


async def report_failure(report: ErrorReporter | None, error: Exception) -> None:
    """Hand `error` to `report`, or log it when there is none; a failing reporter is logged, never raised."""
    if report is None:
        logger.error("script failure: %s", error)
        return
    try:
        await report(error)
    except Exception:
        logger.exception("the sandbox's error reporter failed")
