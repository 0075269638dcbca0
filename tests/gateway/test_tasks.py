"""Long calls as MCP 2025-11-25 tasks, through the official `mcp` client over HTTP: the capability and each tool's
task support, a call that outlives the gateway's timeout run as a task, cancelling, listing, callers kept apart,
and task state in SQLite and in a real Redis (shared by two gateway instances)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter

from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.mcp.tasks import TaskConfig
from gateway.mcp.tasks.store import open_task_store
from gateway.policy import Access
from tests.conftest import free_port
from tests.gateway.conftest import serve_http

pytestmark = pytest.mark.anyio

URL = "http://localhost/mcp"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def make_gateway(tasks: TaskConfig | None, **options: Any) -> tuple[FastAPI, Gateway]:
    app = create_app(debug_routes=True)
    gateway = Gateway(app=app, whoami="users.get_current_user", tasks=tasks, **options, limits=Limits(timeout=0.5))
    gateway.mount(app, "/mcp")
    return app, gateway


@asynccontextmanager
async def connect(app: FastAPI, key: str = ADMIN_KEY) -> AsyncIterator[Client]:
    """The official client, speaking 2025-11-25 (the initialize handshake), the version with tasks."""
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers={"authorization": f"Bearer {key}"}) as http,
        Client(streamable_http_client(URL, http_client=http), mode="legacy") as client,
    ):
        yield client


async def start_task(app: FastAPI, name: str, args: dict[str, Any], key: str = ADMIN_KEY) -> dict[str, Any]:
    """A task-augmented tools/call; sent raw, since the SDK client validates tools/call answers as CallToolResult."""
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        response = await http.post(
            URL,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": args, "task": {"ttl": 60_000}},
            },
            headers={
                "authorization": f"Bearer {key}",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
            },
        )
    body = response.json()
    assert "result" in body, body
    task: dict[str, Any] = body["result"]["task"]
    return task


async def get(client: Client, task_id: str) -> types.GetTaskResult:
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.GetTaskResult)


async def result(client: Client, task_id: str) -> types.CallToolResult:
    request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.CallToolResult)


def text(answer: types.CallToolResult) -> str:
    return "\n".join(block.text for block in answer.content if isinstance(block, types.TextContent))


SLOW = {"name": "debug.slow", "args": {"seconds": 1.0}}


async def test_the_server_declares_tasks_and_which_tools_take_them() -> None:
    app, gateway = make_gateway(TaskConfig())
    async with gateway.lifespan(), connect(app) as client:
        capabilities = client.session.server_capabilities
        assert capabilities is not None and capabilities.tasks is not None
        assert capabilities.tasks.requests is not None and capabilities.tasks.requests.tools is not None
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    call = tools["call_function"].execution
    assert call is not None and call.task_support == "optional"
    assert tools["search_functions"].execution is None


async def test_without_tasks_no_capability_is_declared() -> None:
    app, gateway = make_gateway(None)
    async with gateway.lifespan(), connect(app) as client:
        capabilities = client.session.server_capabilities
        assert capabilities is not None and capabilities.tasks is None


async def test_a_call_past_the_timeout_says_how_to_run_it_as_a_task_and_then_runs_as_one() -> None:
    app, gateway = make_gateway(TaskConfig(timeout=10))
    async with gateway.lifespan(), connect(app) as client:
        timed_out = await client.call_tool("call_function", SLOW)
        assert timed_out.is_error
        assert "did not answer within 0.5 s" in text(timed_out)
        assert 'run it as a task, which may take 10 s: send the tools/call with "task": {}' in text(timed_out)

        task = await start_task(app, "call_function", SLOW)
        assert task["status"] == "working" and task["ttl"] == 60_000
        answer = await result(client, task["taskId"])  # blocks until the call ends
        assert not answer.is_error and answer.structured_content == {"slept": 1.0}
        assert answer.meta is not None and answer.meta["io.modelcontextprotocol/related-task"] == {
            "taskId": task["taskId"]
        }
        done = await get(client, task["taskId"])
    assert done.status == "completed"


async def test_without_tasks_the_timeout_says_nothing_of_them() -> None:
    app, gateway = make_gateway(None)
    async with gateway.lifespan(), connect(app) as client:
        timed_out = await client.call_tool("call_function", SLOW)
    assert timed_out.is_error and "task" not in text(timed_out)


async def test_a_failed_call_is_a_failed_task_whose_result_is_the_error() -> None:
    app, gateway = make_gateway(TaskConfig())
    async with gateway.lifespan(), connect(app) as client:
        task = await start_task(app, "call_function", {"name": "orders.get_order", "args": {"order_id": "nope"}})
        answer = await result(client, task["taskId"])
        state = await get(client, task["taskId"])
    assert answer.is_error and state.status == "failed"


async def test_a_working_task_can_be_cancelled_once_and_then_has_no_result() -> None:
    app, gateway = make_gateway(TaskConfig())
    async with gateway.lifespan(), connect(app) as client:
        task = await start_task(app, "call_function", {"name": "debug.slow", "args": {"seconds": 5}})
        request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task["taskId"]))
        cancelled = await client.session.send_request(request, types.CancelTaskResult)
        assert cancelled.status == "cancelled"
        assert (await get(client, task["taskId"])).status == "cancelled"
        with pytest.raises(MCPError) as again:
            await client.session.send_request(request, types.CancelTaskResult)
        assert again.value.error.code == types.INVALID_PARAMS and "already cancelled" in again.value.error.message
        with pytest.raises(MCPError, match="cancelled"):
            await result(client, task["taskId"])


async def test_tasks_belong_to_their_caller() -> None:
    app, gateway = make_gateway(TaskConfig())
    async with gateway.lifespan(), connect(app) as admin, connect(app, MEMBER_KEY) as member:
        first = await start_task(app, "whoami", {})
        second = await start_task(app, "whoami", {})
        await result(admin, second["taskId"])
        listed = await admin.session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        assert [task.task_id for task in listed.tasks] == [second["taskId"], first["taskId"]]
        with pytest.raises(MCPError) as foreign:
            await get(member, first["taskId"])
        assert foreign.value.error.code == types.INVALID_PARAMS and "Unknown task" in foreign.value.error.message
        assert (await member.session.send_request(types.ListTasksRequest(), types.ListTasksResult)).tasks == []


async def rpc(app: FastAPI, method: str, params: dict[str, Any], **headers: str) -> dict[str, Any]:
    """One raw JSON-RPC request at 2025-11-25 with these extra headers (none: no credentials, no session)."""
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        response = await http.post(
            URL,
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", **headers},
        )
    answer: dict[str, Any] = response.json()
    return answer


async def test_callers_without_credentials_are_one_caller_listed_no_task_whatever_session_id_they_send() -> None:
    app = create_app(debug_routes=True)
    gateway = Gateway(app=app, tasks=TaskConfig(), limits=Limits(timeout=0.5, tasks_stored_per_caller=3))
    gateway.mount(app, "/mcp")
    call = {"name": "call_function", "arguments": {"name": "orders.list_orders", "args": {}}, "task": {}}
    # A session id is the client's to choose: made-up ones must neither hide tasks nor multiply a budget.
    one, two = {"mcp-session-id": "session-one"}, {"mcp-session-id": "session-two"}
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    async with gateway.lifespan():
        started = [(await rpc(app, "tools/call", call, **headers))["result"] for headers in (one, two, {})]
        over = await rpc(app, "tools/call", call, **{"mcp-session-id": "session-four"})
        admins = await rpc(app, "tools/call", call, **admin)
        listed = [await rpc(app, "tasks/list", {}, **headers) for headers in (one, two, {})]
        by_id = await rpc(app, "tasks/get", {"taskId": started[0]["task"]["taskId"]}, **two)
        initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        declared = {
            "no credentials": (await rpc(app, "initialize", initialize, **one))["result"]["capabilities"]["tasks"],
            "admin": (await rpc(app, "initialize", initialize, **admin))["result"]["capabilities"]["tasks"],
        }
    assert all("task" in result for result in started)
    message = over["error"]["message"]
    assert message.startswith("callers without credentials keep, together, 3 tasks on this server")
    assert "send credentials to have a limit of your own" in message
    assert "task" in admins["result"]  # a caller with credentials has its own budget
    # MCP 2025-11-25 tasks, without an authorization context: nothing is listed, the unguessable id is the access.
    assert [answer["result"]["tasks"] for answer in listed] == [[], [], []]
    assert by_id["result"]["taskId"] == started[0]["task"]["taskId"]
    # "receivers that cannot identify requestors SHOULD NOT declare the tasks.list capability".
    assert "list" not in declared["no credentials"] and "list" in declared["admin"]


async def test_a_hidden_or_unknown_tool_cannot_be_started_as_a_task() -> None:
    app, gateway = make_gateway(
        TaskConfig(),
        tools=["orders.get_order"],
        access=Access(visible=lambda caller, function: function.name != "orders.get_order"),
    )
    async with gateway.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        answers = [
            await http.post(
                URL,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "task": {}}},
                headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"},
            )
            for name in ("nope", "orders-get_order")
        ]
    errors = [answer.json()["error"] for answer in answers]
    assert [error["code"] for error in errors] == [types.INVALID_PARAMS, types.INVALID_PARAMS]
    assert errors[1]["message"] == errors[0]["message"].replace("'nope'", "'orders-get_order'")


async def test_a_task_store_that_is_down_is_said_as_the_servers_trouble_and_the_gateway_is_not_ready(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, gateway = make_gateway(TaskConfig(store=f"redis://127.0.0.1:{free_port()}/0"))
    ask = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
    ask["authorization"] = f"Bearer {ADMIN_KEY}"
    async with gateway.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        answers = [
            await http.post(
                URL,
                json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                headers=ask,
            )
            for method, params in [
                ("tools/call", {"name": "whoami", "arguments": {}, "task": {}}),
                ("tasks/get", {"taskId": "t"}),
                ("tasks/list", {}),
            ]
        ]
        problems = await gateway.readiness.problems()
    for answer in answers:
        assert answer.json()["error"] == {
            "code": -32000,
            "message": "the task store is unavailable; retry shortly",
            "data": {"retryAfter": 5},
        }, answer.text
    assert problems == ["the task store is unavailable"]
    down = [record for record in caplog.records if "the task store is unavailable:" in record.getMessage()]
    assert len(down) == 1 and "ConnectionError" in down[0].getMessage()


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "tasks.db")
    url: str = request.getfixturevalue("redis_url")
    return url


async def test_two_instances_sharing_a_store_serve_each_others_tasks(store_url: str) -> None:
    first_store, second_store = open_task_store(store_url), open_task_store(store_url)
    first_app, first = make_gateway(TaskConfig(store=first_store, poll_interval=0.05))
    second_app, second = make_gateway(TaskConfig(store=second_store, poll_interval=0.05))
    async with first.lifespan(), second.lifespan(), connect(second_app) as other:
        task = await start_task(first_app, "call_function", {"name": "debug.slow", "args": {"seconds": 0.2}})
        assert (await get(other, task["taskId"])).status in ("working", "completed")
        answer = await result(other, task["taskId"])  # polls the shared store while the first instance runs it
        assert not answer.is_error
        listed = await other.session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        assert [found.task_id for found in listed.tasks] == [task["taskId"]]
    await first_store.aclose()
    await second_store.aclose()


class Waiting:
    """A small app whose one endpoint waits on an event: it says when a call started and whether it was cancelled."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = anyio.Event()
        self.app = FastAPI()

        @self.app.get("/wait", tags=["jobs"], operation_id="wait")
        async def wait() -> dict[str, bool]:
            self.started.set()
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                raise
            return {"released": True}

    def gateway(self, store: Any) -> tuple[FastAPI, Gateway]:
        app = FastAPI()
        gateway = Gateway(app=self.app, tasks=TaskConfig(store=store, poll_interval=0.02))
        gateway.mount(app, "/mcp")
        return app, gateway

    @asynccontextmanager
    async def two_instances(self, store_url: str) -> AsyncIterator[tuple[FastAPI, FastAPI, Gateway]]:
        """Two gateways over this app sharing the store at `store_url`, started: both apps and the first gateway."""
        first_store, second_store = open_task_store(store_url), open_task_store(store_url)
        first_app, first = self.gateway(first_store)
        second_app, second = self.gateway(second_store)
        try:
            async with first.lifespan(), second.lifespan():
                yield first_app, second_app, first
        finally:
            await first_store.aclose()
            await second_store.aclose()


async def test_a_cancel_served_by_another_instance_stops_the_call_and_no_late_result_overwrites_it(
    store_url: str,
) -> None:
    waiting = Waiting()
    async with waiting.two_instances(store_url) as (first_app, second_app, first), connect(second_app) as other:
        task = await start_task(first_app, "call_function", {"name": "jobs.wait", "args": {}})
        with anyio.fail_after(5):
            await waiting.started.wait()
        request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task["taskId"]))
        assert (await other.session.send_request(request, types.CancelTaskResult)).status == "cancelled"
        with anyio.fail_after(5):
            await waiting.cancelled.wait()  # the first instance read the cancel from the store and stopped the call
        waiting.release.set()
        assert first.tasks is not None
        ended = first.tasks._done.get(task["taskId"])
        if ended is not None:  # the run has not yet recorded its end
            with anyio.fail_after(5):
                await ended.wait()
        assert (await get(other, task["taskId"])).status == "cancelled"
        with pytest.raises(MCPError, match="cancelled"):
            await result(other, task["taskId"])


# The 2026-07-28 envelope: tasks as the io.modelcontextprotocol/tasks extension (SEP-2663), raw JSON-RPC, since the
# SDK client has no tasks extension.

EXTENSION = "io.modelcontextprotocol/tasks"


def modern_meta(*, tasks: bool) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"extensions": {EXTENSION: {}}} if tasks else {}
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


async def modern(
    app: FastAPI, method: str, params: dict[str, Any], *, tasks: bool = True, name: str | None = None
) -> dict[str, Any]:
    """One 2026-07-28 request over HTTP; the JSON-RPC answer."""
    headers = {
        "authorization": f"Bearer {ADMIN_KEY}",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    name = name or params.get("name") or params.get("taskId")
    if isinstance(name, str):
        headers["mcp-name"] = name  # SEP-2663: tasks/* carry the task id there, for routing
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        response = await http.post(
            URL,
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": modern_meta(tasks=tasks)}},
            headers=headers,
        )
    answer: dict[str, Any] = response.json()
    return answer


async def test_on_2026_07_28_the_server_declares_the_tasks_extension() -> None:
    app, gateway = make_gateway(TaskConfig())
    async with gateway.lifespan():
        discovered = await modern(app, "server/discover", {})
    assert discovered["result"]["capabilities"]["extensions"][EXTENSION] == {}


async def test_on_2026_07_28_a_call_becomes_a_task_only_for_a_client_that_declared_the_extension() -> None:
    app, gateway = make_gateway(TaskConfig(timeout=10, poll_interval=0.25))
    call = {"name": "call_function", "arguments": {"name": "debug.slow", "args": {"seconds": 0.1}}}
    async with gateway.lifespan():
        plain = await modern(app, "tools/call", call, tasks=False)
        assert plain["result"]["resultType"] == "complete" and plain["result"]["structuredContent"] == {"slept": 0.1}

        created = (await modern(app, "tools/call", call))["result"]
        assert created["resultType"] == "task" and created["status"] == "working"
        assert created["pollIntervalMs"] == 250 and created["ttlMs"] == 3_600_000 and "task" not in created
        assert (
            created["_meta"]["io.modelcontextprotocol/serverInfo"]
            == plain["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
        )
        assert gateway.tasks is not None
        ended = gateway.tasks._done.get(created["taskId"])
        if ended is not None:
            with anyio.fail_after(5):
                await ended.wait()
        done = (await modern(app, "tasks/get", {"taskId": created["taskId"]}))["result"]
    assert done["resultType"] == "complete" and done["status"] == "completed"
    assert done["result"]["structuredContent"] == {"slept": 0.1}


async def test_on_2026_07_28_a_tool_error_is_a_completed_task_with_the_error_result_inline() -> None:
    app, gateway = make_gateway(TaskConfig())
    call = {"name": "call_function", "arguments": {"name": "orders.get_order", "args": {"order_id": "nope"}}}
    async with gateway.lifespan():
        created = (await modern(app, "tools/call", call))["result"]
        assert gateway.tasks is not None
        ended = gateway.tasks._done.get(created["taskId"])
        if ended is not None:
            with anyio.fail_after(5):
                await ended.wait()
        done = (await modern(app, "tasks/get", {"taskId": created["taskId"]}))["result"]
    assert done["status"] == "completed" and done["result"]["isError"] is True


async def test_on_2026_07_28_cancel_and_update_are_acknowledged_and_list_and_result_do_not_exist() -> None:
    app, gateway = make_gateway(TaskConfig())
    call = {"name": "call_function", "arguments": {"name": "debug.slow", "args": {"seconds": 5}}}
    async with gateway.lifespan():
        created = (await modern(app, "tools/call", call))["result"]
        task_id = created["taskId"]
        update = await modern(app, "tasks/update", {"taskId": task_id, "inputResponses": {"nope": {}}})
        assert update["result"]["resultType"] == "complete"
        assert (await modern(app, "tasks/cancel", {"taskId": task_id}))["result"]["resultType"] == "complete"
        assert (await modern(app, "tasks/get", {"taskId": task_id}))["result"]["status"] == "cancelled"
        again = await modern(app, "tasks/cancel", {"taskId": task_id})  # an intent: a terminal task stays as it is
        assert again["result"]["resultType"] == "complete"
        unknown = await modern(app, "tasks/get", {"taskId": "nope"})
        assert unknown["error"]["code"] == types.INVALID_PARAMS
        for method in ("tasks/list", "tasks/result"):
            refused = await modern(app, method, {"taskId": task_id})
            assert refused["error"]["code"] == types.METHOD_NOT_FOUND, method


async def test_before_2026_07_28_no_tasks_update_nor_listen_and_before_2025_11_25_no_tasks_method() -> None:
    app, gateway = make_gateway(TaskConfig())
    async with gateway.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        codes = {}
        for version, method in (
            ("2025-11-25", "tasks/update"),
            ("2025-11-25", "subscriptions/listen"),
            ("2025-06-18", "tasks/get"),
            ("2025-06-18", "tasks/list"),
        ):
            response = await http.post(
                URL,
                json={"jsonrpc": "2.0", "id": 1, "method": method, "params": {"taskId": "x"}},
                headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": version},
            )
            codes[version, method] = response.json()["error"]["code"]
    assert set(codes.values()) == {types.METHOD_NOT_FOUND}, codes


# notifications/tasks/status on a session whose stream outlives the request (stdio's shape: the SDK server run over
# a pair of streams), raw JSON-RPC since the SDK client validates tools/call answers as CallToolResult.


@asynccontextmanager
async def session(gateway: Gateway) -> AsyncIterator[tuple[Any, Any]]:
    """The gateway's SDK server over memory streams, initialized at 2025-11-25: (send a message, next message)."""
    server = gateway.endpoint.server
    to_server, server_in = anyio.create_memory_object_stream[Any](10)
    server_out, from_server = anyio.create_memory_object_stream[Any](10)
    adapter: TypeAdapter[Any] = TypeAdapter(types.JSONRPCMessage)

    async def send(message: dict[str, Any]) -> None:
        await to_server.send(SessionMessage(adapter.validate_python(message)))

    async def receive() -> dict[str, Any]:
        with anyio.fail_after(5):
            message = await from_server.receive()
        dumped: dict[str, Any] = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped

    async with to_server, server_in, server_out, from_server, anyio.create_task_group() as group:
        group.start_soon(server.run, server_in, server_out, server.create_initialization_options())
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
        await send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        await receive()
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield send, receive
        group.cancel_scope.cancel()


async def test_over_a_session_the_client_is_told_when_its_task_completes_or_is_cancelled() -> None:
    _, gateway = make_gateway(TaskConfig())
    quick = {"name": "call_function", "arguments": {"name": "debug.slow", "args": {"seconds": 0}}, "task": {}}
    slow = {**quick, "arguments": {"name": "debug.slow", "args": {"seconds": 5}}}
    async with gateway.lifespan(), session(gateway) as (send, receive):
        await send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": quick})
        task = (await receive())["result"]["task"]
        told = await receive()
        assert told["method"] == "notifications/tasks/status"
        assert told["params"]["taskId"] == task["taskId"] and told["params"]["status"] == "completed"

        await send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": slow})
        task = (await receive())["result"]["task"]
        await send({"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel", "params": {"taskId": task["taskId"]}})
        answers = [await receive(), await receive()]
    told = next(answer for answer in answers if answer.get("method") == "notifications/tasks/status")
    assert told["params"] == {**told["params"], "taskId": task["taskId"], "status": "cancelled"}


async def test_a_session_without_an_address_keeps_tasks_past_the_share_of_one_address() -> None:
    app = create_app(debug_routes=True)
    gateway = Gateway(app=app, tasks=TaskConfig(), limits=Limits(tasks_stored_per_address=1))
    gateway.mount(app, "/mcp")
    quick = {"name": "call_function", "arguments": {"name": "debug.slow", "args": {"seconds": 0}}, "task": {}}
    async with gateway.lifespan(), session(gateway) as (send, receive):
        started: list[dict[str, Any]] = []
        for index in range(3):
            await send({"jsonrpc": "2.0", "id": index + 1, "method": "tools/call", "params": quick})
            started.append(await receive())
            if "result" in started[-1]:
                await receive()  # the notification that it completed
        # Over HTTP, callers from one address share 1 place.
        over_http = [
            await rpc(app, "tools/call", quick, authorization=f"Bearer {key}") for key in (ADMIN_KEY, MEMBER_KEY)
        ]
    assert [answer["result"]["task"]["status"] for answer in started] == ["working"] * 3
    assert "result" in over_http[0]
    assert over_http[1]["error"]["data"] == {"limit": "tasks_stored_per_address", "value": 1}


# notifications/tasks on a 2026-07-28 subscriptions/listen stream (SEP-2663, task status notifications)


@asynccontextmanager
async def listening(
    target: FastAPI | str, task_ids: list[str], *, tasks: bool = True
) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
    """A subscriptions/listen request for `task_ids` to an app in-process or a served base URL; its JSON-RPC
    frames as they arrive (an in-process app's only once the stream has ended)."""
    params = {"notifications": {"taskIds": task_ids}, "_meta": modern_meta(tasks=tasks)}
    transport = None if isinstance(target, str) else httpx2.ASGITransport(target)
    base = target if isinstance(target, str) else "http://localhost"
    async with (
        httpx2.AsyncClient(transport=transport) as http,
        http.stream(
            "POST",
            f"{base}/mcp",
            json={"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": params},
            headers={
                "authorization": f"Bearer {ADMIN_KEY}",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "subscriptions/listen",
            },
        ) as response,
    ):

        async def frames() -> AsyncIterator[dict[str, Any]]:
            if response.headers["content-type"].startswith("application/json"):
                yield json.loads(await response.aread())
                return
            async for line in response.aiter_lines():
                if line.startswith("data:") and line.removeprefix("data:").strip():
                    yield json.loads(line.removeprefix("data:"))

        yield frames()


async def listen(target: FastAPI | str, task_ids: list[str], *, tasks: bool = True) -> list[dict[str, Any]]:
    """Every frame of a listen stream, to its end."""
    with anyio.fail_after(10):
        async with listening(target, task_ids, tasks=tasks) as frames:
            return [frame async for frame in frames]


_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


async def test_a_listen_stream_reports_the_callers_task_now_and_when_it_ends_then_closes() -> None:
    app, gateway = make_gateway(TaskConfig(timeout=10, poll_interval=5))
    call = {"name": "call_function", "arguments": {"name": "debug.slow", "args": {"seconds": 0.2}}}
    async with gateway.lifespan():
        mine = (await modern(app, "tools/call", call))["result"]["taskId"]
        theirs = await start_task(app, "call_function", {"name": "debug.slow", "args": {"seconds": 0}}, MEMBER_KEY)
        frames = await listen(app, [mine, theirs["taskId"], "never-created", mine])
    subscription = {"io.modelcontextprotocol/subscriptionId": "listen-1"}
    ack, now, ended, closing = frames  # the end was seen at once (poll_interval is 5 s): the instance woke the stream
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"] == {"notifications": {"taskIds": [mine]}, "_meta": subscription}
    assert now["method"] == "notifications/tasks" and now["params"]["status"] == "working"
    assert ended["method"] == "notifications/tasks" and ended["params"]["_meta"] == subscription
    assert ended["params"]["taskId"] == mine and ended["params"]["status"] == "completed"
    assert ended["params"]["result"]["structuredContent"] == {"slept": 0.2}
    assert closing["id"] == "listen-1" and closing["result"]["_meta"][_SUBSCRIPTION] == "listen-1"


async def test_a_listen_stream_on_another_instance_reports_the_task_as_the_shared_store_records_it(
    store_url: str,
) -> None:
    waiting = Waiting()
    # Real uvicorn for the listening instance: its frames must reach the client while the task still runs.
    async with (
        waiting.two_instances(store_url) as (first_app, second_app, _),
        serve_http(second_app, lifespan="off") as base,
    ):
        task = await start_task(first_app, "call_function", {"name": "jobs.wait", "args": {}})
        with anyio.fail_after(5):
            await waiting.started.wait()
        with anyio.fail_after(10):
            async with listening(base, [task["taskId"]]) as frames:
                ack = await anext(frames)
                assert ack["params"]["notifications"] == {"taskIds": [task["taskId"]]}
                assert (await anext(frames))["params"]["status"] == "working"
                waiting.release.set()  # the first instance records the end; the second reads it from the store
                ended = await anext(frames)
                assert ended["params"]["status"] == "completed"
                assert ended["params"]["result"]["structuredContent"] == {"released": True}
                assert (await anext(frames))["result"]["_meta"][_SUBSCRIPTION] == "listen-1"


async def test_a_task_that_already_ended_is_reported_once_and_the_stream_closes() -> None:
    app, gateway = make_gateway(TaskConfig())
    call = {"name": "call_function", "arguments": {"name": "debug.slow", "args": {"seconds": 5}}}
    async with gateway.lifespan():
        task_id = (await modern(app, "tools/call", call))["result"]["taskId"]
        await modern(app, "tasks/cancel", {"taskId": task_id})
        frames = await listen(app, [task_id])
    assert [frame.get("method") for frame in frames] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tasks",
        None,
    ]
    assert frames[1]["params"]["status"] == "cancelled" and "result" not in frames[1]["params"]


async def test_listening_to_tasks_without_declaring_the_tasks_extension_is_refused_with_what_is_missing() -> None:
    app, gateway = make_gateway(TaskConfig())
    async with gateway.lifespan():
        (refused,) = await listen(app, ["any"], tasks=False)
        assert refused["error"]["code"] == -32021
        assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
        (wrong,) = await listen(app, [1, 2])  # type: ignore[list-item]
    assert wrong["error"]["code"] == types.INVALID_PARAMS and "taskIds" in wrong["error"]["message"]


async def test_the_official_clients_listen_is_acknowledged_with_what_it_asked_for() -> None:
    app, gateway = make_gateway(TaskConfig())
    async with (
        gateway.lifespan(),
        serve_http(app, lifespan="off") as base,
        httpx2.AsyncClient(headers={"authorization": f"Bearer {ADMIN_KEY}"}) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="auto") as client,
    ):
        assert client.protocol_version == "2026-07-28"
        with anyio.fail_after(10):
            async with client.listen(tools_list_changed=True, resource_subscriptions=["catalog://overview"]) as sub:
                assert sub.honored.tools_list_changed is True
                assert sub.honored.resource_subscriptions == ["catalog://overview"]
                assert sub.honored.prompts_list_changed is None
