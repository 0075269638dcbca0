"""Run short JavaScript programs that chain catalog calls, bounded in time, memory, calls and output."""

from __future__ import annotations

__all__: list[str] = []
