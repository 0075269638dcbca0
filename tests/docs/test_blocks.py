"""Every fenced block of README.md and docs/ does what its page says (tests.docs.runners says how each is run).

The blocks chosen run a few at once, from the first block test on (they mostly wait on the processes they start);
each test then waits for its own block's outcome.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
import yaml

from demo import create_app
from tests.docs.blocks import REPO, Block, blocks
from tests.docs.runners import FIXTURES, OPTIONS, RUNNERS, make_workdir, run

BLOCKS = blocks()
AT_ONCE = max(2, (os.cpu_count() or 1) + 1)
"""Blocks running at once."""


def _chosen(session: pytest.Session) -> list[Block]:
    """The blocks of the block tests this session runs."""
    found: list[Block] = []
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        block = callspec.params.get("block") if callspec is not None else None
        if isinstance(block, Block) and block.lang in RUNNERS:
            found.append(block)
    return found


@pytest.fixture(scope="session")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[None]]]:
    """Each chosen block's run, started in the background, by block id."""
    document = yaml.safe_dump(create_app().openapi(), sort_keys=False)
    with ThreadPoolExecutor(max_workers=AT_ONCE) as pool:
        futures = {
            block.id: pool.submit(run, block, make_workdir(tmp_path_factory.mktemp("block"), document))
            for block in _chosen(request.session)
        }
        yield futures
        for future in futures.values():
            future.cancel()


def test_every_block_has_a_runner() -> None:
    assert len(BLOCKS) > 20
    assert [block.id for block in BLOCKS if block.lang not in RUNNERS] == []


def test_every_docs_test_comment_uses_known_options_and_fixtures() -> None:
    unknown = [(block.id, key) for block in BLOCKS for key in block.options if key not in OPTIONS]
    fixtures = [block.option("fixture") or "" for block in BLOCKS]
    assert unknown == []
    assert [name for names in fixtures for name in names.split(",") if name and name not in FIXTURES] == []


def test_every_relative_link_of_the_readme_names_a_file_of_the_repository() -> None:
    readme = (REPO / "README.md").read_text()
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme)
    assert "docs/mounting.md" in links
    assert [link for link in links if not (REPO / link).exists()] == []


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.id)
def test_the_block_does_what_its_page_says(block: Block, outcomes: dict[str, Future[None]]) -> None:
    if block.lang not in RUNNERS:
        pytest.fail(f"{block.id}: no runner for {block.lang!r} blocks (tests/docs/runners.py)")
    outcomes[block.id].result()
