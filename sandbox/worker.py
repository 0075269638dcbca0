"""The worker process: reads frames from the host on stdin, runs each script with `Engine`, answers on stdout.

Started by `sandbox.pool` as `python -I -S -c <bootstrap>` with an empty environment, so nothing of the
gateway's environment (credentials included) reaches it; it closes any descriptor past stdin, stdout and stderr
it may have been given. Before its first script it confines itself (`prepare`, see `sandbox._confine`): no
network, an unprivileged user when started as root, no file access, no child processes, bounded address
space, and it reports what the OS allowed with its `ready`. Each run also arms SIGALRM (whose default action
ends the process) a little past the run's timeout, so a worker whose host died mid-run does not outlive it for
long. stdout is moved to another descriptor so a stray print cannot corrupt the protocol.
"""

from __future__ import annotations

# Everything the worker uses is imported before it confines itself: afterwards it can open no file, so a
# lazy import would fail. The UTF-16 codec is `_utf8`'s fallback.
import encodings.utf_16  # noqa: F401
import json
import os
import select
import signal
from collections.abc import Mapping
from typing import Any

from sandbox._confine import confine
from sandbox._protocol import PREFIX, encode, frame_sizes, parse_header, selection
from sandbox.engine import Engine, EngineLimits, Reply, binding

__all__ = ["main", "prepare"]

#: Seconds past a run's timeout after which the worker ends itself if the host has not killed it.
_ALARM_GRACE = 2.0
_MAX_INPUT = 64 * 1024 * 1024


class _Pipe:
    """Blocking frame IO on the protocol descriptors; implements `HostLink` for the engine."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd

    def receive(self) -> tuple[dict[str, Any], bytes]:
        """The next frame; SystemExit at end of input (the host closed the pipe or went away)."""
        header_size, payload_size = frame_sizes(self._read(PREFIX.size), max_payload=_MAX_INPUT)
        header = parse_header(self._read(header_size))
        return header, self._read(payload_size)

    def send(self, header: dict[str, Any], payload: bytes = b"") -> None:
        data = memoryview(encode(header, payload))
        while data:
            written = os.write(self.write_fd, data)
            data = data[written:]

    def call(self, call_id: int, name: str, args_json: str) -> None:
        self.send({"op": "call", "id": call_id, "name": name}, _utf8(args_json))

    def log(self, line: str) -> None:
        self.send({"op": "log"}, _utf8(line))

    def next_reply(self, timeout: float) -> Reply | None:
        while True:
            ready, _, _ = select.select([self.read_fd], [], [], timeout)
            if not ready:
                return None
            header, payload = self.receive()
            if header["op"] != "reply":
                continue
            text = payload.decode("ascii", "replace")
            return Reply(id=int(header["id"]), ok=bool(header["ok"]), text=text)

    def _read(self, size: int) -> bytes:
        chunks: list[bytes] = []
        while size:
            chunk = os.read(self.read_fd, min(size, 1 << 20))
            if not chunk:
                raise SystemExit(0)
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)


def main() -> None:
    """Serve the host until it closes stdin."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    write_fd = os.dup(1)
    os.dup2(2, 1)
    pipe = _Pipe(0, write_fd)
    header, payload = pipe.receive()
    if header["op"] != "init":
        raise SystemExit("the first frame must be init")
    limits = header["limits"]
    functions = tuple(json.loads(payload))
    engine = Engine(functions, EngineLimits(**{k: limits[k] for k in EngineLimits.__dataclass_fields__}))
    engine_name = binding()
    confinement = prepare(limits)
    pipe.send({"op": "ready", "pid": os.getpid(), "confinement": confinement, "engine": engine_name})
    #: The functions the runs see from now on (None: all of them), as the host's latest `view` frame said.
    view: tuple[str, ...] | None = None
    idle = True
    while True:
        if idle:
            _prepare_next(engine, view)
        header, payload = pipe.receive()
        if header["op"] == "view":
            view = selection(functions, payload)
            idle = False  # its run follows at once and sets its own context up, for these functions
            continue
        idle = True
        if header["op"] != "run":
            continue  # a late reply of the previous run
        timeout = float(header["timeout"])
        signal.setitimer(signal.ITIMER_REAL, timeout + _ALARM_GRACE)
        try:
            outcome = engine.run(payload.decode("utf-8"), timeout, pipe, view)
        except Exception as error:  # boundary: report the engine's own failure to the host, which logs it
            pipe.send({"op": "crashed", "error": f"{type(error).__name__}: {error}"[:2000]})
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        done = {"op": "done", "kind": outcome.kind, "calls": outcome.calls, "dropped_logs": outcome.dropped_logs}
        pipe.send(done, _utf8(outcome.text))


def _prepare_next(engine: Engine, view: tuple[str, ...] | None) -> None:
    """Set the next run's context up, for the functions of the latest run, while no script waits; should that
    fail, the run sets its own up."""
    try:
        engine.prepare(view)
    except Exception:  # boundary: the run repeats the set-up and reports its failure as a run's
        return


def _utf8(text: str) -> bytes:
    """`text` as UTF-8, with unpaired surrogates (JSON can carry them out of the guest) replaced by U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def prepare(limits: Mapping[str, Any]) -> dict[str, Any]:
    """Confine this process as every worker does before its first script; the report for the host."""
    return confine(
        uid=int(limits["worker_uid"]),
        gid=int(limits["worker_gid"]),
        address_space=int(limits["worker_address_space"]),
    )


if __name__ == "__main__":
    main()
