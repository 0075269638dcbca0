"""`Limits`: how much one caller, and the whole gateway, may start; each a budget with a safe default.

Every refusal names the limit (its option here, and the `--flag` the command line generates from it) and what to
do next. Counts of things running are per process: with several instances behind a balancer, each instance
enforces its own; counts of things kept (stored tasks) are per store, shared by the instances that share it.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, fields

from gateway.errors import ConfigError

__all__ = ["CALL_TIMEOUT", "Limits", "option_name"]


def option_name(name: str) -> str:
    """How a refusal names the limit `name`: its option and flag, e.g. `Limits.batch_elements (--batch-elements)`."""
    return f"Limits.{name} (--{name.replace('_', '-')})"


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Budgets per caller and overall.

    - `tasks_running_per_caller`, `tasks_running`: task-augmented calls running at once, per caller and in all.
    - `tasks_stored_per_caller`: tasks (with their results) one caller keeps on the server until they expire.
    - `subscriptions_per_caller`, `subscriptions`: `subscriptions/listen` streams open at once.
    - `batch_elements`: messages in one JSON-RPC batch (2025-03-26 and earlier); `batch_answer_bytes`: the most
      bytes of answers one batch builds (requests past it are each answered with an error saying so).
    - `scripts_per_caller`: run_script runs at once per caller (the sandbox bounds them in all).
    """

    tasks_running_per_caller: int = 4
    tasks_running: int = 32
    tasks_stored_per_caller: int = 200
    subscriptions_per_caller: int = 4
    subscriptions: int = 256
    batch_elements: int = 32
    batch_answer_bytes: int = 8 * 1024 * 1024
    scripts_per_caller: int = 1

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{option_name(item.name)} must be a whole number, 1 or more, got {value!r}")


CALL_TIMEOUT: ContextVar[float | None] = ContextVar("gateway_call_timeout", default=None)
"""The timeout of the REST calls made now, where it differs from the gateway's (a task's longer one); None: the
gateway's own."""
