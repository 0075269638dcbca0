"""`ScriptLimits`: every bound a script runs under, in one frozen value."""

from __future__ import annotations

from dataclasses import dataclass, fields

from sandbox.errors import LimitsError

__all__ = ["ScriptLimits"]

_KIB = 1024
_MIB = 1024 * 1024
_SECONDS = frozenset({"timeout", "slot_wait"})


@dataclass(frozen=True, kw_only=True)
class ScriptLimits:
    """The bounds of one sandbox: time, memory, calls, sizes and concurrency; vary with `dataclasses.replace`.

    Sizes are bytes of UTF-8 text. Construction raises LimitsError naming the field and a usable value.
    """

    #: Wall-clock seconds for the whole run, calls included; the worker is killed at the deadline.
    timeout: float = 5.0
    #: Catalog calls one script may make.
    max_calls: int = 200
    #: Scripts running at once across all callers (and warm worker processes kept).
    max_concurrent: int = 4
    #: Seconds a script waits for a free slot before BusyError.
    slot_wait: float = 1.0
    #: Calls of one script the host runs at the same time (`callAll`, `Promise.all`).
    max_parallel_calls: int = 8
    #: Size of the source.
    max_source_bytes: int = 64 * _KIB
    #: Size of one call's arguments as JSON.
    max_arg_bytes: int = 64 * _KIB
    #: Size of one call's answer as JSON; a larger answer throws a catchable Error instead of entering the guest.
    max_response_bytes: int = 1 * _MIB
    #: Size of the script's result as JSON (or text, for a string); a larger result fails the script.
    max_result_bytes: int = 64 * _KIB
    #: console.log lines kept; later lines are counted, not kept.
    max_log_lines: int = 200
    #: Bytes of console.log output kept (each line is cut to fit).
    max_log_bytes: int = 16 * _KIB
    #: QuickJS heap limit; allocating past it throws an out-of-memory error.
    memory_bytes: int = 64 * _MIB
    #: QuickJS stack limit; deeper recursion throws a catchable RangeError/InternalError.
    stack_bytes: int = 1 * _MIB
    #: Address-space limit of a worker process (RLIMIT_AS), the OS bound behind `memory_bytes`.
    worker_address_space: int = 512 * _MIB
    #: Scripts one worker process runs before it is replaced by a fresh one.
    max_runs_per_worker: int = 100
    #: User and group a worker switches to when the gateway runs as root (65534 is "nobody"); never root.
    worker_uid: int = 65534
    worker_gid: int = 65534

    def __post_init__(self) -> None:
        for field in fields(self):
            value: object = getattr(self, field.name)
            seconds = field.name in _SECONDS
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or (not seconds and isinstance(value, float))
            ):
                kind = "a number of seconds" if seconds else "an integer"
                raise LimitsError(f"ScriptLimits.{field.name} must be {kind}, got {value!r}")
            if field.name in ("worker_uid", "worker_gid") and value == 0:
                raise LimitsError(
                    f"ScriptLimits.{field.name} is the id a worker switches to when the gateway runs as root; "
                    "it cannot be 0 (root): use an unprivileged one, e.g. 65534 (nobody)"
                )
            if field.name != "slot_wait" and value <= 0:
                raise LimitsError(f"ScriptLimits.{field.name} must be positive, got {value!r}")
        if self.slot_wait < 0:
            raise LimitsError(f"ScriptLimits.slot_wait must be 0 or more seconds, got {self.slot_wait!r}")
        if self.timeout > 3600:
            raise LimitsError(f"ScriptLimits.timeout is in seconds; {self.timeout!r} is over an hour, use e.g. 5.0")
        if self.memory_bytes < 4 * _MIB:
            raise LimitsError(f"ScriptLimits.memory_bytes must be at least 4 MiB, got {self.memory_bytes!r}")
        if self.stack_bytes < 64 * _KIB or self.stack_bytes > 4 * _MIB:
            raise LimitsError(f"ScriptLimits.stack_bytes must be between 64 KiB and 4 MiB, got {self.stack_bytes!r}")
        for name in ("worker_uid", "worker_gid"):
            if getattr(self, name) >= 2**32 - 1:
                raise LimitsError(f"ScriptLimits.{name} must be a user or group id below 4294967295, e.g. 65534")
        if self.worker_address_space < self.memory_bytes + 128 * _MIB:
            raise LimitsError(
                f"ScriptLimits.worker_address_space must leave 128 MiB for the interpreter above memory_bytes "
                f"({self.memory_bytes!r}); got {self.worker_address_space!r}, use at least "
                f"{self.memory_bytes + 128 * _MIB}"
            )
