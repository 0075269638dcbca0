"""HTML in document text (Stripe writes every description as HTML) read as plain text for agents."""

from __future__ import annotations

import html
import re
from typing import Final

__all__ = ["plain_text"]

#: Only tags HTML documents use in prose, so that `<owner>/<repo>` in a Markdown description stays as written.
_TAG: Final = re.compile(
    r"</?(p|div|br|hr|ul|ol|li|dl|dt|dd|pre|blockquote|table|thead|tbody|tr|td|th|h[1-6]|a|code|kbd|var|samp|"
    r"strong|b|em|i|u|s|small|sup|sub|span|img|details|summary)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_BLOCKS: Final = frozenset(
    "p div br hr ul ol dl dt dd pre blockquote table thead tbody tr h1 h2 h3 h4 h5 h6 details summary".split()
)
_SPACES: Final = re.compile(r"[ \t]+")
_BLANK_LINES: Final = re.compile(r"\n{3,}")


def plain_text(text: str) -> str:
    """`text` with its HTML tags turned into plain text: blocks break lines, list items start with `- `, entities
    are decoded. Text without such tags (Markdown, plain) comes back unchanged."""
    if "<" not in text or _TAG.search(text) is None:
        return text
    converted = html.unescape(_TAG.sub(_replacement, text))
    lines = [_SPACES.sub(" ", line).strip() for line in converted.splitlines()]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _replacement(match: re.Match[str]) -> str:
    tag = match.group(1).lower()
    if tag == "li":
        return "" if match.group(0).startswith("</") else "\n- "
    if tag in ("td", "th"):
        return " "
    if tag in ("p", "pre", "blockquote", "table") or (tag[0] == "h" and tag[1:].isdigit()):
        return "\n\n"
    return "\n" if tag in _BLOCKS else ""
