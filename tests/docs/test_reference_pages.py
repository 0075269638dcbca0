"""The generated reference pages say what the code says."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from gateway.cli.commands import parser_for
from gateway.options import GatewayConfig, Security
from tests.docs.reference_pages import _subparsers, cli_page, configuration_page, pages


@pytest.mark.parametrize("page", sorted(pages()), ids=lambda page: page.name)
def test_the_committed_reference_page_is_the_one_the_code_generates(page: Path) -> None:
    assert page.read_text() == pages()[page], f"{page} is stale: run `make docs-reference` and commit it"


def test_the_command_line_page_lists_every_flag_of_serve_with_its_default_and_variable() -> None:
    _, serve = _subparsers(parser_for(["serve"]))["serve"]
    flags = [option for action in serve._actions for option in action.option_strings if option not in ("-h", "--help")]
    page = cli_page()
    assert "--oauth-upstream" in flags
    assert [flag for flag in flags if not re.search(rf"(`|<code>){re.escape(flag)}[ `<]", page)] == []
    assert "| `--max-running N`<br>`MCP_GATEWAY_MAX_RUNNING` | `16` |" in page


def test_the_configuration_page_has_a_row_for_every_field_given_to_a_group() -> None:
    page = configuration_page()
    for cls in (GatewayConfig, Security):
        for item in dataclasses.fields(cls):
            assert (f"| `{item.name}` |" in page) is item.init, item.name
    row = "| `allowed_hosts` | `Sequence[str]` | — | `--allowed-host` (serve)<br>`MCP_GATEWAY_ALLOWED_HOSTS` |"
    assert row in page
