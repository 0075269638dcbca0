"""The views in headless Chromium inside a real MCP Apps host: the official SDK's AppBridge and the official
TypeScript MCP client, talking to the gateway on real uvicorn (tests/gateway/apps_host/), at 2026-07-28 and
through the initialize handshake. A list renders as a table that sorts and pages through the host, one object as
a detail; hostile strings from the API and the document stay
text; the page's policy blocks every outside load; the frame calls only what its caller may; 500 rows render
quickly; an approval form performs a write after Confirm and nothing after Cancel, folds optional headers the agent
left out, marks a destructive call's Confirm as dangerous, types a list a line each and checks items and formats
before calling. Screenshots go to the test's
temporary directory; their paths are printed.

Needs Debian's Chromium and playwright-core (`scripts/install-browser`) and the host's npm packages
(`scripts/install-apps-host`); without them it is skipped, except in CI where it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any, Literal
from uuid import UUID

import anyio
import pytest
from fastapi import FastAPI, Query
from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Route

from demo import ADMIN_KEY, create_app
from gateway.apps import bundle_bytes
from gateway.gateway import Gateway
from gateway.options import Effects, Output
from gateway.policy import Access
from tests.gateway.conftest import serve_http

REPO = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("TOOLS_DIR", REPO / ".tools"))
PLAYWRIGHT_CORE = TOOLS / "browser" / "node_modules" / "playwright-core"
HOST_PACKAGES = TOOLS / "apps-host" / "node_modules"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
HOST = Path(__file__).with_name("apps_host")
SCENARIOS = (
    "table",
    "detail",
    "handshake",
    "hostile",
    "csp",
    "policy",
    "rows500",
    "form",
    "cancel",
    "folded",
    "destructive",
    "lists",
)

#: Strings an API might hold that would run or load something if a page took them for markup or a link.
HOSTILE = (
    '<img src=x onerror="window.__pwned=1">',
    "</script><script>window.__pwned=2</script>",
    "javascript:window.__pwned=3",
    '"><svg onload="window.__pwned=4">',
    "\u2028<!-- {{constructor.constructor('window.__pwned=5')()}}",
)


class Note(BaseModel):
    id: int
    title: str = Field(title='Title <img src=x onerror="window.__pwned=7">')
    body: str
    link: str


class NoteDraft(BaseModel):
    """A note to create; each one the API receives is kept in DRAFTS."""

    title: str
    owner: UUID
    due: date | None = None
    tags: list[str] = []
    watchers: list[int] = []
    priority: list[Literal["low", "high"]] = []
    #: A format the document names that is a name every JavaScript object has: the form must not take it for one
    #: of the formats it checks.
    ref: str = Field("", json_schema_extra={"format": "constructor"})


DRAFTS: list[NoteDraft] = []


def notes_app() -> FastAPI:
    """An API whose data and document are hostile, listing up to 500 notes at once (offset paging, a bare array);
    its one write takes lists of strings, numbers and an enum's values, a UUID and a date."""
    app = FastAPI(title="Notes", version="1")
    notes = [
        Note(
            id=index,
            title=HOSTILE[index % len(HOSTILE)],
            body=f"note {index}: " + "a long body that a table folds " * 6,
            link="javascript:window.__pwned=6",
        )
        for index in range(1, 601)
    ]

    @app.get("/notes", operation_id="list_notes", tags=["notes"], summary="Notes")
    def list_notes(offset: int = Query(0, ge=0), limit: int = Query(20, ge=1, le=500)) -> list[Note]:
        return notes[offset : offset + limit]

    @app.post("/notes", operation_id="create_note", tags=["notes"], summary="Create a note")
    def create_note(draft: NoteDraft) -> NoteDraft:
        DRAFTS.append(draft)
        return draft

    return app


def _tools_missing() -> str | None:
    node = shutil.which("node") or (str(TOOLS / "bin" / "node") if (TOOLS / "bin" / "node").exists() else None)
    if node is None or not CHROMIUM.exists() or not PLAYWRIGHT_CORE.exists():
        return "Chromium or playwright-core is missing: run scripts/install-browser"
    if not (HOST_PACKAGES / ".bin" / "esbuild").exists():
        return "the MCP Apps host's packages are missing: run scripts/install-apps-host"
    return None


@pytest.fixture(scope="module")
def host_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The host page's script: host.mjs with the official packages, bundled by esbuild (test setup only)."""
    missing = _tools_missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    out = tmp_path_factory.mktemp("apps-host") / "host.js"
    subprocess.run(
        [
            str(HOST_PACKAGES / ".bin" / "esbuild"),
            str(HOST / "host.mjs"),
            "--bundle",
            "--format=iife",
            "--platform=browser",
            f"--outfile={out}",
            "--log-level=warning",
        ],
        check=True,
        env={**os.environ, "NODE_PATH": str(HOST_PACKAGES)},
        timeout=120,
    )
    return out


@asynccontextmanager
async def _site(bundle: Path, outside: list[str]) -> AsyncIterator[str]:
    """The host page, the demo's gateway (writes wait for approval; users.list_users hidden) at /mcp, the hostile
    API's gateway at /fixture/mcp, and /outside.png, which records every request that reaches it."""
    demo = Gateway(
        app=create_app(),
        whoami="users.get_current_user",
        tools=["orders.get_order"],
        access=Access(hide=["users.list_users"]),
        effects=Effects(approval="writes"),
    )
    fixture = Gateway(app=notes_app(), output=Output(max_output_bytes=400_000), effects=Effects(approval="writes"))

    async def page(request: Request) -> Response:
        return FileResponse(HOST / "host.html", media_type="text/html")

    async def script(request: Request) -> Response:
        return FileResponse(bundle, media_type="text/javascript")

    async def probe(request: Request) -> Response:
        outside.append(str(request.url))
        return HTMLResponse("", status_code=204)

    async def icon(request: Request) -> Response:
        return Response(status_code=204)

    routes = [
        Route("/host", page),
        Route("/host.js", script),
        Route("/outside.png", probe),
        Route("/favicon.ico", icon),
        Route("/mcp", demo.asgi(), methods=["POST"]),
        Route("/fixture/mcp", fixture.asgi(), methods=["POST"]),
    ]
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(demo.lifespan())
        await stack.enter_async_context(fixture.lifespan())
        async with serve_http(Starlette(routes=routes), lifespan="off") as base:
            yield base


@pytest.fixture(scope="module")
def observed(host_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Every scenario of drive.js in one Chromium, against the site on real uvicorn; with the outside probe's log."""
    artifacts = tmp_path_factory.mktemp("apps-screenshots")
    outside: list[str] = []

    async def run() -> dict[str, Any]:
        async with _site(host_bundle, outside) as base:
            env = {
                **os.environ,
                "PLAYWRIGHT_CORE": str(PLAYWRIGHT_CORE),
                "CHROMIUM": str(CHROMIUM),
                "TOKEN": ADMIN_KEY,
            }
            node = shutil.which("node") or str(TOOLS / "bin" / "node")
            command = [node, str(HOST / "drive.js"), base, str(artifacts), *SCENARIOS]
            with anyio.fail_after(180):
                done = await anyio.run_process(command, env=env, check=False)
            assert done.returncode == 0, done.stderr.decode()[-3000:]
            answer: dict[str, Any] = json.loads(done.stdout)
            return answer

    seen = anyio.run(run)
    seen["outside"] = outside
    for shot in sorted(artifacts.glob("*.png")):
        print(f"screenshot: {shot}")
    yield seen


def _fine(seen: dict[str, Any], name: str, *, expected: str | None = None) -> dict[str, Any]:
    """The observations of scenario `name`, which ran to its end without an error on the page but the `expected`
    ones (the console lines that contain it)."""
    scenario: dict[str, Any] = seen[name]
    assert "failed" not in scenario, scenario.get("failed")
    assert [problem for problem in scenario["problems"] if expected is None or expected not in problem] == []
    return scenario


def test_a_list_is_a_table_that_sorts_and_pages_through_the_host(observed: dict[str, Any]) -> None:
    seen = _fine(observed, "table")
    assert seen["uri"] == "ui://views/call_function" and seen["mimeType"] == "text/html;profile=mcp-app"
    assert seen["resourceMeta"]["ui"]["csp"] == {"connectDomains": [], "resourceDomains": []}
    assert seen["headers"][:3] == ["Id", "Customer Id", "status"]  # a column's own title, else its name
    assert len(seen["firstPage"]) == 5
    assert seen["ascending"] == sorted(seen["ascending"]) and seen["descending"] == sorted(seen["descending"])[::-1]
    assert seen["sortMark"] == "descending"
    assert seen["previousDisabledFirst"] is True and seen["previousDisabledSecond"] is False
    assert len(seen["secondPage"]) == 5 and not set(seen["secondPage"]) & set(seen["firstPage"])
    assert seen["backToFirst"] == seen["firstPage"]
    assert seen["sizes"] > 0  # the view tells the host its height


def test_one_object_is_a_detail_in_its_promoted_tools_own_view(observed: dict[str, Any]) -> None:
    seen = _fine(observed, "detail")
    assert seen["uri"] == "ui://views/orders.get_order"
    assert seen["fields"][:3] == ["id", "customer_id", "status"]
    assert {"line1", "city", "country"} <= set(seen["nested"])  # the shipping address, as a nested detail
    assert seen["lines"][:2] == ["product_id", "product_name"] and seen["lineRows"] >= 1  # its lines, as a table


def test_a_host_whose_client_uses_the_initialize_handshake_shows_views_too(observed: dict[str, Any]) -> None:
    # With a session, the client asks for an SSE stream with GET: 405 says there is none (MCP 2025-11-25 transports).
    seen = _fine(observed, "handshake", expected="405 (Method Not Allowed)")
    assert seen["version"] == "2025-11-25" and seen["uri"] == "ui://views/call_function"
    assert seen["fields"][:3] == ["id", "customer_id", "status"]


def test_hostile_strings_from_the_api_and_the_document_are_shown_as_text_and_never_run(
    observed: dict[str, Any],
) -> None:
    seen = _fine(observed, "hostile")
    page = seen["page"]
    assert page["pwned"] is None and seen["hostPwned"] is None
    assert page["images"] == 0 and page["links"] == 0 and page["iframes"] == 0 and page["scripts"] == 1
    assert '<img src=x onerror="window.__pwned=1">' in page["text"]
    assert "</script><script>window.__pwned=2</script>" in page["text"]
    assert "javascript:window.__pwned=6" in page["text"]
    assert 'Title <img src=x onerror="window.__pwned=7">' in page["text"]  # a column title from the document


def test_the_pages_policy_blocks_every_outside_load(observed: dict[str, Any]) -> None:
    seen = _fine(observed, "csp", expected="Content Security Policy")  # the reports of what it blocked
    tried = seen["attempts"]["tried"]
    assert tried == {"fetch": "blocked", "image": "blocked", "script": "blocked", "style": "blocked"}
    assert {"connect-src", "img-src", "script-src-elem", "style-src-elem"} <= set(seen["attempts"]["violations"])
    assert observed["outside"] == []  # nothing reached the server


def test_the_frame_calls_only_what_its_caller_may_call(observed: dict[str, Any]) -> None:
    seen = _fine(observed, "policy")
    hidden, allowed = seen["answers"]["hidden"], seen["answers"]["allowed"]
    assert hidden["result"]["isError"] is True
    assert hidden["result"]["content"][0]["text"].startswith("Unknown function 'users.list_users'")
    assert allowed["result"]["isError"] is False and allowed["result"]["structuredContent"]["id"] == 2


def test_500_rows_render_without_freezing(observed: dict[str, Any]) -> None:
    seen = _fine(observed, "rows500")
    assert seen["rows"] == 500
    timing = f"500 rows rendered in {seen['renderMs']} ms, sorted in {seen['sortMs']} ms"
    print(f"{timing}; the view code is {bundle_bytes()} bytes")
    assert seen["renderMs"] < 1000 and seen["sortMs"] < 1000


def test_the_approval_form_performs_the_write_after_confirm_and_tells_the_model(observed: dict[str, Any]) -> None:
    seen = _fine(observed, "form")
    assert seen["status"] == "awaiting_approval"
    assert seen["labels"][0] == "Order Id *"
    assert seen["choices"] == ["", "pending", "paid", "shipped", "delivered", "cancelled"]
    assert seen["prefilled"] == "proposed by the agent"
    assert "approved by a person" in seen["after"]
    assert seen["order"]["note"] == "approved by a person"
    told = seen["modelContext"][0]["content"][0]["text"]
    assert told.startswith("The person approved the call of orders.update_order")


def test_cancel_performs_nothing_and_tells_the_model(observed: dict[str, Any]) -> None:
    seen = _fine(observed, "cancel")
    assert seen["shown"] == "Cancelled: orders.update_order was not called."
    assert seen["after"] == seen["before"] != "must not be written"
    assert seen["modelContext"][0]["content"][0]["text"].startswith("The person cancelled the call")


def test_an_optional_header_the_agent_left_out_is_folded_under_more_arguments_after_the_others(
    observed: dict[str, Any],
) -> None:
    seen = _fine(observed, "folded")
    left = seen["left"]
    assert left["more"] == {"open": False, "summary": "More arguments (1)"}
    assert left["folded"] == ["Idempotency-Key"] and left["visible"] is False
    assert left["end"] == "DETAILS"  # after every other field
    assert seen["opened"] is True
    proposed = seen["proposed"]  # the agent proposed a key: it is in view, nothing is folded
    assert proposed["more"] is None and proposed["folded"] == [] and proposed["visible"] is True


def test_a_destructive_calls_confirm_is_a_danger_button_unlike_a_writes(observed: dict[str, Any]) -> None:
    seen = _fine(observed, "destructive")
    assert seen["write"]["className"] == "primary" and seen["destructive"]["className"] == "primary danger"
    assert seen["destructive"]["label"] == seen["write"]["label"] == "Confirm"
    assert seen["destructive"]["background"] == "rgb(180, 35, 24)"  # the page's --danger, not the write's blue
    assert seen["write"]["background"] == "rgb(47, 111, 235)"
    assert seen["shown"] == "Cancelled: customers.delete_customer was not called."


def test_the_form_types_a_list_a_line_each_and_checks_items_and_formats_before_calling(
    observed: dict[str, Any],
) -> None:
    seen = _fine(observed, "lists")
    assert seen["controls"] == {"tags": "textarea", "watchers": "textarea", "priority": "textarea", "owner": "input"}
    assert seen["prefilled"] == {"tags": "red\nblue", "watchers": "1\n2"}
    assert seen["ownerHint"] == "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    assert seen["refused"] == [
        "Owner must be a UUID (8-4-4-4-12 hexadecimal digits).",
        "Watchers (line 2) must be a whole number.",
        "Priority (line 1) must be one of: low, high.",
        "Due must be a date as YYYY-MM-DD.",
    ]
    assert seen["stillAsking"] is True  # each refusal left the form as it was
    told = seen["modelContext"][0]["content"][0]["text"]
    sent = json.loads(told.split(" with ", 1)[1].split("; it answered", 1)[0])
    assert sent == {
        "title": "Plan",
        "owner": "0b9a4f64-8d2e-4c1a-9a53-6f4f2c1d7e10",
        "due": "2026-12-24",
        "tags": ["red", "green"],
        "watchers": [3, 4],
        "priority": ["high"],
        "ref": "r-1",
    }
    assert [draft.model_dump(mode="json") for draft in DRAFTS] == [sent]  # the one call, after the last fix
    assert "green" in seen["after"]  # the API's answer, shown
