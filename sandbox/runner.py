"""`Sandbox`: run a script in a worker process, answering its calls through a callback, within every limit.

The host side enforces each rule on the way out of the guest, whatever the worker claims: each call passes a
`CallGate` (the call budget, the argument and answer caps, at most `max_parallel_calls` at a time), and the run
keeps the result cap, the console caps and the deadline. The deadline covers the whole run, calls included; at
the deadline the worker is killed and replaced.

Before a run takes a slot, `check_calls` reads its static `api.<module>.<function>({...})` calls: one of a function
the run's view lacks, or with an argument name the function does not take (`arguments`), refuses the run with a
`refused` failure naming the closest of the view's own names, and no worker is asked.

A run may see fewer functions than the sandbox has (`functions`, a caller's view of the catalog): its guest is
set up with those names alone, so a hidden function is as absent from `api` and as unknown to `call` as a name
that never existed, and its CallGate knows those names alone too, should the worker be compromised. A worker
is told its view in a `view` frame only when the view changes, and sets its next context up for its last view,
so runs that repeat a view cost what runs without one do; the pool hands a run an idle worker whose last run had
its view when there is one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from sandbox._protocol import ProtocolError, bitmap
from sandbox.calls import CallGate, ErrorReporter, FunctionCaller, report_failure
from sandbox.errors import BusyError, LimitsError, SourceError
from sandbox.limits import ScriptLimits
from sandbox.pool import Worker, WorkerCrashError, WorkerPool, WorkerSetup
from sandbox.results import (
    CRASHED,
    FAILURE_KINDS,
    RESULT_KINDS,
    ScriptFailure,
    ScriptResult,
    clean_json,
    clean_text,
    failure_from,
    timeout_message,
)
from sandbox.static_check import MAX_PROBLEMS, CallProblem, check_calls

__all__ = ["Sandbox"]

_WORKER_FAILURES = (
    ProtocolError,
    WorkerCrashError,
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
)


@dataclass(frozen=True, kw_only=True)
class _View:
    """The functions one run sees: their names in the sandbox's order, and the `view` payload that selects them."""

    functions: tuple[str, ...]
    payload: bytes


#: Views a sandbox keeps made (one per distinct set of functions its callers see), the least recent dropped first.
_VIEWS_KEPT = 64


@dataclass(kw_only=True)
class _Run:
    """Host-side accounting for one script."""

    limits: ScriptLimits
    calls: CallGate
    #: Whether the worker asked for any call (each is answered in a task of the session's task group).
    started: bool = False
    logs: list[str] = field(default_factory=list)
    log_bytes: int = 0
    dropped_logs: int = 0

    def add_log(self, payload: bytes) -> None:
        line = payload.decode("utf-8", "replace")
        size = len(line.encode())
        if len(self.logs) >= self.limits.max_log_lines or self.log_bytes + size > self.limits.max_log_bytes:
            self.dropped_logs += 1
            return
        self.logs.append(line)
        self.log_bytes += size


class Sandbox:
    """Runs scripts that see the catalog functions `functions` ("module.function" names) and nothing else.

    `arguments` gives the argument names of some functions, which a script's static calls of them are checked
    against before it runs (the others take any).

    One sandbox keeps a warm pool of `limits.max_concurrent` worker processes, started by `start()` (or the
    first run) in the running event loop; `aclose()` kills them. Use a sandbox from one event loop: used from
    another, it kills the first loop's workers without closing their pipes (asyncio warns about those) and
    starts a new pool.
    """

    def __init__(
        self,
        functions: Iterable[str],
        limits: ScriptLimits | None = None,
        *,
        arguments: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.limits = limits if limits is not None else ScriptLimits()
        if not isinstance(self.limits, ScriptLimits):
            raise LimitsError(f"limits must be a ScriptLimits, got {self.limits!r}")
        names = list(dict.fromkeys(functions))
        for name in names:
            if not isinstance(name, str) or "." not in name.strip(".") or not name.isprintable():
                raise LimitsError(f"function names must be 'module.function' strings, got {name!r}")
        self.functions = tuple(names)
        self._known = frozenset(names)
        self.arguments = _checked_arguments(arguments or {}, self._known)
        self._all = _View(functions=self.functions, payload=b"")
        self._views: dict[frozenset[str], _View] = {}
        limits = self.limits
        largest = max(limits.max_result_bytes, limits.max_arg_bytes, limits.max_response_bytes, limits.max_log_bytes)
        self._setup = WorkerSetup(
            functions=self.functions,
            limits=dataclasses.asdict(limits),
            # JSON escapes a control character in six bytes: a text result at its limit can take six times it.
            max_payload=_JSON_ESCAPE_GROWTH * largest + 64 * 1024,
        )
        self._pool: WorkerPool | None = None
        self._slots: anyio.Semaphore | None = None
        self._loop: object = None

    # Lifecycle

    async def start(self) -> None:
        """Spawn the warm workers now instead of at the first run; returns once the first is ready (which logs how
        the workers are confined)."""
        pool, _ = self._ensure_pool()
        await pool.start()

    async def aclose(self) -> None:
        """Kill every worker; a later run starts a new pool."""
        pool, loop, self._pool, self._loop = self._pool, self._loop, None, None
        if pool is None:
            return
        if loop != anyio.lowlevel.current_token():
            pool.abandon()  # its pipes belong to another event loop, which cannot be awaited from here
        else:
            await pool.aclose()

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def worker_pids(self) -> tuple[int, ...]:
        """Process ids of the workers, idle or busy (for diagnostics)."""
        return self._pool.pids if self._pool is not None else ()

    @property
    def busy_pids(self) -> tuple[int, ...]:
        """Process ids of the workers running a script now (for diagnostics)."""
        return self._pool.busy_pids if self._pool is not None else ()

    def _ensure_pool(self) -> tuple[WorkerPool, anyio.Semaphore]:
        token = anyio.lowlevel.current_token()
        if self._pool is None or self._slots is None or self._loop != token:
            # A pool's pipes belong to the event loop that made them; a new loop gets its own pool.
            if self._pool is not None:
                self._pool.abandon()
            self._pool = WorkerPool(
                self._setup, size=self.limits.max_concurrent, max_runs=self.limits.max_runs_per_worker
            )
            self._slots = anyio.Semaphore(self.limits.max_concurrent)
            self._loop = token
        return self._pool, self._slots

    # Running

    async def run(
        self,
        source: str,
        caller: FunctionCaller,
        *,
        report: ErrorReporter | None = None,
        functions: Collection[str] | None = None,
    ) -> ScriptResult:
        """Run `source`, answering its calls with `caller`; the result or failure, and the console lines.

        The script sees `functions` ("module.function" names, some of the sandbox's own; None: all of them) and
        no other: `api` lists only those, and `call` refuses any other name exactly as a name that never existed.

        A static call of a function outside `functions`, or with an argument the function does not take, refuses
        the run before it starts: its result has a `refused` failure and no call was made.

        Raises SourceError when the source is refused before running, LimitsError when `functions` names a
        function the sandbox was not given (a caller's view must come from the sandbox's catalog), and BusyError
        when no slot frees up within `limits.slot_wait`. Everything that happens once the script runs is in the
        ScriptResult.
        """
        encoded = _checked_source(source, self.limits.max_source_bytes)
        view = self._view(functions)
        problems = check_calls(source, view.functions, self.arguments)
        if problems:
            return ScriptResult(failure=_refusal(problems))
        pool, slots = self._ensure_pool()
        await _take(slots, self.limits)
        try:
            return await self._run(pool, encoded, view, caller, report)
        finally:
            slots.release()

    def _view(self, functions: Collection[str] | None) -> _View:
        """The view of `functions`, made once per distinct set; LimitsError when one is not the sandbox's."""
        if functions is None:
            return self._all
        if isinstance(functions, str):
            raise LimitsError(f"functions must be a collection of 'module.function' names, not a string: {functions!r}")
        try:
            chosen = frozenset(functions)
        except TypeError:
            raise LimitsError(f"functions must be a collection of 'module.function' names, got {functions!r}") from None
        view = self._views.pop(chosen, None)
        if view is None:
            unknown = chosen - self._known
            if unknown:
                shown = ", ".join(sorted(repr(name) for name in unknown)[:3])
                raise LimitsError(
                    f"functions must be names this sandbox was given; {len(unknown)} are not, e.g. {shown} "
                    "(make the sandbox with the catalog the caller's view comes from)"
                )
            if len(chosen) == len(self._known):
                view = self._all
            else:
                names = tuple(name for name in self.functions if name in chosen)
                view = _View(functions=names, payload=bitmap(self.functions, chosen))
            if len(self._views) >= _VIEWS_KEPT:
                del self._views[next(iter(self._views))]
        self._views[chosen] = view  # last in the order: the most recently used
        return view

    async def _run(
        self, pool: WorkerPool, source: bytes, view: _View, caller: FunctionCaller, report: ErrorReporter | None
    ) -> ScriptResult:
        started = time.monotonic()
        run = _Run(limits=self.limits, calls=CallGate(view.functions, self.limits, caller, report))
        worker: Worker | None = None
        outcome: ScriptResult | str | None = None
        try:
            with anyio.move_on_after(self.limits.timeout):
                try:
                    worker = await pool.acquire(view.payload)
                except WorkerCrashError as error:
                    outcome = str(error)
                else:
                    outcome = await self._session(worker, run, view, source, started)
        except BaseException:
            # Cancelled from outside (the client went away): the worker may be mid-script, so it goes.
            if worker is not None:
                await pool.discard(worker)
            raise
        if isinstance(outcome, ScriptResult) and worker is not None:
            await pool.release(worker)
            return outcome
        detail = await pool.discard(worker) if worker is not None else "no worker started"
        if outcome is None:
            return self._finish(run, started, ScriptFailure(kind="timeout", message=timeout_message(self.limits)))
        await report_failure(report, WorkerCrashError(f"a script's worker failed: {outcome}; {detail}"))
        return self._finish(run, started, ScriptFailure(kind="crashed", message=CRASHED))

    async def _session(
        self, worker: Worker, run: _Run, view: _View, source: bytes, started: float
    ) -> ScriptResult | str:
        """Run the script on `worker`, answering its calls; the result, or why the worker must go (a crash)."""
        left = self.limits.timeout - (time.monotonic() - started)
        outcome: ScriptResult | str = "the session ended without an outcome"
        async with anyio.create_task_group() as calls:
            try:
                await worker.select(view.payload)
                await worker.send({"op": "run", "timeout": max(left, 0.001)}, source)
                outcome = await self._serve(worker, run, started, calls)
            except _WORKER_FAILURES as error:
                outcome = f"{type(error).__name__}: {error}"
            if run.started:
                calls.cancel_scope.cancel()  # calls still running once the script is done are of no use
        return outcome

    async def _serve(self, worker: Worker, run: _Run, started: float, calls: anyio.abc.TaskGroup) -> ScriptResult | str:
        """Read the worker's frames until it is done: start calls, keep console lines, decode the outcome."""
        while True:
            header, payload = await worker.receive()
            op = header["op"]
            if op == "call":
                call_id, name = header.get("id"), header.get("name")
                if not isinstance(call_id, int) or isinstance(call_id, bool) or not isinstance(name, str):
                    raise ProtocolError(f"malformed call frame {header!r}")
                run.started = True
                calls.start_soon(self._answer, worker, run, call_id, name, payload)
            elif op == "log":
                run.add_log(payload)
            elif op == "done":
                return self._done(run, started, header, payload)
            elif op == "crashed":
                return f"the worker reported: {str(header.get('error', ''))[:2000]}"
            else:
                raise ProtocolError(f"unexpected frame {op!r} from the worker")

    async def _answer(self, worker: Worker, run: _Run, call_id: int, name: str, payload: bytes) -> None:
        ok, text = await run.calls.perform(name, payload)
        try:
            await worker.send({"op": "reply", "id": call_id, "ok": ok}, text.encode("ascii"))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the worker is gone; the session notices on its next read

    def _done(self, run: _Run, started: float, header: dict[str, Any], payload: bytes) -> ScriptResult:
        kind = header.get("kind")
        run.dropped_logs += int(header.get("dropped_logs") or 0)
        calls = max(run.calls.made, int(header.get("calls") or 0))
        if kind in RESULT_KINDS:
            try:
                value = json.loads(payload)
            except ValueError:
                raise ProtocolError("the worker sent a result that is not JSON") from None
            except RecursionError:
                message = "the result nests too deeply (past about 900 levels); return flatter data"
                return self._finish(run, started, ScriptFailure(kind="result", message=message))
            if kind == "text" and not isinstance(value, str):
                raise ProtocolError("the worker sent a text result that is not a string")
            # A text counts as its text, not as the JSON string it travelled in.
            size = len(value.encode("utf-8", "surrogatepass")) if isinstance(value, str) else len(payload)
            if size > self.limits.max_result_bytes:
                message = (
                    f"the result is {size} bytes, over the {self.limits.max_result_bytes}-byte limit; "
                    "return only what is needed (filter, aggregate, or slice it)"
                )
                return self._finish(run, started, ScriptFailure(kind="result", message=message))
            if kind == "undefined":
                value, text = None, ""
            elif isinstance(value, str):
                value = text = clean_text(value)
            else:
                text = payload.decode("utf-8", "replace")
                if b"\\ud" in payload:
                    # An unpaired surrogate escaped in the JSON (the text keeps it escaped; the value must not).
                    with contextlib.suppress(RecursionError):
                        value = clean_json(value)
            return ScriptResult(
                value=value,
                text=text,
                logs=tuple(run.logs),
                dropped_logs=run.dropped_logs,
                calls=calls,
                seconds=time.monotonic() - started,
            )
        failure = FAILURE_KINDS.get(str(kind))
        if failure is None:
            raise ProtocolError(f"the worker ended a run with kind {kind!r}")
        return self._finish(run, started, failure_from(failure, payload, self.limits), calls=calls)

    def _finish(self, run: _Run, started: float, failure: ScriptFailure, *, calls: int | None = None) -> ScriptResult:
        return ScriptResult(
            failure=failure,
            logs=tuple(run.logs),
            dropped_logs=run.dropped_logs,
            calls=run.calls.made if calls is None else calls,
            seconds=time.monotonic() - started,
        )


def _checked_arguments(arguments: Mapping[str, Collection[str]], known: frozenset[str]) -> dict[str, tuple[str, ...]]:
    if not isinstance(arguments, Mapping):
        raise LimitsError(f"arguments must map function names to their argument names, got {arguments!r}")
    checked: dict[str, tuple[str, ...]] = {}
    for name, names in arguments.items():
        if name not in known:
            raise LimitsError(f"arguments names {name!r}, which is not one of the sandbox's functions")
        if isinstance(names, str) or not all(isinstance(item, str) for item in names):
            raise LimitsError(f"the arguments of {name!r} must be a collection of names, got {names!r}")
        checked[name] = tuple(dict.fromkeys(names))
    return checked


def _refusal(problems: list[CallProblem]) -> ScriptFailure:
    """The failure of a run its static calls refused: each problem (a few), and that nothing ran."""
    listed = "; ".join(problem.message for problem in problems[:MAX_PROBLEMS])
    more = f"; and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
    stop = "" if (listed + more).endswith("?") else "."
    return ScriptFailure(
        kind="refused",
        message=f"{listed}{more}{stop} Nothing ran: fix these calls and run the script again",
        line=problems[0].line,
    )


def _checked_source(source: object, max_bytes: int) -> bytes:
    if not isinstance(source, str):
        raise SourceError(f"the script must be a string of JavaScript, got {type(source).__name__}")
    if not source.strip():
        raise SourceError("the script is empty; write JavaScript whose last expression (or return) is the result")
    if "\x00" in source:
        raise SourceError("the script contains a NUL character; remove it (write \\0 inside strings)")
    try:
        encoded = source.encode("utf-8")
    except UnicodeEncodeError:
        raise SourceError(
            "the script contains an unpaired surrogate character; write it as a \\uXXXX escape inside a string"
        ) from None
    if len(encoded) > max_bytes:
        raise SourceError(
            f"the script is {len(encoded)} bytes, over the {max_bytes}-byte limit; make it shorter "
            "(let the API filter instead of embedding data)"
        )
    return encoded


#: The most bytes JSON writes for one byte of text (a control character as \\u0000).
_JSON_ESCAPE_GROWTH = 6


async def _take(slots: anyio.Semaphore, limits: ScriptLimits) -> None:
    """Take a slot, waiting up to `slot_wait`; BusyError when none frees up."""
    try:
        slots.acquire_nowait()
        return
    except anyio.WouldBlock:
        pass
    with anyio.move_on_after(limits.slot_wait):
        await slots.acquire()
        return
    raise BusyError(f"all {limits.max_concurrent} script slots are busy; retry shortly (in a few seconds)")
