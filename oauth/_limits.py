"""Requests counted per client address, per its network and overall, so that neither one address nor the many
addresses of one network (an IPv6 /48 holds 65,536 /64s, an IPv4 /24 256 addresses) spend a budget meant for
everyone: each limit of a kind is below the next, as `oauth.cimd.FetchBudgets`' are."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from oauth._log import loggable
from oauth.addresses import network_key, rate_key
from oauth.store import TokenStore

__all__ = ["Limit", "Scope", "spend"]

logger = logging.getLogger(__name__)

Scope = Literal["address", "network", "overall"]
"""Whose requests a limit counts: one address (an IPv6 /64), its network (`network_key`), or everyone's."""


@dataclass(frozen=True, kw_only=True)
class Limit:
    """At most `most` requests of a kind within `window` seconds, counted per `scope`."""

    scope: Scope
    most: int
    window: float


async def spend(store: TokenStore, what: str, address: str, limits: Sequence[Limit]) -> Limit | None:
    """Count one request for `what` (e.g. "logins") from `address` against each of `limits` in turn: None when
    all allow it, else the first that is spent (a request refused by one counts against none after it). The
    first refusal of each limit in its window is logged, so a visitor cannot flood the log."""
    for limit in limits:
        if limit.scope == "address":
            key, whose = rate_key(address), loggable(address)
        elif limit.scope == "network":
            key = network_key(address)
            whose = f"network {loggable(key)}"
        else:
            key, whose = "overall", "all addresses"
        counted = await store.count(f"{what}:{limit.scope}:{key}", window=limit.window)
        if counted > limit.most:
            if counted == limit.most + 1:
                within = "an hour" if limit.window == 3600 else f"{limit.window:g} s"
                logger.warning("refused %s from %s: more than %d in %s", what, whose, limit.most, within)
            return limit
    return None
