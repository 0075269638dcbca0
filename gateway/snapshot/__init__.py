"""The agent-facing surface as a committed JSON file, and every change since, classified breaking or not, as text,
Markdown or GitHub annotations (`mcp-gateway snapshot check`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway._lazy import lazy_exports

if TYPE_CHECKING:
    from gateway.snapshot.check import SnapshotCheck, check_snapshot, gateway_snapshot

__all__ = ["SnapshotCheck", "check_snapshot", "gateway_snapshot"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "gateway.snapshot.check": (
            "SnapshotCheck",
            "check_snapshot",
            "gateway_snapshot",
        ),
    },
    globals(),
)
