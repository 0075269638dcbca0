"""What a script sees and returns: results, calls through the host callback, catchable errors, console lines,
and every limit the host enforces on the way out. Real worker processes, a shop of items as the host."""

from __future__ import annotations

import dataclasses
import json

import anyio
import pytest

from sandbox import BusyError, LimitsError, Sandbox, SourceError
from tests.sandbox.conftest import FUNCTIONS, LIMITS, Shop

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("1 + 1", 2),
        ("const a = [1, 2, 3];\na.map(x => x * 2)", [2, 4, 6]),
        ("return {a: 1}", {"a": 1}),
        ("{a: 1, b: [true, null]}", {"a": 1, "b": [True, None]}),
        ("const x = await Promise.resolve(41)\nx + 1", 42),
        ("if (true) { return 'early' }\n'late'", "early"),
        ("let total = 0\nfor (const n of [1, 2, 3]) { total += n }\ntotal // the sum", 6),
        ("10n ** 20n", "100000000000000000000"),
        ("null", None),
    ],
)
async def test_the_result_is_the_return_value_or_the_last_expression(
    sandbox: Sandbox, shop: Shop, source: str, expected: object
) -> None:
    result = await sandbox.run(source, shop)
    assert result.ok, result.failure
    assert result.value == expected


async def test_a_string_result_comes_back_as_text_and_objects_as_json(sandbox: Sandbox, shop: Shop) -> None:
    text = await sandbox.run("'line one\\nline two'", shop)
    assert text.text == "line one\nline two"
    data = await sandbox.run("({name: 'mug', tags: ['a']})", shop)
    assert json.loads(data.text) == {"name": "mug", "tags": ["a"]}


async def test_a_script_without_a_final_expression_has_no_result(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("const unused = 1;", shop)
    assert result.ok and result.value is None and result.text == ""


async def test_a_script_chains_calls_through_the_host_and_aggregates(sandbox: Sandbox, shop: Shop) -> None:
    source = """
    const items = await api.shop.list_items();
    const details = await callAll(items.map(item => ({name: "shop.get_item", args: {id: item.id}})));
    const kitchen = details.filter(item => item.tags.includes("kitchen"));
    return {count: kitchen.length, total: kitchen.reduce((sum, item) => sum + item.price, 0)};
    """
    result = await sandbox.run(source, shop)
    assert result.value == {"count": 2, "total": 42}
    assert result.calls == 4
    assert [name for name, _ in shop.calls] == ["shop.list_items"] + ["shop.get_item"] * 3


async def test_call_takes_the_full_name_and_passes_arguments_as_json(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("await call('shop.echo', {text: 'héllo 😀', n: 1.5, big: 2n, nested: {ok: true}})", shop)
    assert result.value == {"text": "héllo 😀", "n": 1.5, "big": "2", "nested": {"ok": True}}


async def test_a_call_error_is_catchable_with_its_status_and_body(sandbox: Sandbox, shop: Shop) -> None:
    source = """
    try {
      await api.shop.get_item({id: 99});
    } catch (error) {
      return {isError: error instanceof Error, status: error.status, body: error.body, fn: error.function};
    }
    """
    result = await sandbox.run(source, shop)
    assert result.value == {"isError": True, "status": 404, "body": {"detail": "no item"}, "fn": "shop.get_item"}


async def test_an_uncaught_call_error_fails_the_script_with_its_status_and_body(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("const item = await api.shop.get_item({id: 99});\nitem.name", shop)
    assert result.failure is not None
    assert (result.failure.kind, result.failure.status, result.failure.body) == ("error", 404, {"detail": "no item"})
    assert result.failure.function == "shop.get_item"


async def test_call_all_returns_results_and_error_objects_in_order(sandbox: Sandbox, shop: Shop) -> None:
    source = """
    const results = await callAll([
      {name: "shop.get_item", args: {id: 1}},
      {name: "shop.get_item", args: {id: 99}},
      {name: "nope.nothing"},
      {name: 42},
    ]);
    results.map(r => r instanceof Error ? ["error", r.status ?? null] : ["ok", r.name]);
    """
    result = await sandbox.run(source, shop)
    assert result.value == [["ok", "mug"], ["error", 404], ["error", None], ["error", None]]


async def test_errors_call_all_returns_show_their_name_and_message_as_json(sandbox: Sandbox, shop: Shop) -> None:
    source = "await callAll([{name: 'shop.get_item', args: {id: 99}}, 7, {name: 'nope.nothing'}])"
    missing, malformed, unknown = (await sandbox.run(source, shop)).value
    assert missing == {
        "name": "Error",
        "message": "shop.get_item failed: HTTP 404 Not Found",
        "status": 404,
        "body": {"detail": "no item"},
        "function": "shop.get_item",
    }
    assert malformed == {"name": "TypeError", "message": "callAll: item 1 is not {name, args}"}
    assert unknown["message"].startswith("Unknown function 'nope.nothing'")


async def test_call_all_runs_the_calls_concurrently_on_the_host(sandbox: Sandbox, shop: Shop) -> None:
    source = "await callAll([1, 2, 3, 4, 5].map(() => ({name: 'shop.slow', args: {seconds: 0.2}}))); 'done'"
    with anyio.fail_after(0.7):  # five sequential calls would take 1 s
        result = await sandbox.run(source, shop)
    assert result.value == "done"


async def test_a_crash_in_a_host_call_is_a_generic_error_for_the_script_and_reported(
    sandbox: Sandbox, shop: Shop
) -> None:
    reported: list[Exception] = []

    async def report(error: Exception) -> None:
        reported.append(error)

    source = "try { await api.shop.crash() } catch (error) { return error.message }"
    result = await sandbox.run(source, shop, report=report)
    assert result.value == "the call to shop.crash failed inside the server, which reported it; try again later"
    assert len(reported) == 1 and isinstance(reported[0], RuntimeError)
    assert "bug" in str(reported[0])


async def test_console_lines_come_back_after_the_result_within_the_line_cap(sandbox: Sandbox, shop: Shop) -> None:
    source = "for (let i = 0; i < 8; i++) console.log('line', i, {i});\nconsole.error('bad'); 'result'"
    result = await sandbox.run(source, shop)
    assert result.value == "result"
    assert result.logs == tuple(f'line {i} {{"i":{i}}}' for i in range(LIMITS.max_log_lines))
    assert result.dropped_logs == 4


async def test_console_output_is_cut_at_the_byte_cap(shop: Shop) -> None:
    limits = dataclasses.replace(LIMITS, max_log_bytes=1000, max_concurrent=1)
    async with Sandbox(FUNCTIONS, limits) as small:
        result = await small.run("console.log('é'.repeat(800)); console.log('more'); 1", shop)
    assert result.logs == ("é" * 500,)
    assert result.dropped_logs == 1


async def test_the_logs_of_a_failed_script_come_back_too(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("console.log('before');\nconst order = null;\norder.total", shop)
    assert result.failure is not None and result.failure.kind == "error"
    assert (result.failure.name, result.failure.line) == ("TypeError", 3)
    assert result.logs == ("before",)


async def test_a_syntax_error_names_the_line(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("const a = 1;\nconst b = ;", shop)
    assert result.failure is not None
    assert (result.failure.kind, result.failure.name, result.failure.line) == ("syntax", "SyntaxError", 2)


async def test_deep_recursion_throws_an_error_the_script_can_catch(sandbox: Sandbox, shop: Shop) -> None:
    source = "function down(n) { return down(n + 1) + 1 }\ntry { down(0) } catch (e) { return [e.name, e.message] }"
    assert (await sandbox.run(source, shop)).value == ["RangeError", "Maximum call stack size exceeded"]


async def test_a_thrown_value_that_is_not_an_error_is_described(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("throw {code: 7}", shop)
    assert result.failure is not None
    assert result.failure.message == 'the script threw {"code":7}'


async def test_a_result_over_its_cap_fails_the_script(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("'x'.repeat(100000)", shop)
    assert result.failure is not None and result.failure.kind == "result"
    assert "over the 65536-byte limit" in result.failure.message


async def test_a_result_that_is_not_json_fails_clearly(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("const a = {}; a.self = a; a", shop)
    assert result.failure is not None and result.failure.kind == "result"
    assert result.failure.message.startswith("the result cannot be converted to JSON")


async def test_an_answer_over_its_cap_is_a_catchable_error_and_never_enters_the_guest(
    sandbox: Sandbox, shop: Shop
) -> None:
    source = "try { await api.shop.big({size: 2000000}) } catch (e) { return e.message }"
    result = await sandbox.run(source, shop)
    assert isinstance(result.value, str)
    assert result.value.startswith("shop.big answered with 2000002 bytes of JSON, over the 1048576-byte limit")


async def test_arguments_over_their_cap_are_refused_before_they_leave_the_guest(sandbox: Sandbox, shop: Shop) -> None:
    source = "try { await call('shop.echo', {text: 'y'.repeat(70000)}) } catch (e) { return e.message }"
    result = await sandbox.run(source, shop)
    assert isinstance(result.value, str) and "over the 65536-byte limit for one call" in result.value
    assert shop.calls == []


async def test_calls_past_the_budget_throw_and_never_reach_the_host(sandbox: Sandbox, shop: Shop) -> None:
    source = """
    let refused = 0;
    for (let i = 0; i < 50; i++) { try { call('shop.echo', {i}) } catch (e) { refused++ } }
    const answers = await callAll([{name: 'shop.echo', args: {}}]);
    [refused, answers[0] instanceof Error, answers[0].message];
    """
    result = await sandbox.run(source, shop)
    assert isinstance(result.value, list)
    assert result.value[:2] == [30, True]
    assert result.value[2].startswith(f"this script already made {LIMITS.max_calls} calls")
    assert len(shop.calls) <= LIMITS.max_calls


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("x" * (LIMITS.max_source_bytes + 1), "over the 65536-byte limit"),
        ("   ", "the script is empty"),
        ("'\x00'", "NUL character"),
        ("'\ud800'", "unpaired surrogate"),
    ],
)
async def test_a_source_that_cannot_run_is_refused_before_it_takes_a_worker(
    sandbox: Sandbox, shop: Shop, source: str, error: str
) -> None:
    with pytest.raises(SourceError, match=error):
        await sandbox.run(source, shop)


async def test_unpaired_surrogates_from_the_guest_arrive_replaced(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("console.log('a\\ud800b'); await call('shop.echo', {s: '\\udc00'}); 'c\\ud800'", shop)
    assert result.text == "c\ufffd"
    assert result.logs == ("a\ufffdb",)
    assert shop.calls == [("shop.echo", {"s": "\udc00"})]


async def test_unpaired_surrogates_in_an_error_body_and_a_json_result_arrive_replaced(
    sandbox: Sandbox, shop: Shop
) -> None:
    failed = await sandbox.run("const e = new Error('boom'); e.body = {'d\\ud800': 'x\\udc00'}; throw e", shop)
    assert failed.failure is not None and failed.failure.body == {"d\ufffd": "x\ufffd"}
    result = await sandbox.run("({s: 'a\\ud800'})", shop)
    assert result.value == {"s": "a\ufffd"}
    json.dumps(result.value).encode()


async def test_values_nested_past_what_python_reads_fail_cleanly_and_are_never_a_crash(
    sandbox: Sandbox, shop: Shop
) -> None:
    deep = "let a = []; for (let i = 0; i < 1000; i++) a = [a];"
    result = await sandbox.run(deep + " a", shop)
    assert (
        result.failure is not None and result.failure.kind == "result" and "nests too deeply" in result.failure.message
    )
    call = await sandbox.run(deep + " try { await call('shop.echo', {a}) } catch (e) { return e.message }", shop)
    assert call.value == "the arguments of shop.echo nest too deeply (past about 900 levels); flatten them"
    thrown = await sandbox.run(deep + " const e = new Error('deep'); e.body = a; throw e", shop)
    assert thrown.failure is not None and thrown.failure.kind == "error"
    assert shop.calls == []


async def test_a_toJSON_on_a_prototype_does_not_reach_the_driver(sandbox: Sandbox, shop: Shop) -> None:
    source = "Array.prototype.toJSON = () => 'x'; console.log('seen'); (await api.shop.get_item({id: 2})).name"
    result = await sandbox.run(source, shop)
    assert (result.value, result.logs) == ("lamp", ("seen",))
    # On Object.prototype it reaches the script's own arguments: its call fails, with an error that says why.
    broken = await sandbox.run("Object.prototype.toJSON = () => 'y'; await api.shop.get_item({id: 2})", shop)
    assert broken.failure is not None and "args must convert to a JSON object" in broken.failure.message


async def test_names_outside_the_function_list_never_reach_the_host(sandbox: Sandbox, shop: Shop) -> None:
    source = """
    const messages = [];
    for (const name of ['admin.delete_everything', 'shop.get_iten', 'x'.repeat(70000)]) {
      try { await call(name, {}) } catch (e) { messages.push(e.message) }
    }
    messages
    """
    result = await sandbox.run(source, shop)
    unknown, misspelt, long = result.value
    assert unknown == "Unknown function 'admin.delete_everything'. Call only the catalog's functions."
    assert misspelt.startswith("Unknown function 'shop.get_iten'. Did you mean shop.get_item")
    assert long.startswith("call(name, args): no function has a name of 70000 characters")
    assert shop.calls == []


async def test_a_text_result_counts_its_text_not_its_json(shop: Shop) -> None:
    sandbox = Sandbox(FUNCTIONS, dataclasses.replace(LIMITS, max_result_bytes=1000))
    try:
        newlines = await sandbox.run("'\\n'.repeat(600)", shop)
        too_long = await sandbox.run("'\\n'.repeat(1001)", shop)
    finally:
        await sandbox.aclose()
    assert newlines.text == "\n" * 600
    assert too_long.failure is not None and "1001 bytes" in too_long.failure.message


async def test_console_lines_as_long_as_the_log_cap_allows_never_break_the_worker(shop: Shop) -> None:
    limits = dataclasses.replace(LIMITS, max_response_bytes=65536, max_log_bytes=262144)
    sandbox = Sandbox(FUNCTIONS, limits)
    try:
        result = await sandbox.run("console.log('x'.repeat(200000)); 'done'", shop)
    finally:
        await sandbox.aclose()
    assert (result.value, len(result.logs[0])) == ("done", 200000)


async def test_the_api_object_is_frozen_and_the_globals_cannot_be_replaced(sandbox: Sandbox, shop: Shop) -> None:
    # Scripts run in sloppy mode, where writing to a frozen object is ignored rather than an error.
    source = """
    const attempts = [
      () => { api.shop.get_item = () => 'fake' },
      () => { api.other = {} },
      () => { globalThis.api = {} },
      () => { globalThis.call = () => 'fake' },
      () => { delete globalThis.callAll },
      () => { Object.setPrototypeOf(api.shop, {}) },
      () => { Object.defineProperty(api.shop, 'get_item', {value: () => 'fake'}) },
      () => { console.log = null },
      () => { api.shop.get_item.call = () => 'fake' },
    ];
    for (const attempt of attempts) { try { attempt() } catch (e) {} }
    const item = await api.shop.get_item({id: 1});
    const again = await call('shop.get_item', {id: 2});
    [Object.isFrozen(api), Object.getPrototypeOf(api), item.name, again.name, typeof api.other, typeof callAll,
     typeof console.log];
    """
    result = await sandbox.run(source, shop)
    assert result.value == [True, None, "mug", "lamp", "undefined", "function", "function"]


async def test_prototype_tampering_breaks_only_the_script_that_does_it(sandbox: Sandbox, shop: Shop) -> None:
    source = "Promise.prototype.then = () => { for (;;) {} }; JSON.parse = null; Array.prototype.push = null;"
    source += "\n(await api.shop.get_item({id: 2})).name"
    assert (await sandbox.run(source, shop)).value == "lamp"
    assert (await sandbox.run("typeof JSON.parse + typeof [].push", shop)).value == "functionfunction"


async def test_nothing_of_one_run_survives_into_the_next(sandbox: Sandbox, shop: Shop) -> None:
    await sandbox.run("globalThis.leak = 'secret'; Object.prototype.leaked = 1; 1", shop)
    for _ in range(LIMITS.max_concurrent):  # every warm worker
        result = await sandbox.run("[typeof leak, typeof ({}).leaked]", shop)
        assert result.value == ["undefined", "undefined"]


@pytest.mark.parametrize(
    "probe",
    [
        "typeof require",
        "typeof process",
        "typeof std",
        "typeof os",
        "typeof fetch",
        "typeof XMLHttpRequest",
        "typeof setTimeout",
        "typeof setInterval",
        "typeof queueMicrotask === 'undefined' ? 'undefined' : 'defined'",
        "typeof print",
        "typeof scriptArgs",
        "typeof Atomics",
        "typeof SharedArrayBuffer",
        "typeof __date_clock",
        "typeof WebAssembly",
    ],
)
async def test_nothing_but_the_api_reaches_outside_the_guest(sandbox: Sandbox, shop: Shop, probe: str) -> None:
    assert (await sandbox.run(probe, shop)).value == "undefined"


async def test_the_global_object_holds_only_the_language_and_the_api(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("Object.getOwnPropertyNames(globalThis)", shop)
    assert isinstance(result.value, list)
    names = set(result.value)
    assert {"api", "call", "callAll", "console"} <= names
    language = {"Object", "Array", "JSON", "Math", "Promise", "Proxy", "Reflect", "Date", "RegExp", "BigInt", "eval"}
    unexpected = names - language - {"api", "call", "callAll", "console", "globalThis", "undefined", "NaN"}
    assert all(name[0].isupper() or name in _GLOBAL_FUNCTIONS for name in unexpected), unexpected


_GLOBAL_FUNCTIONS = {
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "unescape",
    "btoa",
    "atob",
}


@pytest.mark.parametrize("specifier", ["std", "os", "./file.js", "https://example.com/x.js", "data:text/javascript,1"])
async def test_dynamic_import_always_fails(sandbox: Sandbox, shop: Shop, specifier: str) -> None:
    source = f"try {{ await import({specifier!r}); return 'loaded' }} catch (e) {{ return e.name }}"
    assert (await sandbox.run(source, shop)).value in ("ReferenceError", "SyntaxError", "TypeError")


async def test_a_static_import_does_not_compile(sandbox: Sandbox, shop: Shop) -> None:
    result = await sandbox.run("import * as std from 'std';\nstd", shop)
    assert result.failure is not None and result.failure.kind == "syntax"


async def test_a_run_waits_briefly_for_a_slot_then_is_refused_as_busy(shop: Shop) -> None:
    limits = dataclasses.replace(LIMITS, max_concurrent=1, slot_wait=0.1)
    async with Sandbox(FUNCTIONS, limits) as single, anyio.create_task_group() as tg:
        tg.start_soon(single.run, "await api.shop.gate(); 1", shop)
        await shop.gate_reached.wait()
        with pytest.raises(BusyError, match="retry shortly"):
            await single.run("1", shop)
        shop.gate.set()


async def test_a_closed_sandbox_starts_new_workers_on_its_next_run(shop: Shop) -> None:
    single = Sandbox(FUNCTIONS, dataclasses.replace(LIMITS, max_concurrent=1))
    try:
        assert (await single.run("6 * 7", shop)).value == 42
        first = single.worker_pids
        await single.aclose()
        assert single.worker_pids == ()
        assert (await single.run("6 * 7", shop)).value == 42
        assert single.worker_pids != first
    finally:
        await single.aclose()


def test_function_names_must_be_module_dot_function() -> None:
    with pytest.raises(LimitsError, match=r"'module\.function'"):
        Sandbox(["nodot"])


def test_limits_must_be_script_limits() -> None:
    with pytest.raises(LimitsError, match="ScriptLimits"):
        Sandbox(FUNCTIONS, {"timeout": 1})  # type: ignore[arg-type]
