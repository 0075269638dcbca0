"""Task-augmented tool calls (MCP 2025-11-25 tasks, and the 2026-07-28 tasks extension): `TaskConfig` turns them on,
`Tasks` serves them (imported with the MCP SDK, so only when tasks are served)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway._lazy import lazy_exports

if TYPE_CHECKING:
    from gateway.mcp.tasks.config import TaskConfig
    from gateway.mcp.tasks.service import Tasks

__all__ = ["TaskConfig", "Tasks"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {"gateway.mcp.tasks.config": ("TaskConfig",), "gateway.mcp.tasks.service": ("Tasks",)},
    globals(),
)
