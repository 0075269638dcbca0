"""`Transport` in-process: the REST request reaches a real Starlette app as one ASGI call, and its answer comes back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from gateway.dispatch import RestRequest, Transport

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


async def test_the_app_sees_the_path_query_headers_body_and_lifespan_state() -> None:
    transport = Transport(app=APP)
    transport.state = {"db": "open"}
    request = RestRequest(
        method="DELETE",
        path="/items/a%20b",
        query=(("q", "x y"), ("tag", "a"), ("tag", "b")),
        headers=(("x-arg", "from-args"), ("x-other", "1")),
        content=b'{"a": 1}',
        content_type="application/json",
    )
    response = await transport.send(request, [("authorization", "Bearer k"), ("x-arg", "credential")])
    seen = _json(response.body)
    assert (response.status, response.reason, response.headers["x-seen"]) == (200, "OK", "yes")
    assert (seen["method"], seen["path"], seen["raw_path"]) == ("DELETE", "/items/a b", "/items/a%20b")
    assert seen["query"] == "q=x%20y&tag=a&tag=b"
    headers = seen["headers"]
    assert isinstance(headers, dict)
    # Credentials come last, so an argument never overrides them; no Accept-Encoding, so no compressed answer.
    assert headers["x-arg"] == "credential" and headers["authorization"] == "Bearer k"
    assert (headers["host"], headers["content-type"], headers["content-length"]) == (
        "rest.internal",
        "application/json",
        "8",
    )
    assert "accept-encoding" not in headers
    assert (seen["body"], seen["state"]) == ('{"a": 1}', {"db": "open"})


async def test_form_and_multipart_bodies_are_encoded_for_the_app() -> None:
    transport = Transport(app=APP)
    form = RestRequest(method="POST", path="/form", data=(("note", "hi there"), ("tag", "a"), ("tag", "b")))
    multipart = RestRequest(
        method="POST", path="/form", data=(("note", "hi"),), files=(("file", ("a.txt", b"abc", "text/plain")),)
    )
    as_form = _json((await transport.send(form, [])).body)
    as_multipart = _json((await transport.send(multipart, [])).body)
    assert as_form["form"] == {"note": "hi there", "tag": "b"}
    assert isinstance(as_form["headers"], dict)
    assert as_form["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert as_multipart["form"] == {"note": "hi", "file": ["a.txt", "abc"]}
    assert isinstance(as_multipart["headers"], dict)
    assert as_multipart["headers"]["content-type"].startswith("multipart/form-data; boundary=")


async def test_a_streamed_answer_is_collected_and_repeated_headers_are_joined() -> None:
    response = await Transport(app=APP).send(RestRequest(method="GET", path="/chunks"), [])
    assert (response.status, response.body, response.content_type) == (200, b"one,two,three", "text/plain")
    assert response.headers["x-many"] == "a, b"


async def test_a_head_request_gets_the_headers_without_a_body() -> None:
    response = await Transport(app=APP).send(RestRequest(method="HEAD", path="/items/x"), [])
    assert (response.status, response.body, response.headers["x-seen"]) == (200, b"", "yes")


async def test_an_exception_in_the_app_reaches_the_caller() -> None:
    with pytest.raises(RuntimeError, match="the handler broke"):
        await Transport(app=APP).send(RestRequest(method="GET", path="/boom"), [])


async def test_an_app_that_returns_without_answering_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="without sending a complete HTTP response"):
        await Transport(app=silent).send(RestRequest(method="GET", path="/"), [])
