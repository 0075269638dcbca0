"""The fenced code blocks of the documentation (README.md and every page under docs/), each with the options of the
`<!-- docs-test: ... -->` comment on the line before it, if any.

A comment reads `<!-- docs-test: key=value key=value -->`; a value holds no spaces, and a key given twice (`env`)
keeps every value. docs/contributing.md describes the keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["REPO", "Block", "DocsError", "blocks", "documents"]

REPO: Final = Path(__file__).resolve().parents[2]
_FENCE: Final = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)(?P<info>[^`]*)$")
_MARKER: Final = re.compile(r"^\s*<!--\s*docs-test:(?P<options>.*?)-->\s*$")


class DocsError(Exception):
    """A page's blocks or comments cannot be read: the message names the file and line."""


@dataclass(frozen=True, kw_only=True)
class Block:
    """One fenced block: where it starts (the fence's line, 1-based), its language and text, its comment's options."""

    path: Path
    line: int
    lang: str
    text: str
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{_shown(self.path)}:{self.line}"

    def option(self, key: str) -> str | None:
        """The one value of `key`, or None."""
        values = self.options.get(key, ())
        return values[-1] if values else None


def _shown(path: Path) -> str:
    """`path` relative to the repository when inside it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def documents() -> list[Path]:
    """The pages whose blocks are tested: README.md, then every Markdown file under docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _options(text: str, where: str) -> dict[str, tuple[str, ...]]:
    options: dict[str, tuple[str, ...]] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise DocsError(f"{where}: docs-test option {word!r} is not key=value")
        options[key] = (*options.get(key, ()), value)
    return options


def _blocks_of(path: Path) -> Iterator[Block]:
    lines = path.read_text().splitlines()
    pending: tuple[int, dict[str, tuple[str, ...]]] | None = None
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        marker = _MARKER.match(line)
        if marker:
            pending = (number, _options(marker["options"], f"{_shown(path)}:{number}"))
            continue
        fence = _FENCE.match(line)
        if fence is None:
            if pending is not None and line.strip():
                raise DocsError(f"{_shown(path)}:{pending[0]}: a docs-test comment must come right before a block")
            continue
        start, indent, close = number, len(fence["indent"]), fence["fence"]
        body: list[str] = []
        while number < len(lines) and lines[number].strip() != close:
            body.append(lines[number][indent:])
            number += 1
        if number == len(lines):
            raise DocsError(f"{_shown(path)}:{start}: the block is never closed")
        number += 1
        options = pending[1] if pending is not None and pending[0] == start - 1 else {}
        if pending is not None and not options:
            raise DocsError(f"{_shown(path)}:{pending[0]}: a docs-test comment must come right before a block")
        pending = None
        yield Block(
            path=path,
            line=start,
            lang=fence["info"].strip().split(" ")[0],
            text="\n".join(body) + "\n",
            options=options,
        )


def blocks(paths: Sequence[Path] | None = None) -> list[Block]:
    """Every fenced block of `paths` (default: `documents()`), in order."""
    return [block for path in (documents() if paths is None else paths) for block in _blocks_of(path)]
