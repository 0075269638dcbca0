"""What the host checks of each call a script's worker asks for, whatever the worker claims.

The guest refuses most bad calls before they leave it; these tests speak to the host's gate directly, as a
worker that no longer keeps the rules would, with the shop of the other sandbox tests behind it."""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

import anyio
import pytest

from sandbox import CallError, ScriptLimits
from sandbox.calls import CallGate, ErrorReporter, FunctionCaller
from tests.sandbox.conftest import FUNCTIONS, Shop

pytestmark = pytest.mark.anyio

#: Small caps, so each can be met exactly and passed by one byte.
SMALL = ScriptLimits(max_calls=3, max_arg_bytes=20, max_response_bytes=40, max_parallel_calls=2)


def gate_for(caller: FunctionCaller, limits: ScriptLimits = SMALL, report: ErrorReporter | None = None) -> CallGate:
    return CallGate(FUNCTIONS, limits, caller, report)


def refusal(answer: tuple[bool, str]) -> dict[str, Any]:
    """The error a refused call hands the script."""
    ok, text = answer
    assert not ok, text
    info: dict[str, Any] = json.loads(text)
    return info


async def test_a_call_to_a_known_function_answers_compact_ascii_json_and_is_counted(shop: Shop) -> None:
    gate = gate_for(shop)
    answer = await gate.perform("shop.echo", '{"name": "é"}'.encode())
    assert answer == (True, '{"name":"\\u00e9"}')
    assert shop.calls == [("shop.echo", {"name": "é"})]
    assert gate.made == 1


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("admin.delete", "Unknown function 'admin.delete'. Call only the catalog's functions."),
        (
            "shop.get_iten",
            "Unknown function 'shop.get_iten'. Did you mean shop.get_item, shop.gate, shop.list_items? "
            "Call only the catalog's functions.",
        ),
        # Five names are close to this one; three are offered.
        ("shop.ge", "Unknown function 'shop.ge'. Did you mean shop.gate, shop.big, shop.echo? Call only the "),
    ],
)
async def test_an_unknown_function_is_refused_with_the_closest_names_and_never_reaches_the_host(
    shop: Shop, name: str, message: str
) -> None:
    gate = gate_for(shop)
    info = refusal(await gate.perform(name, b"{}"))
    assert info["message"].startswith(message)
    assert info["function"] == name
    assert shop.calls == [] and gate.made == 0


async def test_an_unknown_name_is_repeated_back_cut_to_two_hundred_characters(shop: Shop) -> None:
    info = refusal(await gate_for(shop).perform("x" * 201, b"{}"))
    assert info == {
        "message": f"Unknown function {'x' * 200!r}. Call only the catalog's functions.",
        "function": "x" * 200,
    }


async def test_the_call_budget_is_kept_on_the_host_and_refused_calls_spend_none_of_it(shop: Shop) -> None:
    gate = gate_for(shop)
    answers = [await gate.perform("shop.echo", b'{"n": 1}') for _ in range(4)]
    assert [ok for ok, _ in answers] == [True, True, True, False]
    assert refusal(answers[3]) == {
        "message": "this script already made 3 calls, the most one script may make; make fewer calls",
        "function": "shop.echo",
    }
    assert len(shop.calls) == 3 and gate.made == 3


async def test_a_call_refused_for_its_arguments_still_spends_one_of_the_budget(shop: Shop) -> None:
    gate = gate_for(shop)
    for _ in range(3):
        refusal(await gate.perform("shop.echo", b"[]"))
    over = refusal(await gate.perform("shop.echo", b"{}"))
    assert over["message"].startswith("this script already made 3 calls")
    assert shop.calls == [] and gate.made == 3


async def test_arguments_at_their_cap_pass_and_one_byte_more_is_refused(shop: Shop) -> None:
    gate = gate_for(shop)
    at_cap = await gate.perform("shop.echo", b'{"text": "abcdefgh"}')
    over = refusal(await gate.perform("shop.echo", b'{"text": "abcdefghi"}'))
    assert at_cap == (True, '{"text":"abcdefgh"}')
    assert over == {
        "message": "the arguments of shop.echo are 21 bytes, over the 20-byte limit",
        "function": "shop.echo",
    }
    assert shop.calls == [("shop.echo", {"text": "abcdefgh"})]


@pytest.mark.parametrize(
    "payload",
    [b"{", b"[1]", b'"text"', b"null", b"\xff"],
    ids=["unfinished", "an array", "a string", "null", "not UTF-8"],
)
async def test_arguments_that_are_not_a_json_object_are_refused(shop: Shop, payload: bytes) -> None:
    info = refusal(await gate_for(shop).perform("shop.echo", payload))
    assert info == {"message": "the arguments of shop.echo must be a JSON object", "function": "shop.echo"}
    assert shop.calls == []


async def test_arguments_nested_past_the_parser_are_refused_with_a_way_out(shop: Shop) -> None:
    roomy = dataclasses.replace(SMALL, max_arg_bytes=1024 * 1024)
    info = refusal(await gate_for(shop, roomy).perform("shop.echo", b"[" * 200_000))
    assert info == {
        "message": "the arguments of shop.echo nest too deeply (past about 900 levels); flatten them",
        "function": "shop.echo",
    }
    assert shop.calls == []


async def test_an_api_error_reaches_the_script_with_its_status_and_body(shop: Shop) -> None:
    info = refusal(await gate_for(shop).perform("shop.get_item", b'{"id": 9}'))
    assert info == {
        "message": "shop.get_item failed: HTTP 404 Not Found",
        "function": "shop.get_item",
        "status": 404,
        "body": {"detail": "no item"},
    }


@pytest.mark.parametrize(
    ("status", "body", "shown"),
    [
        (None, None, {}),
        (500, "x" * 38, {"status": 500, "body": "x" * 38}),
        # Over the answer cap (40 bytes of JSON), the body is its JSON text cut to the cap.
        (502, "x" * 39, {"status": 502, "body": '"' + "x" * 39}),
        (400, {"when": float("nan")}, {"status": 400, "body": "{'when': nan}"}),
        (400, {1, 2}, {"status": 400, "body": "{1, 2}"}),
        # The cap counts the body's JSON in ASCII, as it travels: ten "é" are 62 bytes of it.
        (409, "é" * 10, {"status": 409, "body": ('"' + "\\u00e9" * 10)[:40]}),
        (409, {"é" * 10}, {"status": 409, "body": ("\"{'" + "\\u00e9" * 10)[:40]}),
    ],
    ids=[
        "no status or body",
        "body at the cap",
        "body over the cap",
        "NaN in the body",
        "a set as body",
        "text beyond ASCII over the cap",
        "a set beyond ASCII over the cap",
    ],
)
async def test_an_api_errors_body_is_passed_as_json_cut_to_the_answer_cap(
    status: int | None, body: object, shown: dict[str, Any]
) -> None:
    async def failing(name: str, args: dict[str, Any]) -> Any:
        raise CallError("shop.echo failed", status=status, body=body)

    info = refusal(await gate_for(failing).perform("shop.echo", b"{}"))
    assert info == {"message": "shop.echo failed", "function": "shop.echo", **shown}


@pytest.mark.parametrize(
    ("name", "error", "shown"),
    [
        ("shop.café", None, {"function": "shop.café"}),
        ("shop.echo", CallError("café closed", body={"détail": "fermé"}), {"body": {"détail": "fermé"}}),
        ("shop.echo", CallError("café closed", body={"fermé"}), {"body": "{'fermé'}"}),
    ],
    ids=["unknown name", "API error", "API error with a body that is not JSON"],
)
async def test_an_error_with_text_beyond_ascii_reaches_the_script_as_ascii_json(
    name: str, error: CallError | None, shown: dict[str, Any]
) -> None:
    async def failing(name: str, args: dict[str, Any]) -> Any:
        assert error is not None
        raise error

    ok, text = await gate_for(failing).perform(name, b"{}")
    assert not ok and text.isascii()
    info = json.loads(text)
    assert "café" in info["message"]
    assert {key: info[key] for key in shown} == shown


async def test_a_crash_in_the_host_is_a_generic_error_for_the_script_and_the_detail_goes_to_the_reporter(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    reported: list[Exception] = []

    async def report(error: Exception) -> None:
        reported.append(error)

    info = refusal(await gate_for(shop, report=report).perform("shop.crash", b"{}"))
    assert info == {
        "message": "the call to shop.crash failed inside the server, which reported it; try again later",
        "function": "shop.crash",
    }
    assert [str(error) for error in reported] == ["the shop's handler has a bug"]
    assert [record.getMessage() for record in caplog.records] == ["the call to shop.crash from a script failed"]


async def test_without_a_reporter_a_crash_is_logged_with_its_detail(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="sandbox")
    refusal(await gate_for(shop).perform("shop.crash", b"{}"))
    assert [record.getMessage() for record in caplog.records] == [
        "the call to shop.crash from a script failed",
        "script failure: the shop's handler has a bug",
    ]


async def test_a_reporter_that_fails_is_logged_and_the_script_still_gets_its_answer(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(error: Exception) -> None:
        raise OSError("the error tracker is down")

    info = refusal(await gate_for(shop, report=broken).perform("shop.crash", b"{}"))
    assert info["message"].startswith("the call to shop.crash failed inside the server")
    assert [record.getMessage() for record in caplog.records][-1] == "the sandbox's error reporter failed"


@pytest.mark.parametrize(
    ("value", "reason"),
    [({1, 2}, "Object of type set is not JSON serializable"), (float("inf"), "Out of range float values")],
    ids=["set", "infinity"],
)
async def test_an_answer_that_is_not_json_is_an_error_saying_why(value: object, reason: str) -> None:
    async def odd(name: str, args: dict[str, Any]) -> Any:
        return value

    info = refusal(await gate_for(odd).perform("shop.echo", b"{}"))
    assert info["message"].startswith(f"the answer of shop.echo cannot be passed to a script as JSON ({reason}")
    assert set(info) == {"message", "function"} and info["function"] == "shop.echo"


async def test_an_answer_at_its_cap_passes_and_one_byte_more_is_an_error_without_a_status(shop: Shop) -> None:
    gate = gate_for(shop)
    at_cap = await gate.perform("shop.big", b'{"size": 38}')
    over = refusal(await gate.perform("shop.big", b'{"size": 39}'))
    assert at_cap == (True, '"' + "x" * 38 + '"')
    assert over == {
        "message": "shop.big answered with 41 bytes of JSON, over the 40-byte limit for one answer in a script; "
        "ask for less (a smaller limit or page size, or filters)",
        "function": "shop.big",
    }


async def test_no_more_than_the_parallel_cap_of_calls_run_on_the_host_at_once() -> None:
    running, most = 0, 0
    release = anyio.Event()

    async def held(name: str, args: dict[str, Any]) -> Any:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await release.wait()
        running -= 1
        return args

    gate = gate_for(held)
    answers: list[tuple[bool, str]] = []

    async def one(n: int) -> None:
        answers.append(await gate.perform("shop.echo", f'{{"n": {n}}}'.encode()))

    async with anyio.create_task_group() as calls:
        for n in range(3):
            calls.start_soon(one, n)
        await anyio.wait_all_tasks_blocked()
        inside = running
        release.set()
    assert (inside, most) == (2, 2)
    assert sorted(answers) == [(True, f'{{"n":{n}}}') for n in range(3)]


async def test_a_gate_for_a_callers_view_refuses_the_hidden_functions_as_unknown_and_suggests_none(shop: Shop) -> None:
    # What a compromised worker could forge: call frames for functions of the catalog outside the caller's view.
    gate = CallGate(("shop.list_items", "shop.echo"), SMALL, shop)
    hidden = refusal(await gate.perform("shop.get_item", b'{"id": 1}'))
    misspelt = refusal(await gate.perform("shop.get_iten", b"{}"))
    # The closest names offered are the view's own, never the hidden shop.get_item.
    assert hidden == {
        "message": "Unknown function 'shop.get_item'. Did you mean shop.list_items? Call only the catalog's functions.",
        "function": "shop.get_item",
    }
    assert misspelt["message"] == (
        "Unknown function 'shop.get_iten'. Did you mean shop.list_items? Call only the catalog's functions."
    )
    assert shop.calls == [] and gate.made == 0
