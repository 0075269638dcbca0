"""The two REST transports side by side: what an app in-process, or an upstream server over real HTTP, receives
for a request, and the answer each hands back; then what only one of them does (the ASGI scope, an app that
fails, a slow or unreachable upstream)."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import anyio
import pytest
from starlette.types import Receive, Scope, Send

from gateway.errors import ToolError
from gateway.requests import Peer, RestContext
from gateway.rest.request import HttpResponse, RestRequest
from gateway.rest.transports import AsgiTransport, Transport, UpstreamTransport
from gateway.rest.transports.upstream import shown_url, url_host
from tests.gateway.conftest import serve_http

pytestmark = pytest.mark.anyio

Kind = Literal["in-process", "upstream"]
KINDS: tuple[Kind, ...] = ("in-process", "upstream")


class Recorder:
    """An ASGI app that records each request (scope and body) and answers as the first segment of its path that
    names a handler says (`/base/teapot` as `_teapot`), else with a JSON echo."""

    def __init__(self) -> None:
        self.scopes: list[Scope] = []
        self.bodies: list[bytes] = []
        self.release = anyio.Event()

    def headers(self, index: int = -1) -> list[tuple[str, str]]:
        """The request's headers as text pairs, in the order sent."""
        return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in self.scopes[index]["headers"]]

    def header(self, name: str, index: int = -1) -> list[str]:
        """Every value the request carried for header `name`."""
        return [value for key, value in self.headers(index) if key == name]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.scopes.append(scope)
        self.bodies.append(body)
        named = [part for part in scope["path"].split("/") if part in _HANDLERS]
        await getattr(self, f"_{named[0]}" if named else "_echo")(send)

    async def _echo(self, send: Send) -> None:
        await _answer(send, 200, b'{"ok":true}', [(b"content-type", b"application/json"), (b"X-Twice", b"a")])

    async def _teapot(self, send: Send) -> None:
        extra = [(b"X-Twice", b"one"), (b"x-twice", b"two"), (b"Content-Type", b"text/plain")]
        await _answer(send, 418, b"short and stout", extra)

    async def _moved(self, send: Send) -> None:
        await _answer(send, 302, b"", [(b"location", b"/echo/elsewhere")])

    async def _slow(self, send: Send) -> None:
        await self.release.wait()
        await _answer(send, 200, b"late", [])

    async def _raise(self, send: Send) -> None:
        raise RuntimeError("the handler broke")

    async def _half(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"par", "more_body": True})

    async def _debug(self, send: Send) -> None:
        page = b"<pre>Traceback (most recent call last):\n  File app.py, line 3\nKeyError: 'secret'</pre>"
        await _answer(send, 500, page, [(b"content-type", b"text/html")])
        raise KeyError("secret")

    async def _failed(self, send: Send) -> None:
        await _answer(send, 500, b'{"detail":"the store is down"}', [(b"content-type", b"application/json")])
        raise RuntimeError("the store is down")

    async def _quoted(self, send: Send) -> None:
        # A 200 whose body shows a traceback (a log viewer, say): the app did not fail, so it is the answer.
        await _answer(send, 200, b"Traceback (most recent call last): in a log line", [])


_HANDLERS = frozenset({"teapot", "moved", "slow", "raise", "half", "debug", "failed", "quoted"})


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@asynccontextmanager
async def transport(kind: Kind, recorder: Recorder, *, timeout: float = 10.0) -> AsyncIterator[Transport]:
    """The transport of `kind` in front of `recorder`: in-process, or over HTTP to it served by uvicorn at /base."""
    if kind == "in-process":
        yield AsgiTransport(recorder)
        return
    async with serve_http(recorder, lifespan="off") as base:
        upstream = UpstreamTransport(base + "/base/", timeout=timeout)
        try:
            yield upstream
        finally:
            recorder.release.set()
            await upstream.aclose()


def _path(kind: Kind, path: str) -> str:
    """Where a request for `path` arrives: the upstream's base path goes before it."""
    return path if kind == "in-process" else "/base" + path


CONTEXT = RestContext.of([("authorization", "Bearer real"), ("x-request-id", "r-1")])


# What both transports do


@pytest.mark.parametrize("kind", KINDS)
async def test_a_request_arrives_with_its_method_encoded_path_query_headers_and_body(kind: Kind) -> None:
    recorder = Recorder()
    request = RestRequest(
        method="POST",
        path="/echo/a%20b",
        query=(("q", "x y&z"), ("tag[0]", "é")),
        headers=(("X-Arg", "1"),),
        content=b'{"name":"caf\xc3\xa9"}',
        content_type="application/json",
    )
    async with transport(kind, recorder) as sender:
        answer = await sender.send(request, CONTEXT)
    scope = recorder.scopes[0]
    assert answer.status == 200
    assert scope["method"] == "POST"
    assert scope["raw_path"] == _path(kind, "/echo/a%20b").encode()
    assert scope["path"] == _path(kind, "/echo/a b")
    assert scope["query_string"] == b"q=x%20y%26z&tag[0]=%C3%A9"
    assert recorder.bodies == ['{"name":"café"}'.encode()]
    assert recorder.header("x-arg") == ["1"]
    assert recorder.header("content-type") == ["application/json"]
    assert recorder.header("content-length") == [str(len('{"name":"café"}'.encode()))]
    assert recorder.header("x-request-id") == ["r-1"]


@pytest.mark.parametrize("kind", KINDS)
async def test_the_callers_credentials_come_last_and_win_over_an_argument_header_of_the_same_name(kind: Kind) -> None:
    recorder = Recorder()
    request = RestRequest(method="GET", path="/echo", headers=(("Authorization", "Bearer forged"), ("X-Arg", "2")))
    async with transport(kind, recorder) as sender:
        await sender.send(request, CONTEXT)
    assert recorder.header("authorization") == ["Bearer real"]
    assert recorder.header("x-arg") == ["2"]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_body_sent_without_a_content_type_of_its_own_carries_none(kind: Kind) -> None:
    recorder = Recorder()
    async with transport(kind, recorder) as sender:
        await sender.send(RestRequest(method="GET", path="/echo"), CONTEXT)
    assert recorder.header("content-type") == []
    assert recorder.bodies == [b""]


@pytest.mark.parametrize("kind", KINDS)
async def test_form_fields_and_files_go_as_one_multipart_body(kind: Kind) -> None:
    recorder = Recorder()
    request = RestRequest(
        method="POST",
        path="/echo",
        data=(("title", "Q3"),),
        files=(("report", ("q3.pdf", b"%PDF-1.7\x00\xff", "application/pdf")),),
    )
    async with transport(kind, recorder) as sender:
        await sender.send(request, CONTEXT)
    (content_type,) = recorder.header("content-type")
    assert content_type.startswith("multipart/form-data; boundary=")
    boundary = content_type.partition("boundary=")[2].encode()
    body = recorder.bodies[0]
    assert body.startswith(b"--" + boundary + b'\r\nContent-Disposition: form-data; name="title"\r\n\r\nQ3\r\n')
    assert b'name="report"; filename="q3.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\x00\xff\r\n' in body
    assert body.endswith(b"--" + boundary + b"--\r\n")


@pytest.mark.parametrize("kind", KINDS)
async def test_the_answer_keeps_its_status_body_and_headers_with_names_lowered_and_repeats_joined(kind: Kind) -> None:
    recorder = Recorder()
    async with transport(kind, recorder) as sender:
        answer = await sender.send(RestRequest(method="GET", path="/teapot"), CONTEXT)
    assert (answer.status, answer.body, answer.raised) == (418, b"short and stout", False)
    assert answer.reason.lower() == "i'm a teapot"
    assert answer.headers["x-twice"] == "one, two"
    assert answer.headers["content-type"] == "text/plain"
    assert all(name == name.lower() for name in answer.headers)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_redirect_is_the_answer_and_is_never_followed(kind: Kind) -> None:
    recorder = Recorder()
    async with transport(kind, recorder) as sender:
        answer = await sender.send(RestRequest(method="GET", path="/moved"), CONTEXT)
    assert (answer.status, answer.headers["location"]) == (302, "/echo/elsewhere")
    assert len(recorder.scopes) == 1


# In-process: the ASGI scope, and an app that fails


async def test_the_app_sees_the_callers_peer_and_a_complete_http_scope() -> None:
    recorder = Recorder()
    peer = Peer(client=("203.0.113.7", 5123), scheme="https", server=("api.example.com", 443), host="api.example.com")
    await AsgiTransport(recorder).send(RestRequest(method="GET", path="/echo"), RestContext(peer=peer))
    scope = recorder.scopes[0]
    assert scope["type"] == "http"
    assert scope["asgi"] == {"version": "3.0", "spec_version": "2.3"}
    assert scope["http_version"] == "1.1"
    assert (scope["scheme"], scope["client"], scope["server"]) == (
        "https",
        ("203.0.113.7", 5123),
        ("api.example.com", 443),
    )
    assert scope["root_path"] == ""
    assert "state" not in scope
    assert recorder.headers() == [("host", "api.example.com"), ("accept", "*/*"), ("user-agent", "mcp-gateway")]


async def test_a_caller_cannot_set_the_host_and_its_accept_and_user_agent_replace_the_defaults() -> None:
    recorder = Recorder()
    context = RestContext.of(
        [("Host", "evil.example"), ("Accept", "application/xml"), ("User-Agent", "agent/1"), ("X-After", "kept")]
    )
    await AsgiTransport(recorder).send(RestRequest(method="GET", path="/echo"), context)
    assert recorder.headers() == [
        ("host", "localhost"),
        ("accept", "application/xml"),
        ("user-agent", "agent/1"),
        ("x-after", "kept"),
    ]


async def test_a_body_method_always_says_its_length_and_a_get_without_a_body_says_none() -> None:
    recorder = Recorder()
    sender = AsgiTransport(recorder)
    await sender.send(RestRequest(method="DELETE", path="/echo"), CONTEXT)
    await sender.send(RestRequest(method="PUT", path="/echo"), CONTEXT)
    await sender.send(RestRequest(method="GET", path="/echo", content=b"x", content_type="text/plain"), CONTEXT)
    assert recorder.header("content-length", 0) == []
    assert recorder.header("content-length", 1) == ["0"]
    assert recorder.header("content-length", 2) == ["1"]


async def test_the_prefix_goes_before_every_path_once() -> None:
    recorder = Recorder()
    await AsgiTransport(recorder, prefix="/api/").send(RestRequest(method="GET", path="/echo/1"), CONTEXT)
    assert (recorder.scopes[0]["path"], recorder.scopes[0]["raw_path"]) == ("/api/echo/1", b"/api/echo/1")


async def test_the_app_gets_a_copy_of_the_gateways_lifespan_state_else_the_servers() -> None:
    recorder = Recorder()
    served = Peer(client=None, state={"db": "the server's"})
    sender = AsgiTransport(recorder)
    await sender.send(RestRequest(method="GET", path="/echo"), RestContext(peer=served))
    sender.state = {"db": "the gateway's"}
    await sender.send(RestRequest(method="GET", path="/echo"), RestContext(peer=served))
    recorder.scopes[1]["state"]["db"] = "changed by the app"
    assert recorder.scopes[0]["state"] == {"db": "the server's"}
    assert sender.state == {"db": "the gateway's"}


async def test_a_head_request_gets_the_status_and_headers_without_the_body() -> None:
    answer = await AsgiTransport(Recorder()).send(RestRequest(method="HEAD", path="/echo"), CONTEXT)
    assert (answer.status, answer.headers["content-type"], answer.body) == (200, "application/json", b"")


async def test_an_app_that_answers_then_raises_keeps_its_answer_marked_as_the_apps_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="gateway.calls"):
        answer = await AsgiTransport(Recorder()).send(RestRequest(method="POST", path="/failed/7"), CONTEXT)
    assert (answer.status, answer.reason, answer.raised) == (500, "Internal Server Error", True)
    assert answer.body == b'{"detail":"the store is down"}'
    (record,) = caplog.records
    assert record.getMessage() == "the app raised while answering POST /failed/7"
    assert record.exc_info is not None and str(record.exc_info[1]) == "the store is down"


async def test_an_app_that_raises_before_answering_is_a_bare_500(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="gateway.calls"):
        answer = await AsgiTransport(Recorder()).send(RestRequest(method="GET", path="/raise"), CONTEXT)
    assert answer == HttpResponse(
        status=500,
        reason="Internal Server Error",
        headers={"content-type": "text/plain; charset=utf-8"},
        body=b"Internal Server Error",
        raised=True,
    )
    assert [record.getMessage() for record in caplog.records] == ["the app raised while answering GET /raise"]


async def test_an_app_that_stops_halfway_through_its_answer_is_a_bare_500_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="gateway.calls"):
        answer = await AsgiTransport(Recorder()).send(RestRequest(method="GET", path="/half"), CONTEXT)
    assert (answer.status, answer.body, answer.raised) == (500, b"Internal Server Error", True)
    assert [record.getMessage() for record in caplog.records] == [
        "the app returned without a complete answer to GET /half"
    ]


async def test_a_debug_traceback_page_never_reaches_the_agent_but_a_body_that_quotes_one_does() -> None:
    sender = AsgiTransport(Recorder())
    page = await sender.send(RestRequest(method="GET", path="/debug"), CONTEXT)
    quoted = await sender.send(RestRequest(method="GET", path="/quoted"), CONTEXT)
    assert (page.status, page.body, page.raised) == (500, b"Internal Server Error", True)
    assert page.headers["content-type"] == "text/plain; charset=utf-8"
    assert b"secret" not in page.body
    assert (quoted.status, quoted.raised) == (200, False)
    assert quoted.body.startswith(b"Traceback (most recent call last)")


async def test_the_in_process_transport_says_where_its_calls_go() -> None:
    assert AsgiTransport(Recorder()).where == "the app in-process"


# Upstream: a slow or unreachable API, and where calls go


async def test_an_upstream_that_does_not_answer_in_time_is_a_tool_error_saying_so() -> None:
    recorder = Recorder()
    async with transport("upstream", recorder, timeout=0.2) as sender:
        with pytest.raises(ToolError) as raised, anyio.fail_after(3):  # its own timeout, not a default one
            await sender.send(RestRequest(method="GET", path="/slow"), CONTEXT)
        assert isinstance(sender, UpstreamTransport)
        where = sender.where
    assert str(raised.value) == f"the API at {where} did not answer in time; retry later or ask for less"


async def test_an_upstream_that_cannot_be_reached_is_a_tool_error_naming_it_and_the_reason() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    sender = UpstreamTransport(f"http://127.0.0.1:{port}/v1/", timeout=5)
    try:
        with pytest.raises(ToolError) as raised:
            await sender.send(RestRequest(method="GET", path="/notes"), CONTEXT)
    finally:
        await sender.aclose()
    message = str(raised.value)
    assert message.startswith(f"could not reach the API at http://127.0.0.1:{port}/v1 (")
    assert message.endswith("); retry later, and if it persists the gateway's upstream URL may be wrong")
    reason = message.split(" (", 1)[1].rsplit("); retry", 1)[0]
    assert reason not in ("", "None", "ConnectError")  # the error's own words, not just its class


async def test_the_upstreams_base_path_is_kept_once_and_where_shows_it_without_a_query() -> None:
    recorder = Recorder()
    async with serve_http(recorder, lifespan="off") as base:
        sender = UpstreamTransport(base + "/v2//", timeout=5)
        try:
            await sender.send(RestRequest(method="GET", path="/echo", query=(("page", "2"),)), CONTEXT)
        finally:
            await sender.aclose()
        assert sender.where == base + "/v2"
    assert (recorder.scopes[0]["raw_path"], recorder.scopes[0]["query_string"]) == (b"/v2/echo", b"page=2")


async def test_a_function_with_a_server_of_its_own_is_called_there_with_its_base_path() -> None:
    api, uploads = Recorder(), Recorder()
    async with serve_http(api, lifespan="off") as api_base, serve_http(uploads, lifespan="off") as uploads_base:
        host = uploads_base.removeprefix("http://")
        sender = UpstreamTransport(api_base + "/v1", timeout=5, other_hosts=[host.upper()])
        try:
            answer = await sender.send(RestRequest(method="POST", path="/echo", base=uploads_base + "/u"), CONTEXT)
        finally:
            await sender.aclose()
    assert answer.status == 200 and api.scopes == []
    assert uploads.scopes[0]["raw_path"] == b"/u/echo"
    assert uploads.header("authorization") == ["Bearer real"]


def test_urls_in_messages_lose_every_userinfo_and_trailing_slash() -> None:
    assert shown_url("https://user:p@ss@api.example.com/APIX/?key=1") == "https://api.example.com/APIX"
    assert url_host("https://user:p@ss@Uploads.Example.com:8443/x") == "uploads.example.com:8443"


def test_another_host_over_plain_http_is_refused_by_its_url() -> None:
    sender = UpstreamTransport("https://api.example.com", timeout=5, other_hosts=["uploads.example.com"])
    assert sender.refusal("http://uploads.example.com/u/") == (
        "it is served at http://uploads.example.com/u, and credentials go to other hosts over https only"
    )
    assert sender.refusal("https://uploads.example.com/u") is None
