"""`TaskConfig`: turns on task-augmented tool calls (MCP 2025-11-25 tasks) and says where their state lives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gateway.errors import ConfigError
from gateway.flags import cli, seconds

if TYPE_CHECKING:
    from gateway.mcp.tasks.store import Clock, TaskStore

__all__ = ["TaskConfig"]


@dataclass(frozen=True, kw_only=True)
class TaskConfig:
    """Turns on task-augmented tool calls.

    `store`: a `TaskStore`, or a URL for `open_task_store` (`redis://...` when several instances serve, a SQLite
    path); None keeps tasks in an in-memory SQLite database of this process.
    `timeout`: how long one call run as a task may take (the gateway's `timeout` still bounds calls without a
    task). `max_ttl`: the longest a task and its result are kept, in seconds (a client asks for less with
    `ttl`). `poll_interval`: the polling interval suggested to clients, in seconds, and
    how often the instance running a task reads its state in the store, to stop the call when a tasks/cancel
    served by another instance cancelled it.
    """

    store: TaskStore | str | None = field(
        default=None,
        metadata=cli(
            "where task state lives (implies --tasks): redis://... when several instances serve (the 'redis' "
            "extra), or a SQLite file (default: the --oauth-store with --oauth, else this process's memory)",
            name="tasks-store",
            env="TASKS_STORE",
            metavar="URL",
        ),
    )
    timeout: float = field(
        default=600.0,
        metadata=cli(
            "seconds one call run as a task may take",
            name="task-timeout",
            env="TASK_TIMEOUT",
            parse=seconds,
            metavar="SECONDS",
        ),
    )
    max_ttl: float = field(
        default=3600.0,
        metadata=cli(
            "the longest a task and its result are kept, in seconds",
            name="task-max-ttl",
            env="TASK_MAX_TTL",
            parse=seconds,
        ),
    )
    poll_interval: float = field(
        default=1.0,
        metadata=cli(
            "seconds between polls of a task's state (suggested to clients too)",
            name="task-poll-interval",
            env="TASK_POLL_INTERVAL",
            parse=seconds,
        ),
    )
    clock: Clock | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name in ("timeout", "max_ttl", "poll_interval"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"TaskConfig.{name} must be a positive number of seconds, got {value!r}")
