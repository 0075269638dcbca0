"""What a run returns: `ScriptResult`, and `ScriptFailure` with messages written for the agent.

Everything here is decoded from what a worker sent, so nothing is trusted: strings are cut and their unpaired
surrogates replaced, and stack lines are mapped back to the script's own lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from sandbox._prelude import LINE_OFFSET
from sandbox.limits import ScriptLimits

__all__ = [
    "CRASHED",
    "FAILURE_KINDS",
    "RESULT_KINDS",
    "FailureKind",
    "ScriptFailure",
    "ScriptResult",
    "clean_text",
    "failure_from",
    "timeout_message",
]

FailureKind = Literal["error", "syntax", "result", "timeout", "memory", "stalled", "crashed", "refused"]
"""Why a script failed: it threw, did not compile, returned too much, ran out of time or memory, waited on a
promise nothing resolves, its worker failed, or its static calls were refused before it ran."""

#: The kinds of outcome a worker reports: a value, or a failure it detected itself.
RESULT_KINDS: frozenset[str] = frozenset({"json", "text", "undefined"})
FAILURE_KINDS: dict[str, FailureKind] = {
    "error": "error",
    "syntax": "syntax",
    "result": "result",
    "timeout": "timeout",
    "memory": "memory",
    "stalled": "stalled",
}


@dataclass(frozen=True, kw_only=True)
class ScriptFailure:
    """Why a script failed, with a message written for the agent; `name`, `status` and `body` come from the
    uncaught JS error (a call error carries the REST status and body)."""

    kind: FailureKind
    message: str
    name: str = ""
    status: int | None = None
    body: Any = None
    function: str | None = None
    stack: str = ""
    #: The line of the script the error points at, when the engine says.
    line: int | None = None


@dataclass(frozen=True, kw_only=True)
class ScriptResult:
    """What a run produced: the result (`text` as the agent reads it) or a failure, then the console lines."""

    value: Any = None
    #: The result as text: a string result as is, anything else as JSON, '' for undefined.
    text: str = ""
    failure: ScriptFailure | None = None
    logs: tuple[str, ...] = ()
    #: console lines not kept because of the caps.
    dropped_logs: int = 0
    calls: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the script finished with a result."""
        return self.failure is None


def failure_from(kind: FailureKind, payload: bytes, limits: ScriptLimits) -> ScriptFailure:
    """The failure a worker reported: its kind, and for errors the info JSON the guest sent (sanitized)."""
    if kind == "timeout":
        return ScriptFailure(kind=kind, message=timeout_message(limits))
    if kind == "memory":
        return ScriptFailure(
            kind=kind,
            message=f"the script ran out of memory (the limit is {_mib(limits)} MiB); work on less data at a time",
            name="InternalError",
        )
    if kind == "stalled":
        return ScriptFailure(
            kind=kind,
            message="the script waited for a Promise that nothing resolves (every call it made was answered); "
            "await only calls (api.*, call, callAll) and Promises the script resolves itself",
        )
    try:
        info = json.loads(payload)
    except (ValueError, RecursionError):
        info = None
    if not isinstance(info, dict):
        info = {}
    name = clean_text(str(info.get("name", "Error")))[:100]
    message = clean_text(str(info.get("message", "")))[:2000]
    if message == "the script threw null":
        # QuickJS throws null when it runs out of memory while building an error.
        message += f"; if it builds large data, it may have run out of memory ({_mib(limits)} MiB)"
    status = info.get("status") if isinstance(info.get("status"), int) else None
    function = info.get("function") if isinstance(info.get("function"), str) else None
    stack = clean_text(str(info.get("stack", "")))[:2000]
    line = _script_line(stack)
    return ScriptFailure(
        kind=kind,
        message=message,
        name=name,
        status=status,
        body=_shown_body(info.get("body")),
        function=clean_text(function) if function else None,
        stack=_script_stack(stack),
        line=line,
    )


#: What the agent reads when a worker died or broke the protocol (the details go to the error reporter).
CRASHED = (
    "the script's worker process stopped unexpectedly (the server reported it); run the script again, and if it "
    "fails the same way, make it do less at once"
)


def _mib(limits: ScriptLimits) -> str:
    return f"{limits.memory_bytes / (1024 * 1024):g}"


def timeout_message(limits: ScriptLimits) -> str:
    """What the agent reads when a script ran out of time, with what to change."""
    return (
        f"the script did not finish within {limits.timeout:g} s (the limit covers its calls too); make fewer or "
        "smaller calls, run independent calls together with callAll, and avoid long loops"
    )


_STACK_LINE = re.compile(r"<input>:(\d+)")


def _script_line(stack: str) -> int | None:
    """The first line of the script a QuickJS stack names (lines of the prelude come before LINE_OFFSET)."""
    for match in _STACK_LINE.finditer(stack):
        line = int(match.group(1)) - LINE_OFFSET
        if line > 0:
            return line
    return None


def _script_stack(stack: str) -> str:
    """The stack frames in the script, with their script lines; the prelude's frames are dropped."""
    frames = []
    for frame in stack.splitlines():
        match = _STACK_LINE.search(frame)
        if match and int(match.group(1)) > LINE_OFFSET:
            line = int(match.group(1)) - LINE_OFFSET
            frames.append(_STACK_LINE.sub(f"line {line}", frame).strip())
    return "\n".join(frames)


def clean_text(text: str) -> str:
    """`text` with unpaired surrogates (which JSON can carry from the guest) replaced by U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def clean_json(value: object) -> object:
    """`value` (read from JSON) with unpaired surrogates in its strings and keys replaced by U+FFFD.

    Raises RecursionError for a value nested too deeply to write back as JSON.
    """
    text = json.dumps(value, ensure_ascii=False)
    cleaned = clean_text(text)
    return value if cleaned == text else json.loads(cleaned)


#: What stands for an error's body nested too deeply to write as JSON.
DEEP_BODY = "(the error's body nests too deeply to show)"


def _shown_body(body: object) -> object:
    """An error's `body` as the caller may print it: clean text, and a note instead of one nested too deeply."""
    try:
        return clean_json(body)
    except RecursionError:
        return DEEP_BODY
