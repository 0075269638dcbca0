"""`GET /ready` tells a balancer whether this instance can serve now (its state stores answer), apart from
`GET /`, which only says the process answers."""

from __future__ import annotations

import anyio
import httpx2
import pytest

import gateway.readiness
from demo import create_app
from gateway.gateway import Gateway
from gateway.readiness import Readiness

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def ok() -> str | None:
    return None


async def token_store_down() -> str | None:
    return "the token store is unavailable"


async def ask(readiness: Readiness, method: str = "GET") -> httpx2.Response:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(readiness)) as http:
        return await http.request(method, "http://localhost/ready")


async def test_an_instance_whose_checks_all_pass_is_ready_and_says_so_uncached() -> None:
    readiness = Readiness()
    readiness.add(ok)
    answer = await ask(readiness)
    assert answer.status_code == 200 and answer.json() == {"ready": True}
    assert answer.headers["cache-control"] == "no-store" and "retry-after" not in answer.headers


async def test_an_instance_with_a_store_down_is_not_ready_and_names_the_store() -> None:
    readiness = Readiness()
    for check in (ok, token_store_down):
        readiness.add(check)
    answer = await ask(readiness)
    assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
    assert answer.json() == {"ready": False, "unavailable": ["the token store is unavailable"]}
    head = await ask(readiness, "HEAD")
    assert head.status_code == 503 and head.content == b""
    refused = await ask(readiness, "POST")
    assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"


async def test_a_check_that_hangs_counts_as_failed_after_its_time_and_the_others_still_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gateway.readiness, "CHECK_SECONDS", 0.2)

    async def hangs() -> str | None:
        await anyio.sleep_forever()
        return None

    readiness = Readiness()
    for check in (hangs, token_store_down, ok):
        readiness.add(check)
    with anyio.fail_after(2):
        assert await readiness.problems() == [
            "a readiness check did not answer within 0.2 s",
            "the token store is unavailable",
        ]


async def test_a_served_gateway_answers_liveness_and_readiness_apart() -> None:
    served = Gateway(app=create_app())
    served.readiness.add(token_store_down)
    app = served.standalone("/mcp")
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        alive = await http.get("http://localhost/")
        ready = await http.get("http://localhost/ready")
    assert alive.status_code == 200 and alive.json()["mcp"] == "/mcp"
    assert ready.status_code == 503 and ready.json()["unavailable"] == ["the token store is unavailable"]
