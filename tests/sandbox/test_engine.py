"""The engine inside a worker, driven in-process through a HostLink that answers calls from a queue."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import sandbox.engine as engine_module
from sandbox.engine import Engine, EngineLimits, Outcome, Reply

ROOT = Path(__file__).resolve().parents[2]
LIMITS = EngineLimits(
    memory_bytes=32 * 1024 * 1024,
    stack_bytes=256 * 1024,
    max_calls=5,
    max_arg_bytes=1024,
    max_result_bytes=4096,
    max_log_lines=3,
    max_log_bytes=100,
)


class Link:
    """Answers each call with its arguments, echoed, in the order the calls were made."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str, str]] = []
        self.logs: list[str] = []
        self._answered = 0

    def call(self, call_id: int, name: str, args_json: str) -> None:
        self.calls.append((call_id, name, args_json))

    def log(self, line: str) -> None:
        self.logs.append(line)

    def next_reply(self, timeout: float) -> Reply | None:
        if self._answered >= len(self.calls):
            return None
        call_id, name, args_json = self.calls[self._answered]
        self._answered += 1
        if name == "fail.now":
            return Reply(id=call_id, ok=False, text=json.dumps({"message": "no", "status": 409, "body": [1]}))
        return Reply(id=call_id, ok=True, text=args_json)


def run(source: str, timeout: float = 2.0) -> tuple[Outcome, Link]:
    link = Link()
    return Engine(["echo.back", "fail.now"], LIMITS).run(source, timeout, link), link


def test_calls_leave_as_json_and_answers_come_back_parsed() -> None:
    outcome, link = run("const a = await api.echo.back({n: 1}); const b = await call('echo.back', {n: a.n + 1}); b")
    assert (outcome.kind, json.loads(outcome.text), outcome.calls) == ("json", {"n": 2}, 2)
    assert [name for _, name, _ in link.calls] == ["echo.back", "echo.back"]


def test_a_failed_answer_rejects_with_status_and_body() -> None:
    outcome, _ = run("try { await api.fail.now() } catch (e) { return [e.message, e.status, e.body] }")
    assert json.loads(outcome.text) == ["no", 409, [1]]


def test_the_guest_counts_calls_and_refuses_past_the_budget() -> None:
    outcome, link = run("let n = 0; for (let i = 0; i < 9; i++) { try { call('echo.back', {}) } catch (e) { n++ } } n")
    assert json.loads(outcome.text) == 4
    assert len(link.calls) == LIMITS.max_calls


def test_console_lines_are_capped_in_lines_and_bytes() -> None:
    outcome, link = run("console.log('a'.repeat(60)); console.log('b'.repeat(60)); console.log('c'); 1")
    assert link.logs == ["a" * 60, "b" * 40]
    assert outcome.dropped_logs == 1


def test_a_result_over_the_cap_is_a_result_failure() -> None:
    outcome, _ = run("'x'.repeat(5000)")
    assert outcome.kind == "result"
    assert "over the 4096-byte limit" in json.loads(outcome.text)["message"]


def test_the_cpu_limit_ends_a_loop_before_the_deadline_kill_would() -> None:
    outcome, _ = run("for (;;) {}", timeout=0.3)
    assert outcome.kind == "timeout"


def test_a_script_waiting_on_nothing_is_stalled() -> None:
    outcome, _ = run("await new Promise(() => {})")
    assert outcome.kind == "stalled"


def test_a_call_that_is_never_answered_ends_at_the_deadline() -> None:
    class Silent(Link):
        def next_reply(self, timeout: float) -> Reply | None:
            return None

    outcome = Engine(["echo.back"], LIMITS).run("await api.echo.back({})", 0.2, Silent())
    assert outcome.kind == "timeout"


def test_a_context_set_up_ahead_serves_one_run_and_nothing_of_a_script_reaches_the_next() -> None:
    engine = Engine(["echo.back"], LIMITS)
    engine.prepare()
    engine.prepare()  # one context is kept ready, not two
    first = engine.run("globalThis.leak = 1; Object.prototype.polluted = true; Math.max = () => 7; 1", 2.0, Link())
    engine.prepare()
    second = engine.run(
        "[typeof leak, ({}).polluted === undefined, Math.max(1, 2), await api.echo.back({n: 1})]", 2.0, Link()
    )
    third = engine.run("typeof leak", 2.0, Link())  # no context ready: the run sets its own up
    assert first.kind == "json"
    assert json.loads(second.text) == ["undefined", True, 2, {"n": 1}]
    assert json.loads(third.text) == "undefined"


def test_a_context_set_up_ahead_takes_the_runs_own_deadline() -> None:
    class Patient(Link):
        """Never answers; records how long the engine says it may wait."""

        def __init__(self) -> None:
            super().__init__()
            self.waits: list[float] = []

        def next_reply(self, timeout: float) -> Reply | None:
            self.waits.append(timeout)
            return None

    engine = Engine(["echo.back"], LIMITS)
    engine.prepare()
    link = Patient()
    assert engine.run("await api.echo.back({})", 0.2, link).kind == "timeout"
    assert 0 < link.waits[0] <= 0.2


def test_the_quickjs_binding_is_imported_only_by_the_engine() -> None:
    importers = []
    for path in sorted((ROOT / "sandbox").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name.split(".")[0] in ("quickjs", "_quickjs") for name in names):
                importers.append(path.name)
    assert importers == ["engine.py"]


@pytest.mark.parametrize("module", ["sandbox"])
def test_the_public_api_is_an_explicit_sorted_all(module: str) -> None:
    package = __import__(module)
    assert list(package.__all__) == sorted(package.__all__)
    assert all(hasattr(package, name) for name in package.__all__)


def test_a_context_set_up_ahead_serves_only_a_run_that_sees_the_same_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    set_ups: list[str] = []
    set_up = engine_module._set_up

    def counted(guest: Any, names: str, limits: str) -> Any:
        set_ups.append(names)
        return set_up(guest, names, limits)

    monkeypatch.setattr(engine_module, "_set_up", counted)
    engine = Engine(["echo.back", "fail.now"], LIMITS)
    listing = "Object.keys(api).concat(Object.keys(api.echo || {}))"
    engine.prepare(("echo.back",))
    same = engine.run(listing, 2.0, Link(), ("echo.back",))
    engine.prepare(("echo.back",))
    everything = engine.run(listing, 2.0, Link())
    engine.prepare()
    other = engine.run(listing, 2.0, Link(), ("fail.now",))
    assert [json.loads(outcome.text) for outcome in (same, everything, other)] == [
        ["echo", "back"],
        ["echo", "fail", "back"],
        ["fail"],
    ]
    # Set up ahead and used; then each context set up ahead for other functions goes unused and the run sets up its own.
    assert set_ups == [
        '["echo.back"]',
        '["echo.back"]',
        '["echo.back", "fail.now"]',
        '["echo.back", "fail.now"]',
        '["fail.now"]',
    ]
