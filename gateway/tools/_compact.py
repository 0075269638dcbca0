"""A compact text encoding of JSON results for agents, in the spirit of TOON: arrays of like objects as a table.

How to read it (the call tools' descriptions say the same, in `COMPACT_HELP`):

- `key: value` per line; nesting is indentation (two spaces) under `key:`.
- `key[N]{a,b,c}:` then N rows `va,vb,vc`: an array of N objects with fields a, b, c. A nested object's fields
  are dotted columns (`owner.login`); an empty cell is a field the object does not have; a cell that is an
  array of scalars is written as JSON (`["a","b"]`, commas inside the brackets do not separate cells).
- `key[N]: x,y,z`: an array of N scalars; `key[N]:` then `- item` lines: an array of anything else.
- Scalars are JSON (`null`, `true`, `12.5`), and strings are bare unless they could be misread (empty, padded,
  holding `,` `:` `"` a line break, or looking like a number, `true`, `null` or JSON), then they are JSON strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["COMPACT_HELP", "MIN_SAVING", "compact_text"]

#: The least saving, as a share of the JSON text's length, for which the compact text is sent instead.
MIN_SAVING = 0.20

COMPACT_HELP = (
    "JSON results may come in a compact form when it is much shorter: `key: value` lines, nesting by indentation; "
    "`key[N]{a,b,c}:` then N rows `va,vb,vc` is an array of N objects with those fields (dotted fields are nested "
    "objects' fields; an empty cell is an absent field; a cell in [...] is a JSON array); `key[N]: x,y` is an array of "
    "scalars. Strings are bare unless quoted as JSON; other scalars are JSON."
)

_NUMBERISH = re.compile(r"^[-+]?(\d|\.\d)|^(true|false|null)$|^[\[{\-]")
_UNSAFE = frozenset(',:"\n\r\t\\')
#: Tables wider than this are listed item by item instead: a row of sixty cells is no easier to read than JSON.
_MAX_COLUMNS = 40


def compact_text(value: Any) -> str | None:
    """`value` in the compact encoding when it holds a table and is at least MIN_SAVING shorter than JSON, else None.

    Without an array of like objects the encoding is only JSON without braces; agents read JSON best, so it stays.
    """
    if not isinstance(value, dict | list):
        return None
    plain = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    lines: list[str] = []
    if not _block(value, "", lines, 0):
        return None
    text = "\n".join(lines)
    if len(text) > len(plain) * (1 - MIN_SAVING):
        return None
    return text


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        if (
            not value
            or value != value.strip()
            or not _UNSAFE.isdisjoint(value)
            or _NUMBERISH.match(value)
            or value.startswith("- ")
        ):
            return json.dumps(value, ensure_ascii=False)
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _key(key: str) -> str:
    return key if key and _UNSAFE.isdisjoint(key) and not set(key) & set("[]{}. ") else json.dumps(key)


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _flat(value: Mapping[str, Any], prefix: str, out: dict[str, Any]) -> bool:
    """Flatten nested objects into dotted columns; False when a value is an array of objects (not a cell)."""
    for key, item in value.items():
        column = f"{prefix}{_key(str(key))}"
        if isinstance(item, dict) and item:
            if not _flat(item, f"{column}.", out):
                return False
        elif isinstance(item, list) and not all(_is_scalar(element) for element in item):
            return False
        else:
            out[column] = item
    return True


def _table(items: list[Any]) -> tuple[list[str], list[dict[str, Any]]] | None:
    """The columns and flattened rows of a list of objects, or None when it is not one table."""
    if len(items) < 2 or not all(isinstance(item, dict) for item in items):
        return None
    rows: list[dict[str, Any]] = []
    columns: dict[str, None] = {}
    for item in items:
        row: dict[str, Any] = {}
        if not _flat(item, "", row):
            return None
        rows.append(row)
        columns.update(dict.fromkeys(row))
    if len(columns) > _MAX_COLUMNS:
        return None
    return list(columns), rows


def _cell(row: Mapping[str, Any], column: str) -> str:
    if column not in row:
        return ""
    value = row[column]
    if isinstance(value, list | dict):  # an array of scalars, or an empty object: JSON, brackets and all
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _scalar(value)


def _block(value: Any, head: str, lines: list[str], depth: int) -> bool:
    """Append `value` under `head` (a key, or '' at the top) at indentation `depth`; True when it wrote a table."""
    pad = "  " * depth
    label = f"{pad}{head}"
    if isinstance(value, dict):
        if not value:
            lines.append(f"{label}: {{}}" if head else "{}")
            return False
        inner = depth
        if head:
            lines.append(f"{label}:")
            inner = depth + 1
        tables = [_block(item, _key(str(key)), lines, inner) for key, item in value.items()]
        return any(tables)
    if isinstance(value, list):
        count = len(value)
        if all(_is_scalar(item) for item in value):
            cells = ",".join(_scalar(item) for item in value)
            lines.append(f"{label}[{count}]:" + (f" {cells}" if cells else ""))
            return False
        table = _table(value)
        if table is not None:
            columns, rows = table
            lines.append(f"{label}[{count}]{{{','.join(columns)}}}:")
            lines.extend(f"{pad}  " + ",".join(_cell(row, column) for column in columns) for row in rows)
            return True
        lines.append(f"{label}[{count}]:")
        table_inside = False
        for item in value:
            if isinstance(item, dict) and item:
                nested: list[str] = []
                table_inside |= _block(item, "", nested, depth + 2)
                first = nested[0][len("  " * (depth + 2)) :]
                lines.append(f"{pad}  - {first}")
                lines.extend(nested[1:])
            elif isinstance(item, list):
                nested = []
                table_inside |= _block(item, "", nested, depth + 2)
                lines.append(f"{pad}  - {nested[0].strip()}")
                lines.extend(nested[1:])
            else:
                lines.append(f"{pad}  - {_scalar(item)}")
        return table_inside
    lines.append(f"{label}: {_scalar(value)}" if head else _scalar(value))
    return False
