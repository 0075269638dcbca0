"""The check of a script's `api` calls before it runs: what it refuses, with which names, and what it leaves alone."""

from __future__ import annotations

import pytest

from sandbox import Sandbox
from sandbox.static_check import check_calls
from tests.sandbox.conftest import FUNCTIONS, LIMITS, Shop

SHOP = ("shop.list_items", "shop.get_item", "shop.echo", "orders.list_orders", "orders.get_order")
ARGUMENTS = {"shop.get_item": ("id", "expand"), "shop.list_items": ("limit", "cursor"), "orders.get_order": ("id",)}


def problems(source: str, functions: tuple[str, ...] = SHOP) -> list[str]:
    return [problem.message for problem in check_calls(source, functions, ARGUMENTS)]


def test_an_unknown_function_is_refused_with_the_closest_names_of_its_module() -> None:
    assert problems("const x = 1\nawait api.shop.get_itme({id: 1})") == [
        "line 2: api.shop has no function 'get_itme'; did you mean api.shop.get_item?"
    ]


def test_an_unknown_module_is_refused_with_the_closest_modules() -> None:
    assert problems("await api.shops.list_items()") == ["line 1: api has no module 'shops'; did you mean api.shop?"]


def test_a_function_called_in_the_wrong_module_is_named_where_it_is() -> None:
    assert problems("await api.shop.get_order({id: 1})") == [
        "line 1: api.shop has no function 'get_order'; it is api.orders.get_order"
    ]


def test_an_unknown_argument_is_refused_with_the_closest_and_the_function_s_arguments() -> None:
    assert problems("await api.shop.get_item({id: 1,\n  expnad: ['tags']})") == [
        "line 2: api.shop.get_item takes no argument 'expnad'; did you mean 'expand'? (its arguments: id, expand)"
    ]


def test_every_form_of_a_static_call_is_checked() -> None:
    for source in (
        'await api["shop"]["get_itme"]({id: 1})',
        "await api['shop'].get_itme({id: 1})",
        "await api?.shop?.get_itme?.({id: 1})",
        "await api\n  .shop\n  // a comment between\n  .get_itme({id: 1})",
        "await api . shop /* here */ . get_itme ({id: 1})",
        "const all = await Promise.all([1, 2].map((n) => api.shop.get_itme({id: n})))",
        "`${await api.shop.get_itme({id: 1})}`",
    ):
        assert len(problems(source)) == 1, source


def test_a_call_by_name_of_an_unknown_function_is_refused_with_the_closest_names() -> None:
    assert problems("const x = 1\nawait call('shop.get_itme', {id: 1})") == [
        'line 2: call("shop.get_itme"): there is no function \'shop.get_itme\'; did you mean "shop.get_item"?'
    ]
    assert problems('await call("get_item")') == [
        'line 1: call("get_item"): there is no function \'get_item\'; did you mean "shop.get_item"?'
    ]


def test_a_call_by_name_with_an_unknown_argument_is_refused_with_the_function_s_arguments() -> None:
    assert problems("await call('shop.get_item', {id: 1, expnad: []})") == [
        "line 1: call(\"shop.get_item\") takes no argument 'expnad'; did you mean 'expand'? (its arguments: id, expand)"
    ]


def test_calls_by_name_and_through_api_are_checked_together_in_line_order() -> None:
    source = "await call('orders.get_order', {idd: 1})\nawait api.shop.get_itme()\nawait call('shop.list_items')"
    assert [message.split(":")[0] for message in problems(source)] == ["line 1", "line 2"]


def test_several_problems_are_all_named() -> None:
    found = problems("await api.shop.get_item({idd: 1})\nawait api.nope.x()\nawait api.orders.get_order({id: 1})")
    assert [message.split(":")[0] for message in found] == ["line 1", "line 2"]


def test_keys_in_every_plain_form_are_checked() -> None:
    source = "const id = 1\nawait api.shop.get_item({id, 'expand': [], \"extra\": 1, nested: {deep: 1}})"
    assert [message.split("argument ")[1].split(";")[0].split(" (")[0] for message in problems(source)] == [
        "'extra'",
        "'nested'",
    ]


@pytest.mark.parametrize(
    "source",
    [
        "'api.shop.get_itme({id: 1})'",
        '"await api.nope.x()"',
        "// await api.nope.x()\n1",
        "/* api.shop.get_itme({idd: 1}) */ 1",
        "`api.nope.x(${1})`",
        "/api.nope.x\\(/.test('s')",
        "if (true) /api.nope.x(/.test('s')",
        "const re = /[/]api.nope.x(/; re.source",
        "String.raw`api.nope.x()`",
        "const o = {api: {nope: {x: () => 1}}}; o.api.nope.x()",
        "const s = 'it\\'s api.nope.x()'; s",
        "`outer ${'api.nope.x()'} text`",
    ],
)
def test_a_call_in_a_string_comment_template_or_regular_expression_is_no_call(source: str) -> None:
    assert problems(source) == []


@pytest.mark.parametrize(
    "source",
    [
        "const name = 'get_itme'; await api.shop[name]({id: 1})",
        "await api[module].get_itme({id: 1})",
        "await api.shop.get_item({...options, idd: 1})",
        "await api.shop.get_item({[key]: 1, idd: 2})",
        "await api.shop.get_item(args)",
        "await api.shop.get_item({idd: 1}.x)",
        "await api.shop.get_item({__proto__: {idd: 1}})",
        "await api.shop.get_item({get idd() { return 1 }})",
        "await api['sh\\u006fp'].get_itme({id: 1})",
        "const api = {nope: {x: () => 1}}; api.nope.x()",
        "function f(api) { return api.nope.x() }",
        "const {api} = globalThis; api.nope.x()",
        "with (scope) { api.nope.x() }",
        "eval('var api = 1'); api.nope.x()",
        "const f = api.shop.get_itme; typeof f",
        "api.nope.x.call(null, {})",
        "await call(name, {idd: 1})",
        "await call('shop.' + 'get_itme', {idd: 1})",
        "await call(`shop.get_itme`, {id: 1})",
        "await call('shop.get_item', {...options, idd: 1})",
        "const call = (n) => n; call('shop.get_itme')",
        "function call(n) { return n }\ncall('shop.get_itme')",
        "const {call} = helpers; await call('shop.get_itme', {})",
        "[1].map(call => call('shop.get_itme'))",
        "helpers.call('shop.get_itme', {idd: 1})",
        "with (scope) { call('shop.get_itme') }",
        "await api.shop.get_item({id: 1}, {idd: 2})",
        "if (api.shop.get_itme) await api.shop.get_itme({id: 1})",
        "typeof api.shops === 'object' && await api.shops.list_items()",
        "await (api.nope?.x ?? api.shop.echo)({})",
    ],
)
def test_what_is_dynamic_is_left_to_run_time(source: str) -> None:
    assert problems(source) == []


def test_a_function_without_known_arguments_takes_any() -> None:
    assert problems("await api.shop.echo({anything: 1})") == []


def test_an_unterminated_script_is_left_to_the_engine() -> None:
    assert problems("await api.nope.x('unterminated)") == []


def test_the_closest_names_come_from_the_script_s_functions_alone() -> None:
    visible = ("shop.list_items", "shop.echo")
    assert problems("await api.shop.get_itme({id: 1})", visible) == ["line 1: api.shop has no function 'get_itme'"]
    assert all("get_item" not in text for text in problems("await api.shop.get_ite({id: 1})", visible))
    assert all("orders" not in text for text in problems("await api.order.get_order({id: 1})", visible))


@pytest.mark.anyio
async def test_a_refused_script_starts_no_worker_and_makes_no_call() -> None:
    shop = Shop()
    sandbox = Sandbox(FUNCTIONS, LIMITS, arguments={"shop.get_item": ("id",)})
    try:
        result = await sandbox.run("await api.shop.list_items()\nawait api.shop.get_item({idd: 1})", shop)
        assert sandbox.worker_pids == ()
    finally:
        await sandbox.aclose()
    assert shop.calls == []
    assert result.failure is not None and result.failure.kind == "refused"
    assert result.failure.line == 2
    assert result.failure.message == (
        "line 2: api.shop.get_item takes no argument 'idd'; did you mean 'id'? (its arguments: id). "
        "Nothing ran: fix these calls and run the script again"
    )


@pytest.mark.anyio
async def test_a_run_s_view_is_what_the_check_knows(sandbox: Sandbox) -> None:
    result = await sandbox.run("await api.shop.get_item({id: 1})", Shop(), functions=("shop.list_items",))
    assert result.failure is not None and result.failure.kind == "refused"
    assert result.failure.message == (
        "line 1: api.shop has no function 'get_item'; did you mean api.shop.list_items? "
        "Nothing ran: fix these calls and run the script again"
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    "source",
    [
        "const text = 'api.shop.get_itme({id: 1})'; (await api.shop.get_item({id: 1})).name + text.length",
        "// api.nope.x()\n(await api.shop.get_item({id: 1})).name",
        "if (true) /api.nope.x\\(/.test('s'); (await api.shop.get_item({id: 1})).name",
        "const id = 1; (await api['shop']['get_item']({id})).name",
        "const key = 'id'; (await api.shop.get_item({[key]: 1})).name",
    ],
)
async def test_a_script_the_check_lets_through_runs_unchanged(sandbox: Sandbox, source: str) -> None:
    checked = Sandbox(FUNCTIONS, LIMITS, arguments={"shop.get_item": ("id",)})
    assert check_calls(source, checked.functions, checked.arguments) == []
    result = await sandbox.run(source, Shop())
    assert result.ok, result.failure
    assert str(result.value).startswith("mug")
