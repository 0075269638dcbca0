"""`Dispatcher`: every path into the REST API (call_function, promoted tools, composites, scripts) looks the
function up, validates the arguments once, sends the request within the per-call timeout and reports it to the
tool call being observed; `decode_body` turns the answer into what a composite or script gets."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import anyio
import jsonschema
import pytest
from fastapi import FastAPI, HTTPException, Request
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from catalog.builder import build_catalog
from catalog.composite import Composite, Invoker, composite
from catalog.errors import SchemaTooLargeError
from catalog.loading import load_document
from catalog.model import Catalog
from gateway.errors import ArgumentError, RestError, ToolError
from gateway.limits import CALL_TIMEOUT
from gateway.observability import Observer
from gateway.requests import RequestInfo, RestContext
from gateway.rest.dispatcher import BoundInvoker, Dispatcher, decode_body
from gateway.rest.request import HttpResponse
from gateway.rest.transports import AsgiTransport

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def api() -> FastAPI:
    """A small API that echoes what reached it, and one endpoint that never answers."""
    app = FastAPI(title="Items")

    @app.get("/items/{item_id}", operation_id="get_item", tags=["items"])
    async def get_item(item_id: int, request: Request, color: str | None = None) -> dict[str, Any]:
        return {
            "id": item_id,
            "color": color,
            "key": request.headers.get("x-key"),
            "traceparent": request.headers.get("traceparent"),
        }

    @app.get("/items/{item_id}/owner", operation_id="get_owner", tags=["items"])
    async def get_owner(item_id: int) -> dict[str, str]:
        if item_id == 404:
            raise HTTPException(status_code=404, detail="no such item")
        return {"owner": f"owner-{item_id}"}

    @app.get("/wait", operation_id="wait_forever", tags=["slow"])
    async def wait_forever() -> None:
        await anyio.Event().wait()  # answered only by the dispatcher's timeout

    return app


@composite("reports", summary="An item and its owner in one answer")
async def item_card(caller: Invoker, args: dict[str, Any]) -> dict[str, Any]:
    item = await caller.call("items.get_item", {"item_id": args["item_id"]})
    owner = await caller.call("items.get_owner", {"item_id": args["item_id"]})
    return {"item": item, "owner": owner["owner"], "calls": getattr(caller, "calls", None)}


def catalog_of(app: FastAPI, *, composites: Sequence[Composite] = (item_card,), **options: Any) -> Catalog:
    return build_catalog(load_document(app.openapi()), composites=composites, **options)


def dispatcher(*, timeout: float = 10.0, **options: Any) -> Dispatcher:
    """A dispatcher over a fresh `api()` in-process; `options` go to `build_catalog`."""
    app = api()
    return Dispatcher(catalog_of(app, **options), AsgiTransport(app), timeout=timeout)


KEYED = RestContext.of({"x-key": "k-123"})


async def body_of(gateway: Dispatcher, name: str, args: dict[str, Any], **options: Any) -> Any:
    outcome = await gateway.call(gateway.function(name), args, KEYED, **options)
    assert outcome.response is not None and outcome.function.name == name
    return json.loads(outcome.response.body)


# Looking functions up


def test_an_unknown_function_is_refused_with_the_closest_names_and_where_to_look() -> None:
    with pytest.raises(ToolError) as raised:
        dispatcher().function("items.get_itme")
    assert str(raised.value) == (
        "Unknown function 'items.get_itme'. The closest:\n"
        "- items.get_item(item_id: integer, color?: string | null) -> object — Get Item [read]\n"
        "- items.get_owner(item_id: integer) -> {[key: string]: string} — Get Owner [read]\n"
        "Call search_functions to find others."
    )


def test_an_unknown_function_like_no_other_says_only_where_to_look() -> None:
    with pytest.raises(ToolError) as raised:
        dispatcher().function("zzz")
    assert str(raised.value) == "Unknown function 'zzz'. Call search_functions to find functions."


# Validating


def test_every_argument_at_fault_is_named_once_with_a_pointer_to_the_signature() -> None:
    gateway = dispatcher()
    with pytest.raises(ArgumentError) as raised:
        gateway.validate(
            gateway.function("items.get_item"), {"item_id": "seven", "colour": "red", "size": 1, "color": 2}
        )
    assert str(raised.value) == (
        "Invalid arguments for items.get_item: unknown argument 'colour' (allowed: color, item_id); "
        "unknown argument 'size' (allowed: color, item_id); "
        "argument 'color': 2 is not of type 'string' or 'null'; "
        "argument 'item_id': 'seven' is not of type 'integer'. "
        "Call describe_function('items.get_item') for the signature."
    )
    assert sorted(raised.value.arg_names) == ["color", "colour", "item_id", "size"]


async def test_a_call_validates_its_arguments_before_anything_is_sent() -> None:
    gateway = dispatcher()
    with pytest.raises(ArgumentError, match="item_id"):
        await gateway.call(gateway.function("items.get_item"), {"item_id": "seven"}, KEYED)


async def test_a_call_said_to_be_validated_is_sent_as_it_is() -> None:
    gateway = dispatcher()
    function = gateway.function("items.get_item")
    outcome = await gateway.call(function, {"item_id": "seven"}, KEYED, validated=True)
    assert outcome.response is not None and outcome.response.status == 422  # the API's own refusal


class CountingValidator:
    """Counts how often a schema is compiled for jsonschema (the cost the quick check and the cache avoid): each
    compile asks jsonschema for the class of the schema's dialect, 2020-12 by default (jsonschema itself asks too,
    on each subschema, with the class already chosen as the default)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.compiled = 0
        real = jsonschema.validators.validator_for

        def dialect_of(schema: Any, default: Any) -> Any:
            self.compiled += default is jsonschema.Draft202012Validator
            return real(schema, default=default)

        monkeypatch.setattr(jsonschema.validators, "validator_for", dialect_of)


def test_arguments_the_quick_check_accepts_never_compile_a_json_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    gateway, counter = dispatcher(), CountingValidator(monkeypatch)
    function = gateway.function("items.get_item")
    for _ in range(3):
        gateway.validate(function, {"item_id": 7, "color": "red"})
    assert counter.compiled == 0


def test_a_functions_schema_is_compiled_once_however_often_it_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    gateway, counter = dispatcher(), CountingValidator(monkeypatch)
    function = gateway.function("items.get_item")
    for _ in range(3):
        with pytest.raises(ArgumentError):
            gateway.validate(function, {"item_id": "seven"})
    assert counter.compiled == 1


def test_a_schema_the_quick_check_cannot_judge_goes_to_json_schema() -> None:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/things": {
                "get": {
                    "operationId": "find",
                    "tags": ["things"],
                    "parameters": [
                        {"name": "q", "in": "query", "schema": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}}
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    gateway = Dispatcher(build_catalog(load_document(document)), None, timeout=1)
    function = gateway.function("things.find")
    gateway.validate(function, {"q": 3})
    with pytest.raises(ArgumentError, match="q"):
        gateway.validate(function, {"q": "three"})


def patterned(pattern: str) -> Dispatcher:
    """A dispatcher (with nothing to call) over one function, codes.find, whose `code` must match `pattern`."""
    parameter = {"name": "code", "in": "query", "schema": {"type": "string", "pattern": pattern}}
    operation = {"operationId": "find", "tags": ["codes"], "parameters": [parameter], "responses": {"200": {}}}
    document = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {"/codes": {"get": operation}}}
    return Dispatcher(build_catalog(load_document(document)), None, timeout=1)


async def test_a_pattern_that_backtracks_refuses_a_long_argument_at_once_and_holds_no_other_caller_up() -> None:
    gateway = patterned("^(a+)+$")
    function = gateway.function("codes.find")
    gaps: list[float] = []

    async def other_caller() -> None:
        last = time.perf_counter()
        while True:
            await anyio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    async with anyio.create_task_group() as group:
        group.start_soon(other_caller)
        await anyio.sleep(0.05)
        started = time.perf_counter()
        # Python's `re` takes minutes on these 33 characters (x4 for each 2 more), twice: quick check, jsonschema.
        with pytest.raises(ArgumentError, match="does not match"):
            await gateway.call(function, {"code": "a" * 32 + "!"}, KEYED)
        took = time.perf_counter() - started
        await anyio.sleep(0.05)
        group.cancel_scope.cancel()
    assert took < 1
    assert max(gaps) < 1


def test_an_ordinary_pattern_still_refuses_an_argument_it_does_not_match_in_the_same_words() -> None:
    gateway = patterned("^[a-z]+$")
    function = gateway.function("codes.find")
    gateway.validate(function, {"code": "abc"})
    with pytest.raises(ArgumentError) as raised:
        gateway.validate(function, {"code": "ab1"})
    assert str(raised.value) == (
        "Invalid arguments for codes.find: argument 'code': 'ab1' does not match '^[a-z]+$'. "
        "Call describe_function('codes.find') for the signature."
    )


def test_a_lookahead_pattern_is_left_to_the_api_and_said_once_without_the_argument(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pattern = "^(?=.*[0-9])[a-z0-9]+-left-to-the-api$"  # RE2 has no lookahead; Python's `re` would refuse both
    gateway = patterned(pattern)
    function = gateway.function("codes.find")
    with caplog.at_level(logging.INFO, logger="gateway.patterns"):
        gateway.validate(function, {"code": "secret-value"})
        gateway.validate(function, {"code": "secret-value-2"})
    said = [record.getMessage() for record in caplog.records if record.name == "gateway.patterns"]
    assert len(said) == 1
    assert repr(pattern) in said[0] and "not checked" in said[0] and "secret-value" not in said[0]


async def test_a_function_too_large_to_advertise_is_still_validated_and_called() -> None:
    gateway = dispatcher(max_schema_nodes=3)
    function = gateway.function("items.get_item")
    with pytest.raises(SchemaTooLargeError):
        function.input_schema()
    assert (await body_of(gateway, "items.get_item", {"item_id": 7}))["id"] == 7
    with pytest.raises(ArgumentError, match="item_id"):
        gateway.validate(function, {"item_id": "seven"})


# Sending


async def test_an_operation_is_sent_with_its_arguments_and_the_callers_headers() -> None:
    body = await body_of(dispatcher(), "items.get_item", {"item_id": 7, "color": "red"})
    assert body == {"id": 7, "color": "red", "key": "k-123", "traceparent": None}


async def test_without_an_app_or_upstream_an_operation_cannot_be_called_and_says_why() -> None:
    gateway = Dispatcher(catalog_of(api()), None, timeout=1)
    with pytest.raises(ToolError) as raised:
        await gateway.call(gateway.function("items.get_item"), {"item_id": 7}, KEYED)
    assert str(raised.value) == "items.get_item cannot be called: the gateway has no app or upstream to call"


async def call_that_never_answers(gateway: Dispatcher) -> None:
    """Call the endpoint that never answers; a TimeoutError of its own when the dispatcher's timeout did not fire."""
    with anyio.fail_after(5):
        await gateway.call(gateway.function("slow.wait_forever"), {}, KEYED)


async def test_a_call_past_the_timeout_is_a_tool_error_that_says_what_to_try() -> None:
    gateway = dispatcher(timeout=0.05)
    with pytest.raises(ToolError) as raised:
        await call_that_never_answers(gateway)
    assert str(raised.value) == (
        "slow.wait_forever did not answer within 0.05 s; try a narrower request or retry later"
    )


async def test_the_timeout_hint_follows_the_timeout_message() -> None:
    gateway = dispatcher(timeout=0.05)
    gateway.timeout_hint = "; or run it as a task"
    with pytest.raises(ToolError) as raised:
        await call_that_never_answers(gateway)
    assert str(raised.value).endswith("within 0.05 s; try a narrower request or retry later; or run it as a task")


async def test_a_timeout_set_for_the_context_replaces_the_dispatchers_own() -> None:
    gateway = dispatcher(timeout=3600)
    token = CALL_TIMEOUT.set(0.05)
    try:
        with pytest.raises(ToolError, match=r"did not answer within 0\.05 s"):
            await call_that_never_answers(gateway)
    finally:
        CALL_TIMEOUT.reset(token)


# Composites and the caller they get


async def test_a_composite_runs_its_parts_with_the_callers_headers_and_answers_a_value() -> None:
    gateway = dispatcher()
    function = gateway.function("reports.item_card")
    outcome = await gateway.call(function, {"item_id": 5}, KEYED)
    assert outcome.response is None and outcome.function is function
    assert outcome.value == {
        "item": {"id": 5, "color": None, "key": "k-123", "traceparent": None},
        "owner": "owner-5",
        "calls": 2,
    }


async def test_a_composite_gets_its_arguments_decoded_and_its_value_encoded() -> None:
    @composite("reports", summary="The owner's name, upper-cased")
    async def shouting_owner(caller: Invoker, item_id: int) -> str:
        owner = await caller.call("items.get_owner", {"item_id": item_id})
        return str(owner["owner"])

    gateway = dispatcher(composites=[replace(shouting_owner, encode=lambda value: value.upper())])
    outcome = await gateway.call(gateway.function("reports.shouting_owner"), {"item_id": 9}, KEYED)
    assert outcome.value == "OWNER-9"


async def test_the_bound_caller_counts_its_calls_and_decodes_each_answer() -> None:
    caller = BoundInvoker(dispatcher(), KEYED)
    assert caller.calls == 0
    assert await caller.call("items.get_owner", {"item_id": 1}) == {"owner": "owner-1"}
    assert (await caller.call("items.get_item", {"item_id": 2}))["key"] == "k-123"
    assert caller.calls == 2


async def test_the_bound_caller_raises_the_apis_error_status_with_its_body() -> None:
    caller = BoundInvoker(dispatcher(), KEYED)
    with pytest.raises(RestError) as raised:
        await caller.call("items.get_owner", {"item_id": 404})
    assert (raised.value.status, raised.value.body) == (404, {"detail": "no such item"})
    assert str(raised.value) == "items.get_owner failed: HTTP 404 Not Found"


async def test_the_bound_caller_refuses_unknown_names_and_bad_arguments_and_counts_them() -> None:
    caller = BoundInvoker(dispatcher(), KEYED)
    with pytest.raises(ToolError, match=r"Unknown function 'items\.nope'"):
        await caller.call("items.nope", {})
    with pytest.raises(ArgumentError):
        await caller.call("items.get_owner", {"item_id": "x"})
    assert caller.calls == 2


# Observed calls


def traced() -> tuple[Observer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Observer(metrics=True, tracer_provider=provider), exporter


def function_calls(observer: Observer, function: str, status: str) -> float | None:
    assert observer.metrics is not None
    return observer.metrics.registry.get_sample_value(
        "mcp_gateway_function_calls_total", {"tool": "call_function", "function": function, "status": status}
    )


async def test_an_observed_call_reports_its_status_and_passes_its_span_on_to_the_api() -> None:
    observer, exporter = traced()
    gateway = dispatcher()
    with observer.tool_call("call_function", RequestInfo(transport="in-process")):
        body = await body_of(gateway, "items.get_item", {"item_id": 7})
    assert function_calls(observer, "items.get_item", "200") == 1.0
    rest = next(span for span in exporter.get_finished_spans() if span.name == "GET /items/{item_id}")
    assert rest.context is not None
    assert body["traceparent"].startswith(f"00-{rest.context.trace_id:032x}-{rest.context.span_id:016x}-")
    assert body["key"] == "k-123"


async def test_an_observed_call_keeps_its_arguments_and_the_validated_flag() -> None:
    observer, _ = traced()
    gateway = dispatcher()
    with observer.tool_call("call_function", RequestInfo(transport="in-process")):
        assert (await body_of(gateway, "items.get_item", {"item_id": 8, "color": "blue"}))["color"] == "blue"
        unchecked = await gateway.call(gateway.function("items.get_owner"), {"item_id": "x"}, KEYED, validated=True)
    assert unchecked.response is not None and unchecked.response.status == 422
    with observer.tool_call("call_function", RequestInfo(transport="in-process")):
        with pytest.raises(ArgumentError):
            await gateway.call(gateway.function("items.get_owner"), {"item_id": "x"}, KEYED)
    assert function_calls(observer, "items.get_owner", "invalid") == 1.0


async def test_an_observed_composite_reports_ok_for_its_value() -> None:
    observer, _ = traced()
    gateway = dispatcher()
    with observer.tool_call("call_function", RequestInfo(transport="in-process")):
        outcome = await gateway.call(gateway.function("reports.item_card"), {"item_id": 3}, KEYED)
    assert outcome.value["owner"] == "owner-3"
    assert function_calls(observer, "reports.item_card", "ok") == 1.0
    assert function_calls(observer, "items.get_owner", "200") == 1.0


# Decoding answers


def answer(body: bytes, content_type: str | None = None, status: int = 200, reason: str = "OK") -> HttpResponse:
    headers = {"content-type": content_type} if content_type is not None else {}
    return HttpResponse(status=status, reason=reason, headers=headers, body=body)


@pytest.mark.parametrize(
    ("body", "content_type", "decoded"),
    [
        (b'{"a": [1, 2]}', "application/json; charset=utf-8", {"a": [1, 2]}),
        (b'{"a": 1}', "application/problem+json", {"a": 1}),
        (b"{not json", "application/json", "{not json"),
        (b"", "application/json", None),
        (b"plain words", "text/plain", "plain words"),
        (b"<a>1</a>", "text/html", "<a>1</a>"),
        (b"<a>1</a>", "application/xml", "<a>1</a>"),
        (b"a=1&b=2", "application/x-www-form-urlencoded", "a=1&b=2"),
        (b"a=1&b=2", "APPLICATION/X-WWW-FORM-URLENCODED", "a=1&b=2"),
        (b"\x89PNG\r\n", "image/png", b"\x89PNG\r\n"),
        (b"<a>1</a>", "application/vnd.custom", b"<a>1</a>"),
        (b"raw", None, b"raw"),
    ],
)
def test_an_answer_decodes_as_json_text_or_bytes_by_its_media_type(
    body: bytes, content_type: str | None, decoded: Any
) -> None:
    function = dispatcher().function("items.get_item")
    assert decode_body(answer(body, content_type), function=function) == decoded


@pytest.mark.parametrize("status", [200, 204, 302, 399])
def test_a_status_under_400_is_an_answer(status: int) -> None:
    function = dispatcher().function("items.get_item")
    assert decode_body(answer(b"{}", "application/json", status), function=function) == {}


@pytest.mark.parametrize(("status", "reason"), [(400, "Bad Request"), (401, "Unauthorized"), (503, "Busy")])
def test_a_status_of_400_or_more_raises_with_the_status_reason_and_decoded_body(status: int, reason: str) -> None:
    function = dispatcher().function("items.get_item")
    with pytest.raises(RestError) as raised:
        decode_body(answer(b'{"detail": "no"}', "application/json", status, reason), function=function)
    assert str(raised.value) == f"items.get_item failed: HTTP {status} {reason}"
    assert (raised.value.status, raised.value.body) == (status, {"detail": "no"})
