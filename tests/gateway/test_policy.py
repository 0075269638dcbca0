"""The caller policy on its own: who a caller is and whose state is whose, the access rules and the views they
cut, the budgets and their refusals, and each answer a `CallerPolicy` gives the paths that ask it."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from catalog.builder import load_catalog
from catalog.model import Catalog, Function
from gateway.errors import ConfigError, LimitError, ToolError
from gateway.limits import Limits, option_name
from gateway.policy import Access, Budget, Caller, CallerPolicy, Policy, ScriptRules, Visibility
from gateway.policy.access import restricted, scope_map
from gateway.requests import RequestInfo
from gateway.rest.credentials import Credentials

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _operation(operation_id: str, tag: str, method: str = "get", body: str | None = None) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "tags": [tag],
        "responses": {"200": {"description": "ok"}},
    }
    if body is not None:
        operation["requestBody"] = {
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}}
        }
        operation["responses"]["200"]["content"] = {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}
        }
    return {method: operation}


@functools.cache
def shop() -> Catalog:
    """Orders (two reads, a write), customers (a read, a delete) and an audit read."""
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Shop", "version": "1"},
        "paths": {
            "/orders": {**_operation("list_orders", "orders"), **_operation("create_order", "orders", "post", "Order")},
            "/orders/{id}": _operation("get_order", "orders"),
            "/customers/{id}": {
                **_operation("get_customer", "customers", body=None),
                **_operation("delete_customer", "customers", "delete"),
            },
            "/audit": _operation("read_audit", "audit"),
        },
        "components": {
            "schemas": {"Order": {"type": "object", "properties": {"id": {"type": "string"}}}},
        },
    }
    return load_catalog(document)


def request(headers: dict[str, str] | None = None, scopes: list[str] | None = None, client: str | None = None) -> Any:
    principal = Credentials(headers or {"authorization": "Bearer k"}, scopes, client)
    return RequestInfo(transport="http", principal=principal)


def caller(**kwargs: Any) -> Caller:
    return Caller.of(request(**kwargs))


# Who is asking, and whose state is whose


def test_a_caller_is_its_credentials_and_its_grant() -> None:
    made = caller(headers={"x-key": "k"}, scopes=["b", "a"], client="claude")
    assert (made.transport, dict(made.credentials), made.scopes, made.client_id) == (
        "http",
        {"x-key": "k"},
        frozenset({"a", "b"}),
        "claude",
    )


def test_a_caller_without_a_grant_has_no_scopes_and_no_client() -> None:
    made = Caller.of(RequestInfo(transport="http", principal={"x-key": "k"}))
    assert (dict(made.credentials), made.scopes, made.client_id) == ({"x-key": "k"}, None, None)
    assert Caller.of(RequestInfo(transport="stdio")).credentials == {}


def test_an_anonymous_caller_has_an_empty_grant() -> None:
    made = Caller.anonymous(RequestInfo(transport="http"))
    assert (made.credentials, made.scopes, made.client_id) == ({}, frozenset(), None)


def test_the_owner_of_state_follows_identity_and_grant_and_nothing_else() -> None:
    owner = caller(scopes=["a", "b"], client="c").owner
    assert caller(scopes=["b", "a"], client="c").owner == owner  # the same grant, however it is written
    assert len(owner) == 32 and int(owner, 16) >= 0
    others = {
        caller(scopes=["a"], client="c").owner,  # a narrower token of the same person
        caller(scopes=["a", "b"], client="d").owner,  # another client
        caller(headers={"authorization": "Bearer other"}, scopes=["a", "b"], client="c").owner,  # another person
        caller(scopes=None, client="c").owner,  # no scopes is not an empty grant
        caller(scopes=[], client="c").owner,
        Caller.of(
            RequestInfo(transport="in-process", principal=Credentials({"authorization": "Bearer k"}, ["a", "b"], "c"))
        ).owner,
    }
    assert owner not in others and len(others) == 6


# The access rules


def test_access_rules_that_are_not_rules_are_refused_saying_what_to_give() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"hide": "orders.*"}, "Access.hide is a list of function-name patterns, e.g. ['customers.*'], not 'orders.*'"),
        ({"hide": [1]}, "Access.hide is a list of function-name patterns, e.g. ['customers.*'], not [1]"),
        ({"visible": "yes"}, "Access.visible must be a function of (caller, function), got 'yes'"),
        (
            {"scopes": ["orders.*"]},
            "scopes maps OAuth scopes to function-name patterns, e.g. {'orders:read': ['orders.*']}",
        ),
        ({"scopes": {"": ["orders.*"]}}, "scope '' must be a non-empty scope name without spaces"),
        ({"scopes": {"a b": ["orders.*"]}}, "scope 'a b' must be a non-empty scope name without spaces"),
        ({"scopes": {"read": "orders.*"}}, "scope 'read': give a list of function-name patterns, e.g. ['orders.*']"),
        ({"scopes": {"read": [3]}}, "scope 'read': patterns are strings such as 'orders.*', got [3]"),
    ]
    for options, message in cases:
        with pytest.raises(ConfigError) as error:
            Access(**options)
        assert str(error.value).startswith(message), options


def test_access_is_active_only_with_a_rule() -> None:
    assert not Access().active
    assert Access(hide=["a.*"]).active and Access(scopes={}).active and Access(visible=lambda c, f: True).active
    assert Access(hide=["a.*"]).hide == ("a.*",)


@pytest.mark.parametrize(
    ("access", "said"),
    [
        (
            Access(hide=["orders.get_ordr"]),
            "hide 'orders.get_ordr' names no function of the catalog; closest: orders.get_order",
        ),
        (
            Access(scopes={"read": ["orders.*", "billing.*"]}),
            "scope 'read': pattern 'billing.*' names no function of the catalog; search_functions",
        ),
        (Access(hide=["orders"]), "hide 'orders' names no function of the catalog; closest: orders.get_order"),
    ],
)
def test_a_pattern_that_names_no_function_is_refused_with_the_closest_names(access: Access, said: str) -> None:
    with pytest.raises(ConfigError) as error:
        Visibility(shop(), access)
    assert str(error.value).startswith(said)


def test_scope_items_map_each_scope_to_its_patterns() -> None:
    assert scope_map(["r=orders.*", " r = audit.* ", "w=orders.create_*"]) == {
        "r": ["orders.*", "audit.*"],
        "w": ["orders.create_*"],
    }
    for item in ("r", "=orders.*", "r=", " = "):
        with pytest.raises(ConfigError, match=r"--scope takes SCOPE=PATTERN, e.g. orders:read=orders.get_\*, not"):
            scope_map([item])


def test_a_scope_item_may_name_a_scope_that_holds_an_equals_sign() -> None:
    # RFC 6749 §3.3 allows '=' in a scope token; function names never hold one, so the pattern follows the last '='.
    assert scope_map(["api=orders:read=orders.get_*"]) == {"api=orders:read": ["orders.get_*"]}
    policy = Policy(shop(), access=Access(scopes=scope_map(["api=orders:read=orders.get_*"])))
    assert names(policy.of(request(scopes=["api=orders:read"]))) == ["orders.get_order"]


# The views the rules cut


def names(policy: CallerPolicy) -> list[str]:
    return [function.name for function in policy.catalog.functions()]


def test_without_rules_every_caller_sees_the_whole_catalog() -> None:
    policy = Policy(shop())
    seen = policy.of(request())
    assert seen.view.complete and seen.catalog is shop()
    assert seen.function_names == tuple(f.name for f in shop().functions())


def test_hide_takes_functions_from_every_caller_and_scopes_cut_a_scoped_caller_further() -> None:
    policy = Policy(shop(), access=Access(hide=["audit.*"], scopes={"r": ["orders.list_*", "orders.get_*", "audit.*"]}))
    unscoped = policy.of(request())
    scoped = policy.of(request(scopes=["r"]))
    empty = policy.of(request(scopes=[]))
    assert names(unscoped) == [
        "customers.delete_customer",
        "customers.get_customer",
        "orders.create_order",
        "orders.get_order",
        "orders.list_orders",
    ]
    assert names(scoped) == ["orders.get_order", "orders.list_orders"]
    assert names(empty) == [] and empty.catalog.modules == ()


def test_the_visible_hook_decides_per_caller_and_only_a_true_answer_shows() -> None:
    def visible(who: Caller, function: Function) -> bool:
        return who.credentials.get("x-role") == "admin" or (
            function.module != "customers" and function.module != "audit"
        )

    policy = Policy(shop(), access=Access(visible=visible))
    admin = policy.of(request({"x-role": "admin"}))
    member = policy.of(request({"x-role": "member"}))
    assert "customers.get_customer" in names(admin) and names(member) == [
        "orders.create_order",
        "orders.get_order",
        "orders.list_orders",
    ]
    truthy = Policy(shop(), access=Access(visible=lambda who, function: 1)).of(request())  # type: ignore[arg-type,return-value]
    assert names(truthy) == []


def test_sees_answers_as_the_view_does_before_and_after_the_view_is_built() -> None:
    policy = Policy(shop(), access=Access(hide=["customers.*"], scopes={"r": ["orders.*", "customers.*"]}))
    for scopes in (None, ["r"], []):
        asked = policy.of(request(scopes=scopes))
        quick = [function.name for function in shop().functions() if asked.sees(function)]
        assert quick == names(asked)
        assert [function.name for function in shop().functions() if asked.sees(function)] == quick


def test_a_view_is_made_once_per_distinct_set_of_functions() -> None:
    policy = Policy(shop(), access=Access(scopes={"r": ["orders.*"], "s": ["orders.*"]}))
    first = policy.of(request(scopes=["r"])).view
    assert policy.of(request(scopes=["s"], client="other")).view is first
    assert policy.of(request()).view.complete


def test_at_most_32_views_are_kept_the_oldest_going_first() -> None:
    visibility = Visibility(shop(), Access(visible=lambda who, function: True))
    views = [visibility._view_of(frozenset([f"x{index}"])) for index in range(33)]
    assert visibility._view_of(frozenset(["x32"])) is views[32]
    assert visibility._view_of(frozenset(["x1"])) is views[1]
    assert visibility._view_of(frozenset(["x0"])) is not views[0]


def test_a_restricted_catalog_drops_empty_modules_and_cuts_the_users_of_terms() -> None:
    cut = restricted(shop(), ["orders.get_order"])
    assert [module.name for module in cut.modules] == ["orders"]
    order = cut.term("Order")
    assert (order.accepted_by, order.returned_by) == ((), ())
    whole = shop().term("Order")
    assert whole.accepted_by and whole.returned_by
    assert (cut.title, cut.version, cut.servers) == (shop().title, shop().version, shop().servers)


def test_an_unknown_function_suggests_only_the_callers_own() -> None:
    policy = Policy(shop(), access=Access(hide=["customers.*"]))
    with pytest.raises(ToolError) as hidden:
        policy.of(request()).function("customers.get_customr")
    with pytest.raises(ToolError) as near:
        policy.of(request()).function("orders.get_ordr")
    assert "customers." not in str(hidden.value).replace("'customers.get_customr'", "")
    assert str(near.value) == (
        "Unknown function 'orders.get_ordr'. Did you mean orders.get_order, orders.create_order, orders.list_orders? "
        "Call search_functions to find functions."
    )
    assert policy.of(request()).function("orders.get_order").name == "orders.get_order"


def test_instructions_are_rendered_once_per_view() -> None:
    rendered: list[int] = []

    def render(catalog: Catalog) -> str:
        rendered.append(len(catalog.functions()))
        return f"{len(catalog.functions())} functions"

    policy = Policy(shop(), access=Access(scopes={"r": ["orders.*"]}), instructions=render)
    assert policy.of(request(scopes=["r"])).instructions == "3 functions"
    assert policy.of(request(scopes=["r"])).instructions == "3 functions"
    assert policy.of(request()).instructions == "6 functions"
    assert rendered == [3, 6]
    assert Policy(shop()).of(request()).instructions == ""


# What a caller may do


async def test_whoami_is_asked_once_per_request() -> None:
    asked: list[str] = []

    async def identify(policy: CallerPolicy) -> Any:
        asked.append(policy.owner)
        return {"role": "admin"}

    policy = Policy(shop(), identify=identify, scripts=ScriptRules(tool="run_script", allow=lambda me: True))
    one = policy.of(request())
    assert await one.identity() == {"role": "admin"} and await one.identity() == {"role": "admin"}
    await policy.of(request()).identity()
    assert len(asked) == 2
    with pytest.raises(ToolError, match="this server has no whoami function to say who is calling"):
        await Policy(shop()).of(request()).identity()


async def test_scripts_are_a_callers_when_the_allow_hook_says_true_and_whoami_answers() -> None:
    async def identify(policy: CallerPolicy) -> Any:
        if policy.caller.credentials.get("x-key") == "refused":
            raise ToolError("whoami answered 401")
        return {"role": policy.caller.credentials.get("x-key")}

    async def admins(me: Any) -> bool:
        return bool(me["role"] == "admin")

    def truthy(me: Any) -> Any:
        return "yes"

    def run(rules: ScriptRules | None, key: str) -> Any:
        return Policy(shop(), identify=identify, scripts=rules).of(request({"x-key": key})).may_run_scripts()

    assert await run(None, "admin") is False
    assert await run(ScriptRules(tool="run_script"), "refused") is True  # no hook: the run itself checks whoami
    assert await run(ScriptRules(tool="run_script", allow=admins), "admin") is True
    assert await run(ScriptRules(tool="run_script", allow=admins), "member") is False
    assert await run(ScriptRules(tool="run_script", allow=admins), "refused") is False
    assert await run(ScriptRules(tool="run_script", allow=lambda me: True), "member") is True
    assert await run(ScriptRules(tool="run_script", allow=truthy), "member") is False


def test_a_script_may_call_a_write_only_where_writes_are_allowed() -> None:
    read, write = shop().function("orders.get_order"), shop().function("orders.create_order")
    for rules in (None, ScriptRules(tool="run_script")):
        policy = Policy(shop(), scripts=rules).of(request())
        assert policy.script_refusal(read) is None
        assert policy.script_refusal(write) == (
            "orders.create_order changes data, and scripts on this server may only call read-only functions; "
            "call it with call_function instead"
        )
    assert (
        Policy(shop(), scripts=ScriptRules(tool="run_script", allow_writes=True)).of(request()).script_refusal(write)
        is None
    )


# Which tools a caller is offered


async def test_promoted_tools_of_hidden_functions_and_a_refused_run_script_are_not_offered() -> None:
    async def identify(policy: CallerPolicy) -> Any:
        return {"role": policy.caller.credentials.get("x-key")}

    rules = ScriptRules(tool="run_script", allow=lambda me: me["role"] == "admin")
    policy = Policy(shop(), access=Access(hide=["customers.*"]), identify=identify, scripts=rules)
    policy.promoted = {
        "orders-get_order": shop().function("orders.get_order"),
        "customers-get_customer": shop().function("customers.get_customer"),
    }
    member, admin = policy.of(request({"x-key": "member"})), policy.of(request({"x-key": "admin"}))
    assert await member.hidden_tools() == {"customers-get_customer", "run_script"}
    assert await admin.hidden_tools() == {"customers-get_customer"}
    assert [
        await member.hides_tool(name) for name in ("orders-get_order", "customers-get_customer", "run_script", "whoami")
    ] == [
        False,
        True,
        True,
        False,
    ]
    assert await admin.hides_tool("run_script") is False
    assert policy.varies


def test_callers_are_offered_the_same_tools_without_rules_that_tell_them_apart() -> None:
    assert not Policy(shop()).varies
    assert not Policy(shop(), access=Access(hide=["audit.*"])).varies  # nothing promoted
    assert not Policy(shop(), scripts=ScriptRules(tool="run_script")).varies
    assert Policy(shop(), scripts=ScriptRules(tool="run_script", allow=lambda me: True)).varies


async def test_without_script_rules_no_tool_is_hidden() -> None:
    policy = Policy(shop())
    assert await policy.of(request()).hidden_tools() == frozenset()
    assert await policy.of(request()).hides_tool("run_script") is False


# How much a caller may start


def test_a_budget_counts_per_caller_and_in_all_and_gives_places_back_once() -> None:
    budget = Budget(
        ("thing open", "things open"),
        per_caller=2,
        per_caller_option="tasks_running_per_caller",
        advice="close one",
        overall=3,
        overall_option="tasks_running",
        overall_advice="retry shortly",
    )
    first, second = budget.take("a"), budget.take("a")
    with pytest.raises(LimitError) as mine:
        budget.take("a")
    third = budget.take("b")
    with pytest.raises(LimitError) as everyone:
        budget.take("c")
    assert str(mine.value) == (
        "you already have 2 things open, the most one caller may have "
        "(Limits.tasks_running_per_caller (--tasks-running-per-caller) is 2); close one"
    )
    assert (mine.value.limit, mine.value.value) == ("tasks_running_per_caller", 2)
    assert str(everyone.value) == (
        "the server already has 3 things open, the most it allows in all "
        "(Limits.tasks_running (--tasks-running) is 3); retry shortly"
    )
    assert (everyone.value.limit, everyone.value.value) == ("tasks_running", 3)
    assert (budget.held("a"), budget.held("b"), budget.total) == (2, 1, 3)
    first.release()
    first.release()
    assert (budget.held("a"), budget.total) == (1, 2)
    with second, third:
        pass
    assert (budget.held("a"), budget.held("b"), budget.total) == (0, 0, 0)
    assert budget._held == {}


def test_a_budget_without_an_overall_bound_counts_per_caller_only() -> None:
    budget = Budget(
        ("script running", "scripts running"), per_caller=1, per_caller_option="scripts_per_caller", advice="wait"
    )
    leases = [budget.take(str(owner)) for owner in range(50)]
    with pytest.raises(LimitError, match=r"^you already have 1 script running, the most"):
        budget.take("0")
    assert budget.total == 50 and all(not lease.released for lease in leases)


def test_the_policy_budgets_come_from_its_limits() -> None:
    limits = Limits(
        tasks_running_per_caller=1, tasks_running=5, subscriptions_per_caller=2, subscriptions=9, scripts_per_caller=3
    )
    policy = Policy(shop(), limits=limits)
    one = policy.of(request())
    lease = one.start_task()
    with pytest.raises(LimitError, match="tasks_running_per_caller"):
        one.start_task()
    lease.release()
    assert (policy.tasks.per_caller, policy.tasks.overall) == (1, 5)
    assert (policy.subscriptions.per_caller, policy.subscriptions.overall) == (2, 9)
    assert (policy.script_runs.per_caller, policy.script_runs.overall) == (3, None)
    with one.open_subscription(), one.run_script():
        assert (policy.subscriptions.held(one.owner), policy.script_runs.held(one.owner)) == (1, 1)
    refusal = one.tasks_kept_refusal(200)
    assert str(refusal) == (
        "you keep 200 tasks on this server, the most one caller may keep "
        "(Limits.tasks_stored_per_caller (--tasks-stored-per-caller) is 200); wait for older tasks to expire (their "
        "ttl), ask for a shorter ttl, or make the call without a task"
    )
    assert (refusal.limit, refusal.value) == ("tasks_stored_per_caller", 200)


def test_limits_refuse_values_they_cannot_enforce_naming_the_flag() -> None:
    assert option_name("batch_elements") == "Limits.batch_elements (--batch-elements)"
    with pytest.raises(
        ConfigError, match=r"^Limits.timeout \(--timeout\) must be a positive number of seconds, got 0$"
    ):
        Limits(timeout=0)
    with pytest.raises(ConfigError, match=r"must be a positive number of seconds, got True"):
        Limits(admission_lease=True)
    with pytest.raises(
        ConfigError, match=r"^Limits.batch_elements \(--batch-elements\) must be a whole number, 1 or more, got 0$"
    ):
        Limits(batch_elements=0)
    with pytest.raises(ConfigError, match=r"must be a whole number, 1 or more, got 2.5"):
        Limits(tasks_running=2.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"must be a whole number, 0 or more, got -1"):
        Limits(max_running=-1)
    assert Limits(max_running=0).max_running == 0
    with pytest.raises(ConfigError, match=r"must be a positive number of seconds, got inf"):
        Limits(timeout=float("inf"))
