"""The caller policy on its own: who a caller is and whose state is whose, the access rules and the views they
cut, the budgets and their refusals, and each answer a `CallerPolicy` gives the paths that ask it."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest

from catalog.builder import load_catalog
from catalog.errors import UnknownNameError
from catalog.model import Catalog, Function
from gateway.errors import ConfigError, LimitError, ToolError
from gateway.limits import Limits
from gateway.policy import Access, Budget, Caller, CallerPolicy, Policy, ScriptRules, View, Visibility
from gateway.policy.access import restricted, scope_map
from gateway.requests import Peer, RequestInfo
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
        "info": {"title": "Shop", "version": "1", "description": "A small shop."},
        "servers": [{"url": "https://shop.example/api"}],
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


def test_a_caller_keeps_the_transport_and_the_request_it_was_made_from() -> None:
    asked = RequestInfo(transport="stdio")
    for made in (Caller.of(asked), Caller.anonymous(asked)):
        assert made.transport == "stdio" and made.request is asked


def test_a_client_id_that_is_not_text_is_no_client() -> None:
    class Grant(dict[str, str]):
        scopes = ("a",)
        client_id = 7

    made = Caller.of(RequestInfo(transport="http", principal=Grant({"x-key": "k"})))
    assert (dict(made.credentials), made.scopes, made.client_id) == ({"x-key": "k"}, frozenset({"a"}), None)


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


def login_caller(headers: str = "Bearer provider-1", scopes: tuple[str, ...] = ("a", "b"), **grant: str) -> Caller:
    named = {"client_id": "c", "subject": "https://idp.example#alice", "login": "login-1", **grant}
    principal = Credentials(
        {"authorization": headers}, scopes, named["client_id"], subject=named["subject"], login=named["login"]
    )
    return Caller.of(RequestInfo(transport="http", principal=principal))


def test_the_owner_of_a_login_outlives_the_renewal_of_its_credentials_but_not_a_narrower_grant() -> None:
    owner = login_caller().owner
    assert login_caller(headers="Bearer provider-2").owner == owner  # the provider renewed the credentials
    others = {
        login_caller(scopes=("a",)).owner,  # a narrower token of the same login
        login_caller(login="login-2").owner,  # another login of the same person and client
        Caller.of(request({"authorization": "Bearer provider-1"}, ["a", "b"], "c")).owner,  # no login named
    }
    assert owner not in others and len(others) == 3


def test_the_budgets_count_the_person_whatever_the_tokens_scopes_client_or_login() -> None:
    person = login_caller().person
    same = {
        login_caller(scopes=("a",)).person,
        login_caller(client_id="d", login="login-2", headers="Bearer provider-2").person,
    }
    assert same == {person}
    assert login_caller(subject="https://idp.example#bob").person != person
    # Without a subject, the credentials are the person: a token's scopes and client make no other one.
    passthrough = caller(scopes=["a", "b"], client="c").person
    assert caller(scopes=["a"], client="d").person == caller(scopes=None).person == passthrough
    assert caller(headers={"authorization": "Bearer other"}).person != passthrough
    assert Caller.of(RequestInfo(transport="stdio")).person != Caller.anonymous(request()).person


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


def test_scope_rules_are_copied_when_given_so_later_changes_to_the_mapping_change_nothing() -> None:
    given = {"r": ["orders.*"]}
    access = Access(scopes=given)
    given["r"].append("customers.*")
    given["w"] = ["customers.*"]
    assert access == Access(scopes={"r": ("orders.*",)})
    scoped = Policy(shop(), access=access).of(request(scopes=["r", "w"]))
    assert names(scoped) == ["orders.create_order", "orders.get_order", "orders.list_orders"]


def test_access_is_active_only_with_a_rule() -> None:
    assert not Access().active
    assert Access(hide=["a.*"]).active and Access(scopes={}).active and Access(visible=lambda c, f: True).active
    assert Access(document_scopes=True).active and Visibility(shop(), Access(document_scopes=True)).active
    assert Access(hide=["a.*"]).hide == ("a.*",)


@pytest.mark.parametrize(
    ("access", "said"),
    [
        (
            Access(hide=["orders.get_ordr"]),
            "hide 'orders.get_ordr' names no function of the catalog; closest: orders.get_order, "
            "orders.create_order, orders.list_orders",
        ),
        (
            Access(scopes={"read": ["orders.*", "billing.*"]}),
            "scope 'read': pattern 'billing.*' names no function of the catalog; search_functions (or `catalog "
            "search`) finds the names",
        ),
        (
            Access(hide=["orders"]),
            "hide 'orders' names no function of the catalog; closest: orders.get_order, orders.list_orders",
        ),
        (  # at most three of the close names
            Access(hide=["orders.get_orders"]),
            "hide 'orders.get_orders' names no function of the catalog; closest: orders.get_order, "
            "orders.list_orders, orders.create_order",
        ),
        (  # nothing close: the functions of the module the pattern starts with
            Access(hide=["customers.zzzzzzzzzzzzzzzzzzzzzz"]),
            "hide 'customers.zzzzzzzzzzzzzzzzzzzzzz' names no function of the catalog; closest: "
            "customers.delete_customer, customers.get_customer",
        ),
        (  # again at most three
            Access(hide=["o.zzzzzzzzzzzzzzzzzzzzzzzzzz"]),
            "hide 'o.zzzzzzzzzzzzzzzzzzzzzzzzzz' names no function of the catalog; closest: "
            "customers.delete_customer, customers.get_customer, orders.create_order",
        ),
    ],
)
def test_a_pattern_that_names_no_function_is_refused_with_the_closest_names(access: Access, said: str) -> None:
    with pytest.raises(ConfigError) as error:
        Visibility(shop(), access)
    assert str(error.value) == said


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


def test_a_view_answers_for_functions_and_for_full_names() -> None:
    view = Policy(shop(), access=Access(scopes={"r": ["orders.*"]})).of(request(scopes=["r"])).view
    assert view.complete is False
    assert view.allows("orders.get_order") and view.allows(shop().function("orders.get_order"))
    assert not view.allows("customers.get_customer") and not view.allows(shop().function("customers.get_customer"))
    assert Policy(shop()).of(request()).view.allows("no.such_function")  # the complete view allows every name


def test_sees_asks_the_visible_hook_about_that_function_only_until_the_view_is_built() -> None:
    asked: list[str] = []

    def visible(who: Caller, function: Function) -> bool:
        asked.append(function.name)
        return function.module == "orders"

    one = Policy(shop(), access=Access(visible=visible)).of(request())
    order, customer = shop().function("orders.get_order"), shop().function("customers.get_customer")
    assert (one.sees(order), one.sees(customer)) == (True, False)
    assert asked == ["orders.get_order", "customers.get_customer"]
    assert len(one.function_names) == 3 and len(asked) == 2 + 6  # the view asks about every function once
    assert (one.sees(order), one.sees(customer)) == (True, False)
    assert len(asked) == 8  # and then answers on its own


def test_a_caller_granted_a_scope_the_rules_do_not_map_gets_nothing_from_it() -> None:
    policy = Policy(shop(), access=Access(scopes={"r": ["orders.get_*"]}))
    assert names(policy.of(request(scopes=["r", "unmapped"]))) == ["orders.get_order"]
    assert names(policy.of(request(scopes=["unmapped"]))) == []


def test_the_reach_of_a_scope_set_is_worked_out_once_and_at_most_256_sets_are_kept() -> None:
    # A bound on memory, not visible in any answer: the cache itself is looked at.
    visibility = Visibility(shop(), Access(scopes={"r": ["orders.*"]}))
    reach = visibility._scoped(frozenset({"r"}))
    assert reach == {"orders.create_order", "orders.get_order", "orders.list_orders"}
    assert visibility._scoped(frozenset({"r"})) is reach
    for index in range(255):
        visibility._scoped(frozenset({f"s{index}"}))
    assert len(visibility._by_scopes) == 256 and visibility._scoped(frozenset({"r"})) is reach
    visibility._scoped(frozenset({"one more"}))
    assert len(visibility._by_scopes) == 1  # full: it starts over
    assert visibility._scoped(frozenset({"r"})) == reach


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


def test_a_restricted_catalog_drops_empty_modules_cuts_the_users_of_terms_and_drops_terms_only_others_use() -> None:
    cut = restricted(shop(), ["orders.get_order", "orders.create_order"])
    assert [module.name for module in cut.modules] == ["orders"]
    assert cut.term("Order").accepted_by == ("orders.create_order",)
    term = shop().term("Order")
    assert term.accepted_by and term.returned_by
    without = restricted(shop(), ["orders.get_order"])  # Order is create_order's alone
    assert [term.name for term in without.terms] == []
    with pytest.raises(UnknownNameError):
        without.term("Order")
    whole = shop()
    kept = (whole.title, whole.version, whole.description, whole.servers, whole.warnings, whole.space)
    assert whole.description and whole.servers and whole.warnings and whole.space is not None
    assert (cut.title, cut.version, cut.description, cut.servers, cut.warnings, cut.space) == kept


def test_a_type_inside_only_hidden_functions_types_is_dropped_and_one_a_visible_type_holds_stays() -> None:
    def read(name: str, schema: str) -> dict[str, Any]:
        answer = {"content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}}}
        return {"get": {"operationId": name, "tags": [name.split("_")[1]], "responses": {"200": answer}}}

    def holding(*names: str) -> dict[str, Any]:
        refs = {name.lower(): {"$ref": f"#/components/schemas/{name}"} for name in names}
        return {"type": "object", "properties": refs}

    document = {
        "openapi": "3.0.3",
        "info": {"title": "Safe", "version": "1"},
        "paths": {"/vault": read("get_vault", "Vault"), "/box": read("get_box", "Box")},
        "components": {
            "schemas": {
                "Vault": holding("Secret", "Shared"),
                "Box": holding("Shared"),
                "Secret": {"type": "object", "properties": {"code": {"type": "string"}}},
                "Shared": {"type": "object", "properties": {"label": {"type": "string"}}},
                "Loose": {"type": "string", "description": "used by no function"},
            }
        },
    }
    whole = load_catalog(document)
    assert [function.name for function in whole.functions()] == ["box.get_box", "vault.get_vault"]
    cut = restricted(whole, ["box.get_box"])
    assert sorted(term.name for term in cut.terms) == ["Box", "Loose", "Shared"]
    assert sorted(term.name for term in restricted(whole, ["vault.get_vault"]).terms) == [
        "Loose",
        "Secret",
        "Shared",
        "Vault",
    ]


def test_an_unknown_function_suggests_only_the_callers_own() -> None:
    policy = Policy(shop(), access=Access(hide=["customers.*"]))
    with pytest.raises(ToolError) as hidden:
        policy.of(request()).function("customers.get_customr")
    with pytest.raises(ToolError) as near:
        policy.of(request()).function("orders.get_ordr")
    assert "customers." not in str(hidden.value).replace("'customers.get_customr'", "")
    assert str(near.value) == (
        "Unknown function 'orders.get_ordr'. The closest:\n"
        "- orders.get_order(id: string) -> void — GET /orders/{id} [read]\n"
        "- orders.create_order(id?: string) -> Order — POST /orders [write]\n"
        "- orders.list_orders() -> void — GET /orders [read]\n"
        "Call search_functions to find others."
    )
    assert policy.of(request()).function("orders.get_order").name == "orders.get_order"
    with pytest.raises(ToolError) as far:
        policy.of(request()).function("zzzz")
    assert str(far.value) == "Unknown function 'zzzz'. Call search_functions to find functions."


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


def test_the_instructions_of_at_most_64_views_are_kept_the_oldest_going_first() -> None:
    renders = itertools.count(1)
    policy = Policy(shop(), instructions=lambda catalog: f"render {next(renders)}")
    views = [View(catalog=shop(), names=frozenset([f"x{index}"]), complete=False) for index in range(65)]
    assert [policy.instructions_of(view) for view in views[:64]] == [f"render {n}" for n in range(1, 65)]
    assert policy.instructions_of(views[0]) == "render 1"
    assert policy.instructions_of(views[64]) == "render 65"
    assert policy.instructions_of(views[64]) == "render 65"
    assert policy.instructions_of(views[1]) == "render 2"
    assert policy.instructions_of(views[0]) == "render 66"


# The document's own scopes (`Access.document_scopes`, `Function.oauth_scopes`)


def _secured(operation_id: str, tag: str, *requirements: list[str], method: str = "get") -> dict[str, Any]:
    operation = _operation(operation_id, tag, method)
    operation[method]["security"] = [{"oauth": scopes} for scopes in requirements]
    return operation


@functools.cache
def secured_shop() -> Catalog:
    """Orders read with `orders:read`, written with both orders scopes or with `admin` and `audit`; customers read
    with `customers:read`, deleted with `admin`; the audit public (`security: []`)."""
    flows = {"authorizationCode": {"authorizationUrl": "https://a.example/auth", "tokenUrl": "https://a.example/t"}}
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Shop", "version": "1"},
        "paths": {
            "/orders": {
                **_secured("list_orders", "orders", ["orders:read"]),
                **_secured(
                    "create_order", "orders", ["orders:read", "orders:write"], ["admin", "audit"], method="post"
                ),
            },
            "/customers/{id}": {
                **_secured("get_customer", "customers", ["customers:read"]),
                **_secured("delete_customer", "customers", ["admin"], method="delete"),
            },
            "/audit": _secured("read_audit", "audit"),
        },
        "components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": flows}}},
    }
    return load_catalog(document)


def test_the_document_requires_scopes_of_the_secured_shops_functions() -> None:
    # What the tests below rely on.
    assert {function.name: function.oauth_scopes for function in secured_shop().functions()} == {
        "audit.read_audit": (),
        "customers.delete_customer": (("admin",),),
        "customers.get_customer": (("customers:read",),),
        "orders.create_order": (("admin", "audit"), ("orders:read", "orders:write")),
        "orders.list_orders": (("orders:read",),),
    }


def test_document_scopes_show_a_caller_only_the_functions_whose_scopes_its_token_holds() -> None:
    policy = Policy(secured_shop(), access=Access(document_scopes=True))
    assert names(policy.of(request(scopes=[]))) == ["audit.read_audit"]
    assert names(policy.of(request(scopes=["orders:read", "other"]))) == ["audit.read_audit", "orders.list_orders"]
    assert names(policy.of(request(scopes=["orders:read", "orders:write"]))) == [
        "audit.read_audit",
        "orders.create_order",
        "orders.list_orders",
    ]
    assert names(policy.of(request(scopes=["admin", "audit", "customers:read"]))) == [
        "audit.read_audit",
        "customers.delete_customer",
        "customers.get_customer",
        "orders.create_order",
    ]


def test_document_scopes_leave_a_caller_whose_credentials_carry_no_scopes_alone() -> None:
    policy = Policy(secured_shop(), access=Access(document_scopes=True))
    api_key = policy.of(request(scopes=None))
    assert len(names(api_key)) == 5
    assert all(api_key.sees(function) for function in secured_shop().functions())
    assert names(Policy(secured_shop()).of(request(scopes=[]))) == names(api_key)  # the rule is off by default


def test_document_scopes_answer_sees_as_the_view_does() -> None:
    policy = Policy(secured_shop(), access=Access(document_scopes=True, hide=["audit.*"]))
    for scopes in (None, [], ["orders:read"], ["admin"], ["admin", "audit", "orders:read"]):
        asked = policy.of(request(scopes=scopes))
        assert [function.name for function in secured_shop().functions() if asked.sees(function)] == names(asked)


def test_document_scopes_cut_further_what_the_scope_map_and_the_visible_hook_show() -> None:
    def no_deletes(who: Caller, function: Function) -> bool:
        return not function.name.startswith("customers.delete")

    access = Access(document_scopes=True, scopes={"admin": ["customers.*"]}, visible=no_deletes)
    policy = Policy(secured_shop(), access=access)
    assert names(policy.of(request(scopes=["admin", "customers:read"]))) == ["customers.get_customer"]
    assert names(policy.of(request(scopes=["admin"]))) == []


def scopes_needed(access: Access, name: str, scopes: list[str] | None) -> tuple[str, ...] | None:
    return Visibility(secured_shop(), access).scopes_needed(caller(scopes=scopes), name)


def test_a_function_kept_off_only_by_the_documents_scopes_needs_its_requirement_with_the_fewest_missing() -> None:
    access = Access(document_scopes=True)
    assert scopes_needed(access, "orders.list_orders", []) == ("orders:read",)
    # Both alternatives lack one scope or more: the one lacking fewest, given whole (with what is held already).
    assert scopes_needed(access, "orders.create_order", ["orders:read"]) == ("orders:read", "orders:write")
    assert scopes_needed(access, "orders.create_order", ["audit"]) == ("admin", "audit")
    # As many missing in each: the first in order.
    assert scopes_needed(access, "orders.create_order", []) == ("admin", "audit")
    assert scopes_needed(access, "orders.create_order", ["admin", "orders:read"]) == ("admin", "audit")


@pytest.mark.parametrize(
    ("access", "name", "scopes"),
    [
        (Access(), "orders.list_orders", []),  # the rule is off
        (Access(document_scopes=True), "orders.list_orders", None),  # an API key: no scopes to step up
        (Access(document_scopes=True), "orders.list_orders", ["orders:read"]),  # held already
        (Access(document_scopes=True), "audit.read_audit", []),  # public
        (Access(document_scopes=True), "orders.no_such_function", []),  # unknown
        (Access(document_scopes=True, hide=["orders.*"]), "orders.list_orders", []),  # hidden from everyone
        (Access(document_scopes=True, scopes={"x": ["customers.*"]}), "orders.list_orders", ["x"]),  # not mapped
        (Access(document_scopes=True, visible=lambda who, function: False), "orders.list_orders", []),  # refused
        (Access(document_scopes=True, visible=lambda who, function: 1), "orders.list_orders", []),  # type: ignore[arg-type,return-value]
    ],
)
def test_no_scopes_are_asked_for_a_function_the_documents_scopes_are_not_what_keeps_off(
    access: Access, name: str, scopes: list[str] | None
) -> None:
    assert scopes_needed(access, name, scopes) is None


def test_scopes_are_asked_for_a_function_the_other_rules_let_through() -> None:
    mapped = Access(document_scopes=True, scopes={"x": ["orders.*"]})
    assert scopes_needed(mapped, "orders.list_orders", ["x"]) == ("orders:read",)
    hooked = Access(document_scopes=True, visible=lambda who, function: function.module == "orders")
    assert scopes_needed(hooked, "orders.list_orders", []) == ("orders:read",)
    assert scopes_needed(hooked, "customers.get_customer", []) is None


def test_the_scopes_for_a_call_name_what_call_function_or_a_promoted_tool_lacks() -> None:
    policy = Policy(secured_shop(), access=Access(document_scopes=True))
    policy.promoted = {
        "orders-list_orders": secured_shop().function("orders.list_orders"),
        "audit-read_audit": secured_shop().function("audit.read_audit"),
    }
    reader = policy.of(request(scopes=["customers:read"]))
    assert reader.scopes_for_call("call_function", {"name": "orders.list_orders", "args": {}}) == ("orders:read",)
    assert reader.scopes_for_call("orders-list_orders", {}) == ("orders:read",)
    assert reader.scopes_for_call("orders-list_orders", {"name": "customers.delete_customer"}) == ("orders:read",)
    assert reader.scopes_for_call("call_function", {"name": "customers.delete_customer"}) == ("admin",)
    assert reader.scopes_for_call("call_function", {"name": "customers.get_customer"}) is None  # held
    assert reader.scopes_for_call("audit-read_audit", {}) is None  # public
    assert reader.scopes_for_call("search_functions", {"name": "orders.list_orders"}) is None  # not a call
    assert reader.scopes_for_call("call_function", {}) is None
    assert reader.scopes_for_call("call_function", {"name": ["orders.list_orders"]}) is None
    api_key = policy.of(request(scopes=None))
    assert api_key.scopes_for_call("call_function", {"name": ["orders.list_orders"]}) is None
    assert api_key.scopes_for_call("orders-list_orders", {}) is None


def test_which_functions_a_scope_set_meets_is_worked_out_once_and_at_most_256_sets_are_kept() -> None:
    # A bound on memory, not visible in any answer: the cache itself is looked at.
    visibility = Visibility(secured_shop(), Access(document_scopes=True))
    met = visibility._meeting(frozenset({"orders:read"}))
    assert met == {"audit.read_audit", "orders.list_orders"}
    assert visibility._meeting(frozenset({"orders:read"})) is met
    for index in range(255):
        visibility._meeting(frozenset({f"s{index}"}))
    assert len(visibility._meeting_cache) == 256 and visibility._meeting(frozenset({"orders:read"})) is met
    visibility._meeting(frozenset({"one more"}))
    assert len(visibility._meeting_cache) == 1  # full: it starts over
    assert visibility._meeting(frozenset({"orders:read"})) == met


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
    with pytest.raises(ToolError, match=r"^this server has no whoami function to say who is calling$"):
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


def test_a_script_may_not_call_a_function_that_waits_for_approval_even_where_writes_are_allowed() -> None:
    read, write = shop().function("orders.get_order"), shop().function("orders.create_order")
    delete = shop().function("customers.delete_customer")
    rules = ScriptRules(tool="run_script", allow_writes=True)
    destructive = Policy(shop(), scripts=rules, approval="destructive").of(request())
    assert destructive.script_refusal(read) is None and destructive.script_refusal(write) is None
    assert destructive.script_refusal(delete) == (
        "customers.delete_customer needs a person's approval before it runs, which a script cannot ask for; call it "
        "with call_function instead, which says how to get that approval"
    )
    writes = Policy(shop(), scripts=rules, approval="writes").of(request())
    assert writes.script_refusal(read) is None
    assert writes.script_refusal(write) is not None and "approval" in (writes.script_refusal(write) or "")


def test_which_functions_wait_for_approval_is_the_policys_answer_for_every_caller() -> None:
    functions = {function.name: function for function in shop().functions()}
    for approval, waiting in (
        ("none", set()),
        ("destructive", {"customers.delete_customer"}),
        ("writes", {"customers.delete_customer", "orders.create_order"}),
    ):
        policy = Policy(shop(), approval=approval)  # type: ignore[arg-type]
        assert {name for name, function in functions.items() if policy.needs_approval(function)} == waiting
        for someone in (request(), request(scopes=["x"]), request(headers={"x-key": "other"})):
            caller = policy.of(someone)
            assert {name for name, function in functions.items() if caller.needs_approval(function)} == waiting


def test_too_many_calls_waiting_for_approval_are_refused_naming_the_limit() -> None:
    refusal = Policy(shop(), limits=Limits(approvals_pending_per_caller=3)).of(request()).approvals_pending_refusal()
    assert (refusal.limit, refusal.value) == ("approvals_pending_per_caller", 3)
    assert "you have 3 calls waiting for a person's approval" in str(refusal)
    assert "Limits.approvals_pending_per_caller (--approvals-pending-per-caller) is 3" in str(refusal)


@pytest.mark.parametrize(
    ("transport", "client", "key"),
    [
        ("http", ("203.0.113.7", 5000), "203.0.113.7"),
        ("http", ("2001:db8:1:2:abcd::9", 5000), "2001:db8:1:2::/64"),
        ("http", ("::ffff:203.0.113.7", 5000), "203.0.113.7"),
        ("http", None, None),  # a Unix socket
        ("stdio", ("127.0.0.1", 0), None),
        ("in-process", ("127.0.0.1", 0), None),
    ],
)
def test_a_callers_address_is_counted_as_connections_are_and_callers_without_one_have_none(
    transport: Any, client: tuple[str, int] | None, key: str | None
) -> None:
    someone = RequestInfo(
        transport=transport, principal=Credentials({"authorization": "Bearer k"}), peer=Peer(client=client)
    )
    assert Policy(shop()).of(someone).address == key


def test_a_share_of_one_address_is_refused_naming_the_limit_what_to_do_and_no_other_caller() -> None:
    limits = Limits(tasks_stored_per_address=7, approvals_pending_per_address=9)
    caller = Policy(shop(), limits=limits).of(request())
    tasks, approvals = caller.tasks_kept_from_address_refusal(), caller.approvals_pending_from_address_refusal()
    assert str(tasks) == (
        "callers from your client address keep 7 tasks on this server together, whatever credentials they send, the "
        "most one address may keep (Limits.tasks_stored_per_address (--tasks-stored-per-address) is 7); wait for "
        "older tasks to expire (their ttl), ask for a shorter ttl, or make the call without a task (where many "
        "people reach this server through one proxy or NAT, its operator can name the proxy with --trusted-proxy, "
        "or raise the limit)"
    )
    assert (tasks.limit, tasks.value) == ("tasks_stored_per_address", 7)
    assert str(approvals).startswith("callers from your client address have 9 calls waiting for a person's approval")
    assert "Limits.approvals_pending_per_address (--approvals-pending-per-address) is 9); nothing ran" in str(approvals)
    assert (approvals.limit, approvals.value) == ("approvals_pending_per_address", 9)


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


def test_a_budget_past_its_overall_bound_advises_a_retry_unless_told_otherwise() -> None:
    budget = Budget(
        ("thing open", "things open"),
        per_caller=1,
        per_caller_option="subscriptions_per_caller",
        advice="close one",
        overall=1,
        overall_option="subscriptions",
    )
    budget.take("a")
    with pytest.raises(LimitError) as refused:
        budget.take("b")
    assert str(refused.value) == (
        "the server already has 1 thing open, the most it allows in all "
        "(Limits.subscriptions (--subscriptions) is 1); retry shortly"
    )


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
        assert (policy.subscriptions.held(one.person), policy.script_runs.held(one.person)) == (1, 1)
    refusal = one.tasks_kept_refusal()
    assert str(refusal) == (
        "you keep 200 tasks on this server, the most one caller may keep "
        "(Limits.tasks_stored_per_caller (--tasks-stored-per-caller) is 200); wait for older tasks to expire (their "
        "ttl), ask for a shorter ttl, or make the call without a task"
    )
    assert (refusal.limit, refusal.value) == ("tasks_stored_per_caller", 200)


@pytest.mark.parametrize("most", [1, 2])
def test_each_budget_of_the_policy_refuses_naming_its_limit_and_what_to_do(most: int) -> None:
    limits = Limits(
        tasks_running_per_caller=most,
        tasks_running=most,
        subscriptions_per_caller=most,
        subscriptions=most,
        scripts_per_caller=most,
    )
    policy = Policy(shop(), limits=limits)
    one, other = policy.of(request()), policy.of(request({"authorization": "Bearer other"}))

    def refusal(take: Any) -> tuple[str, str, int]:
        with pytest.raises(LimitError) as refused:
            take()
        return str(refused.value), refused.value.limit, refused.value.value

    for _ in range(most):
        one.start_task()
        one.open_subscription()
        one.run_script()
    tasks, streams, scripts = ("task", "stream", "script") if most == 1 else ("tasks", "streams", "scripts")
    mine, everyone = "the most one caller may have", "the most it allows in all"
    assert [
        refusal(one.start_task),
        refusal(other.start_task),
        refusal(one.open_subscription),
        refusal(other.open_subscription),
        refusal(one.run_script),
    ] == [
        (
            f"you already have {most} {tasks} running, {mine} (Limits.tasks_running_per_caller "
            f"(--tasks-running-per-caller) is {most}); wait for one to end (tasks/get) or cancel one (tasks/cancel), "
            "then send the call again",
            "tasks_running_per_caller",
            most,
        ),
        (
            f"the server already has {most} {tasks} running, {everyone} (Limits.tasks_running (--tasks-running) is "
            f"{most}); retry shortly, or make the call without a task",
            "tasks_running",
            most,
        ),
        (
            f"you already have {most} subscriptions/listen {streams} open, {mine} (Limits.subscriptions_per_caller "
            f"(--subscriptions-per-caller) is {most}); close one (or follow several tasks on one stream) before "
            "opening another",
            "subscriptions_per_caller",
            most,
        ),
        (
            f"the server already has {most} subscriptions/listen {streams} open, {everyone} (Limits.subscriptions "
            f"(--subscriptions) is {most}); retry shortly",
            "subscriptions",
            most,
        ),
        (
            f"you already have {most} {scripts} running, {mine} (Limits.scripts_per_caller (--scripts-per-caller) is "
            f"{most}); wait for the result of the one running, then run the next",
            "scripts_per_caller",
            most,
        ),
    ]
    assert policy.of(request({"authorization": "Bearer third"})).run_script().person  # scripts have no overall bound
