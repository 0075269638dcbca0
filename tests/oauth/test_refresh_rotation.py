"""Refresh token rotation on both stores (a SQLite file, a real redis-server): what the store keeps of a grant
however often it is refreshed, reuse of a rotated token, two refreshes racing with one token, and the refresh
tokens issued before rotated tokens named their grant."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
import redis.asyncio as redis

from oauth import TokenStore
from oauth._crypto import RefreshTokens, Sealer, new_token, token_hash
from oauth.errors import ProtocolError
from oauth.grants import Grants
from oauth.store_redis import RedisStore
from oauth.store_sqlite import SqliteStore
from tests.oauth.conftest import SECRET, FakeClock
from tests.oauth.test_grants import ALICE, CLIENT, OTHER, REDIRECT, RESOURCE, VERIFIER, code_for, grants_on

pytestmark = pytest.mark.anyio

HOUR = 3600.0


@dataclass
class Backend:
    """A token store, the clock it reads, and how many records its backend holds that have not expired."""

    store: TokenStore
    clock: FakeClock
    size: Callable[[], Awaitable[int]]


@pytest.fixture(params=["sqlite", "redis"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    clock = FakeClock()
    if request.param == "sqlite":
        path = tmp_path / "oauth.sqlite3"
        store: TokenStore = SqliteStore(path, clock=clock)

        async def rows() -> int:
            # Every row, expired or not: the file's own size in records.
            with sqlite3.connect(path) as db:
                return int(db.execute("SELECT count(*) FROM oauth_records").fetchone()[0])

        yield Backend(store, clock, rows)
    else:
        url: str = request.getfixturevalue("redis_url")
        prefix = f"rotation-{new_token()[:8]}:"
        store = RedisStore(redis.Redis.from_url(url), prefix=prefix, clock=clock)
        client = redis.Redis.from_url(url)

        async def keys() -> int:
            # Redis drops a key when its TTL (real time) runs out; the test moves the store's clock instead, so
            # a key whose record the store's clock says has expired is as good as gone.
            live = 0
            async for key in client.scan_iter(match=f"{prefix}*"):
                raw = await client.get(key)
                if raw is not None and not _expired(raw.decode() if isinstance(raw, bytes) else raw, clock.now):
                    live += 1
            return live

        try:
            yield Backend(store, clock, keys)
        finally:
            await client.aclose()
    await store.aclose()


def _expired(value: str, now: float) -> bool:
    if value.startswith("{"):  # a record: {"expires_at": ..., "record": ...}
        return float(json.loads(value)["expires_at"]) <= now
    if " " in value:  # a counter of attempts: "<ends-at> <count>"
        return float(value.split()[0]) <= now
    return False  # a claim marker, which lives as long as its record


async def logged_in(grants: Grants) -> dict[str, object]:
    return await grants.exchange_code(
        code=await code_for(grants), client=CLIENT, redirect_uri=REDIRECT, code_verifier=VERIFIER, resource=None
    )


async def refreshed(grants: Grants, refresh_token: object) -> dict[str, object]:
    return await grants.refresh(refresh_token=str(refresh_token), client=CLIENT, scope=None, resource=None)


async def refused(grants: Grants, refresh_token: object) -> tuple[str, str]:
    with pytest.raises(ProtocolError) as error:
        await refreshed(grants, refresh_token)
    return error.value.code, error.value.description


REUSED = ("invalid_grant", "the refresh token was already used; every token of this login is revoked")
UNKNOWN = ("invalid_grant", "the refresh token is unknown, expired or revoked; authorize again")


async def test_a_thousand_refreshes_leave_the_store_the_same_size(backend: Backend) -> None:
    grants = grants_on(backend.store, backend.clock)
    tokens = await logged_in(grants)
    sizes: list[int] = []
    for index in range(1000):
        backend.clock.advance(HOUR)  # the access token has expired: a client refreshes now
        tokens = await refreshed(grants, tokens["refresh_token"])
        if index in (0, 999):
            sizes.append(await backend.size())
    assert sizes[0] == sizes[1]
    assert await grants.check_access_token(str(tokens["access_token"])) is not None


async def test_a_rotated_refresh_token_presented_again_revokes_every_token_of_its_login(backend: Backend) -> None:
    grants = grants_on(backend.store, backend.clock)
    first = await logged_in(grants)
    second = await refreshed(grants, first["refresh_token"])
    newest = await refreshed(grants, second["refresh_token"])
    assert await refused(grants, first["refresh_token"]) == REUSED
    assert await grants.check_access_token(str(newest["access_token"])) is None
    assert await refused(grants, newest["refresh_token"]) == UNKNOWN


async def test_of_two_refreshes_racing_with_one_token_one_is_told_it_was_reused_and_no_token_survives(
    backend: Backend,
) -> None:
    grants = grants_on(backend.store, backend.clock)
    token = (await logged_in(grants))["refresh_token"]
    issued: list[dict[str, object]] = []
    refusals: list[tuple[str, str]] = []

    async def refresh() -> None:
        try:
            issued.append(await refreshed(grants, token))
        except ProtocolError as error:
            refusals.append((error.code, error.description))

    async with anyio.create_task_group() as tg:
        tg.start_soon(refresh)
        tg.start_soon(refresh)
    # The second to use the token revokes the login; the first got tokens, unless the revocation came first.
    assert refusals.count(REUSED) == 1
    assert len(issued) + len(refusals) == 2
    for tokens in issued:
        assert await grants.check_access_token(str(tokens["access_token"])) is None
        assert await refused(grants, tokens["refresh_token"]) == UNKNOWN


@pytest.mark.parametrize(
    "forged",
    [
        lambda token, _: token[:-2] + ("AA" if not token.endswith("AA") else "BB"),
        lambda token, _: token.split(".")[0] + "." + new_token() + "." + token.split(".")[2],
        lambda _, other: other,
    ],
    ids=["altered-signature", "another-nonce", "signed-with-another-secret"],
)
async def test_a_refresh_token_this_server_did_not_sign_is_unknown_and_revokes_nothing(
    backend: Backend, forged: Callable[[str, str], str]
) -> None:
    grants = grants_on(backend.store, backend.clock)
    tokens = await logged_in(grants)
    # The same grant id, signed with another server's secret.
    elsewhere = RefreshTokens(b"another-secret-of-at-least-32-bytes!!")
    other = elsewhere.new(str(tokens["refresh_token"]).split(".")[0])
    assert await refused(grants, forged(str(tokens["refresh_token"]), other)) == UNKNOWN
    assert await grants.check_access_token(str(tokens["access_token"])) is not None
    assert "access_token" in await refreshed(grants, tokens["refresh_token"])


async def test_revoking_a_rotated_refresh_token_revokes_its_login(backend: Backend) -> None:
    grants = grants_on(backend.store, backend.clock)
    first = await logged_in(grants)
    newest = await refreshed(grants, first["refresh_token"])
    with pytest.raises(ProtocolError):
        await grants.revoke(str(first["refresh_token"]), OTHER)
    assert await grants.check_access_token(str(newest["access_token"])) is not None
    await grants.revoke(str(first["refresh_token"]), CLIENT)
    assert await grants.check_access_token(str(newest["access_token"])) is None


# Logins stored before rotated refresh tokens named their grant


async def login_stored_before_the_upgrade(store: TokenStore, clock: FakeClock, *, used: bool = False) -> str:
    """A login as the previous version stored it: a grant, and an access and a refresh token that are plain random
    tokens, each under its hash (`used`: the refresh token was rotated already, its record kept, claimed, to
    detect its reuse). Its refresh token."""
    grant_id, access, refresh = new_token(), new_token(), new_token()
    until = clock.now + 30 * 24 * HOUR
    grant = {
        "client_id": CLIENT.client_id,
        "subject": ALICE.subject,
        "scopes": ["mcp"],
        "resource": RESOURCE,
        "credentials": Sealer(SECRET).seal(ALICE.credentials),
    }
    await store.put("grant", grant_id, grant, expires_at=until)
    access_record = {"grant_id": grant_id, "scopes": ["mcp"]}
    await store.put("access", token_hash(access), access_record, expires_at=clock.now + HOUR)
    await store.put("refresh", token_hash(refresh), {"grant_id": grant_id}, expires_at=until)
    if used:
        await store.claim("refresh", token_hash(refresh))
    return refresh


async def test_a_refresh_token_stored_before_the_upgrade_refreshes_once_then_its_login_goes_on(
    backend: Backend,
) -> None:
    legacy = await login_stored_before_the_upgrade(backend.store, backend.clock)
    grants = grants_on(backend.store, backend.clock)
    tokens = await refreshed(grants, legacy)
    backend.clock.advance(HOUR)
    tokens = await refreshed(grants, tokens["refresh_token"])
    size = await backend.size()
    for _ in range(5):
        backend.clock.advance(HOUR)
        tokens = await refreshed(grants, tokens["refresh_token"])
    assert await backend.size() == size
    assert await grants.check_access_token(str(tokens["access_token"])) is not None
    # Its reuse is still detected: the store kept its record, used, until it expires.
    assert await refused(grants, legacy) == REUSED
    assert await grants.check_access_token(str(tokens["access_token"])) is None


async def test_a_refresh_token_already_rotated_before_the_upgrade_revokes_its_login_when_presented_again(
    backend: Backend,
) -> None:
    legacy = await login_stored_before_the_upgrade(backend.store, backend.clock, used=True)
    grants = grants_on(backend.store, backend.clock)
    assert await refused(grants, legacy) == REUSED
    assert await refused(grants, legacy) == UNKNOWN


# How often one login is refreshed


async def test_a_login_refreshed_more_than_six_times_a_minute_is_refused_and_its_token_works_a_minute_later(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    grants = grants_on(backend.store, backend.clock)
    tokens = await logged_in(grants)
    for _ in range(6):
        backend.clock.advance(5)
        tokens = await refreshed(grants, tokens["refresh_token"])
    with caplog.at_level(logging.WARNING, logger="oauth.grants"):
        for _ in range(3):
            with pytest.raises(ProtocolError) as error:
                await refreshed(grants, tokens["refresh_token"])
    assert (error.value.code, error.value.status, error.value.retry_after) == ("temporarily_unavailable", 429, 60)
    assert error.value.description == (
        "this login was refreshed 6 times within a minute, the most allowed; keep the refresh token you sent (it was "
        "not used) and try again in a minute"
    )
    assert [record.getMessage() for record in caplog.records] == [
        "refused refreshes of a login of client 'client-a': more than 6 in a minute"
    ]
    assert await grants.check_access_token(str(tokens["access_token"])) is not None
    backend.clock.advance(35)  # a minute after the first of the six
    assert "access_token" in await refreshed(grants, tokens["refresh_token"])


async def test_each_login_has_its_own_refresh_limit(backend: Backend) -> None:
    grants = grants_on(backend.store, backend.clock)
    first, second = await logged_in(grants), await logged_in(grants)
    for _ in range(6):
        first = await refreshed(grants, first["refresh_token"])
    assert (await refused(grants, first["refresh_token"]))[0] == "temporarily_unavailable"
    assert "access_token" in await refreshed(grants, second["refresh_token"])
