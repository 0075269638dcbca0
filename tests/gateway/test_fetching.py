"""The documents the gateway reads for the catalog: URLs over HTTP within a deadline, an app's schema in-process."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from catalog.errors import DocumentError, FetchLimitError
from catalog.fetched import FetchLimits
from catalog.loading import load_document
from gateway.rest.fetching import fetch_document, http_fetch, load_app_document
from oauth.addresses import Address


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """An http server on 127.0.0.1 serving `tmp_path`; yields its base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def silent() -> Iterator[str]:
    """A URL on 127.0.0.1 whose server accepts connections and never answers."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/openapi.json"
    finally:
        listener.close()


def test_a_url_document_and_its_relative_refs_are_fetched(tmp_path: Path, served: str) -> None:
    (tmp_path / "v1" / "common").mkdir(parents=True)
    (tmp_path / "v1" / "api.yaml").write_text(
        dedent(
            """
            openapi: 3.0.0
            info: {title: T, version: '1'}
            paths:
              /a:
                get:
                  responses:
                    '200': {$ref: 'common/ok.yaml'}
                    '201': {$ref: 'file:///etc/hostname'}
            """
        ),
        encoding="utf-8",
    )
    (tmp_path / "v1" / "common" / "ok.yaml").write_text("description: fine\n", encoding="utf-8")
    document = load_document(f"{served}/v1/api.yaml", fetch=fetch_document)
    assert document.location == f"{served}/v1/api.yaml"
    responses = document.data["paths"]["/a"]["get"]["responses"]
    assert responses["200"] == {"$ref": "#/components/responses/ok"}
    assert document.data["components"]["responses"]["ok"] == {"description": "fine"}
    assert responses["201"] == {"$ref": "file:///etc/hostname"}
    assert any("would read a local file" in warning.message for warning in document.warnings)


def test_a_url_that_answers_404_is_refused_with_the_status(served: str) -> None:
    with pytest.raises(DocumentError, match="HTTP 404"):
        load_document(f"{served}/missing.yaml", fetch=fetch_document)


def test_a_served_html_page_is_called_an_html_page(tmp_path: Path, served: str) -> None:
    (tmp_path / "docs.html").write_text("<!doctype html><title>API docs</title>", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"HTML page, not an OpenAPI document; give the URL of the JSON or YAML"):
        load_document(f"{served}/docs.html", fetch=fetch_document)


def test_a_url_that_never_answers_fails_within_the_deadline_saying_so(silent: str) -> None:
    with pytest.raises(DocumentError, match=r"did not answer within 0.2 s"):
        load_document(silent, fetch=http_fetch(0.2))


@pytest.fixture
def stalling() -> Iterator[str]:
    """An http server on 127.0.0.1 whose /openapi.json refs /slow.json, which it never answers; yields the
    document's URL."""
    document = json.dumps(
        {"openapi": "3.1.0", "info": {"title": "T", "version": "1", "description": {"$ref": "slow.json"}}}
    ).encode()
    release = threading.Event()

    class Stalling(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/openapi.json":
                release.wait()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/openapi.json"
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_ref_that_never_answers_ends_the_load_at_its_deadline_not_the_fetch_timeout(stalling: str) -> None:
    started = time.monotonic()
    with pytest.raises(FetchLimitError, match=r"took longer than 0.5 s, the most one load may fetch for"):
        load_document(stalling, fetch=http_fetch(30), limits=FetchLimits(seconds=0.5))
    assert time.monotonic() - started < 10


Answer = tuple[int, dict[str, str], bytes]


class Host:
    """An http server on 127.0.0.1 answering GETs from `routes` (path -> status, headers, body; else 404), which
    records each request's path and Host header."""

    def __init__(self) -> None:
        self.routes: dict[str, Answer] = {}
        self.asked: list[tuple[str, str]] = []
        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host.asked.append((self.path, self.headers.get("Host", "")))
                status, headers, body = host.routes.get(self.path, (404, {}, b"no"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def document(self, path: str, info: dict[str, Any], **operation: Any) -> None:
        """Serve an OpenAPI document at `path` with this `info` and one GET /pets operation."""
        operation["responses"] = {"200": {"description": "ok"}}
        body = json.dumps(
            {"openapi": "3.0.3", "info": {"title": "T", "version": "1", **info}, "paths": {"/pets": {"get": operation}}}
        )
        self.routes[path] = (200, {"Content-Type": "application/json"}, body.encode())

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = (status, {"Location": location}, b"")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def hosts() -> Iterator[Callable[[], Host]]:
    """Starts `Host`s on demand, each on its own port (so its own origin), and stops them all afterwards."""
    started: list[Host] = []

    def start() -> Host:
        started.append(Host())
        return started[-1]

    try:
        yield start
    finally:
        for host in started:
            host.close()


def test_refs_to_other_origins_on_private_addresses_are_refused_without_asking_them(
    hosts: Callable[[], Host],
) -> None:
    author, internal = hosts(), hosts()
    internal.routes["/admin/config"] = (200, {"Content-Type": "application/json"}, b'{"db_password": "hunter2"}')
    author.document(
        "/openapi.json",
        {"description": {"$ref": f"{internal.url}/admin/config#/db_password"}},
        summary={"$ref": f"http://localhost:{internal.port}/admin/config#/db_password"},
        description={"$ref": "http://169.254.169.254/latest/meta-data/iam/security-credentials/role"},
    )
    document = load_document(f"{author.url}/openapi.json", fetch=fetch_document)
    assert internal.asked == []
    assert document.data["info"]["description"] == {"$ref": f"{internal.url}/admin/config#/db_password"}
    operation = document.data["paths"]["/pets"]["get"]
    assert operation["description"] == {"$ref": "http://169.254.169.254/latest/meta-data/iam/security-credentials/role"}
    text = "\n".join(warning.message for warning in document.warnings)
    assert (
        f"$ref '{internal.url}/admin/config#/db_password' cannot be resolved: '{internal.url}/admin/config' is on "
        "127.0.0.1, which is not a public address" in text
    )
    assert f"may reach its own origin ({author.url}) or hosts whose every address is public" in text
    assert "bundle the document into one file" in text
    assert f"'http://localhost:{internal.port}/admin/config' is on " in text
    assert "'http://169.254.169.254/latest/meta-data/iam/security-credentials/role' is on 169.254.169.254" in text


def test_a_redirect_to_a_private_address_is_refused_before_it_is_followed(hosts: Callable[[], Host]) -> None:
    author, internal = hosts(), hosts()
    internal.routes["/admin/config"] = (200, {}, b'{"db_password": "hunter2"}')
    author.redirect("/redir", f"{internal.url}/admin/config")
    author.document("/openapi.json", {"description": {"$ref": "redir#/db_password"}})
    document = load_document(f"{author.url}/openapi.json", fetch=fetch_document)
    assert internal.asked == []
    assert [path for path, _ in author.asked] == ["/openapi.json", "/redir"]
    assert document.data["info"]["description"] == {"$ref": "redir#/db_password"}
    assert (
        f"'{author.url}/redir' (redirected to '{internal.url}/admin/config') is on 127.0.0.1, which is not a "
        "public address" in document.warnings[0].message
    )


def test_the_documents_own_redirect_to_a_private_address_elsewhere_is_refused(hosts: Callable[[], Host]) -> None:
    author, internal = hosts(), hosts()
    internal.document("/openapi.json", {})
    author.redirect("/openapi.json", f"{internal.url}/openapi.json", status=301)
    with pytest.raises(DocumentError, match=r"\(redirected to .*\) is on 127.0.0.1, which is not a public address"):
        load_document(f"{author.url}/openapi.json", fetch=fetch_document)
    assert internal.asked == []


def test_refs_and_redirects_within_the_documents_own_origin_are_followed(hosts: Callable[[], Host]) -> None:
    author = hosts()
    author.redirect("/openapi.json", "/v2/openapi.json", status=308)
    author.document("/v2/openapi.json", {"description": {"$ref": "moved.json#/text"}})
    author.redirect("/moved.json", f"{author.url}/v2/common.json", status=301)
    author.routes["/v2/common.json"] = (200, {"Content-Type": "application/json"}, b'{"text": "Welcome"}')
    document = load_document(f"{author.url}/openapi.json", fetch=fetch_document)
    assert document.data["info"]["description"] == "Welcome"
    assert document.warnings == ()


def test_a_redirect_loop_is_refused_after_ten_hops(hosts: Callable[[], Host]) -> None:
    author = hosts()
    author.redirect("/a", "/b")
    author.redirect("/b", "/a")
    with pytest.raises(DocumentError, match=r"redirects more than 10 times"):
        fetch_document(f"{author.url}/a")
    assert len(author.asked) == 11


def test_a_ref_to_an_allowed_host_is_fetched_from_the_address_that_was_checked(hosts: Callable[[], Host]) -> None:
    if socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)[0][4][0] != "127.0.0.1":
        pytest.skip("localhost does not resolve to 127.0.0.1 first here")
    author, other = hosts(), hosts()
    other.routes["/common.json"] = (200, {"Content-Type": "application/json"}, b'{"text": "Welcome"}')
    author.document("/openapi.json", {"description": {"$ref": f"http://localhost:{other.port}/common.json#/text"}})
    checked: list[str] = []

    def loopback(address: Address) -> bool:
        checked.append(str(address))
        return address.is_loopback

    document = load_document(f"{author.url}/openapi.json", fetch=http_fetch(allow_address=loopback))
    assert document.data["info"]["description"] == "Welcome"
    assert checked == ["127.0.0.1"]  # the other origin only: the document's own needs no check
    assert other.asked == [("/common.json", f"localhost:{other.port}")]


def test_file_uris_are_read_as_the_catalog_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "api.json"
    path.write_bytes(b'{"openapi": "3.1.0"}')
    assert fetch_document(path.as_uri()).content == b'{"openapi": "3.1.0"}'


def fastapi_app() -> FastAPI:
    app = FastAPI(title="Pets", version="1.0")

    @app.get("/pets/{pet_id}")
    def read_pet(pet_id: int) -> dict[str, int]:
        return {"id": pet_id}

    return app


@pytest.mark.anyio
async def test_load_app_document_uses_openapi_when_the_app_has_it() -> None:
    document = await load_app_document(fastapi_app())
    assert "/pets/{pet_id}" in document.data["paths"]


@pytest.mark.anyio
async def test_a_plain_asgi_app_is_asked_for_its_schema_route() -> None:
    async def schema(request: Request) -> Response:
        assert request.method == "GET"
        return JSONResponse({"openapi": "3.0.1", "info": {"title": "S", "version": "1"}})

    app = Starlette(routes=[Route("/api/schema.json", schema)])
    document = await load_app_document(app, path="/api/schema.json")
    assert document.openapi == "3.0.1"
    assert document.location == "<app>"


@pytest.mark.anyio
async def test_an_asgi_app_without_the_route_is_refused_with_the_path_to_pass() -> None:
    with pytest.raises(DocumentError, match=r"GET /openapi.json on the app answered HTTP 404.*path="):
        await load_app_document(Starlette(routes=[]))
