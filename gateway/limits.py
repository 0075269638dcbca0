"""`Limits`: how long a call may take and how much one caller, and the whole gateway, may start; each with a safe
default.

Every refusal names the limit (its option here, and the `--flag` the command line generates from it) and what to
do next. Counts of things running are per process: with several instances behind a balancer, each instance
enforces its own; counts of things kept (stored tasks) are per store, shared by the instances that share it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

from catalog.schemas import DEFAULT_MAX_SCHEMA_NODES
from gateway.errors import ConfigError
from gateway.flags import Flag, Where, cli, seconds, whole

__all__ = ["CALL_TIMEOUT", "Limits", "option_name"]

_MIB = 1024 * 1024


def option_name(name: str) -> str:
    """How a refusal names the limit `name`: its option and flag, e.g. `Limits.batch_elements (--batch-elements)`."""
    return f"Limits.{name} (--{name.replace('_', '-')})"


def _count(help: str, *, where: Where = "all", least: int = 1) -> Mapping[str, Flag]:
    return cli(help, parse=whole(least), metavar="N", where=where)


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Timeouts, sizes and budgets per caller and overall (each field's flag says what it bounds)."""

    timeout: float = field(default=30.0, metadata=cli("seconds a REST call may take", parse=seconds, metavar="SECONDS"))
    max_schema_nodes: int = field(
        default=DEFAULT_MAX_SCHEMA_NODES,
        metadata=_count("the most nodes a function's input schema may have once its references are inlined"),
    )
    max_body_bytes: int = field(
        default=16 * _MIB,
        metadata=_count(
            "the largest MCP request body the HTTP endpoint reads, in bytes (keep it above --max-argument-bytes)",
            where="http",
        ),
    )
    max_argument_bytes: int = field(
        default=12 * _MIB,
        metadata=_count(
            "the largest arguments one tool call may send, in bytes of compact JSON (300 records of 1,536-dimension "
            "float embeddings take about 10 MB)"
        ),
    )
    max_argument_depth: int = field(
        default=64, metadata=_count("how deeply one tool call's arguments may nest objects and arrays")
    )
    max_running: int = field(
        default=16,
        metadata=_count(
            "work on at most N MCP requests at once, the others waiting in arrival order, each counting for at most "
            "--admission-lease seconds (0 works on all at once)",
            where="serve",
            least=0,
        ),
    )
    admission_lease: float = field(
        default=0.1,
        metadata=cli(
            "seconds one request counts against --max-running", parse=seconds, metavar="SECONDS", where="serve"
        ),
    )
    tasks_running_per_caller: int = field(default=4, metadata=_count("task-augmented calls one caller runs at once"))
    tasks_running: int = field(default=32, metadata=_count("task-augmented calls running at once in all"))
    tasks_stored_per_caller: int = field(
        default=200, metadata=_count("tasks (with their results) one caller keeps on the server until they expire")
    )
    tasks_stored: int = field(
        default=5000,
        metadata=_count(
            "tasks (with their results) the task store keeps for all callers until they expire (a task with a "
            "10 KB answer takes about 14 KB)"
        ),
    )
    tasks_stored_per_address: int = field(
        default=1000,
        metadata=_count(
            "tasks the callers from one client address (an IPv6 /64) keep on the server together, whatever tokens "
            "they send, so one client cannot fill --tasks-stored",
            where="http",
        ),
    )
    subscriptions_per_caller: int = field(
        default=4, metadata=_count("subscriptions/listen streams one caller holds open", where="http")
    )
    subscriptions: int = field(
        default=256, metadata=_count("subscriptions/listen streams open at once in all", where="http")
    )
    batch_elements: int = field(
        default=32, metadata=_count("messages in one JSON-RPC batch (2025-03-26 and earlier)", where="http")
    )
    batch_answer_bytes: int = field(
        default=8 * 1024 * 1024,
        metadata=_count(
            "bytes of answers one batch builds; requests past it are each answered with an error", where="http"
        ),
    )
    scripts_per_caller: int = field(default=1, metadata=_count("run_script runs one caller has at once"))
    approvals_pending_per_caller: int = field(
        default=20,
        metadata=_count("calls one caller has waiting for a person's approval (--approval) until they expire"),
    )
    approvals_pending: int = field(
        default=10_000,
        metadata=_count(
            "calls waiting for a person's approval (--approval) that the approval store keeps for all callers"
        ),
    )
    approvals_pending_per_address: int = field(
        default=2000,
        metadata=_count(
            "calls waiting for a person's approval that the callers from one client address (an IPv6 /64) have "
            "together, whatever tokens they send, so one client cannot fill --approvals-pending",
            where="http",
        ),
    )

    def __post_init__(self) -> None:
        for name in ("timeout", "admission_lease"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
                raise ConfigError(f"{option_name(name)} must be a positive number of seconds, got {value!r}")
        for name, least in (
            ("max_schema_nodes", 1),
            ("max_body_bytes", 1),
            ("max_argument_bytes", 1),
            ("max_argument_depth", 1),
            ("max_running", 0),
            ("tasks_running_per_caller", 1),
            ("tasks_running", 1),
            ("tasks_stored_per_caller", 1),
            ("tasks_stored", 1),
            ("tasks_stored_per_address", 1),
            ("subscriptions_per_caller", 1),
            ("subscriptions", 1),
            ("batch_elements", 1),
            ("batch_answer_bytes", 1),
            ("scripts_per_caller", 1),
            ("approvals_pending_per_caller", 1),
            ("approvals_pending", 1),
            ("approvals_pending_per_address", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(f"{option_name(name)} must be a whole number, {least} or more, got {value!r}")


CALL_TIMEOUT: ContextVar[float | None] = ContextVar("gateway_call_timeout", default=None)
"""The timeout of the REST calls made now, where it differs from the gateway's (a task's longer one); None: the
gateway's own."""
