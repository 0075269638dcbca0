"""The runners fail a block that does not do what its page says, and name it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from demo import create_app
from tests.docs.blocks import REPO, Block
from tests.docs.runners import BlockFailedError, make_workdir, run


@pytest.fixture(scope="module")
def document() -> str:
    return yaml.safe_dump(create_app().openapi(), sort_keys=False)


def _block(lang: str, text: str, **options: str) -> Block:
    return Block(
        path=REPO / "docs" / "example.md",
        line=7,
        lang=lang,
        text=text,
        options={key: (value,) for key, value in options.items()},
    )


@pytest.mark.parametrize(
    "block",
    [
        _block("python", "raise SystemExit('the example broke')\n"),
        _block("python", "def test_it() -> None:\n    assert app.title == 'another'\n", fixture="app"),
        _block("sh", "mcp-gateway catalog describe openapi.yaml orders.no_such_function\n"),
        _block("sh", "mcp-gateway serve --spec no-such-file.yaml\n"),
        _block("sh", "pip install 'openapi-mcp-gateway[no-such-extra]'\n"),
        _block("sh", "make no-such-target\n"),
        _block("json", '{"mcpServers": {}\n'),
        _block("haproxy", "balance leastconn\n"),
        _block("text", "gateway/no_such_module.py does it\n", check="paths"),
        _block("text", "event=tool tool=call_function function=x status=200 caller=y\n", check="call-log"),
    ],
    ids=lambda block: f"{block.lang}: {block.text.splitlines()[0][:40]}",
)
def test_a_block_that_does_not_do_what_it_says_fails_with_its_place(
    block: Block, tmp_path: Path, document: str
) -> None:
    with pytest.raises(BlockFailedError, match=r"docs/example\.md:7"):
        run(block, make_workdir(tmp_path, document))


def test_a_served_gateway_is_checked_and_stopped(tmp_path: Path, document: str) -> None:
    run(_block("sh", "mcp-gateway serve --spec openapi.yaml --port 1\n"), make_workdir(tmp_path, document))
