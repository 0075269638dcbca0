"""`WorkerPool`: warm worker processes, handed out one script at a time, killed and replaced on any doubt.

A worker is spawned ahead of need (Python start-up and the QuickJS import take tens of milliseconds), so a
script starts on one that is already waiting. A worker that timed out, died, broke the protocol or reached its
run budget is killed (SIGKILL) and a replacement is spawned at once; spawning only starts the process, which
boots while the host goes on, so a kill costs the next script nothing when the pool had time to refill.

A worker starts with an empty environment, no descriptor but its three pipes, and confines itself before its
first script (`sandbox._confine`); it says how in its `ready`, which the host logs once per process: at INFO
when the network is cut off, as a warning when it is not (the OS offered neither a network namespace nor the
seccomp filter) or when a root gateway's worker could not give up root.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from sandbox._confine import NETWORK_MECHANISMS, summary
from sandbox._protocol import PREFIX, encode, frame_sizes, parse_header

__all__ = ["Worker", "WorkerCrashError", "WorkerPool", "WorkerSetup", "log_confinement", "log_engine", "spawn_worker"]

logger = logging.getLogger("sandbox")

_READY_TIMEOUT = 30.0
_STDERR_TAIL = 2000


class WorkerCrashError(Exception):
    """A worker process failed the host: it died, broke the protocol, or reported an internal failure.

    Passed to the sandbox's error reporter (never shown to the agent as is); `detail` has the exit status and
    the end of the worker's stderr when there is one.
    """


def _bootstrap_paths() -> tuple[str, ...]:
    """The import paths a worker needs without `site`: this package's parent folder, the QuickJS binding's folder,
    then the host's own import path (for anyio), so a worker imports exactly what the host would."""
    spec = importlib.util.find_spec("_quickjs")
    if spec is None or spec.origin is None:
        raise ImportError("the QuickJS binding is not installed: pip install 'quickjs-ng>=0.17.0.2,<0.18'")
    root = Path(__file__).resolve().parent.parent
    host = [entry for entry in sys.path if entry and os.path.isabs(entry) and os.path.isdir(entry)]
    return tuple(dict.fromkeys((str(root), str(Path(spec.origin).parent), *host)))


_BOOTSTRAP = "import sys; sys.path[:0] = sys.argv[1:]; from sandbox.worker import main; main()"
#: The confinement summaries already logged by this process.
_LOGGED: set[str] = set()


async def spawn_worker(code: str = _BOOTSTRAP) -> anyio.abc.Process:
    """Start a worker process running `code` (the worker's own by default) on the worker's import path, with an
    empty environment, no descriptor but stdin, stdout and stderr (all pipes), `/` as its directory, and a
    session of its own."""
    return await anyio.open_process(
        [sys.executable, "-I", "-S", "-c", code, *_bootstrap_paths()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
        env={},
        start_new_session=True,
        pass_fds=(),
    )


def log_confinement(report: object) -> None:
    """Log a worker's confinement report, once per distinct report in this process: a warning when the network
    is not cut off or when a worker of a root gateway still runs as root, else INFO."""
    if not isinstance(report, dict):
        report = {"skipped": {"report": "the worker sent no confinement report"}}
    line = summary(report)
    if line in _LOGGED:
        return
    _LOGGED.add(line)
    network = [name for name in report.get("network") or () if name in NETWORK_MECHANISMS]
    if not network:
        logger.warning(
            "script workers can reach the network (%s): this OS allowed neither a network namespace nor the "
            "seccomp filter, so code that escaped the JavaScript engine could open connections; run the "
            "gateway as root or where user namespaces are allowed (see README, Scripts)",
            line,
        )
    elif os.geteuid() == 0 and report.get("uid") == 0:
        logger.warning("script workers run as root (%s): they could not switch to an unprivileged user", line)
    else:
        logger.info("script workers are confined: %s", line)


@dataclass(frozen=True, kw_only=True)
class WorkerSetup:
    """What every worker of a pool starts with: the catalog's function names and the limits (as JSON-able data)."""

    functions: Sequence[str]
    limits: dict[str, Any]
    #: The largest frame payload the host accepts from a worker.
    max_payload: int


def log_engine(name: object) -> None:
    """Warn once when the workers run another binding than QuickJS-ng (the run_script description's promise)."""
    if name == "quickjs-ng" or f"engine {name}" in _LOGGED:
        return
    _LOGGED.add(f"engine {name}")
    logger.warning(
        "script workers run the QuickJS binding %r, not quickjs-ng: scripts lack what the run_script description "
        "promises (ES2024); run: pip uninstall quickjs quickjs-ng && pip install 'quickjs-ng>=0.17.0.2,<0.18'",
        name,
    )


class Worker:
    """One worker process and the host's end of its pipes."""

    def __init__(self, process: anyio.abc.Process, setup: WorkerSetup) -> None:
        if process.stdin is None or process.stdout is None or process.stderr is None:
            raise WorkerCrashError(f"worker {process.pid} was started without pipes")
        self.process = process
        self.pid = process.pid
        self.runs = 0
        #: The `view` payload the worker's runs see (see `sandbox._protocol`); empty: every function.
        self.view = b""
        self._setup = setup
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._ready = False
        self._ready_lock = anyio.Lock()
        self._send_lock = anyio.Lock()

    @property
    def alive(self) -> bool:
        """True while the process runs."""
        return self.process.returncode is None

    async def ready(self) -> None:
        """Send the init frame once and wait for the worker's `ready`; WorkerCrashError when it never comes."""
        async with self._ready_lock:
            if self._ready:
                return
            names = json.dumps(list(self._setup.functions), ensure_ascii=True).encode("ascii")
            await self.send({"op": "init", "limits": self._setup.limits}, names)
            with anyio.move_on_after(_READY_TIMEOUT):
                header, _ = await self.receive()
                if header["op"] != "ready":
                    raise WorkerCrashError(f"worker {self.pid} answered init with {header['op']!r}")
                self._ready = True
                log_confinement(header.get("confinement"))
                log_engine(header.get("engine"))
                return
            raise WorkerCrashError(f"worker {self.pid} was not ready within {_READY_TIMEOUT:g} s")

    async def select(self, view: bytes) -> None:
        """Have the worker's runs see the functions of `view` from now on: one frame, sent only when the worker's
        last run saw others (its next context is then set up within the run)."""
        if view != self.view:
            await self.send({"op": "view"}, view)
            self.view = view

    async def send(self, header: dict[str, Any], payload: bytes = b"") -> None:
        """Write one frame (frames from concurrent tasks do not interleave)."""
        async with self._send_lock:
            await self._stdin.send(encode(header, payload))

    async def receive(self) -> tuple[dict[str, Any], bytes]:
        """Read one frame; ProtocolError over the caps, anyio.EndOfStream / IncompleteRead when the worker died."""
        prefix = await self._stdout.receive_exactly(PREFIX.size)
        header_size, payload_size = frame_sizes(prefix, max_payload=self._setup.max_payload)
        header = parse_header(await self._stdout.receive_exactly(header_size))
        payload = await self._stdout.receive_exactly(payload_size) if payload_size else b""
        return header, payload

    async def kill(self) -> str:
        """Kill the process (SIGKILL), reap it, and describe how it ended: exit status and the end of stderr."""
        with anyio.CancelScope(shield=True):
            if self.alive:
                # Signal the pid itself: `Process.kill()` polls first, and when the worker has just died that poll
                # reaps it ahead of asyncio's child watcher, which then reports exit status 255, not the signal.
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            code = await self.process.wait()
            tail = await self._stderr_tail()
            await self.process.aclose()
        status = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        return f"worker {self.pid}: {status}" + (f"; stderr: {tail}" if tail else "")

    async def _stderr_tail(self) -> str:
        stream = self.process.stderr
        if stream is None:
            return ""
        data = b""
        with anyio.move_on_after(0.2):
            try:
                while True:
                    data = (data + await stream.receive())[-_STDERR_TAIL:]
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
        return data.decode("utf-8", "replace").strip()


class WorkerPool:
    """Up to `size` warm workers for the scripts of one sandbox, in the event loop that first used it."""

    def __init__(self, setup: WorkerSetup, *, size: int, max_runs: int) -> None:
        self._setup = setup
        self._size = size
        self._max_runs = max_runs
        self._idle: list[Worker] = []
        self._busy: set[Worker] = set()
        self._closed = False

    @property
    def busy_pids(self) -> tuple[int, ...]:
        """Process ids of the workers running a script now."""
        return tuple(worker.pid for worker in self._busy)

    @property
    def pids(self) -> tuple[int, ...]:
        """Process ids of every worker, idle or busy."""
        return tuple(worker.pid for worker in (*self._idle, *self._busy))

    async def fill(self) -> None:
        """Spawn workers until `size` exist (they boot in the background)."""
        while not self._closed and len(self._idle) + len(self._busy) < self._size:
            self._idle.append(await self._spawn())

    async def start(self) -> None:
        """Fill the pool and wait until its first worker is ready, so its confinement is logged at start-up."""
        await self.fill()
        if self._idle:
            worker = self._idle[0]
            try:
                await worker.ready()
            except Exception as error:  # boundary: a run reports a worker that cannot start; start-up goes on
                detail = await self.discard(worker)
                logger.warning("a script worker failed to start: %s: %s; %s", type(error).__name__, error, detail)

    async def acquire(self, view: bytes = b"") -> Worker:
        """A ready worker: a warm one when there is one, one whose last run saw the functions of `view` first (its
        context for them is set up already), else a new one."""
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        while self._idle:
            index = next((index for index, idle in enumerate(self._idle) if idle.view == view), 0)
            worker = self._idle.pop(index)
            if worker.alive:
                self._busy.add(worker)
                try:
                    await worker.ready()
                except BaseException:
                    await self.discard(worker)
                    raise
                return worker
            await worker.kill()
        worker = await self._spawn()
        self._busy.add(worker)
        try:
            await worker.ready()
        except BaseException:
            await self.discard(worker)
            raise
        return worker

    async def release(self, worker: Worker) -> None:
        """Take back a worker whose script finished cleanly; it is replaced once it used its run budget."""
        self._busy.discard(worker)
        worker.runs += 1
        if self._closed or worker.runs >= self._max_runs or not worker.alive:
            await self.discard(worker)
        else:
            self._idle.append(worker)

    async def discard(self, worker: Worker) -> str:
        """Kill a worker and spawn its replacement; how the worker ended (see `Worker.kill`)."""
        self._busy.discard(worker)
        if worker in self._idle:
            self._idle.remove(worker)
        with anyio.CancelScope(shield=True):
            detail = await worker.kill()
            await self.fill()
        return detail

    async def aclose(self) -> None:
        """Kill every worker; the pool cannot be used afterwards."""
        self._closed = True
        workers = [*self._idle, *self._busy]
        self._idle.clear()
        self._busy.clear()
        with anyio.CancelScope(shield=True):
            for worker in workers:
                await worker.kill()

    def abandon(self) -> None:
        """Kill every worker without awaiting (their event loop is gone); the pool cannot be used afterwards."""
        self._closed = True
        for worker in (*self._idle, *self._busy):
            try:
                os.kill(worker.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._idle.clear()
        self._busy.clear()

    async def _spawn(self) -> Worker:
        return Worker(await spawn_worker(), self._setup)
