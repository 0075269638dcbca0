"""The caller policy attacked as an outsider, a narrower token of the same person and one greedy connection would
try it: each test is one hole found where two paths of the gateway disagreed, closed by asking the one policy."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.types import ASGIApp

from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.mcp.tasks import TaskConfig
from gateway.options import Effects, Observability, Output, Security
from gateway.policy import Access
from gateway.tools.scripts import ScriptConfig
from oauth import OAuthServer
from sandbox import ScriptLimits
from tests.gateway.grants import oauth_server, oauth_token, oauth_tokens, refreshed

pytestmark = pytest.mark.anyio

URL = "http://localhost/mcp"
HIDE_CUSTOMERS = Access(hide=("customers.*",))
LIMITS = ScriptLimits(timeout=5.0, max_concurrent=1, slot_wait=1.0)
PROBE_HIDDEN = "try { await call(String('customers.get_customer'), {customer_id: 'c'}) } catch (e) { e.message }"
PROBE_MISSING = "try { await call(String('customers.get_customerz'), {customer_id: 'c'}) } catch (e) { e.message }"
#: What each OAuth scope reaches: a token of `orders:read` alone sees no customer.
SCOPES = {"orders:read": ["orders.list_*", "orders.get_*", "debug.*"], "customers:read": ["customers.*"]}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def counted_calls(app: FastAPI) -> list[str]:
    """The paths of the REST requests that reach `app` from now on (the gateway's calls go through its middleware;
    MCP requests themselves are answered before it)."""
    paths: list[str] = []

    @app.middleware("http")
    async def count(request: Request, call_next: Any) -> Any:
        paths.append(request.url.path)
        return await call_next(request)

    return paths


def make_gateway(app: FastAPI | None = None, **options: Any) -> tuple[FastAPI, Gateway]:
    app = app or create_app(debug_routes=True)
    gateway = Gateway(app=app, whoami="users.get_current_user", **options)
    gateway.mount(app, "/mcp")
    return app, gateway


#: Where the in-process HTTP client connects from unless a test says otherwise.
HERE = ("127.0.0.1", 123)


@asynccontextmanager
async def connect(
    app: ASGIApp, token: str, mode: str = "legacy", client: tuple[str, int] = HERE
) -> AsyncIterator[Client]:
    transport = httpx2.ASGITransport(app, client=client)
    async with (
        httpx2.AsyncClient(transport=transport, headers={"authorization": f"Bearer {token}"}) as http,
        Client(streamable_http_client(URL, http_client=http), mode=mode) as mcp,
    ):
        yield mcp


async def post(
    app: ASGIApp, body: Any, token: str, version: str = "2025-11-25", client: tuple[str, int] = HERE
) -> httpx2.Response:
    """One raw JSON-RPC POST (a message or a batch) at protocol `version`, from the address `client`."""
    transport = httpx2.ASGITransport(app, client=client)
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
        return await http.post(
            "/mcp",
            json=body,
            headers={
                "authorization": f"Bearer {token}",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": version,
            },
        )


def task_call(name: str, args: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    params = {"name": "call_function", "arguments": {"name": name, "args": args}, "task": {"ttl": 60_000}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def text(result: types.CallToolResult | types.GetPromptResult) -> str:
    if isinstance(result, types.GetPromptResult):
        return "\n".join(m.content.text for m in result.messages if isinstance(m.content, types.TextContent))
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def scoped_gateway(**options: Any) -> tuple[FastAPI, Gateway, OAuthServer]:
    server = oauth_server()
    app, gateway = make_gateway(auth=server.auth, access=Access(scopes=SCOPES), **options)
    return app, gateway, server


# Hole 1: run_script's `api` object listed every module and hidden function.

LIST_API = "({modules: Object.keys(api), customers: Object.keys(api.customers || {}), all: JSON.stringify(api)})"


async def test_a_script_lists_no_module_or_function_a_hide_rule_keeps_from_the_caller() -> None:
    app, gateway = make_gateway(access=HIDE_CUSTOMERS, scripts=ScriptConfig(limits=LIMITS))
    async with gateway.lifespan(), connect(app, MEMBER_KEY) as member:
        listed = json.loads(text(await member.call_tool("run_script", {"code": LIST_API})))
        called = text(await member.call_tool("run_script", {"code": PROBE_HIDDEN}))
        missing = text(await member.call_tool("run_script", {"code": PROBE_MISSING}))
    assert "customers" not in listed["modules"] and "orders" in listed["modules"]
    assert listed["customers"] == [] and "customers" not in listed["all"]
    assert called.replace("customers.get_customer", "X") == missing.replace("customers.get_customerz", "X")


async def test_a_script_of_a_narrow_token_lists_only_the_functions_of_its_grant() -> None:
    app, gateway, server = await scoped_gateway(scripts=ScriptConfig(limits=LIMITS))
    narrow = await oauth_token(server, ["orders:read"])
    async with gateway.lifespan(), connect(app, narrow) as client:
        listed = json.loads(text(await client.call_tool("run_script", {"code": LIST_API})))
        orders = json.loads(text(await client.call_tool("run_script", {"code": "Object.keys(api.orders)"})))
    await server.aclose()
    assert sorted(listed["modules"]) == ["debug", "orders"]
    assert orders and all(name.startswith(("list_", "get_")) for name in orders)


# Hole 2: the work_with_api prompt listed every module to a caller who sees two functions.


async def test_the_work_with_api_prompt_names_no_module_a_hidden_rule_keeps_from_the_caller() -> None:
    app, gateway = make_gateway(access=HIDE_CUSTOMERS)
    async with gateway.lifespan(), connect(app, MEMBER_KEY) as member:
        prompt = text(await member.get_prompt("work_with_api", {"task": "find my orders"}))
    assert "- orders (" in prompt and "- customers (" not in prompt and "customers." not in prompt


async def test_the_work_with_api_prompt_of_a_narrow_token_names_only_its_grants_modules() -> None:
    app, gateway, server = await scoped_gateway()
    narrow = await oauth_token(server, ["orders:read"])
    async with gateway.lifespan(), connect(app, narrow) as client:
        prompt = text(await client.get_prompt("work_with_api", {}))
        instructions = client.instructions or ""
    await server.aclose()
    assert "- orders (" in prompt and "- customers (" not in prompt and "- products (" not in prompt
    assert "- customers (" not in instructions and "- products (" not in instructions


# Hole 3: GET /reference showed hidden functions to anyone, without credentials.


async def test_an_anonymous_browser_sees_no_hidden_function_on_the_reference_page() -> None:
    app, gateway = make_gateway(access=HIDE_CUSTOMERS, output=Output(reference_path="/reference"))
    async with gateway.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        page = await http.get("http://localhost/reference")
    assert page.status_code == 200
    assert 'id="fn-orders.get_order"' in page.text
    assert "fn-customers." not in page.text and "customers.get_customer" not in page.text
    assert 'id="module-customers"' not in page.text
    assert page.headers["cache-control"] == "private, no-cache"


async def test_the_reference_page_shows_a_token_its_own_grant_and_an_anonymous_browser_nothing_scoped() -> None:
    app, gateway, server = await scoped_gateway(output=Output(reference_path="/reference"))
    narrow = await oauth_token(server, ["orders:read"])
    wide = await oauth_token(server, ["orders:read", "customers:read"])
    async with gateway.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        anonymous = await http.get("http://localhost/reference")
        mine = await http.get("http://localhost/reference", headers={"authorization": f"Bearer {narrow}"})
        theirs = await http.get("http://localhost/reference", headers={"authorization": f"Bearer {wide}"})
        forged = await http.get("http://localhost/reference", headers={"authorization": "Bearer forged"})
    await server.aclose()
    assert anonymous.status_code == 200 and "fn-" not in anonymous.text  # an empty grant reaches no function
    assert 'id="term-Customer"' not in anonymous.text  # nor a type only scoped functions use
    assert 'id="fn-orders.get_order"' in mine.text and "fn-customers." not in mine.text
    assert 'id="term-CustomerCreate"' not in mine.text and 'id="term-Order"' in mine.text
    assert 'id="fn-customers.get_customer"' in theirs.text and 'id="term-CustomerCreate"' in theirs.text
    assert forged.status_code == 401 and forged.headers["www-authenticate"].startswith("Bearer ")
    assert "orders." not in forged.text


# Hole 4: tasks belonged to the REST credential, so a narrower token of the same user read a broader one's.


@pytest.mark.parametrize("narrowed_by", ["another login", "a refresh of the same login"])
async def test_a_narrower_token_of_the_same_person_sees_none_of_a_broader_tokens_tasks(narrowed_by: str) -> None:
    app, gateway, server = await scoped_gateway(tasks=TaskConfig())
    login = await oauth_tokens(server, ["orders:read", "customers:read"])
    wide = str(login["access_token"])
    if narrowed_by == "another login":
        narrow = await oauth_token(server, ["orders:read"])
    else:
        narrow = str((await refreshed(server, str(login["refresh_token"]), ["orders:read"]))["access_token"])
    async with gateway.lifespan(), connect(app, wide) as owner, connect(app, narrow) as other:
        started = await post(app, task_call("customers.list_customers", {}), wide)
        task_id = started.json()["result"]["task"]["taskId"]
        listed = await other.session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        refusals = []
        for request, answer in (
            (types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult),
            (
                types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)),
                types.CallToolResult,
            ),
            (types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)), types.CancelTaskResult),
        ):
            with pytest.raises(MCPError) as refused:
                await other.session.send_request(request, answer)
            refusals.append(refused.value.error)
        result = await owner.session.send_request(
            types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)), types.CallToolResult
        )
        mine = await owner.session.send_request(types.ListTasksRequest(), types.ListTasksResult)
    await server.aclose()
    assert listed.tasks == []
    assert all(error.code == types.INVALID_PARAMS and "Unknown task" in error.message for error in refusals)
    assert not result.is_error and [task.task_id for task in mine.tasks] == [task_id]


async def test_a_narrower_token_of_the_same_login_cannot_read_a_task_even_of_a_function_it_sees() -> None:
    app, gateway, server = await scoped_gateway(tasks=TaskConfig())
    login = await oauth_tokens(server, ["orders:read", "customers:read"])
    narrow = str((await refreshed(server, str(login["refresh_token"]), ["orders:read"]))["access_token"])
    async with gateway.lifespan(), connect(app, narrow) as other:
        started = await post(app, task_call("orders.list_orders", {}), str(login["access_token"]))
        task_id = started.json()["result"]["task"]["taskId"]
        listed = await other.session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        with pytest.raises(MCPError) as refused:
            await other.session.send_request(
                types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)),
                types.CallToolResult,
            )
    await server.aclose()
    # What a task's result holds is the wider grant's to see: a run_script task may have read anything it reached.
    assert listed.tasks == []
    assert refused.value.error.code == types.INVALID_PARAMS and "Unknown task" in refused.value.error.message


async def test_refreshing_with_narrower_scopes_or_logging_in_again_gives_the_person_no_new_budget() -> None:
    app, gateway, server = await scoped_gateway(tasks=TaskConfig(), limits=Limits(tasks_stored_per_caller=2))
    login = await oauth_tokens(server, ["orders:read", "customers:read"])
    refresh = str(login["refresh_token"])
    tokens = [str(login["access_token"])]
    for scopes in (["orders:read"], ["customers:read"]):
        answer = await refreshed(server, refresh, scopes)
        tokens.append(str(answer["access_token"]))
        refresh = str(answer["refresh_token"])
    tokens.append(await oauth_token(server, ["orders:read"]))  # another login of the same person
    async with gateway.lifespan():
        answers = [(await post(app, task_call("orders.list_orders", {}), token)).json() for token in tokens]
        someone_else = (
            await post(app, task_call("orders.list_orders", {}), await oauth_token(server, ["orders:read"], MEMBER_KEY))
        ).json()
    await server.aclose()
    assert ["result" in answer for answer in answers] == [True, True, False, False]
    assert {answer["error"]["data"]["limit"] for answer in answers[2:]} == {"tasks_stored_per_caller"}
    assert "you keep 2 tasks on this server" in answers[2]["error"]["message"]
    assert "result" in someone_else  # another person's budget is their own


# Hole 5: one caller on one connection started 120 task-augmented calls at once.


async def test_one_connection_starting_120_tasks_gets_its_budget_and_clear_refusals_for_the_rest() -> None:
    app, gateway = make_gateway(tasks=TaskConfig(timeout=10))
    slow = task_call("debug.slow", {"seconds": 2})
    async with gateway.lifespan():
        answers = [await post(app, {**slow, "id": index}, ADMIN_KEY) for index in range(120)]
        running = gateway.policy.tasks.total
        others = await post(app, slow, MEMBER_KEY)
    accepted = [answer for answer in answers if "result" in answer.json()]
    refused = [answer.json()["error"] for answer in answers if "error" in answer.json()]
    limit = Limits().tasks_running_per_caller
    assert len(accepted) == running == limit and len(refused) == 120 - limit
    assert {error["code"] for error in refused} == {types.INVALID_REQUEST}
    assert refused[0]["data"] == {"limit": "tasks_running_per_caller", "value": limit}
    assert f"you already have {limit} tasks running" in refused[0]["message"]
    assert "Limits.tasks_running_per_caller (--tasks-running-per-caller)" in refused[0]["message"]
    assert "result" in others.json()  # another caller's budget is its own


async def test_tasks_running_in_all_are_bounded_whoever_starts_them_and_a_place_frees_when_one_ends() -> None:
    app, gateway = make_gateway(tasks=TaskConfig(timeout=10), limits=Limits(tasks_running=2))
    async with gateway.lifespan(), connect(app, ADMIN_KEY) as admin:
        first = (await post(app, task_call("debug.slow", {"seconds": 5}), ADMIN_KEY)).json()["result"]["task"]
        await post(app, task_call("debug.slow", {"seconds": 5}), ADMIN_KEY)
        refused = (await post(app, task_call("debug.slow", {"seconds": 0}), MEMBER_KEY)).json()["error"]
        cancel = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=first["taskId"]))
        await admin.session.send_request(cancel, types.CancelTaskResult)
        with anyio.fail_after(5):
            while gateway.policy.tasks.total > 1:
                await anyio.sleep(0.01)
        admitted = await post(app, task_call("debug.slow", {"seconds": 0}), MEMBER_KEY)
    assert refused["data"] == {"limit": "tasks_running", "value": 2}
    assert "the server already has 2 tasks running" in refused["message"]
    assert "result" in admitted.json()


async def test_a_caller_keeps_at_most_its_budget_of_stored_tasks() -> None:
    app, gateway = make_gateway(tasks=TaskConfig(), limits=Limits(tasks_stored_per_caller=3))
    async with gateway.lifespan():
        kept = [await post(app, task_call("orders.list_orders", {}, index), ADMIN_KEY) for index in range(3)]
        with anyio.fail_after(5):
            while gateway.policy.tasks.total:
                await anyio.sleep(0.01)
        fourth = (await post(app, task_call("orders.list_orders", {}), ADMIN_KEY)).json()
        member = (await post(app, task_call("orders.list_orders", {}), MEMBER_KEY)).json()
    assert all("result" in answer.json() for answer in kept)
    assert fourth["error"]["data"] == {"limit": "tasks_stored_per_caller", "value": 3}
    assert "you keep 3 tasks on this server" in fourth["error"]["message"]
    assert "result" in member


# Hole 5b: the budgets of things kept counted per token only; with bearer passthrough a client that made up a new
# token every 200 tasks kept 4,000 tasks (~57 MB) for an hour, and as many calls waiting for approval.


async def test_a_client_switching_made_up_tokens_meets_the_bound_on_tasks_kept_in_all_and_others_tasks_stay() -> None:
    app, gateway = make_gateway(tasks=TaskConfig(), limits=Limits(tasks_stored_per_caller=2, tasks_stored=5))
    async with gateway.lifespan(), connect(app, ADMIN_KEY) as admin:
        honest = (await post(app, task_call("orders.list_orders", {}), ADMIN_KEY)).json()["result"]["task"]
        answers = [
            (await post(app, task_call("orders.list_orders", {}, index), f"made-up-{index // 2}")).json()
            for index in range(8)
        ]
        with anyio.fail_after(5):
            while gateway.policy.tasks.total:
                await anyio.sleep(0.01)
        kept = await admin.session.send_request(
            types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=honest["taskId"])),
            types.CallToolResult,
        )
        listed = await admin.session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        refused_honest = (await post(app, task_call("orders.list_orders", {}), ADMIN_KEY)).json()["error"]
    assert ["result" in answer for answer in answers] == [True] * 4 + [False] * 4
    refusals = [answer["error"] for answer in answers[4:]]
    assert all(error["data"] == {"limit": "tasks_stored", "value": 5} for error in refusals)
    message = refusals[0]["message"]
    assert message.startswith("this server keeps 5 tasks of all its callers, the most it keeps")
    assert "Limits.tasks_stored (--tasks-stored) is 5" in message and "retry later" in message
    assert "made-up" not in message and ADMIN_KEY not in message
    assert not kept.is_error and [task.task_id for task in listed.tasks] == [honest["taskId"]]
    assert refused_honest["data"] == {"limit": "tasks_stored", "value": 5}


async def test_a_client_switching_made_up_tokens_meets_the_bound_on_calls_waiting_in_all_and_others_handles_stay() -> (
    None
):
    app, gateway = make_gateway(effects=Effects(approval="destructive"), limits=Limits(approvals_pending=3))
    delete = {"name": "products.delete_product", "args": {"product_id": 1}}
    async with gateway.lifespan(), connect(app, ADMIN_KEY) as admin:
        asked = await admin.call_tool("call_function", delete)
        assert asked.structured_content is not None
        handle = asked.structured_content["confirmation"]
        answers = []
        for index in range(4):
            async with connect(app, f"made-up-{index}") as other:
                answers.append(await other.call_tool("call_function", delete))
        done = await admin.call_tool("call_function", {**delete, "confirmation": handle})
        gone = await admin.call_tool("call_function", {"name": "products.get_product", "args": {"product_id": 1}})
    assert [answer.structured_content is not None for answer in answers] == [True, True, False, False]
    message = text(answers[2])
    assert answers[2].is_error and message.startswith("this server has 3 calls of all its callers waiting")
    assert "Limits.approvals_pending (--approvals-pending) is 3" in message and "call again later" in message
    assert "made-up" not in message and ADMIN_KEY not in message
    assert not done.is_error and gone.is_error


# Hole 5c: the bound in all was no share: one client address switching made-up tokens filled it, and nobody else
# could start a task (or ask for an approval) until its tasks expired.

ATTACKER = ("203.0.113.7", 40000)
NEIGHBOUR = ("203.0.113.8", 40000)


async def test_a_client_switching_made_up_tokens_meets_its_addresss_share_of_tasks_and_another_address_does_not() -> (
    None
):
    limits = Limits(tasks_stored_per_caller=2, tasks_stored_per_address=4, tasks_stored=6)
    app, gateway = make_gateway(tasks=TaskConfig(), limits=limits)
    async with gateway.lifespan():
        answers = [
            (
                await post(app, task_call("orders.list_orders", {}, index), f"made-up-{index // 2}", client=ATTACKER)
            ).json()
            for index in range(8)
        ]
        with anyio.fail_after(5):
            while gateway.policy.tasks.total:
                await anyio.sleep(0.01)
        neighbours = [
            (await post(app, task_call("orders.list_orders", {}, index), token, client=NEIGHBOUR)).json()
            for index, token in enumerate((ADMIN_KEY, MEMBER_KEY, "made-up-neighbour"))
        ]
    assert ["result" in answer for answer in answers] == [True] * 4 + [False] * 4
    refusals = [answer["error"] for answer in answers[4:]]
    assert all(error["data"] == {"limit": "tasks_stored_per_address", "value": 4} for error in refusals)
    message = refusals[0]["message"]
    assert message.startswith("callers from your client address keep 4 tasks on this server together")
    assert "Limits.tasks_stored_per_address (--tasks-stored-per-address) is 4" in message
    assert "ask for a shorter ttl" in message and "--trusted-proxy" in message
    assert "made-up" not in message and ATTACKER[0] not in message
    # The attacker's address holds 4 of the 6 places in all: another address gets the 2 left, then the bound in all.
    assert ["result" in answer for answer in neighbours] == [True, True, False]
    assert neighbours[2]["error"]["data"] == {"limit": "tasks_stored", "value": 6}


async def test_addresses_of_one_ipv6_64_share_one_share_of_tasks() -> None:
    app, gateway = make_gateway(tasks=TaskConfig(), limits=Limits(tasks_stored_per_address=2))
    async with gateway.lifespan():
        answers = [
            (
                await post(app, task_call("orders.list_orders", {}, index), f"made-up-{index}", client=(address, 1))
            ).json()
            for index, address in enumerate(("2001:db8:1:2::1", "2001:db8:1:2::ffff", "2001:db8:1:2:abcd::9"))
        ]
        elsewhere = await post(app, task_call("orders.list_orders", {}), "made-up-x", client=("2001:db8:1:3::1", 1))
    assert ["result" in answer for answer in answers] == [True, True, False]
    assert answers[2]["error"]["data"] == {"limit": "tasks_stored_per_address", "value": 2}
    assert "result" in elsewhere.json()


async def test_a_client_switching_made_up_tokens_meets_its_addresss_share_of_calls_waiting_and_others_still_ask() -> (
    None
):
    limits = Limits(approvals_pending_per_address=2, approvals_pending=3)
    app, gateway = make_gateway(effects=Effects(approval="destructive"), limits=limits)
    delete = {"name": "products.delete_product", "args": {"product_id": 1}}
    async with gateway.lifespan():
        answers = []
        for index in range(4):
            async with connect(app, f"made-up-{index}", client=ATTACKER) as other:
                answers.append(await other.call_tool("call_function", delete))
        async with connect(app, ADMIN_KEY, client=NEIGHBOUR) as admin:
            asked = await admin.call_tool("call_function", delete)
            assert asked.structured_content is not None
            done = await admin.call_tool(
                "call_function", {**delete, "confirmation": asked.structured_content["confirmation"]}
            )
    assert [answer.structured_content is not None for answer in answers] == [True, True, False, False]
    message = text(answers[2])
    assert answers[2].is_error and message.startswith("callers from your client address have 2 calls waiting")
    assert "Limits.approvals_pending_per_address (--approvals-pending-per-address) is 2" in message
    assert "nothing ran" in message and "--trusted-proxy" in message
    assert "made-up" not in message and ATTACKER[0] not in message
    assert not done.is_error


# Hole 6: one POST at 2025-03-26 held 1,500 call_function elements and made 1,500 API calls.


async def test_a_batch_of_1500_calls_is_refused_whole_before_any_call_is_made() -> None:
    app = create_app()
    paths = counted_calls(app)
    app, gateway = make_gateway(app)
    call = {"name": "call_function", "arguments": {"name": "orders.list_orders", "args": {}}}
    batch = [{"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": call} for index in range(1500)]
    async with gateway.lifespan():
        answer = await post(app, batch, ADMIN_KEY, version="2025-03-26")
    error = answer.json()["error"]
    assert answer.status_code == 400 and error["code"] == types.INVALID_REQUEST
    assert "the batch holds 1500 messages, over the limit of 32" in error["message"]
    assert "Limits.batch_elements (--batch-elements)" in error["message"]
    assert paths == []


async def test_a_batch_stops_making_calls_once_its_answers_fill_their_budget() -> None:
    app = create_app()
    paths = counted_calls(app)
    app, gateway = make_gateway(app, limits=Limits(batch_answer_bytes=3000))
    call = {"name": "call_function", "arguments": {"name": "orders.list_orders", "args": {"limit": 20}}}
    batch = [{"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": call} for index in range(10)]
    async with gateway.lifespan():
        answer = await post(app, batch, ADMIN_KEY, version="2025-03-26")
    answers = answer.json()
    ran = [item for item in answers if "result" in item]
    spared = [item for item in answers if "error" in item]
    assert [item["id"] for item in answers] == list(range(10))
    assert 1 <= len(ran) < 10 and len(spared) == 10 - len(ran)
    assert "send this request again on its own" in spared[0]["error"]["message"]
    assert "Limits.batch_answer_bytes" in spared[0]["error"]["message"]
    assert len(paths) == len(ran)


# Open listen streams, which a caller could otherwise hold without bound.


async def test_one_caller_cannot_hold_more_listen_streams_than_its_budget() -> None:
    app, gateway = make_gateway(tasks=TaskConfig(), limits=Limits(subscriptions_per_caller=2))
    listen = {
        "jsonrpc": "2.0",
        "id": "listen",
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": True},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "greedy", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }

    async def open_stream(token: str) -> dict[str, Any]:
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
            response = await http.post(
                URL,
                json=listen,
                headers={
                    "authorization": f"Bearer {token}",
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": "2026-07-28",
                    "mcp-method": "subscriptions/listen",
                },
            )
        frames = [line.removeprefix("data:") for line in response.text.splitlines() if line.startswith("data:")]
        last: dict[str, Any] = json.loads(frames[-1] if frames else response.text)
        return last

    async with gateway.lifespan(), anyio.create_task_group() as streams:
        for _ in range(2):
            streams.start_soon(open_stream, ADMIN_KEY)  # these stay open: their subscriptions never fire
        with anyio.fail_after(5):
            while gateway.policy.subscriptions.total < 2:
                await anyio.sleep(0.01)
        refused = await open_stream(ADMIN_KEY)
        streams.cancel_scope.cancel()
    assert refused["error"]["data"] == {"limit": "subscriptions_per_caller", "value": 2}
    assert "Limits.subscriptions_per_caller" in refused["error"]["message"]


# The metrics page names every function called, hidden ones included: it is the operator's scraper's alone.


async def test_the_metrics_page_is_refused_to_a_public_address_and_to_one_claimed_through_a_proxy() -> None:
    app, gateway = make_gateway(
        observability=Observability(metrics_path="/metrics"), security=Security(trusted_proxies=["10.0.0.0/8"])
    )

    async def scrape(client: tuple[str, int], forwarded: str | None = None) -> httpx2.Response:
        headers = {"x-forwarded-for": forwarded} if forwarded else {}
        transport = httpx2.ASGITransport(app, client=client)
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            return await http.get("/metrics", headers=headers)

    async with gateway.lifespan():
        outsider = await scrape(("203.0.113.9", 4000))
        relayed = await scrape(("10.1.2.3", 4000), "203.0.113.9")
        spoofed = await scrape(("203.0.113.9", 4000), "127.0.0.1")
        scraper = await scrape(("10.1.2.3", 4000), "10.9.9.9")
        local = await scrape(("127.0.0.1", 4000))
    assert outsider.status_code == relayed.status_code == spoofed.status_code == 403
    assert "metrics_from (--metrics-from)" in outsider.text
    assert scraper.status_code == local.status_code == 200
