"""A snapshot check (`SnapshotCheck`), printed for a terminal (`text`), a pull-request comment (`markdown`) or
GitHub Actions workflow annotations (`github`), breaking changes first."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gateway.snapshot.diff import Change, FailOn, SnapshotDiff

__all__ = ["OutputFormat", "SnapshotCheck", "render_check"]

OutputFormat = Literal["text", "markdown", "github"]


@dataclass(frozen=True, kw_only=True)
class SnapshotCheck:
    """A gateway compared with its committed snapshot file."""

    path: Path
    diff: SnapshotDiff
    #: The surface the gateway has now.
    current: dict[str, Any]
    #: The committed file's text ("" when there was none), for line numbers in annotations.
    committed_text: str
    #: There was no file at `path`.
    missing: bool
    #: The file was written (asked for, and it was missing or differed).
    updated: bool

    def failed(self, fail_on: FailOn = "any") -> bool:
        """True when CI should fail: the file is missing, or the diff fails the gate; never after an update."""
        if self.updated:
            return False
        return self.missing or self.diff.fails(fail_on)


#: Where each kind of entry sits in a snapshot file (the line that opens its list), for annotation line numbers.
_SECTIONS = {
    "tool": '  "tools": [',
    "module": '    "modules": [',
    "function": '    "modules": [',
    "term": '    "terms": [',
    "prompt": '  "prompts": [',
}
_TOP = {"snapshot": '  "format": ', "server": '  "server": {', "instructions": '  "instructions": '}


def render_check(check: SnapshotCheck, fmt: OutputFormat = "text", *, fail_on: FailOn = "any", accept: str = "") -> str:
    """The outcome of `check` and each change; `accept` is how to accept changes (a command), shown on failure."""
    if fmt == "github":
        return _github(check, fail_on, accept)
    if fmt == "markdown":
        return _markdown(check, accept)
    return _text(check, accept)


def _counts(current: dict[str, Any]) -> str:
    catalog = current.get("catalog") or {}
    modules = catalog.get("modules") or []
    functions = sum(len(module.get("functions") or []) for module in modules)
    return (
        f"{len(current.get('tools') or [])} tools, {functions} functions in {len(modules)} modules, "
        f"{len(catalog.get('terms') or [])} terms"
    )


def _tally(changes: tuple[Change, ...]) -> str:
    breaking = sum(1 for change in changes if change.breaking)
    total = len(changes)
    return f"{total} change{'s' if total != 1 else ''} ({breaking} breaking, {total - breaking} non-breaking)"


def _headline(check: SnapshotCheck, accept: str) -> str:
    path = str(check.path)
    if check.updated and check.missing:
        return f"wrote {path}: {_counts(check.current)}"
    if check.updated:
        what = _tally(check.diff.changes) if check.diff else "formatting only"
        return f"updated {path}: {what}"
    if check.missing:
        return f"{path} does not exist" + (f"; write it with: {accept}" if accept else "")
    if not check.diff:
        return f"{path} matches the gateway: {_counts(check.current)}"
    return f"{path} differs from the gateway's agent-facing surface: {_tally(check.diff.changes)}"


def _text(check: SnapshotCheck, accept: str) -> str:
    lines = [_headline(check, accept)]
    for title, changes in (("Breaking", check.diff.breaking), ("Non-breaking", check.diff.non_breaking)):
        if changes:
            lines.append(f"{title}:")
            lines.extend(f"  - {change}" for change in changes)
    if check.diff and not check.updated and accept:
        lines.append(f"If these changes are intended, accept them with: {accept}")
    return "\n".join(lines)


def _markdown(check: SnapshotCheck, accept: str) -> str:
    diff = check.diff
    if check.missing and not check.updated:
        title = "Snapshot missing"
    elif not diff:
        title = "Agent-facing surface unchanged"
    elif diff.breaking:
        title = "Breaking changes to the agent-facing surface"
    else:
        title = "Non-breaking changes to the agent-facing surface"
    lines = [
        f"### {_md(title)}",
        "",
        _md(_headline(check, "")).replace(_md(str(check.path)), _code(str(check.path)), 1),
    ]
    for heading, changes in (("Breaking", diff.breaking), ("Non-breaking", diff.non_breaking)):
        if changes:
            lines += ["", f"**{heading}**", ""]
            lines.extend(f"- {_md_change(change)}" for change in changes)
    if accept and not check.updated and (diff or check.missing):
        lines += ["", f"If these changes are intended, run {_code(accept)} and commit the file."]
    return "\n".join(lines)


def _md_change(change: Change) -> str:
    if not change.name:
        return f"{_md(change.subject)}: {_md(change.message)}"
    return f"{_md(change.subject)} {_code(change.name)}: {_md(change.message)}"


def _md(text: str) -> str:
    """Markdown-inert text: HTML's specials as entities, Markdown's punctuation backslash-escaped."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "".join(f"\\{char}" if char in "\\`*_[]|~#" else char for char in text)


def _code(text: str) -> str:
    """A code span that holds any text: a backtick fence longer than any run of backticks inside."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _github(check: SnapshotCheck, fail_on: FailOn, accept: str) -> str:
    """GitHub Actions workflow commands: an error per breaking change, a warning or notice per other change."""
    path = str(check.path)
    lines: list[str] = []
    if check.missing and not check.updated:
        lines.append(f"::error file={_property(path)},title=Snapshot missing::{_data(_headline(check, accept))}")
    for change in (*check.diff.breaking, *check.diff.non_breaking):
        if change.breaking:
            level, title = "error", "Breaking API change"
        else:
            level, title = ("warning" if fail_on == "any" and not check.updated else "notice"), "API change"
        where = f"file={_property(path)}"
        line = _line_of(check.committed_text, change)
        if line is not None:
            where += f",line={line}"
        lines.append(f"::{level} {where},title={_property(title)}::{_data(str(change))}")
    lines.append(_headline(check, accept))
    if check.diff and not check.updated and accept:
        lines.append(f"If these changes are intended, accept them with: {accept}")
    return "\n".join(lines)


def _data(text: str) -> str:
    # GitHub Actions workflow commands: a message escapes %, CR and LF.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    # ... and a property value also escapes ':' and ','.
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _line_of(text: str, change: Change) -> int | None:
    """The 1-based line of the committed file where the change's subject is, when it is there."""
    if not text:
        return None
    lines = text.split("\n")
    top = _TOP.get(change.subject)
    if top is not None:
        return next((number for number, line in enumerate(lines, 1) if line.startswith(top)), None)
    opener = _SECTIONS.get(change.subject)
    start = next((number for number, line in enumerate(lines) if line == opener), None)
    if start is None:
        return None
    wanted = f'"name": {json.dumps(change.name, ensure_ascii=False)},'
    for number in range(start + 1, len(lines)):
        line = lines[number]
        if line.strip() == wanted:
            return number + 1
        if line.startswith('    "') and not line.startswith("      ") and line != opener:
            return None  # past the end of the section
    return None
