"""How the documentation's pages are read: their blocks and docs-test comments, and the site's navigation."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.docs.blocks import REPO, DocsError, blocks


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text)
    return page


def test_a_block_carries_the_options_of_the_comment_right_before_it(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        "Text.\n\n<!-- docs-test: fixture=app env=A=1 env=B=2 -->\n```python\nprint(app)\n```\n\n```sh\nls\n```\n",
    )
    first, second = blocks([page])
    assert (first.line, first.lang, first.text) == (4, "python", "print(app)\n")
    assert first.options == {"fixture": ("app",), "env": ("A=1", "B=2")}
    assert first.option("env") == "B=2"
    assert (second.lang, second.options) == ("sh", {})


def test_an_indented_block_in_a_list_loses_its_indent(tmp_path: Path) -> None:
    (block,) = blocks([_page(tmp_path, '- item:\n\n    ```json\n    {"a": 1}\n    ```\n')])
    assert (block.lang, block.text) == ("json", '{"a": 1}\n')


@pytest.mark.parametrize(
    "text",
    [
        "<!-- docs-test: fixture=app -->\nSome prose.\n```python\npass\n```\n",
        "<!-- docs-test: fixture=app -->\n\n```python\npass\n```\n",
        "<!-- docs-test: fixture -->\n```python\npass\n```\n",
        "```python\npass\n",
    ],
    ids=["prose between", "blank line between", "not key=value", "never closed"],
)
def test_a_misplaced_or_malformed_comment_or_an_open_block_is_refused_with_its_line(tmp_path: Path, text: str) -> None:
    with pytest.raises(DocsError, match=r"page\.md:\d+: "):
        blocks([_page(tmp_path, text)])


def test_every_page_under_docs_is_in_the_site_navigation_and_every_entry_is_a_page() -> None:
    config = yaml.safe_load((REPO / "properdocs.yml").read_text())

    def entries(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, list):
            return [page for item in nav for page in entries(item)]
        if isinstance(nav, dict):
            return [page for value in nav.values() for page in entries(value)]
        return []

    pages = {str(page.relative_to(REPO / "docs")) for page in (REPO / "docs").rglob("*.md")}
    assert sorted(entries(config["nav"])) == sorted(pages)
