"""`Engine`: runs one script in a fresh QuickJS context inside a worker process. The only module that touches
the QuickJS binding.

The script's source becomes the body of an async function (so top-level `await` and `return` work, and the
last expression is returned; see `sandbox._source`). The engine drives the guest's job queue itself: it runs
pending jobs, drains what the guest queued (calls, console lines, its outcome), sends the calls to the host
through a `HostLink`, waits for answers and settles the guest's promises with them, until the script has an
outcome or the deadline passes.

QuickJS's own limits are the first line: a heap limit, a stack limit, and a CPU-time limit set before every
entry into the guest to a share of the time left. A regular expression or another native builtin can run past
that limit (QuickJS checks it only between bytecodes), which is why the host kills the worker at the deadline.

The guest never calls into Python, and every string crossing the boundary is JSON text: what comes out was
made by the guest's captured `JSON.stringify` (unpaired surrogates arrive escaped), what goes in is ASCII. The
binding cannot take other strings safely. Nor can it return a rope (QuickJS-ng keeps a long concatenation as
one until something flattens it): the driver flattens what it returns with `String()`.

Setting a context up (the prelude: `api`, `call`, the driver) costs ten times an empty script's run, so the
engine builds the next run's context ahead, while the worker waits for its next script (`prepare`): a fresh
context no script has touched, which the next run takes with its own deadline. A run may see fewer functions
than the engine was given (a caller's view of the catalog): the context is then built for exactly those names,
and one built ahead for other names is never used for it, so `api` holds nothing the caller may not see.

The binding is `quickjs-ng` (QuickJS-ng 0.17): it runs ES2024 and stops a runaway regular expression at its
CPU limit too, which QuickJS 2021 (the `quickjs` 1.x package) did not; bench/engine_compare.py measures both.
`sandbox.language` says what the run_script description promises of it, and checks every word of it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

# The binding's extension module, not the `quickjs` wrapper package: the wrapper imports concurrent.futures and
# logging (about 100 ms of every worker's start-up) for a thread pool the sandbox does not use. Same API.
import _quickjs  # type: ignore[import-not-found]

from sandbox._prelude import PRELUDE, REMOVED_GLOBALS
from sandbox._source import with_implicit_return
from sandbox.results import DEEP_BODY

__all__ = ["Engine", "EngineLimits", "HostLink", "Outcome", "OutcomeKind", "Reply", "binding"]

OutcomeKind = Literal["json", "text", "undefined", "error", "syntax", "result", "timeout", "memory", "stalled"]
"""What a run ended with: a value (json, text, undefined) or a failure."""

#: Share of the time left that QuickJS's CPU limit gets per entry; its check overshoots, the host kill does not.
_ENGINE_SHARE = 0.8
#: Seconds a context's set-up (the prelude) may take when built ahead of its run.
_PREPARE_SECONDS = 5.0
#: Seconds before the deadline within which a stalled guest counts as timed out.
_DEADLINE_SLACK = 0.05
#: Caps on the error info a script sends back, so an error cannot smuggle a large payload past the result cap.
_MAX_MESSAGE_CHARS = 2_000
_MAX_STACK_CHARS = 2_000
_VALUE_KINDS = ("json", "text", "undefined")
#: InternalError messages that mean the script ran out of memory: the heap, or the longest string QuickJS-ng
#: makes (doubling a string reaches it first, because concatenation makes ropes, which take little memory).
_MEMORY_MESSAGES = ("out of memory", "string too long")
_ERROR_KINDS = ("error", "syntax", "result")


@dataclass(frozen=True, kw_only=True)
class EngineLimits:
    """The limits the engine enforces inside the worker (the host enforces them again on its side)."""

    memory_bytes: int
    stack_bytes: int
    max_calls: int
    max_arg_bytes: int
    max_result_bytes: int
    max_log_lines: int
    max_log_bytes: int


@dataclass(frozen=True, kw_only=True)
class Reply:
    """The host's answer to call `id`: the value as JSON text when `ok`, else the error info as JSON text."""

    id: int
    ok: bool
    text: str


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """How a run ended: `text` is the result's JSON text, or the error info's, depending on `kind`."""

    kind: OutcomeKind
    text: str
    calls: int
    dropped_logs: int

    @property
    def ok(self) -> bool:
        """True when the script produced a result."""
        return self.kind in _VALUE_KINDS


class HostLink(Protocol):
    """The worker's side of the pipe to the host, as the engine needs it."""

    def call(self, call_id: int, name: str, args_json: str) -> None:
        """Ask the host to run catalog function `name` with the JSON arguments; the answer comes as a Reply."""

    def log(self, line: str) -> None:
        """Pass one console line on to the host."""

    def next_reply(self, timeout: float) -> Reply | None:
        """The next answer from the host, or None when none arrived within `timeout` seconds."""


class _Deadline(Exception):
    """The run's time is up."""


def binding() -> str:
    """Which QuickJS binding `_quickjs` is: "quickjs-ng", or "quickjs 1.x" (the older package, which ships a module
    of the same name and whose engine lacks much of what `sandbox.language` promises)."""
    return "quickjs-ng" if _quickjs.Context().eval("typeof Object.groupBy") == "function" else "quickjs 1.x"


class Engine:
    """Runs scripts one at a time, each in a fresh QuickJS context that sees only the given catalog functions."""

    def __init__(self, functions: Sequence[str], limits: EngineLimits) -> None:
        self._names = json.dumps(list(functions), ensure_ascii=True)
        self._limits = limits
        self._limits_json = json.dumps(
            {
                "maxCalls": limits.max_calls,
                "maxArgBytes": limits.max_arg_bytes,
                "maxLogLines": limits.max_log_lines,
                "maxLogBytes": limits.max_log_bytes,
            },
            ensure_ascii=True,
        )
        #: The names JSON of the last selection given (see `_names_of`), and that selection.
        self._selected: tuple[tuple[str, ...], str] | None = None
        #: The next run's context, set up ahead by `prepare` for the names JSON it holds, and its driver.
        self._ready: tuple[str, _Guest, Any] | None = None
        #: Contexts and drivers done with (the last run's, one set up for other names), freed by `release` once the
        #: run's outcome has left.
        self._spent: list[tuple[_Guest, Any]] = []

    def prepare(self, functions: tuple[str, ...] | None = None) -> None:
        """Free the last run's context and build the next run's now, for a run that sees `functions` (None: all
        the engine's), unless one is ready for them: a worker calls this while it waits for work."""
        self.release()
        names = self._names_of(functions)
        if self._ready is not None and self._ready[0] != names:
            self._ready = None
        if self._ready is None:
            guest = _Guest(time.monotonic() + _PREPARE_SECONDS, self._limits)
            self._ready = (names, guest, _set_up(guest, names, self._limits_json))

    def run(self, source: str, timeout: float, link: HostLink, functions: tuple[str, ...] | None = None) -> Outcome:
        """Run `source` until it finishes or `timeout` seconds pass; the outcome, never a script's exception.

        The script's `api` and `call` reach `functions` (None: all the engine's functions) and no other name.
        The context built by `prepare` is used when it was built for the same functions (its set-up does not
        count against `timeout`); otherwise the run sets one up first, within `timeout`."""
        names = self._names_of(functions)
        ready, self._ready = self._ready, None
        if ready is not None and ready[0] != names:
            # Set up for another selection: its `api` lists other names, so it must not serve this run.
            self._spent.append(ready[1:])
            ready = None
        deadline = time.monotonic() + timeout
        guest = ready[1] if ready is not None else _Guest(deadline, self._limits)
        guest.deadline = deadline
        run = _Run(link, self._limits, guest)
        control = ready[2] if ready is not None else None
        try:
            if control is None:
                control = _set_up(guest, names, self._limits_json)
            return run.drive(source, control)
        except _Deadline:
            return run.outcome("timeout", "null")
        except _quickjs.JSException as error:
            return run.escaped(str(error))
        finally:
            run.guest.close()
            # Freeing the context costs a third of an empty script's run: done by `release` (and `prepare`),
            # once the worker has sent the outcome. The guest is closed, so nothing runs in it before then.
            self._spent.append((guest, control))

    def release(self) -> None:
        """Free the contexts done with, kept alive since so that the last run's outcome could leave first."""
        self._spent.clear()

    def _names_of(self, functions: tuple[str, ...] | None) -> str:
        """The names JSON the prelude takes for a run that sees `functions`; made once per selection in a row."""
        if functions is None:
            return self._names
        if self._selected is None or self._selected[0] is not functions:
            self._selected = (functions, json.dumps(list(functions), ensure_ascii=True))
        return self._selected[1]


def _set_up(guest: _Guest, names: str, limits: str) -> Any:
    """Strip the globals scripts do not get and run the prelude in `guest`; the driver's `control`."""
    for name in REMOVED_GLOBALS:
        guest.enter(guest.context.eval, f"delete globalThis.{name}")
    return guest.enter(guest.enter(guest.context.eval, PRELUDE), names, limits)


class _Guest:
    """One fresh QuickJS context, entered only with its CPU limit set to a share of the time left."""

    def __init__(self, deadline: float, limits: EngineLimits) -> None:
        self.deadline = deadline
        self.memory_bytes = limits.memory_bytes
        self.context: Any = _quickjs.Context()
        self.context.set_memory_limit(limits.memory_bytes)
        self.context.set_max_stack_size(limits.stack_bytes)
        #: An entry ran for its whole CPU limit: an interrupt, which the guest may have turned into a rejection.
        self.interrupted = False

    def left(self) -> float:
        """Seconds until the deadline, at least 0."""
        return max(self.deadline - time.monotonic(), 0.0)

    def enter(self, function: Any, *args: object) -> Any:
        """Call into the guest; what it returned. _Deadline when no time is left."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Deadline
        limit = max(left * _ENGINE_SHARE, 0.001)
        self.context.set_time_limit(limit)
        started = time.monotonic()
        try:
            return function(*args)
        finally:
            self.interrupted = self.interrupted or time.monotonic() - started >= limit

    def pump(self) -> None:
        """Run pending jobs (promise reactions) until none is left."""
        while self.enter(self.context.execute_pending_job):
            pass

    def stalled(self) -> OutcomeKind:
        """Why a script that awaits with no call outstanding stopped: time, memory, or a promise never settled."""
        # An interrupt near the deadline may surface as a job that simply stopped; within the last moments of the
        # run that is the deadline's doing, not a promise left unsettled.
        if self.interrupted or self.left() <= _DEADLINE_SLACK:
            return "timeout"
        if self.context.memory().get("malloc_size", 0) >= self.memory_bytes * 3 // 4:
            return "memory"
        return "stalled"

    def close(self) -> None:
        """Drop the context, and with it every object of the run."""
        self.context = None


class _Run:
    """One script: the guest, the calls it has outstanding, and the counts the host is told about."""

    def __init__(self, link: HostLink, limits: EngineLimits, guest: _Guest) -> None:
        self.link = link
        self.limits = limits
        self.guest = guest
        self.calls = 0
        self.outstanding: set[int] = set()
        self.log_lines = 0
        self.log_bytes = 0
        self.dropped_logs = 0

    def drive(self, source: str, control: Any) -> Outcome:
        guest = self.guest
        guest.enter(control, "start", with_implicit_return(source), source)
        while True:
            guest.pump()
            done = self.drain(guest.enter(control, "drain"))
            if done is not None:
                return done
            if not self.outstanding:
                return self.outcome(guest.stalled(), "null")
            reply = self.link.next_reply(guest.left())
            if reply is None:
                raise _Deadline
            if reply.id in self.outstanding:
                self.outstanding.discard(reply.id)
                guest.enter(control, "settle", reply.id, reply.ok, reply.text)

    def drain(self, text: object) -> Outcome | None:
        """Pass on what the guest queued; its outcome when it has one.

        The driver writes the batch; should it be malformed anyway (the script broke a builtin the driver
        uses), the run ends as the script's error, never as a broken worker.
        """
        try:
            batch: Any = json.loads(text) if isinstance(text, str) else {}
            dropped, logs, calls, outcome = batch["dropped"], batch["logs"], batch["calls"], batch["outcome"]
            lines = [str(line) for line in logs]
            queued = [(int(call_id), str(name), str(args_json)) for call_id, name, args_json in calls]
            if outcome is not None:
                ok, kind, payload = outcome
        except (ValueError, TypeError, KeyError, RecursionError):
            info = {"name": "Error", "message": "the script broke the sandbox's driver (did it change a builtin?)"}
            return self.outcome("error", json.dumps(info))
        self.dropped_logs += int(dropped or 0)
        for line in lines:
            self.log(line)
        for call_id, name, args_json in queued:
            self.calls += 1
            if self.calls > self.limits.max_calls:
                continue  # the guest counts too; a call past the budget never leaves the worker
            self.outstanding.add(call_id)
            self.link.call(call_id, name, args_json)
        if outcome is None:
            return None
        return self.finished(ok is True, str(kind), str(payload))

    def log(self, line: str) -> None:
        encoded = line.encode("utf-8", "replace")
        if self.log_lines >= self.limits.max_log_lines or self.log_bytes + len(encoded) > self.limits.max_log_bytes:
            self.dropped_logs += 1
            return
        self.log_lines += 1
        self.log_bytes += len(encoded)
        self.link.log(line)

    def finished(self, ok: bool, kind: str, payload: str) -> Outcome:
        if ok and kind in _VALUE_KINDS:
            # A text counts as its text, not as the JSON string it travels in.
            size = len((_text_of(payload) if kind == "text" else payload).encode("utf-8", "replace"))
            if size > self.limits.max_result_bytes:
                return self.outcome("result", _result_too_large(size, self.limits.max_result_bytes))
            return self.outcome(kind, payload)  # type: ignore[arg-type]
        info = _capped_info(payload, self.limits.max_result_bytes)
        failure: OutcomeKind = kind if kind in _ERROR_KINDS else "error"  # type: ignore[assignment]
        if info["name"] == "InternalError" and info["message"] in _MEMORY_MESSAGES:
            failure = "memory"
        elif info["name"] == "InternalError" and info["message"] == "interrupted":
            failure = "timeout"
        return self.outcome(failure, json.dumps(info, ensure_ascii=True))

    def outcome(self, kind: OutcomeKind, text: str) -> Outcome:
        """An outcome with this run's counts."""
        return Outcome(kind=kind, text=text, calls=self.calls, dropped_logs=self.dropped_logs)

    def escaped(self, message: str) -> Outcome:
        """The outcome of an exception that escaped the guest (the prelude catches the script's own)."""
        first, _, stack = message.partition("\n")
        if first.endswith("interrupted"):
            return self.outcome("timeout", "null")
        if first.endswith(_MEMORY_MESSAGES):
            return self.outcome("memory", "null")
        name, _, text = first.partition(": ")
        info = {"name": name or "Error", "message": text[:_MAX_MESSAGE_CHARS], "stack": stack[:_MAX_STACK_CHARS]}
        return self.outcome("error", json.dumps(info, ensure_ascii=True))


def _result_too_large(size: int, limit: int) -> str:
    message = (
        f"the result is {size} bytes, over the {limit}-byte limit; return only what is needed "
        "(filter, aggregate, or slice it)"
    )
    return json.dumps({"name": "RangeError", "message": message}, ensure_ascii=True)


def _capped_info(text: str, max_bytes: int) -> dict[str, Any]:
    """The error info the guest sent, with message and stack cut and a body that does not fit dropped."""
    try:
        info = json.loads(text)
    except (ValueError, RecursionError):
        info = None
    if not isinstance(info, dict):
        return {"name": "Error", "message": "the script threw an error that cannot be described", "stack": ""}
    capped: dict[str, Any] = {
        "name": str(info.get("name", "Error"))[:100],
        "message": str(info.get("message", ""))[:_MAX_MESSAGE_CHARS],
        "stack": str(info.get("stack", ""))[:_MAX_STACK_CHARS],
    }
    status = info.get("status")
    if isinstance(status, int) and not isinstance(status, bool):
        capped["status"] = status
    if isinstance(info.get("function"), str):
        capped["function"] = info["function"][:200]
    if "body" in info:
        try:
            if len(json.dumps(info["body"], ensure_ascii=True)) <= max_bytes:
                capped["body"] = info["body"]
        except (ValueError, RecursionError):
            capped["body"] = DEEP_BODY
    return capped


def _text_of(payload: str) -> str:
    """The text a text result's JSON string stands for."""
    try:
        text = json.loads(payload)
    except ValueError:
        return payload
    return text if isinstance(text, str) else payload
