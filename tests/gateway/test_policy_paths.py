"""Every path a caller can reach answers from the caller policy: a function hidden from the caller, and a type
only hidden functions use, is in no listing, text, completion, suggestion or page it gets.

The paths are enumerated from the gateway itself (the JSON-RPC methods its server answers, its tools, resources,
resource templates, prompts and HTTP routes), so a path added later without a probe here fails
`test_every_path_a_caller_can_reach_has_a_probe` until one is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.gateway import Gateway
from gateway.mcp import _sdk
from gateway.mcp.prompts import Prompt, PromptArgument
from gateway.mcp.tasks import TaskConfig
from gateway.options import Additions, Observability
from gateway.policy import Access
from gateway.tools.scripts import ScriptConfig
from sandbox import ScriptLimits

pytestmark = pytest.mark.anyio

URL = "http://localhost/mcp"
#: What a caller who does not see the customers module must never read: one of its function names, or the types
#: only they use (CustomerCreate, CustomerPage, CustomerUpdate, and Customer, the only one that speaks of E.164).
HIDDEN = re.compile(r"customers[.-](get|list|create|update|delete)_customer|\bCustomer(Create|Update|Page)\b|E\.164")
#: The methods a 2026-07-28 client reaches besides the server's request table (the tasks extension's middleware).
MIDDLEWARE_METHODS = frozenset({"initialize", "tasks/update"})


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def full_gateway() -> tuple[FastAPI, Gateway]:
    """A gateway with every path on: promoted tools (one hidden), scripts, tasks, ChatGPT search/fetch, the
    reference page, metrics, an operator prompt that completes function names, and customers hidden."""
    app = create_app(debug_routes=True)
    gateway = Gateway(
        app=app,
        whoami="users.get_current_user",
        tools=["orders.get_order", "customers.get_customer"],
        research=True,
        scripts=ScriptConfig(limits=ScriptLimits(timeout=5.0, max_concurrent=1, slot_wait=2.0)),
        tasks=TaskConfig(),
        access=Access(hide=("customers.*",)),
        observability=Observability(metrics_path="/metrics"),
        additions=Additions(
            prompts=[
                Prompt(
                    name="call_one",
                    description="Call one function.",
                    arguments=(PromptArgument(name="function", required=True, complete="functions"),),
                    template="Call {function}.",
                )
            ]
        ),
    )
    gateway.mount(app, "/mcp")
    return app, gateway


@dataclass
class Callers:
    """What the probes use: the app, a member's clients at both protocol eras, and a raw HTTP client."""

    app: FastAPI
    gateway: Gateway
    legacy: Client
    modern: Client
    http: httpx2.AsyncClient


@asynccontextmanager
async def callers() -> AsyncIterator[Callers]:
    app, gateway = full_gateway()
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(gateway.lifespan())
        transport = httpx2.ASGITransport(app)
        member = {"authorization": f"Bearer {MEMBER_KEY}"}
        http = await stack.enter_async_context(httpx2.AsyncClient(transport=transport, base_url="http://localhost"))
        clients = []
        for mode in ("legacy", "2026-07-28"):
            session = await stack.enter_async_context(httpx2.AsyncClient(transport=transport, headers=member))
            clients.append(
                await stack.enter_async_context(Client(streamable_http_client(URL, http_client=session), mode=mode))
            )
        yield Callers(app, gateway, clients[0], clients[1], http)


def seen(value: Any) -> str:
    """Everything a caller was shown, as one text (errors included)."""
    if isinstance(value, BaseModel):
        return value.model_dump_json(by_alias=True)
    return value if isinstance(value, str) else json.dumps(value, default=str)


async def refused(call: Awaitable[Any]) -> str:
    """The message and data of an MCP error the call ends in, or what it answered."""
    try:
        return seen(await call)
    except MCPError as error:
        return f"{error.error.message} {error.error.data}"


async def tool(c: Callers, name: str, args: dict[str, Any]) -> str:
    return await refused(c.legacy.call_tool(name, args))


async def raw(c: Callers, body: dict[str, Any], token: str = MEMBER_KEY, version: str = "2025-11-25") -> str:
    answer = await c.http.post(
        "/mcp",
        json=body,
        headers={
            "authorization": f"Bearer {token}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": version,
        },
    )
    return answer.text


async def admins_task(c: Callers) -> str:
    """A task of another caller (the admin), on a visible function."""
    call = {"name": "call_function", "arguments": {"name": "orders.list_orders", "args": {}}, "task": {}}
    answer = json.loads(await raw(c, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, ADMIN_KEY))
    task_id: str = answer["result"]["task"]["taskId"]
    return task_id


FUNCTION = types.ResourceTemplateReference(type="ref/resource", uri="catalog://functions/{function}")
MODULE = types.ResourceTemplateReference(type="ref/resource", uri="catalog://modules/{module}")


async def probe_tools_call(c: Callers) -> str:
    # Every tool has a probe of its own below; here, a hidden promoted tool called by name, and a task of one.
    task = {"name": "customers-get_customer", "arguments": {"customer_id": "c"}, "task": {}}
    shown = " ".join(
        [
            await tool(c, "customers-get_customer", {"customer_id": "c"}),
            await raw(c, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": task}),
        ]
    )
    return shown.replace("'customers-get_customer'", "''")


async def probe_tasks(c: Callers) -> str:
    theirs = await admins_task(c)
    texts = [await raw(c, {"jsonrpc": "2.0", "id": 1, "method": "tasks/list", "params": {}})]
    texts += [
        await raw(c, {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"taskId": theirs}})
        for method in ("tasks/get", "tasks/result", "tasks/cancel")
    ]
    assert all("Unknown task" in text for text in texts[1:])
    assert theirs not in texts[0]
    return " ".join(texts)


async def probe_listen(c: Callers) -> str:
    theirs = await admins_task(c)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
    body = {"notifications": {"taskIds": [theirs]}, "_meta": meta}
    answer = await c.http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen", "params": body},
        headers={
            "authorization": f"Bearer {MEMBER_KEY}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "subscriptions/listen",
        },
    )
    assert theirs not in answer.text  # another caller's task is not followed, not even acknowledged
    return answer.text


async def probe_tasks_update(c: Callers) -> str:
    theirs = await admins_task(c)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
    answer = await c.http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tasks/update", "params": {"taskId": theirs, "_meta": meta}},
        headers={
            "authorization": f"Bearer {MEMBER_KEY}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tasks/update",
            "mcp-name": theirs,
        },
    )
    assert "Unknown task" in answer.text
    return answer.text


async def probe_resources_read(c: Callers) -> str:
    texts = [
        await refused(c.legacy.read_resource(uri))
        for uri in (
            "catalog://overview",
            "catalog://reference",
            "catalog://functions/customers.get_customer",
            "catalog://functions/customers.get_custome",
            "catalog://modules/customers",
            "catalog://terms/Customer",
        )
    ]
    return " ".join(texts).replace("customers.get_customer'", "'").replace("customers.get_custome'", "'")


async def probe_types(c: Callers, uri: str) -> str:
    text = await refused(c.legacy.read_resource(uri))
    # TypeScript names a function inside its module's object: `customers: {` then `get_customer(args`.
    assert "declare const api" in text and "customers: {" not in text and "_customer(" not in text
    return text


async def probe_completion(c: Callers) -> str:
    call_one = types.PromptReference(type="ref/prompt", name="call_one")
    explore = types.PromptReference(type="ref/prompt", name="explore_module")
    texts = [
        seen(await c.legacy.complete(FUNCTION, {"name": "function", "value": "customers"})),
        seen(await c.legacy.complete(MODULE, {"name": "module", "value": ""})),
        seen(await c.legacy.complete(call_one, {"name": "function", "value": "customers"})),
        seen(await c.legacy.complete(explore, {"name": "module", "value": ""})),
    ]
    assert "customers" not in texts[1] + texts[3]
    return " ".join(texts)


async def probe_prompts_get(c: Callers) -> str:
    texts = [
        seen(await c.legacy.get_prompt("work_with_api", {})),
        await refused(c.legacy.get_prompt("explore_module", {"module": "customers"})),
        await refused(c.legacy.get_prompt("call_one", {"function": "customers.get_customer"})),
    ]
    assert "- customers (" not in texts[0]
    return " ".join(texts).replace("'customers.get_customer'", "''")


async def probe_page(c: Callers, path: str) -> str:
    page = await c.http.get(path)
    return page.text


async def probe_metrics(c: Callers) -> str:
    # The admin calls a hidden function... no: hidden from everyone; the page must not reach the public at all.
    outsider = httpx2.AsyncClient(
        transport=httpx2.ASGITransport(c.app, client=("203.0.113.9", 4000)), base_url="http://localhost"
    )
    async with outsider:
        page = await outsider.get("/metrics")
    assert page.status_code == 403
    return page.text


Probe = Callable[[Callers], Awaitable[str]]

#: One probe per path; each returns what the member (who does not see customers) was shown.
PROBES: dict[str, Probe] = {
    "method:initialize": lambda c: _value(c.legacy.instructions or ""),
    "method:server/discover": lambda c: _value(c.modern.instructions or ""),
    "method:ping": lambda c: raw(c, {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    "method:tools/list": lambda c: _awaited(c.legacy.list_tools()),
    "method:tools/call": probe_tools_call,
    "method:resources/list": lambda c: _awaited(c.legacy.list_resources()),
    "method:resources/templates/list": lambda c: _awaited(c.legacy.list_resource_templates()),
    "method:resources/read": probe_resources_read,
    "method:resources/subscribe": lambda c: _without(
        raw(c, _request("resources/subscribe", uri="catalog://functions/customers.get_customer")),
        "catalog://functions/customers.get_customer",
    ),
    "method:resources/unsubscribe": lambda c: raw(c, _request("resources/unsubscribe", uri="catalog://overview")),
    "method:prompts/list": lambda c: _awaited(c.legacy.list_prompts()),
    "method:prompts/get": probe_prompts_get,
    "method:completion/complete": probe_completion,
    "method:tasks/get": probe_tasks,
    "method:tasks/result": probe_tasks,
    "method:tasks/list": probe_tasks,
    "method:tasks/cancel": probe_tasks,
    "method:tasks/update": probe_tasks_update,
    "method:subscriptions/listen": probe_listen,
    "tool:whoami": lambda c: tool(c, "whoami", {}),
    "tool:search_functions": lambda c: _joined(
        tool(c, "search_functions", {"query": "get a customer"}), tool(c, "search_functions", {})
    ),
    "tool:describe_function": lambda c: _without(
        _joined(
            tool(c, "describe_function", {"names": ["customers.get_customer", "orders.get_order"]}),
            tool(
                c,
                "describe_function",
                {"names": ["customers.get_customer", "orders.list_orders"], "format": "typescript"},
            ),
        ),
        "customers.get_customer",
    ),
    "tool:explain_term": lambda c: tool(c, "explain_term", {"name": "Customer"}),
    "tool:call_function": lambda c: _without(
        tool(c, "call_function", {"name": "customers.get_custome", "args": {}}), "customers.get_custome"
    ),
    "tool:run_script": lambda c: _joined(
        tool(
            c,
            "run_script",
            {
                "code": "try { await call(String('customers.get_custome'), {}) } catch (e) { "
                "JSON.stringify([Object.keys(api),"
                " e.message.replace('customers.get_custome', '')]) }"
            },
        ),
        # Refused before it runs: the closest names are the member's own.
        _without(tool(c, "run_script", {"code": "await api.customers.get_custome({})"}), "customers"),
    ),
    "tool:search": lambda c: tool(c, "search", {"query": "customer"}),
    "tool:fetch": lambda c: _without(
        tool(c, "fetch", {"id": "function:customers.get_custome"}), "customers.get_custome"
    ),
    "tool:orders-get_order": lambda c: tool(c, "orders-get_order", {"order_id": "ord_1"}),
    "tool:customers-get_customer": lambda c: _without(
        tool(c, "customers-get_customer", {"customer_id": "c"}), "customers-get_customer"
    ),
    "resource:catalog://overview": lambda c: refused(c.legacy.read_resource("catalog://overview")),
    "resource:catalog://reference": lambda c: refused(c.legacy.read_resource("catalog://reference")),
    "template:catalog://modules/{module}": lambda c: refused(c.legacy.read_resource("catalog://modules/orders")),
    "template:catalog://functions/{function}": lambda c: _without(
        _without(
            refused(c.legacy.read_resource("catalog://functions/customers.get_customer")),
            "catalog://functions/customers.get_customer",
        ),
        "customers.get_customer",
    ),
    "template:catalog://terms/{term}": lambda c: refused(c.legacy.read_resource("catalog://terms/Customer")),
    "resource:catalog://types": lambda c: probe_types(c, "catalog://types"),
    "template:catalog://types/{module}": lambda c: _joined(
        probe_types(c, "catalog://types/orders"),
        _without(refused(c.legacy.read_resource("catalog://types/customers")), "customers"),
    ),
    "prompt:work_with_api": lambda c: _awaited(c.legacy.get_prompt("work_with_api", {"task": "a customer"})),
    "prompt:explore_module": lambda c: refused(c.legacy.get_prompt("explore_module", {"module": "customers"})),
    "prompt:call_one": lambda c: _without(
        refused(c.legacy.get_prompt("call_one", {"function": "customers.get_customer"})), "customers.get_customer"
    ),
    "route:/mcp": lambda c: probe_page(c, "/mcp"),
    "route:/reference": lambda c: probe_page(c, "/reference"),
    "route:/metrics": probe_metrics,
}


def _request(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def _value(text: str) -> str:
    return text


async def _awaited(call: Awaitable[Any]) -> str:
    return seen(await call)


async def _joined(*calls: Awaitable[str]) -> str:
    return " ".join([await call for call in calls])


async def _without(call: Awaitable[str], asked: str) -> str:
    """What the call showed, less the name the caller itself asked for (echoed back in an error)."""
    return (await call).replace(f"'{asked}'", "''").replace(f'\\"{asked}\\"', "").replace(f'"{asked}"', "")


def paths_of(gateway: Gateway) -> set[str]:
    """Every path the gateway lets a caller reach, named as PROBES names them."""
    paths = {f"method:{method}" for method in _sdk.served_methods(gateway.endpoint.server) | MIDDLEWARE_METHODS}
    paths |= {f"tool:{spec.name}" for spec in gateway.tools()}
    paths |= {f"resource:{resource.uri}" for resource in gateway.resources.resources()}
    paths |= {f"template:{template.uri_template}" for template in gateway.resources.templates()}
    paths |= {f"prompt:{prompt.name}" for prompt in gateway.prompts.prompts()}
    paths |= {f"route:{route}" for route in gateway._routes("/mcp")}
    return paths


def test_every_path_a_caller_can_reach_has_a_probe() -> None:
    _, gateway = full_gateway()
    assert paths_of(gateway) == set(PROBES)


async def test_no_path_shows_a_caller_a_function_hidden_from_it_or_a_type_only_hidden_functions_use() -> None:
    shown: dict[str, str] = {}
    async with callers() as c:
        for path, probe in PROBES.items():
            shown[path] = await probe(c)
    leaks = {path: HIDDEN.search(text)[0] for path, text in shown.items() if HIDDEN.search(text)}  # type: ignore[index]
    assert leaks == {}
