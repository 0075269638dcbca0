"""Parse JSON or YAML text into a JSON-compatible tree, fast.

JSON goes to orjson when it is installed (the `speed` extra; Rust, about 2.5x faster than `json.loads` on
GitHub's 13 MB document), or to `json.loads` without it and for what orjson reads differently or refuses:
integers of 20 digits, or negative ones of 19 (orjson may make them floats), `NaN` and `Infinity`, lone surrogate
escapes, and any syntax error (so that its line and column are the standard library's). YAML goes to
`catalog._yaml`, imported only then. JSON is never given to the YAML loader, which rejects the surrogate-pair
escapes (`\\ud83d\\ude80`) JSON writers emit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from catalog.errors import DocumentError

try:  # the `speed` extra's (gateway/extras.py); without it the standard library reads every document
    import orjson
except ImportError:
    orjson = None  # type: ignore[assignment]

__all__ = ["RefScan", "parse_text"]

#: A `$ref` and its string value (group 1, escapes kept), or the first character of any other value (group 2).
_JSON_REF_BYTES = re.compile(rb'"\$ref"\s*:\s*(?:"([^"\\]*(?:\\.[^"\\]*)*)"|(.))', re.DOTALL)
_JSON_REF_STR = re.compile(r'"\$ref"\s*:\s*(?:"([^"\\]*(?:\\.[^"\\]*)*)"|(.))', re.DOTALL)


@dataclass(kw_only=True)
class RefScan:
    """What a parse noticed: the `$ref` values (so that documents whose refs are all local skip the bundler's
    walk), and notes to report as warnings.

    `irregular` is set when some `$ref` holds something other than a string or a mapping (a mapping is a
    property named `$ref`, as in Kubernetes' JSONSchemaProps).
    """

    values: set[str] = field(default_factory=set)
    irregular: bool = False
    notes: list[str] = field(default_factory=list)


def parse_text(text: str | bytes, location: str) -> tuple[Any, RefScan]:
    """Parse JSON (when the text starts with `{` or `[`) or else YAML; raise DocumentError with line and column."""
    if isinstance(text, bytes):
        try:
            text = _utf8_or_text(text)
        except UnicodeDecodeError as exc:
            raise not_utf8(location, exc) from None
    if isinstance(text, bytes):
        looks_like_json = text[:64].lstrip(b" \t\r\n")[:1] in (b"{", b"[")
    else:
        text = text.removeprefix("\ufeff")
        looks_like_json = text[:64].lstrip(" \t\r\n")[:1] in ("{", "[")
    if looks_like_json:
        try:
            return _json_tree(text), _scan_json(text)
        except json.JSONDecodeError:
            try:  # again from the text as written, so that the error's line and column are the reader's
                json.loads(text)
            except json.JSONDecodeError as exc:
                json_error = exc
            else:  # pragma: no cover - escaping non-ASCII characters keeps valid JSON valid
                raise
        except UnicodeDecodeError as exc:
            raise not_utf8(location, exc) from None
        except RecursionError:
            raise DocumentError(f"{location} is nested too deeply to parse; flatten it", location=location) from None
        try:  # a YAML flow mapping also starts with `{`
            tree, scan = _parse_yaml(text, location)
            scan.notes.append(
                f"the text starts like JSON but is not valid JSON (line {json_error.lineno}, column "
                f"{json_error.colno}: {json_error.msg}); it was read as YAML, check that this is what was meant"
            )
            return tree, scan
        except DocumentError:
            raise DocumentError(
                f"invalid JSON in {location} at line {json_error.lineno}, column {json_error.colno}: "
                f"{json_error.msg}; fix the syntax there (a JSON linter shows the exact spot)",
                location=location,
            ) from None
    return _parse_yaml(text, location)


def _parse_yaml(text: str | bytes, location: str) -> tuple[Any, RefScan]:
    from catalog._yaml import parse_yaml

    return parse_yaml(text, location)


#: Digits as `0`, `-` as itself, everything else as a space: 20 digits, or a minus and 19, may be an integer
#: outside orjson's 64 bits, which it would read as a float.
_DIGITS = bytes(48 if 48 <= byte <= 57 else byte if byte == 45 else 32 for byte in range(256))
_LONG_NUMBERS = (b"0" * 20, b"-" + b"0" * 19)


def _json_tree(text: str | bytes) -> Any:
    """The tree `json.loads` makes of `text`, by orjson where it reads the same (see the module's docstring)."""
    if orjson is not None and isinstance(text, bytes) and not _has_long_numbers(text.translate(_DIGITS)):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # NaN, a lone surrogate, deep nesting or a syntax error: the standard library decides
    return json.loads(_ascii_json(text) if isinstance(text, bytes) else text)


def _has_long_numbers(digits: bytes) -> bool:
    return any(digits.find(run) >= 0 for run in _LONG_NUMBERS)


_NON_ASCII = re.compile(rb"[\x80-\xff]+")


def _ascii_json(data: bytes) -> bytes:
    """UTF-8 JSON with each non-ASCII character written as its `\\u` escape: the same document, but a text that
    Python holds at one byte per character (one emoji in GitHub's 13 MB document would make the whole text
    four bytes per character, 52 MB, while it is parsed). Invalid UTF-8 is left for json.loads to report."""
    if data.isascii():
        return data
    # Non-ASCII is rare in real documents: only the chunks holding some go through the (slow) regex. A chunk ends
    # at an ASCII byte, so no UTF-8 sequence is split.
    parts: list[bytes] = []
    start, size = 0, len(data)
    try:
        while start < size:
            end = min(start + _CHUNK, size)
            while end < size and data[end] >= 0x80:
                end += 1
            chunk = data[start:end]
            parts.append(chunk if chunk.isascii() else _NON_ASCII.sub(_escaped, chunk))
            start = end
    except UnicodeDecodeError:  # json.loads of the original reports the bad byte where it is in the document
        return data
    return b"".join(parts)


_CHUNK = 1 << 16


def _escaped(run: re.Match[bytes]) -> bytes:
    return json.dumps(run[0].decode("utf-8"))[1:-1].encode("ascii")


def _utf8_or_text(data: bytes) -> bytes | str:
    """UTF-8 bytes stay bytes (without BOM; parsing and scanning bytes is faster); UTF-16/32 become text."""
    for bom, codec in ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32")):
        if data.startswith(bom):
            return data.decode(codec)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    return data.removeprefix(b"\xef\xbb\xbf")


def not_utf8(location: str, exc: UnicodeDecodeError) -> DocumentError:
    return DocumentError(
        f"{location} is not valid {exc.encoding} text (bad byte at offset {exc.start}); save it as UTF-8",
        location=location,
    )


def _scan_json(text: str | bytes) -> RefScan:
    scan = RefScan()
    if isinstance(text, bytes):
        for value, other in _JSON_REF_BYTES.findall(text):
            if other:
                scan.irregular = scan.irregular or other != b"{"
            else:
                scan.values.add(json.loads(b'"' + value + b'"') if b"\\" in value else value.decode())
    else:
        for value, other in _JSON_REF_STR.findall(text):
            if other:
                scan.irregular = scan.irregular or other != "{"
            else:
                scan.values.add(json.loads(f'"{value}"') if "\\" in value else value)
    return scan
