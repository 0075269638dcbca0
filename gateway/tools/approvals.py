"""`Approvals`: one-time handles for calls that wait for a person's approval (`Effects.approval`).

A handle belongs to its caller (the caller policy's `owner`: login and grant, so a narrower token of the same
person, another person or an anonymous caller holds none of it), names one function, and, when the agent relays
the person's answer itself (`confirmation`), the canonical hash of the call's arguments. It is unguessable
(`secrets.token_urlsafe`), expires after `ttl` seconds and is spent by its first use. Handles live in a
`TaskStore`, the task store's machinery (SQLite in this process or in a file, Redis when several instances
serve), under an owner of their own (`approval:<owner>`) and in a pool of their own (`approvals`): its atomic
create-within-a-limit keeps a caller's person (the caller policy's `person`, whatever tokens it uses) within
`Limits.approvals_pending_per_caller`, the callers from one client address within
`Limits.approvals_pending_per_address` and all callers within `Limits.approvals_pending`, and its atomic take lets
exactly one of two racing uses through, on any instance. A store that cannot answer is the server's trouble
(`UnavailableError`, answered as the task store's outage is: JSON-RPC -32000 with `retryAfter`).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypeVar

from catalog.model import Function
from gateway.errors import ToolError, UnavailableError
from gateway.mcp.tasks.store import Clock, TaskStore, TaskStoreError, WatchedTaskStore
from gateway.policy import CallerPolicy
from oauth.outage import Outage

__all__ = ["Approvals", "Handle", "HandleKind", "Pending", "arguments_hash"]

HandleKind = Literal["confirmation", "form"]
"""How the person's answer comes back: the agent relays it (`confirmation`, bound to the arguments) or an MCP Apps
form sends it (`form`, whose person may change the arguments)."""

_T = TypeVar("_T")
#: Characters of randomness: 32 URL-safe characters, 192 bits.
_HANDLE_BYTES: Final = 24


def arguments_hash(arguments: Mapping[str, Any]) -> str:
    """The canonical hash of a call's arguments: SHA-256 of their JSON with sorted keys and no spaces."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class Handle:
    """A handle issued: its `value` (the secret to present) and when it expires (seconds since the epoch)."""

    value: str
    expires_at: float

    @property
    def expires_iso(self) -> str:
        """`expires_at` as an ISO 8601 UTC time, as MCP writes times."""
        return datetime.fromtimestamp(self.expires_at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True, kw_only=True)
class Pending:
    """A call waiting for approval, as its handle recorded it: the function's full name, and the hash of its
    arguments (None for a form, whose person may change them)."""

    handle: str
    kind: HandleKind
    function: str
    arguments_hash: str | None

    def approves(self, arguments: Mapping[str, Any]) -> bool:
        """Whether these are the arguments the handle was given for (any, for a form's)."""
        return self.arguments_hash is None or self.arguments_hash == arguments_hash(arguments)


class Approvals:
    """The handles of one gateway, in `store` (closed with the gateway when `owns_store`); `ttl` seconds each."""

    def __init__(self, store: TaskStore, *, ttl: float, clock: Clock | None = None, owns_store: bool = True) -> None:
        #: The approval store's state: its outages are logged once each; add listeners to count them.
        self.outage = Outage("approval store")
        self.store = WatchedTaskStore(store, self.outage)
        self.ttl = ttl
        self._clock = clock or time.time
        self._owns_store = owns_store

    async def issue(
        self, caller: CallerPolicy, function: Function, arguments: Mapping[str, Any], *, kind: HandleKind
    ) -> Handle:
        """A new handle for a call of `function` by `caller`; ToolError naming the limit when the caller has
        `Limits.approvals_pending_per_caller` handles live already, the callers from its client address
        `Limits.approvals_pending_per_address`, or all callers `Limits.approvals_pending`."""
        owner = _owner(caller)
        handle = Handle(value=secrets.token_urlsafe(_HANDLE_BYTES), expires_at=self._clock() + self.ttl)
        record = {
            "kind": kind,
            "function": function.name,
            "arguments_hash": arguments_hash(arguments) if kind == "confirmation" else None,
        }
        limits = caller.policy.limits
        full = await self._guarded(
            lambda: self.store.create(
                owner,
                handle.value,
                record,
                expires_at=handle.expires_at,
                limit=limits.approvals_pending_per_caller,
                total=limits.approvals_pending,
                pool="approvals",
                address=caller.address,
                address_limit=limits.approvals_pending_per_address,
                person=caller.person,
            )
        )
        if full == "person":
            raise ToolError(str(caller.approvals_pending_refusal()))
        if full == "address":
            raise ToolError(str(caller.approvals_pending_from_address_refusal()))
        if full == "pool":
            raise ToolError(str(caller.approvals_pending_in_all_refusal()))
        return handle

    async def pending(self, caller: CallerPolicy, handle: str, *, kind: HandleKind, refusal: str) -> Pending:
        """The call waiting under `caller`'s live, unspent `handle` of `kind`; ToolError with `refusal` (what to do)
        when there is none: unknown, expired, used, of another kind, or another caller's, all said alike."""
        record = await self._guarded(lambda: self.store.get(_owner(caller), handle)) if handle else None
        if record is None or record.get("kind") != kind:
            raise ToolError(_unknown(handle, self.ttl, refusal))
        return Pending(
            handle=handle, kind=kind, function=str(record["function"]), arguments_hash=record.get("arguments_hash")
        )

    async def spend(self, caller: CallerPolicy, pending: Pending, *, refusal: str) -> None:
        """Spend `pending`'s handle: of uses racing on any instance exactly one gets through; the others get
        ToolError with `refusal`. A spent handle is gone from the store, and from the caller's count."""
        owner = _owner(caller)
        # Taken out of the store at once: a late or racing use finds nothing, and it no longer counts.
        if await self._guarded(lambda: self.store.take(owner, pending.handle)) is None:
            raise ToolError(_unknown(pending.handle, self.ttl, refusal))

    async def probe(self) -> str | None:
        """None when the approval store answers now; else which store is unavailable (a readiness check)."""
        return await self.store.probe()

    async def aclose(self) -> None:
        """Close the store when the gateway opened it."""
        if self._owns_store:
            await self.store.aclose()

    async def _guarded(self, operation: Callable[[], Awaitable[_T]]) -> _T:
        try:
            return await operation()
        except TaskStoreError as error:
            # The server's trouble, not the caller's: what the task store says of its own outage (logged by it).
            raise UnavailableError(
                "the approval store is unavailable; retry shortly", retry_after=error.retry_after
            ) from error


def _owner(caller: CallerPolicy) -> str:
    """The store owner of a caller's handles: its own, beside (never among) its tasks."""
    return f"approval:{caller.owner}"


def _unknown(handle: str, ttl: float, refusal: str) -> str:
    shown = handle if len(handle) <= 64 else handle[:61] + "..."
    return (
        f"No call is waiting for approval under {shown!r}: a handle is valid once, for {ttl / 60:g} minutes, for "
        f"the caller it was given to; nothing ran. {refusal}"
    )
