"""Shared by the transport and conformance tests: a toy endpoint, and uvicorn on 127.0.0.1 on a free port."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal

import anyio
import pytest
import uvicorn
from starlette.types import ASGIApp

from gateway.errors import CredentialError, ToolError
from gateway.mcp.endpoint import McpEndpoint
from gateway.mcp.toolspec import (
    EmbeddedResource,
    ImageContent,
    ToolResult,
    ToolSpec,
)
from gateway.policy import CallerPolicy

# A 1x1 red PNG.
RED_PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
    "53de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082"
)
TOY_INSTRUCTIONS = "Toy server for transport tests: echo repeats, whoami shows the request."
GOOD_TOKEN = "good-token"

_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

TOY_TOOLS = (
    ToolSpec(
        name="echo",
        title="Echo",
        description="Repeat the text, optionally shouted.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}, "shout": {"type": "boolean"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        output_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    ),
    ToolSpec(
        name="whoami",
        title="Who am I",
        description="Show what the server knows about this request: transport, token, forwarded headers.",
        input_schema=_OBJECT,
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    ),
    ToolSpec(
        name="refuse",
        title="Refuse",
        description="Always fails with an error the agent can act on.",
        input_schema=_OBJECT,
        read_only=False,
        destructive=True,
        idempotent=False,
        open_world=True,
    ),
    ToolSpec(
        name="crash",
        title="Crash",
        description="Always fails with an unexpected exception.",
        input_schema=_OBJECT,
        read_only=False,
        destructive=False,
        idempotent=False,
        open_world=True,
    ),
    ToolSpec(
        name="picture",
        title="Picture",
        description="Return an image and a binary attachment.",
        input_schema=_OBJECT,
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    ),
)


async def toy_handle(name: str, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
    """The toy tools; `args` arrive validated."""
    request = caller.request
    if name == "echo":
        text = args["text"].upper() if args.get("shout") else args["text"]
        return ToolResult.text(json.dumps({"text": text}), structured={"text": text})
    if name == "whoami":
        seen = {
            "transport": request.transport,
            "token": request.bearer_token,
            "forwarded_for": request.forwarded_for,
            "request_id": request.request_id,
            "principal": request.principal,
        }
        return ToolResult.text(json.dumps(seen))
    if name == "refuse":
        raise ToolError("refused on purpose; call echo instead")
    if name == "crash":
        raise RuntimeError("boom")
    if name == "picture":
        return ToolResult(
            content=(
                ImageContent(data=RED_PIXEL, mime_type="image/png"),
                EmbeddedResource(blob=b"\x00\x01", mime_type="application/octet-stream", uri="toy://blob"),
            )
        )
    raise AssertionError(f"unexpected tool {name!r}")


async def check_token(headers: Mapping[str, str]) -> object:
    """Accept requests without credentials, or with the good bearer token; refuse any other token."""
    authorization = headers.get("authorization")
    if authorization is None:
        return None
    if authorization != f"Bearer {GOOD_TOKEN}":
        raise CredentialError("the bearer token is not valid", www_authenticate='Bearer error="invalid_token"')
    return "toy-user"


def toy_endpoint(*, authenticate: bool = False) -> McpEndpoint:
    """The toy endpoint; with `authenticate`, a bad bearer token is refused."""
    return McpEndpoint(
        name="toy",
        version="1.2.3",
        instructions=TOY_INSTRUCTIONS,
        tools=TOY_TOOLS,
        handle=toy_handle,
        authenticate=check_token if authenticate else None,
    )


class _Uvicorn(uvicorn.Server):
    """uvicorn that reports the end of its startup through an event and leaves signals to pytest."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.startup_done = anyio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.startup_done.set()

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@asynccontextmanager
async def serve_http(app: ASGIApp, *, lifespan: Literal["auto", "on", "off"] = "auto") -> AsyncIterator[str]:
    """Run `app` on real uvicorn on 127.0.0.1 on a free port; yields the base URL, e.g. http://127.0.0.1:5123."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan=lifespan, access_log=False)
    server = _Uvicorn(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(10):
            await server.startup_done.wait()
        assert server.started, "uvicorn did not start; see its log above"
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
