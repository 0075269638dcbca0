"""The Redis client both stores use, and how its failures read: a server that does not answer, or one that
answers with an error."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis.asyncio as redis

__all__ = ["CONNECT_SECONDS", "REPLY_SECONDS", "URL_SCHEMES", "client", "unreachable"]

#: How a store URL that names a Redis server starts (a SQLite path starts otherwise).
URL_SCHEMES = ("redis://", "rediss://", "unix://")

#: How long connecting may take before the server counts as unreachable (a dead host does not refuse, it is
#: silent), and how long a reply may take.
CONNECT_SECONDS = 2.0
REPLY_SECONDS = 5.0


def client(url: str, *, decode_responses: bool = False) -> redis.Redis:
    """A client of the server at `url` (redis://, rediss://, unix://) that gives up on a silent server within
    `CONNECT_SECONDS` and `REPLY_SECONDS` rather than holding requests; a dropped connection is made again on
    the next command."""
    import redis.asyncio as redis

    return redis.Redis.from_url(
        url,
        decode_responses=decode_responses,
        socket_connect_timeout=CONNECT_SECONDS,
        socket_timeout=REPLY_SECONDS,
        health_check_interval=30,
    )


def unreachable(error: Exception) -> bool:
    """Whether a Redis error means the server could not be reached or did not reply (or is still loading its
    data), rather than that it refused one command (out of memory, unable to persist, read-only)."""
    from redis.exceptions import BusyLoadingError, ConnectionError, TimeoutError

    return isinstance(error, (ConnectionError, TimeoutError, BusyLoadingError))
