"""The documents the gateway reads for the catalog: URLs over HTTP within a deadline, an app's schema in-process."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
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
