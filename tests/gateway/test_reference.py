"""The reference page: exactly the agent's texts, cross-linked and escaped; served by the gateway; written by the
command line; and driven in headless Chromium (it renders, the filter narrows the list, links resolve), on the demo
and on GitHub's 1223 functions at a desktop and a phone size (the matches come first, the filter box stays on
screen, the counts follow the filter, a filter nothing matches says so).

The browser test needs Debian's Chromium and playwright-core, which `scripts/install-browser` installs
(/usr/bin/chromium, .tools/browser/); without them it is skipped, except in CI where it fails.
"""

from __future__ import annotations

import html
import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from starlette.types import Scope

from catalog.builder import load_catalog
from catalog.render import describe_function, explain_term
from demo import create_app
from gateway.cli.commands import main
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.options import Output
from gateway.policy import CallerPolicy, Policy
from gateway.reference import CONTENT_SECURITY_POLICY, ReferencePage, anchor, reference_page
from gateway.requests import RequestInfo
from tests.corpus import corpus_catalog
from tests.gateway.conftest import serve_http

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".artifacts"
PLAYWRIGHT_CORE = REPO / ".tools" / "browser" / "node_modules" / "playwright-core"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
BROWSER_SCRIPT = Path(__file__).with_name("reference_page_browser.js")


class Page(HTMLParser):
    """The parts of a page the tests look at: ids, in-page links, element names, and the text of each entry."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: list[str] = []
        self.entries: dict[str, str] = {}
        self.scripts = 0
        self._entry: str | None = None
        self._depth = 0
        self._in_pre = False
        self._text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.tags.append(tag)
        if tag == "script":
            self.scripts += 1
        if values.get("id"):
            self.ids.add(str(values["id"]))
        href = values.get("href")
        if tag == "a" and href is not None and href.startswith("#"):
            self.links.append(href)
        if tag == "article":
            self._entry = values.get("id")
        if tag == "pre" and self._entry is not None and not self._in_pre and not self._text:
            self._in_pre = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self._in_pre:
            self._in_pre = False
            if self._entry is not None:
                self.entries[self._entry] = "".join(self._text)
        if tag == "article":
            self._entry = None
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._in_pre:
            self._text.append(data)


@pytest.fixture(scope="module")
def demo() -> Gateway:
    return Gateway(app=create_app(), whoami="users.get_current_user", tools=["orders.get_order"])


@pytest.fixture(scope="module")
def demo_page(demo: Gateway) -> str:
    return reference_page(demo)


def test_entries_are_exactly_what_describe_function_and_explain_term_return(demo: Gateway, demo_page: str) -> None:
    page = Page(demo_page)
    for function in demo.catalog.functions():
        assert page.entries[anchor("fn", function.name)] == describe_function(demo.catalog, function)
    for term in demo.catalog.terms:
        assert page.entries[anchor("term", term.name)] == explain_term(demo.catalog, term)


def test_page_shows_instructions_every_tool_module_function_and_term(demo: Gateway, demo_page: str) -> None:
    page = Page(demo_page)
    assert html.escape(demo.instructions.split("\n")[0]) in demo_page
    assert {anchor("tool", spec.name) for spec in demo.tools()} <= page.ids
    assert {anchor("module", module.name) for module in demo.catalog.modules} <= page.ids
    assert len([i for i in page.ids if i.startswith("fn-")]) == len(demo.catalog.functions()) == 25
    assert len([i for i in page.ids if i.startswith("term-")]) == len(demo.catalog.terms) == 29
    assert "tool-orders-get_order" in page.ids and '"readOnlyHint: true"' in demo_page


def test_arg_types_link_to_terms_and_terms_link_the_functions_that_use_them(demo_page: str) -> None:
    create_order = demo_page[demo_page.index('id="fn-orders.create_order"') :]
    create_order = create_order[: create_order.index("</article>")]
    # items: OrderItemCreate[] in the signature and in the Args list, the result type, and the Terms line.
    assert create_order.count('href="#term-OrderItemCreate"') == 3
    assert 'Returns: <a href="#term-Order">Order</a>' in create_order
    assert 'href="#term-customer_id"' not in create_order  # argument names are not types
    status = demo_page[demo_page.index('id="term-OrderStatus"') :]
    status = status[: status.index("</article>")]
    assert 'Accepted by: <a href="#fn-customers.list_customer_orders">' in status
    order = demo_page[demo_page.index('id="term-Order"') :]
    order = order[: order.index("</article>")]
    assert 'status: <a href="#term-OrderStatus">OrderStatus</a>' in order  # a field's type
    assert 'Also in the signatures of: <a href="#fn-orders.create_order">' not in order  # listed already


def test_every_in_page_link_has_a_target(demo_page: str) -> None:
    page = Page(demo_page)
    assert len(page.links) > 200
    assert {link[1:] for link in page.links} <= page.ids


@pytest.mark.slow
def test_githubs_page_links_every_function_and_term_and_every_link_resolves() -> None:
    catalog = corpus_catalog("github-api.github.com.json")
    page = Page(reference_page(Gateway(spec=catalog)))
    assert len(catalog.functions()) == 1223
    assert len([i for i in page.ids if i.startswith("fn-")]) == 1223
    assert len([i for i in page.ids if i.startswith("term-")]) == len(catalog.terms)
    assert {link[1:] for link in page.links} <= page.ids
    assert len({link for link in page.links if link.startswith("#term-")}) > 500


def test_everything_from_the_document_is_escaped() -> None:
    evil = "<script>alert(1)</script><img src=x onerror=alert(1)>"
    document = {
        "openapi": "3.1.0",
        "info": {"title": f"Evil {evil}", "version": '1"><b>'},
        "tags": [{"name": "things", "description": f"Things {evil}"}],
        "paths": {
            "/things": {
                "get": {
                    "operationId": "listThings",
                    "tags": ["things"],
                    "summary": f"List {evil}",
                    "description": f"All </pre></article>{evil}",
                    "parameters": [
                        {"name": "q", "in": "query", "description": evil, "schema": {"type": "string", "enum": [evil]}}
                    ],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                        }
                    },
                }
            }
        },
        "components": {
            "schemas": {"Thing": {"type": "object", "description": evil, "properties": {"name": {"type": "string"}}}}
        },
    }
    gateway = Gateway(spec=load_catalog(document), output=Output(instructions=f"</pre>{evil}", name=f"x{evil}"))
    text = reference_page(gateway)
    page = Page(text)
    assert page.scripts == 1  # ours
    assert "img" not in page.tags and "b" not in page.tags
    assert "<script>alert(1)" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert page.entries["fn-things.list_things"] == describe_function(gateway.catalog, gateway.catalog.functions()[0])


def test_the_page_allows_only_its_own_style_and_script() -> None:
    assert CONTENT_SECURITY_POLICY.startswith("default-src 'none'; style-src 'sha256-")
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY


@pytest.mark.anyio
async def test_the_gateway_serves_the_page_rendered_once_with_gzip_etag_and_csp() -> None:
    gateway = Gateway(app=create_app(), output=Output(reference_path="/reference"))
    app = gateway.standalone()
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://localhost") as client:
        first = await client.get("/reference", headers={"accept-encoding": "gzip"})
        assert first.status_code == 200
        assert first.headers["content-type"] == "text/html; charset=utf-8"
        assert first.headers["content-encoding"] == "gzip"
        assert first.headers["content-security-policy"] == CONTENT_SECURITY_POLICY + "; frame-ancestors 'none'"
        assert first.headers["x-content-type-options"] == "nosniff"
        assert first.text == reference_page(gateway)
        plain = await client.get("/reference", headers={"accept-encoding": "identity"})
        assert "content-encoding" not in plain.headers and plain.text == first.text
        cached = await client.get("/reference", headers={"if-none-match": first.headers["etag"]})
        assert cached.status_code == 304 and cached.content == b""
        head = await client.head("/reference")
        assert head.status_code == 200 and head.content == b""
        assert (await client.post("/reference")).status_code == 405
        assert (await client.get("/")).json()["reference"] == "/reference"


@pytest.mark.anyio
async def test_a_mounted_gateway_serves_the_page_next_to_the_app() -> None:
    app = create_app()
    Gateway(app=app, output=Output(reference_path="/docs/agents")).mount(app, "/mcp")
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://localhost") as client:
        response = await client.get("/docs/agents")
    assert response.status_code == 200 and 'id="fn-orders.create_order"' in response.text


@pytest.mark.anyio
async def test_the_page_app_renders_once_however_many_ask_at_the_same_time() -> None:
    renders: list[int] = []

    def render(caller: CallerPolicy, hidden: frozenset[str]) -> str:
        renders.append(1)
        return "<!doctype html><title>t</title>"

    policy = Policy(load_catalog(create_app()))

    async def anyone(scope: Scope) -> CallerPolicy:
        return policy.of(RequestInfo(transport="http"))

    page = ReferencePage(render, anyone)
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(page), base_url="http://localhost") as client,
        anyio.create_task_group() as tg,
    ):
        for _ in range(5):
            tg.start_soon(client.get, "/")
    assert renders == [1]


def test_a_reference_path_must_be_a_path() -> None:
    with pytest.raises(ConfigError, match="reference_path must be a URL path"):
        Gateway(app=create_app(), output=Output(reference_path="reference"))


def test_reference_command_writes_the_page(tmp_path: Path, demo_page: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "reference.html"
    assert main(["reference", "-o", str(path)]) == 0
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and "<h1>demo-shop " in text
    assert f"wrote {path}" in capsys.readouterr().err
    assert main(["reference"]) == 0
    assert capsys.readouterr().out == text


# Headless Chromium


def _node() -> str | None:
    bundled = REPO / ".tools" / "bin" / "node"
    return str(bundled) if bundled.exists() else shutil.which("node")


_BROWSER_MISSING = not (CHROMIUM.exists() and PLAYWRIGHT_CORE.is_dir() and _node())


@pytest.mark.anyio
@pytest.mark.skipif(
    _BROWSER_MISSING and not os.environ.get("CI"), reason="no Chromium or playwright-core: run scripts/install-browser"
)
async def test_the_page_in_chromium_renders_filters_and_links() -> None:
    node = _node()
    assert node is not None and not _BROWSER_MISSING, "CI must install the browser: scripts/install-browser"
    ARTIFACTS.mkdir(exist_ok=True)
    gateway = Gateway(
        app=create_app(),
        whoami="users.get_current_user",
        tools=["orders.get_order"],
        output=Output(reference_path="/reference"),
    )
    environment = {**os.environ, "PLAYWRIGHT_CORE": str(PLAYWRIGHT_CORE), "CHROMIUM": str(CHROMIUM)}
    async with serve_http(gateway.standalone()) as base:
        with anyio.fail_after(90):
            result = await anyio.run_process(
                [node, str(BROWSER_SCRIPT), f"{base}/reference", str(ARTIFACTS)], env=environment, check=False
            )
    assert result.returncode == 0, result.stderr.decode()
    seen: dict[str, Any] = json.loads(result.stdout)
    assert seen["status"] == 200 and seen["contentEncoding"] == "gzip"
    assert seen["title"] == "Demo Shop API — reference for agents"
    assert seen["problems"] == []  # no script error, no Content-Security-Policy violation
    assert (seen["functionsShown"], seen["termsShown"], seen["toolsShown"]) == (25, 29, 6)
    assert seen["filterShown"] and seen["count"] == "70 entries"
    assert seen["links"] > 200 and seen["brokenLinks"] == []
    assert seen["filtered"] == ["fn-orders.cancel_order"]
    assert seen["filteredModules"] == ["module-orders"]
    assert seen["filteredTerms"] == ["term-OrderStatus", "term-OrderUpdate"]  # their descriptions say "cancelled"
    assert seen["filteredCount"] == "3 of 70 match"
    assert seen["afterRevealShown"] == 25
    assert seen["slashFocuses"] == "filter" and 0 < seen["typed"] < 25 and seen["escapeRestores"] == 25
    assert seen["hashAfterClick"] == "#term-OrderItemCreate" and seen["targetMatches"] == "term-OrderItemCreate"
    assert not seen["noScriptFilterShown"]
    assert (seen["noScriptFunctionsShown"], seen["noScriptTermsShown"]) == (25, 29)
    for name in ("reference-page.png", "reference-page-filtered.png", "reference-page-term.png"):
        assert (ARTIFACTS / name).stat().st_size > 10_000


# Headless Chromium on GitHub's page (1223 functions, 969 terms): loaded once for these tests, at both sizes.

GITHUB = "github-api.github.com.json"
GITHUB_QUERY = "pull request review"
FILTERING_SCRIPT = Path(__file__).with_name("reference_page_filtering.js")
SIZES = ["desktop", "phone"]


@pytest.fixture(scope="module")
def github_in_chromium() -> dict[str, Any]:
    """What Chromium showed of GitHub's page at 1280x800 and on a 390x844 phone (see reference_page_filtering.js)."""
    node = _node()
    if _BROWSER_MISSING or node is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install the browser: scripts/install-browser")
        pytest.skip("no Chromium or playwright-core: run scripts/install-browser")
    ARTIFACTS.mkdir(exist_ok=True)
    gateway = Gateway(spec=corpus_catalog(GITHUB), output=Output(reference_path="/reference"))
    environment = {**os.environ, "PLAYWRIGHT_CORE": str(PLAYWRIGHT_CORE), "CHROMIUM": str(CHROMIUM)}
    command = [node, str(FILTERING_SCRIPT), "", str(ARTIFACTS), GITHUB_QUERY]

    async def drive() -> bytes:
        async with serve_http(gateway.standalone()) as base:
            command[2] = f"{base}/reference"
            with anyio.fail_after(120):
                result = await anyio.run_process(command, env=environment, check=False)
        assert result.returncode == 0, result.stderr.decode()
        return result.stdout

    seen: dict[str, Any] = json.loads(anyio.run(drive))
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
def test_while_filtering_githubs_page_the_first_match_is_at_the_top(
    github_in_chromium: dict[str, Any], size: str
) -> None:
    filtered = github_in_chromium[size]["filtered"]
    first = filtered["firstMatch"]
    assert first["id"].startswith("fn-")
    # Only the count line and the headings of the match's section stand above it; the instructions fold away.
    assert filtered["above"] == ["p.status", "h2", "h3", "p.doc"]
    assert not filtered["instructionsShown"] and not filtered["ledeShown"]
    assert filtered["filter"]["bottom"] <= first["top"] < 0.4 * filtered["viewportHeight"]


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("state", ["scrolled", "filteredScrolled"])
def test_the_filter_box_stays_on_screen_while_scrolling_githubs_page(
    github_in_chromium: dict[str, Any], size: str, state: str
) -> None:
    seen = github_in_chromium[size][state]
    assert seen["scrollY"] > seen["viewportHeight"]
    assert 0 <= seen["filter"]["top"] and seen["filter"]["bottom"] <= 0.1 * seen["viewportHeight"]
    assert seen["filter"]["onTop"]  # nothing covers it


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
def test_a_filter_nothing_matches_on_githubs_page_says_so_with_the_query(
    github_in_chromium: dict[str, Any], size: str
) -> None:
    nothing = github_in_chromium[size]["nothing"]
    query = github_in_chromium["nothing"]
    assert nothing["status"].startswith(f"No tool, function or term matches \u201c{query}\u201d: try fewer")
    assert nothing["filter"]["bottom"] <= nothing["statusBox"]["top"] < 0.3 * nothing["viewportHeight"]
    assert nothing["count"] == "no matches"
    assert nothing["sectionsShown"] == [] and not nothing["instructionsShown"]
    assert (nothing["functionsShown"], nothing["termsShown"], nothing["toolsShown"]) == (0, 0, 0)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
def test_the_counts_on_githubs_page_follow_the_filter(github_in_chromium: dict[str, Any], size: str) -> None:
    seen = github_in_chromium[size]
    filtered = seen["filtered"]
    shown = (filtered["functionsShown"], filtered["modulesShown"], filtered["termsShown"], filtered["toolsShown"])
    assert shown == (26, 4, 25, 0)
    assert filtered["status"] == f"26 functions in 4 modules and 25 terms match \u201c{GITHUB_QUERY}\u201d."
    assert filtered["count"] == "51 of 2207 match"
    assert (filtered["modulesHeading"], filtered["termsHeading"]) == ("4/47", "25/969")
    # On a desktop the contents follow too; on a phone they fold away with the instructions.
    contents = ("4/47", "25/969") if size == "desktop" else (None, None)
    assert (filtered["tocModules"], filtered["tocTerms"]) == contents
    for whole in (seen["loaded"], seen["cleared"]):
        assert whole["status"] is None and whole["count"] == "2207 entries"
        assert (whole["modulesHeading"], whole["termsHeading"]) == ("47", "969")
        assert (whole["tocModules"], whole["tocTerms"]) == ("47", "969")
        assert (whole["functionsShown"], whole["modulesShown"], whole["termsShown"]) == (1223, 47, 969)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
def test_clearing_the_filter_on_githubs_page_brings_the_instructions_back_in_the_readers_place(
    github_in_chromium: dict[str, Any], size: str
) -> None:
    seen = github_in_chromium[size]
    # Cleared at once: the page is where it was before filtering, instructions and all.
    assert seen["cleared"]["instructionsShown"] and seen["cleared"]["ledeShown"]
    assert seen["cleared"]["scrollY"] == seen["loaded"]["scrollY"] == 0
    # Cleared after scrolling through the matches: the entry at the top stays where it was.
    kept, scrolled = seen["clearedInPlace"], seen["filteredScrolled"]
    assert kept["instructionsShown"]
    assert kept["atTop"]["id"] == scrolled["atTop"]["id"]
    assert abs(kept["atTop"]["top"] - scrolled["atTop"]["top"]) < 2


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
def test_githubs_page_keeps_its_policy_shortcut_links_and_reads_without_javascript(
    github_in_chromium: dict[str, Any], size: str
) -> None:
    seen = github_in_chromium[size]
    assert seen["status"] == 200 and seen["csp"] == CONTENT_SECURITY_POLICY + "; frame-ancestors 'none'"
    assert seen["problems"] == []  # no script error, no Content-Security-Policy violation
    assert seen["slashFocuses"] == "filter"
    # A link from a match to a term the filter hides clears the filter and brings the term to the top.
    for shown in (seen["afterTermLink"], seen["afterHiddenLink"]):
        assert 0 <= shown["top"] < 0.2 * shown["viewportHeight"]
    assert seen["afterTermLink"]["target"] == seen["termLink"][1:]
    assert seen["noScript"] == {
        "filterShown": False,
        "statusShown": False,
        "instructionsShown": True,
        "functionsShown": 1223,
        "termsShown": 969,
    }
    for name in ("", "-scrolled", "-filtered", "-nothing"):
        assert (ARTIFACTS / f"reference-github-{size}{name}.png").stat().st_size > 10_000


def test_the_page_shows_the_resources_and_prompts(demo: Gateway, demo_page: str) -> None:
    for uri in ("catalog://overview", "catalog://functions/{function}", "catalog://terms/{term}"):
        assert f'id="{anchor("resource", uri)}"' in demo_page
    for prompt in demo.prompts.prompts():
        assert f'id="{anchor("prompt", prompt.name)}"' in demo_page
    assert "module (required) — The module to explore." in demo_page
    assert '<a href="#resources">Resources</a>' in demo_page and '<a href="#prompts">Prompts</a>' in demo_page
