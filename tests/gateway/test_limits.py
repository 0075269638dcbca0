"""`Limits`: each value it cannot enforce is refused naming its option and flag, and each count limit is a whole
number flag (`N`, at least its least value) of the commands its `where` names."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

import pytest

from gateway.cli.options import add_flags
from gateway.errors import ConfigError
from gateway.flags import Where
from gateway.limits import Limits, _count, option_name

#: Every count limit and the least value it takes.
COUNTS = {
    "max_schema_nodes": 1,
    "max_body_bytes": 1,
    "max_argument_bytes": 1,
    "max_argument_depth": 1,
    "max_running": 0,
    "tasks_running_per_caller": 1,
    "tasks_running": 1,
    "tasks_stored_per_caller": 1,
    "tasks_stored": 1,
    "tasks_stored_per_address": 1,
    "subscriptions_per_caller": 1,
    "subscriptions": 1,
    "batch_elements": 1,
    "batch_answer_bytes": 1,
    "scripts_per_caller": 1,
    "approvals_pending_per_caller": 1,
    "approvals_pending": 1,
    "approvals_pending_per_address": 1,
}


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


@pytest.mark.parametrize(("name", "least"), COUNTS.items())
def test_each_count_limit_takes_its_least_value_and_refuses_one_less(name: str, least: int) -> None:
    assert getattr(Limits(**{name: least}), name) == least
    with pytest.raises(ConfigError) as refused:
        Limits(**{name: least - 1})
    assert str(refused.value) == f"{option_name(name)} must be a whole number, {least} or more, got {least - 1}"


def test_the_count_limits_are_the_whole_number_fields_of_limits() -> None:
    assert {name for name, value in vars(Limits()).items() if isinstance(value, int)} == set(COUNTS)


def test_a_count_limit_is_a_whole_number_flag_of_the_commands_its_where_names(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Limits' own fields are declared once, when the module is imported; these are declared the same way here, so
    # what a count limit's declaration gives the command line is seen as it is made.
    @dataclass(frozen=True, kw_only=True)
    class Counts:
        streams: int = field(default=4, metadata=_count("streams open at once"))
        waiting: int = field(default=0, metadata=_count("requests waiting", where="serve", least=0))

    def command(*where: Where) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="mcp-gateway")
        add_flags(parser, Counts, where=where)
        return parser

    def refusal(parser: argparse.ArgumentParser, *argv: str) -> str:
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        return capsys.readouterr().err.splitlines()[-1]

    monkeypatch.delenv("MCP_GATEWAY_STREAMS", raising=False)
    monkeypatch.delenv("MCP_GATEWAY_WAITING", raising=False)
    every, serve = command("all"), command("all", "serve")
    assert vars(every.parse_args(["--streams", "1"])) == {"streams": 1}
    assert vars(serve.parse_args(["--streams", "2", "--waiting", "0"])) == {"streams": 2, "waiting": 0}
    assert refusal(every, "--streams", "0") == "mcp-gateway: error: argument --streams: must be 1 or more, not '0'"
    assert refusal(serve, "--waiting", "-1") == "mcp-gateway: error: argument --waiting: must be 0 or more, not '-1'"
    assert refusal(every, "--waiting", "0") == "mcp-gateway: error: unrecognized arguments: --waiting 0"
    assert "--streams" not in command("serve").format_help()
    shown = " ".join(serve.format_help().split())
    assert "--streams N streams open at once [MCP_GATEWAY_STREAMS]" in shown
    assert "--waiting N requests waiting [MCP_GATEWAY_WAITING]" in shown
