"""Binary uploads: a file argument (`{base64 | text, filename?, content_type?}`) reaches a real FastAPI app as a
multipart part or as the raw body, through call_function, a promoted tool and run_script."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI, File, Form, Request, UploadFile
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from catalog import load_catalog
from catalog.render import describe_function
from gateway import Gateway, ScriptConfig

pytestmark = pytest.mark.anyio

PNG = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xFE])


def uploads_app() -> FastAPI:
    app = FastAPI(title="Uploads")

    @app.get("/me", operation_id="get_me", tags=["me"])
    def me() -> dict[str, str]:
        return {"id": "u1"}

    @app.post("/files", operation_id="upload_file", tags=["files"])
    async def upload(file: UploadFile, note: str = Form(...)) -> dict[str, Any]:
        data = await file.read()
        return {"name": file.filename, "type": file.content_type, "bytes": list(data), "note": note}

    @app.post("/many", operation_id="upload_many", tags=["files"])
    async def many(files: Annotated[list[UploadFile], File()]) -> list[dict[str, Any]]:
        return [{"name": f.filename, "bytes": list(await f.read())} for f in files]

    raw_body = {"required": True, "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}}}

    @app.put("/raw", operation_id="put_raw", tags=["files"], openapi_extra={"requestBody": raw_body})
    async def raw(request: Request) -> dict[str, Any]:
        return {"bytes": list(await request.body()), "type": request.headers.get("content-type")}

    return app


@asynccontextmanager
async def connect(app: FastAPI, **options: Any) -> AsyncIterator[Client]:
    gateway = Gateway(app=app, whoami="me.get_me", **options)
    gateway.mount(app, "/mcp")
    async with (
        gateway.lifespan(),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http)) as client,
    ):
        yield client


def payload(result: types.CallToolResult) -> Any:
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    assert not result.is_error, block.text
    return json.loads(block.text)


def encoded(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_a_base64_file_reaches_the_app_as_a_multipart_part_with_its_name_and_type() -> None:
    args = {"file": {"base64": encoded(PNG), "filename": "dot.png", "content_type": "image/png"}, "note": "hi"}
    async with connect(uploads_app()) as client:
        result = await client.call_tool("call_function", {"name": "files.upload_file", "args": args})
    assert payload(result) == {"name": "dot.png", "type": "image/png", "bytes": list(PNG), "note": "hi"}


async def test_a_text_file_goes_as_its_utf8_bytes_named_after_the_field() -> None:
    args = {"file": {"text": "héllo"}, "note": "n"}
    async with connect(uploads_app()) as client:
        result = await client.call_tool("call_function", {"name": "files.upload_file", "args": args})
    answer = payload(result)
    assert (answer["name"], answer["type"], bytes(answer["bytes"])) == (
        "file",
        "application/octet-stream",
        "héllo".encode(),
    )


async def test_an_array_of_files_is_one_part_per_file() -> None:
    files = [{"base64": encoded(b"\x00\x01"), "filename": "a.bin"}, {"text": "b", "filename": "b.txt"}]
    async with connect(uploads_app()) as client:
        result = await client.call_tool("call_function", {"name": "files.upload_many", "args": {"files": files}})
    assert payload(result) == [{"name": "a.bin", "bytes": [0, 1]}, {"name": "b.txt", "bytes": [98]}]


async def test_a_binary_body_is_sent_raw_with_the_documented_media_type() -> None:
    async with connect(uploads_app()) as client:
        args = {"body": {"base64": encoded(PNG)}}
        result = await client.call_tool("call_function", {"name": "files.put_raw", "args": args})
    assert payload(result) == {"bytes": list(PNG), "type": "image/png"}


async def test_a_promoted_tool_takes_the_file_object_in_its_input_schema() -> None:
    async with connect(uploads_app(), tools=("files.upload_file",)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schema = json.dumps(tools["files-upload_file"].input_schema)
        result = await client.call_tool(
            "files-upload_file", {"file": {"base64": encoded(PNG), "filename": "x.png"}, "note": "promoted"}
        )
    assert '"base64"' in schema
    assert payload(result)["bytes"] == list(PNG)


async def test_run_script_can_upload_a_file() -> None:
    code = "await api.files.upload_file({file: {text: 'from a script', filename: 's.txt'}, note: 'js'})"
    async with connect(uploads_app(), scripts=ScriptConfig(allow_writes=True)) as client:
        result = await client.call_tool("run_script", {"code": code})
    answer = payload(result)
    assert (answer["name"], bytes(answer["bytes"])) == ("s.txt", b"from a script")


async def test_bad_base64_is_an_argument_error_naming_the_field() -> None:
    args = {"file": {"base64": "not base64!"}, "note": "n"}
    async with connect(uploads_app()) as client:
        result = await client.call_tool("call_function", {"name": "files.upload_file", "args": args})
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert "'file'" in block.text
    assert "base64" in block.text


async def test_a_plain_string_for_a_file_is_refused_with_the_file_form() -> None:
    async with connect(uploads_app()) as client:
        result = await client.call_tool(
            "call_function", {"name": "files.upload_file", "args": {"file": "raw text", "note": "n"}}
        )
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert "base64" in block.text


def test_describe_shows_a_file_argument_and_how_to_pass_it() -> None:
    catalog = load_catalog(uploads_app())
    text = describe_function(catalog, catalog.function("files.upload_file"))
    assert "file: file" in text
    assert "base64" in text


async def test_an_openapi_30_binary_body_without_a_schema_takes_a_file() -> None:
    async def echo(request: Any) -> JSONResponse:
        return JSONResponse({"bytes": list(await request.body()), "type": request.headers.get("content-type")})

    app = Starlette(routes=[Route("/blob", echo, methods=["POST"]), Route("/me", echo, methods=["GET"])])
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Blobs", "version": "1"},
        "paths": {
            "/me": {"get": {"operationId": "get_me", "tags": ["me"], "responses": {"200": {"description": "ok"}}}},
            "/blob": {
                "post": {
                    "operationId": "post_blob",
                    "tags": ["blob"],
                    "requestBody": {"content": {"application/octet-stream": {}}},
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }
    gateway = Gateway(app=app, spec=spec, whoami="me.get_me")
    async with gateway.lifespan():
        result = await gateway.call({}, "blob.post_blob", {"body": {"base64": encoded(b"\x01\x02")}})
    assert result == {"bytes": [1, 2], "type": "application/octet-stream"}
