"""The bounds on a call's arguments, met through the official client: ordinary payloads (a batch of hundreds of
embeddings) pass, too deep or too large ones are refused naming the limit, and a raised limit admits more; a flood
of wrong arguments within the limits gets a short error, soon."""

from __future__ import annotations

import json
import random
import struct
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel

from gateway import Gateway
from gateway.limits import Limits

pytestmark = pytest.mark.anyio


class Record(BaseModel):
    id: str
    embedding: list[float]


def vector_app() -> FastAPI:
    """A vector store's upsert: the shape of a RAG ingestion endpoint."""
    app = FastAPI(title="Vectors")

    @app.post("/vectors", tags=["vectors"], operation_id="upsert")
    async def upsert(records: list[Record]) -> dict[str, int]:
        return {"upserted": len(records), "dimensions": len(records[0].embedding) if records else 0}

    return app


def embeddings(count: int, dimensions: int) -> list[dict[str, Any]]:
    """`count` records of float32 embeddings, as an embedding API returns them (full double precision in JSON)."""
    pick = random.Random(7)  # noqa: S311 - sample data, not a secret
    as_float32 = struct.Struct("f")
    return [
        {
            "id": f"doc-{index}",
            "embedding": [as_float32.unpack(as_float32.pack(pick.gauss(0, 0.03)))[0] for _ in range(dimensions)],
        }
        for index in range(count)
    ]


@asynccontextmanager
async def connected(limits: Limits | None = None) -> AsyncIterator[Client]:
    app = vector_app()
    Gateway(app=app, limits=limits or Limits(), tools=["vectors.upsert"]).mount(app)
    transport = httpx2.ASGITransport(app)
    async with (
        httpx2.AsyncClient(transport=transport, timeout=120) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http), mode="legacy") as client,
    ):
        yield client


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_three_hundred_embeddings_of_1536_dimensions_pass_the_default_limits() -> None:
    async with connected() as client:
        result = await client.call_tool(
            "call_function", {"name": "vectors.upsert", "args": {"body": embeddings(300, 1536)}}
        )
    assert not result.is_error, text(result)
    assert json.loads(text(result)) == {"upserted": 300, "dimensions": 1536}


async def test_arguments_over_the_size_limit_are_refused_and_a_raised_limit_admits_them() -> None:
    args = {"name": "vectors.upsert", "args": {"body": embeddings(12, 1536)}}
    async with connected(Limits(max_argument_bytes=100_000)) as client:
        refused = await client.call_tool("call_function", args)
    assert refused.is_error
    assert "over the limit of 100,000 (Limits.max_argument_bytes (--max-argument-bytes))" in text(refused)
    async with connected(Limits(max_argument_bytes=1_000_000)) as client:
        raised = await client.call_tool("call_function", args)
    assert not raised.is_error, text(raised)


async def test_arguments_nested_too_deeply_are_refused_naming_the_depth_limit() -> None:
    deep: Any = 1
    for _ in range(70):
        deep = [deep]
    async with connected() as client:
        result = await client.call_tool("call_function", {"name": "vectors.upsert", "args": {"body": deep}})
    assert result.is_error
    assert "more than 64 levels deep, the limit Limits.max_argument_depth (--max-argument-depth)" in text(result)


async def test_two_hundred_thousand_unknown_arguments_get_a_short_error_that_counts_them_soon() -> None:
    flood = {f"k{index}": 1 for index in range(200_000)}  # 2.3 MB of JSON, within every limit
    async with connected() as client:
        for tool, args in (("call_function", {"name": "vectors.upsert", "args": flood}), ("vectors-upsert", flood)):
            started = time.perf_counter()
            result = await client.call_tool(tool, args)
            took = time.perf_counter() - started
            answer = text(result)
            assert result.is_error
            assert answer.startswith(
                "Invalid arguments for vectors.upsert: "
                "missing required argument 'body'; unknown argument 'k0' (allowed: body); "
                "unknown argument 'k1' (allowed: body);"
            )
            assert "unknown argument 'k8' (allowed: body); and 199,991 more unknown arguments. " in answer
            assert len(answer) < 1_000, len(answer)
            assert took < 4, f"{tool} took {took:.2f} s"


async def test_an_array_of_two_hundred_thousand_wrong_items_gets_a_short_error_soon() -> None:
    async with connected() as client:
        started = time.perf_counter()
        result = await client.call_tool("call_function", {"name": "vectors.upsert", "args": {"body": [1] * 200_000}})
        took = time.perf_counter() - started
    answer = text(result)
    assert result.is_error
    assert answer.startswith(
        "Invalid arguments for vectors.upsert: argument 'body[0]': 1 is not of type 'object'; "
        "argument 'body[1]': 1 is not of type 'object'; argument 'body[2]': 1 is not of type 'object';"
    )
    assert "argument 'body[9]': 1 is not of type 'object'; and at least 990 more problems. " in answer
    assert len(answer) < 1_000, len(answer)
    assert took < 4, f"took {took:.2f} s"  # reading every item's error took ~10 s


async def test_a_few_unknown_arguments_are_each_named_in_full() -> None:
    async with connected() as client:
        result = await client.call_tool(
            "call_function", {"name": "vectors.upsert", "args": {"body": [], "colour": 1, "size": 2}}
        )
    assert result.is_error
    assert text(result) == (
        "Invalid arguments for vectors.upsert: unknown argument 'colour' (allowed: body); "
        "unknown argument 'size' (allowed: body). Call describe_function('vectors.upsert') for the signature."
    )
