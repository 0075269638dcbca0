"""Errors raised by the demo shop's store; the app turns them into HTTP responses.

StoreError          root of every store error
├── NotFoundError   an id names no record (404)
└── ConflictError   the request clashes with the current state (409)
"""

from __future__ import annotations


class StoreError(Exception):
    """Root of the errors the demo store raises; the message is written for the caller."""


class NotFoundError(StoreError):
    """No record of this kind has this id."""

    def __init__(self, kind: str, record_id: int, *, hint: str) -> None:
        super().__init__(f"{kind} {record_id!r} not found; {hint}")
        self.kind = kind
        self.record_id = record_id


class ConflictError(StoreError):
    """The request is well formed but clashes with the current state of the shop."""
