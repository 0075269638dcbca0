"""`AsgiTransport`: the REST request reaches a real Starlette app as one ASGI call, and its answer comes back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

from gateway.requests import Peer, RestContext
from gateway.rest.request import RestRequest
from gateway.rest.transports import AsgiTransport

pytestmark = pytest.mark.anyio


async def _form(request: Request) -> dict[str, object] | None:
    if request.method != "POST":
        return None
    async with request.form() as form:
        fields: dict[str, object] = {}
        for key, value in form.multi_items():
            fields[key] = value if isinstance(value, str) else [value.filename, (await value.read()).decode()]
        return fields


async def echo(request: Request) -> Response:
    form = await _form(request)
    seen = {
        "method": request.method,
        "path": request.scope["path"],
        "raw_path": request.scope["raw_path"].decode(),
        "query": request.scope["query_string"].decode(),
        "headers": dict(request.headers),
        "body": None if form is not None else (await request.body()).decode(),
        "form": form,
        "state": dict(request.state._state),
        "client": list(request.client) if request.client else None,
        "scheme": request.url.scheme,
    }
    return JSONResponse(seen, headers={"x-seen": "yes"})


async def chunks(request: Request) -> Response:
    async def body() -> AsyncIterator[bytes]:
        for part in (b"one,", b"two,", b"three"):
            yield part

    response = StreamingResponse(body(), media_type="text/plain")
    response.headers.append("x-many", "a")
    response.headers.append("x-many", "b")
    return response


async def boom(request: Request) -> Response:
    raise RuntimeError("the handler broke")


async def silent(scope: object, receive: object, send: object) -> None:
    """An ASGI app that returns without answering."""


APP = Starlette(
    routes=[
        Route("/items/{name}", echo, methods=["GET", "HEAD", "DELETE"]),
        Route("/form", echo, methods=["POST"]),
        Route("/chunks", chunks),
        Route("/boom", boom),
    ]
)


def _json(body: bytes) -> dict[str, object]:
    value = json.loads(body)
    assert isinstance(value, dict)
    return value


NONE = RestContext()


async def test_the_app_sees_the_path_query_headers_body_and_lifespan_state() -> None:
    transport = AsgiTransport(APP)
    transport.state = {"db": "open"}
    request = RestRequest(
        method="DELETE",
        path="/items/a%20b",
        query=(("q", "x y"), ("tag", "a"), ("tag", "b")),
        headers=(("x-arg", "from-args"), ("x-other", "1")),
        content=b'{"a": 1}',
        content_type="application/json",
    )
    context = RestContext.of([("authorization", "Bearer k"), ("x-arg", "credential")])
    response = await transport.send(request, context)
    seen = _json(response.body)
    assert (response.status, response.reason, response.headers["x-seen"]) == (200, "OK", "yes")
    assert (seen["method"], seen["path"], seen["raw_path"]) == ("DELETE", "/items/a b", "/items/a%20b")
    assert seen["query"] == "q=x%20y&tag=a&tag=b"
    headers = seen["headers"]
    assert isinstance(headers, dict)
    # Credentials come last, so an argument never overrides them; no Accept-Encoding, so no compressed answer.
    assert headers["x-arg"] == "credential" and headers["authorization"] == "Bearer k"
    assert (headers["host"], headers["content-type"], headers["content-length"]) == (
        "localhost",
        "application/json",
        "8",
    )
    assert "accept-encoding" not in headers
    assert (seen["body"], seen["state"]) == ('{"a": 1}', {"db": "open"})


async def test_the_app_sees_the_callers_own_peer_and_host() -> None:
    peer = Peer(client=("203.0.113.9", 51000), scheme="https", server=("api.example.com", 443), host="api.example.com")
    response = await AsgiTransport(APP).send(RestRequest(method="GET", path="/items/x"), RestContext(peer=peer))
    seen = _json(response.body)
    assert (seen["client"], seen["scheme"]) == (["203.0.113.9", 51000], "https")
    assert isinstance(seen["headers"], dict) and seen["headers"]["host"] == "api.example.com"


async def test_the_peers_lifespan_state_reaches_the_app_when_the_gateway_runs_no_lifespan() -> None:
    peer = Peer(client=("127.0.0.1", 1), state={"db": "shared"})
    response = await AsgiTransport(APP).send(RestRequest(method="GET", path="/items/x"), RestContext(peer=peer))
    assert _json(response.body)["state"] == {"db": "shared"}


async def test_the_prefix_goes_before_every_documented_path() -> None:
    mounted = Starlette(routes=[Mount("/api", APP)])
    response = await AsgiTransport(mounted, prefix="/api/").send(RestRequest(method="GET", path="/items/x"), NONE)
    assert (response.status, _json(response.body)["raw_path"]) == (200, "/api/items/x")


async def test_multipart_fields_and_files_are_encoded_for_the_app() -> None:
    transport = AsgiTransport(APP)
    fields = RestRequest(method="POST", path="/form", data=(("note", "hi there"), ("tag", "a"), ("tag", "b")))
    multipart = RestRequest(
        method="POST", path="/form", data=(("note", "hi"),), files=(("file", ('a "b".txt', b"abc", "text/plain")),)
    )
    as_fields = _json((await transport.send(fields, NONE)).body)
    as_multipart = _json((await transport.send(multipart, NONE)).body)
    assert as_fields["form"] == {"note": "hi there", "tag": "b"}
    assert isinstance(as_fields["headers"], dict)
    assert as_fields["headers"]["content-type"].startswith("multipart/form-data; boundary=")
    assert as_multipart["form"] == {"note": "hi", "file": ["a %22b%22.txt", "abc"]}


async def test_a_streamed_answer_is_collected_and_repeated_headers_are_joined() -> None:
    response = await AsgiTransport(APP).send(RestRequest(method="GET", path="/chunks"), NONE)
    assert (response.status, response.body, response.content_type) == (200, b"one,two,three", "text/plain")
    assert response.headers["x-many"] == "a, b"


async def test_a_head_request_gets_the_headers_without_a_body() -> None:
    response = await AsgiTransport(APP).send(RestRequest(method="HEAD", path="/items/x"), NONE)
    assert (response.status, response.body, response.headers["x-seen"]) == (200, b"", "yes")


async def test_an_exception_in_the_app_is_the_apps_own_500_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    response = await AsgiTransport(APP).send(RestRequest(method="GET", path="/boom"), NONE)
    assert (response.status, response.raised, response.body) == (500, True, b"Internal Server Error")
    assert any(record.exc_info and "the handler broke" in str(record.exc_info[1]) for record in caplog.records)


async def test_the_apps_own_error_handler_answers_and_a_debug_traceback_never_does() -> None:
    async def handled(request: Request, error: Exception) -> Response:
        return JSONResponse({"detail": "database unavailable"}, status_code=503)

    own = Starlette(routes=[Route("/boom", boom)], exception_handlers={Exception: handled})
    debug = Starlette(routes=[Route("/boom", boom)], debug=True)
    answered = await AsgiTransport(own).send(RestRequest(method="GET", path="/boom"), NONE)
    traced = await AsgiTransport(debug).send(RestRequest(method="GET", path="/boom"), NONE)
    assert (answered.status, answered.raised, _json(answered.body)) == (503, True, {"detail": "database unavailable"})
    assert (traced.status, traced.body) == (500, b"Internal Server Error")


async def test_an_app_that_returns_without_answering_is_a_bare_500() -> None:
    response = await AsgiTransport(silent).send(RestRequest(method="GET", path="/"), NONE)
    assert (response.status, response.raised) == (500, True)
