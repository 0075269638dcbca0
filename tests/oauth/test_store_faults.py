"""When the token store fails, the server says so and keeps the caller's token: MCP requests get 503 with
Retry-After and no Bearer challenge, OAuth endpoints an OAuth error as JSON, the operator one log line per outage,
and the server recovers by itself once the store is back. Real SQLite files and a real redis-server; the demo shop
on real uvicorn; the official `mcp` client."""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest

from demo import MEMBER_KEY
from gateway.observability import Observer
from oauth import SqliteStore
from oauth._crypto import token_hash
from oauth.errors import StoreUnavailableError
from oauth.outage import Outage
from oauth.store_redis import RedisStore
from tests.conftest import free_port
from tests.oauth.clients import MemoryStorage, connect, handlers, provider, whoami
from tests.oauth.conftest import Browser, FakeClock, serve_site

pytestmark = pytest.mark.anyio

UNAVAILABLE = "the token store is unavailable; retry shortly"
ME = {"name": "users.get_current_user", "args": {}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def tools_list(token: str) -> dict[str, object]:
    return {
        "json": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        "headers": {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"},
    }


def assert_unavailable_not_refused(answer: httpx2.Response) -> None:
    """The MCP endpoint's answer while the store is down: the server's trouble, never the token's."""
    assert answer.status_code == 503, answer.text
    assert "www-authenticate" not in answer.headers
    assert answer.headers["retry-after"] == "5"
    assert answer.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": UNAVAILABLE}}


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside `error`, groups opened."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def messages(caplog: pytest.LogCaptureFixture, *, containing: str) -> list[str]:
    return [record.getMessage() for record in caplog.records if containing in record.getMessage()]


async def test_a_store_folder_removed_under_the_server_is_refused_with_503_and_the_restored_file_is_reopened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gateway.stores")
    folder = tmp_path / "state"
    path = folder / "oauth.db"
    observer = Observer(metrics=True)
    async with serve_site(store=SqliteStore(path)) as site, httpx2.AsyncClient(timeout=10) as web:
        site.server.observe(observer.oauth)
        browser, storage = Browser(web, key=MEMBER_KEY), MemoryStorage()
        auth = provider(site, storage, *handlers(browser))
        async with connect(site, auth) as client:
            assert whoami(await client.call_tool("call_function", ME))["name"] == "Bob Okafor"
        assert storage.tokens is not None and storage.client is not None
        tokens, client_id = storage.tokens, storage.client.client_id

        backup = tmp_path / "backup"
        shutil.copytree(folder, backup)
        shutil.rmtree(folder)
        for _ in range(10):
            assert_unavailable_not_refused(await web.post(site.mcp_url, **tools_list(tokens.access_token)))  # type: ignore[arg-type]
        with pytest.raises(BaseExceptionGroup) as failed:
            async with connect(site, auth) as client:
                await client.call_tool("call_function", ME)
        assert {f"{type(error).__name__}: {error}" for error in leaves(failed.value)} == {f"MCPError: {UNAVAILABLE}"}
        # The client kept its tokens and sent nobody through a new login; nothing began an empty store.
        assert storage.tokens == tokens and len(browser.landed) == 1
        assert not folder.exists()
        refresh = await web.post(
            f"{site.base}/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "client_id": client_id},
        )
        assert refresh.status_code == 503 and refresh.headers["retry-after"] == "5"
        assert refresh.json() == {"error": "server_error", "error_description": UNAVAILABLE}
        assert await site.server.ready() == "the token store is unavailable"

        shutil.copytree(backup, folder)  # restored from the backup: another file at the same path
        # Within the wait before the next attempt (at most 2 s), the restored file is used again, by itself.
        restored = time.monotonic()
        while await site.server.ready() is not None:
            assert time.monotonic() - restored < 2.5, "the restored store was not used again"
            await anyio.sleep(0.05)
        async with connect(site, auth) as client:
            assert whoami(await client.call_tool("call_function", ME))["name"] == "Bob Okafor"
        refreshed = await web.post(
            f"{site.base}/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "client_id": client_id},
        )
        assert refreshed.status_code == 200, refreshed.text
        new_access = refreshed.json()["access_token"]

    # What the running server wrote after the restore is in the file on disk: a fresh store holds the new token.
    fresh = SqliteStore(path)
    assert await fresh.get("access", token_hash(new_access)) is not None
    await fresh.aclose()

    down = messages(caplog, containing="the token store is unavailable")
    assert len(down) == 1, down  # one line for the outage, not one per request
    assert f"the SQLite token store file {path} is gone" in down[0] and "restore it" in down[0]
    assert len(messages(caplog, containing="was replaced (restored from a backup?): reopening it")) == 1
    assert observer.metrics is not None
    text = observer.metrics.exposition().decode()
    failures = next(line for line in text.splitlines() if line.startswith("mcp_gateway_store_failures_total"))
    assert failures.startswith('mcp_gateway_store_failures_total{store="token"}')
    assert float(failures.split()[-1]) >= 12


async def test_the_authorization_endpoint_says_temporarily_unavailable_to_a_browser_and_as_json(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state" / "oauth.db"
    async with serve_site(store=SqliteStore(path)) as site, httpx2.AsyncClient(timeout=10) as web:
        registered = await web.post(f"{site.base}/register", json={"redirect_uris": ["https://claude.ai/cb"]})
        assert registered.status_code == 201
        shutil.rmtree(path.parent)
        url = f"{site.base}/authorize?response_type=code&client_id={registered.json()['client_id']}"
        page = await web.get(url, headers={"accept": "text/html"})
        assert page.status_code == 503 and page.headers["retry-after"] == "5"
        assert page.headers["content-type"].startswith("text/html")
        assert "temporarily_unavailable" in page.text and "Try again in a minute" in page.text
        answer = await web.get(url, headers={"accept": "application/json"})
        assert answer.status_code == 503
        assert answer.json() == {"error": "temporarily_unavailable", "error_description": UNAVAILABLE}
        register = await web.post(f"{site.base}/register", json={"redirect_uris": ["https://claude.ai/cb"]})
        assert register.status_code == 503 and register.json()["error"] == "server_error"


@contextmanager
def redis_server(port: int, folder: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A redis-server on `port` until the block ends, waited for by its own "ready" line."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is missing: run scripts/install-redis")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if b"Ready to accept connections" in line:
                break
        yield process
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


async def test_a_redis_store_that_is_down_is_503_and_is_used_again_within_two_seconds_of_coming_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gateway.stores")
    port = free_port()
    store = RedisStore.from_url(f"redis://127.0.0.1:{port}/0")
    async with serve_site(store=store) as site, httpx2.AsyncClient(timeout=10) as web:
        for _ in range(20):
            assert_unavailable_not_refused(await web.post(site.mcp_url, **tools_list("some-token")))  # type: ignore[arg-type]
        registered = await web.post(f"{site.base}/register", json={"redirect_uris": ["https://claude.ai/cb"]})
        assert registered.status_code == 503 and registered.json()["error"] == "server_error"
        with redis_server(port, tmp_path):
            started = time.monotonic()
            while (
                await web.post(f"{site.base}/register", json={"redirect_uris": ["https://claude.ai/cb"]})
            ).status_code != 201:
                assert time.monotonic() - started < 3, "the store was not used again"
            recovered = time.monotonic() - started
            answer = await web.post(site.mcp_url, **tools_list("some-token"))  # type: ignore[arg-type]
            assert answer.status_code == 401 and 'error="invalid_token"' in answer.headers["www-authenticate"]
    assert recovered < 2.5
    down = messages(caplog, containing="the token store is unavailable")
    assert len(down) == 1 and "ConnectionError" in down[0] and str(port) in down[0]


def test_an_outage_is_logged_once_refuses_at_once_while_unreachable_and_ends_after_a_settled_success(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="gateway.stores")
    clock = FakeClock()
    outage = Outage("token store", first_retry=0.1, longest_retry=2.0, settle=5.0, clock=clock)
    seen: list[tuple[str, object]] = []

    class Listener:
        def store_failure(self, store: str) -> None:
            seen.append(("failure", store))

        def store_state(self, store: str, up: bool) -> None:
            seen.append(("up" if up else "down", store))

    outage.listeners.append(Listener())
    unreachable = StoreUnavailableError("Redis at 127.0.0.1:1: refused", unreachable=True)
    assert not outage.refused() and not outage.down
    waits: list[float] = []
    for _ in range(7):
        outage.failed(unreachable)
        assert outage.refused() and outage.down
        waits.append(round(outage._retry_at - clock.now, 3))
    assert waits == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0]
    clock.advance(2.0)
    assert not outage.refused()
    outage.succeeded()  # reachable again, but the last failure was 2 s ago: the outage has not settled
    assert outage.down and not outage.refused()
    full = StoreUnavailableError("SQLite: database or disk is full", unreachable=False)
    outage.failed(full)
    assert not outage.refused()  # one operation failed; others may work, so nothing waits
    clock.advance(5.0)
    outage.succeeded()
    assert not outage.down
    logged = [record.getMessage() for record in caplog.records]
    assert logged == [
        "the token store is unavailable: Redis at 127.0.0.1:1: refused; requests that need it are answered 503 "
        "until it is back",
        "the token store is back after 2.0 s; 8 operations failed meanwhile",
    ]
    assert seen == [("down", "token store"), *[("failure", "token store")] * 8, ("up", "token store")]


async def test_while_a_store_is_unreachable_one_operation_at_a_time_finds_out_whether_it_is_back() -> None:
    clock = FakeClock()
    outage = Outage("token store", first_retry=0.1, clock=clock)
    silent = StoreUnavailableError("Redis: TimeoutError: Timeout reading", unreachable=True)

    async def fails() -> None:
        raise silent

    with pytest.raises(StoreUnavailableError):
        await outage.guard(fails, StoreUnavailableError, lambda detail: StoreUnavailableError(detail, unreachable=True))
    clock.advance(0.1)  # the next attempt is due
    answered = anyio.Event()
    outcomes: list[str] = []

    async def waits_on_the_server() -> None:
        await answered.wait()

    async def operation() -> None:
        try:
            await outage.guard(
                waits_on_the_server,
                StoreUnavailableError,
                lambda detail: StoreUnavailableError(detail, unreachable=True),
            )
            outcomes.append("tried")
        except StoreUnavailableError as error:
            outcomes.append(error.detail)

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(operation)
        await anyio.wait_all_tasks_blocked()
        assert (
            outcomes
            == ["Redis: TimeoutError: Timeout reading (not tried again yet: the store was unreachable a moment ago)"]
            * 4
        )
        answered.set()
    assert outcomes[-1] == "tried" and not outage.refused()
