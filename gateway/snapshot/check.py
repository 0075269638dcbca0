"""The gateway's agent-facing surface as a committed JSON file, and each change since, classified for review.

A surface snapshot holds what an MCP client sees of one gateway: the server's name and version, the
instructions, every tool as tools/list shows it (schemas and annotations), the fixed resources and resource
templates, every prompt as prompts/list shows it, and the catalog snapshot (modules, functions, terms) that
search_functions, describe_function, explain_term and the resources read from. `check_snapshot`
compares a gateway with its committed file; `diff_snapshots` classifies each change:

- breaking: a function, tool, module, term or alias removed or renamed; an argument added as required, made
  required, removed, or its type narrowed; an enum value removed; a return type changed; a function or tool
  that now writes or destroys; a field of a term removed; a resource, template or prompt removed, a resource's
  media type changed, a prompt argument removed, added as required or made required; calls sent to another
  scheme or host (the API's servers, or a function's own server, `gateway.snapshot.calls_diff`); a function's
  security that admits fewer callers; a catalog format older than this version's (re-record the file).
- non-breaking: additions, new optional arguments, widened argument types, wording (summaries, descriptions,
  instructions, titles), routes, deprecations, another path on the same host, an argument's style or explode.

`gateway.snapshot.report` prints a check for a terminal, a pull-request comment or GitHub annotations.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.snapshot import catalog_snapshot, dump_snapshot
from gateway.errors import ConfigError
from gateway.mcp.prompts import Prompt
from gateway.mcp.toolspec import ToolSpec
from gateway.snapshot.diff import Change, FailOn, SnapshotDiff, Subject, diff_snapshots
from gateway.snapshot.report import OutputFormat, SnapshotCheck, render_check

if TYPE_CHECKING:
    from gateway.types import Served

__all__ = [
    "SURFACE_FORMAT",
    "Change",
    "FailOn",
    "OutputFormat",
    "SnapshotCheck",
    "SnapshotDiff",
    "Subject",
    "check_snapshot",
    "diff_snapshots",
    "gateway_snapshot",
    "load_snapshot",
    "prompt_listing",
    "render_check",
    "tool_listing",
]

#: Bumped when the layout of the surface snapshot changes; a diff then says "format changed" first.
SURFACE_FORMAT = 1


def gateway_snapshot(gateway: Served) -> dict[str, Any]:
    """The agent-facing surface of `gateway` as plain JSON data; equal surfaces give equal data."""
    data = {
        "format": SURFACE_FORMAT,
        "server": {"name": gateway.name, "version": gateway.version},
        "instructions": gateway.instructions,
        "tools": [tool_listing(spec) for spec in gateway.tools()],
        "resources": [
            {"uri": r.uri, "name": r.name, "title": r.title, "description": r.description, "mimeType": r.mime_type}
            for r in gateway.resources.resources()
        ],
        "resourceTemplates": [
            {
                "uriTemplate": t.uri_template,
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "mimeType": t.mime_type,
            }
            for t in gateway.resources.templates()
        ],
        "prompts": [prompt_listing(prompt) for prompt in gateway.prompts.prompts()],
        "catalog": catalog_snapshot(gateway.catalog),
    }
    loaded: dict[str, Any] = json.loads(json.dumps(data))  # tuples become lists, as in the file
    return loaded


def prompt_listing(prompt: Prompt) -> dict[str, Any]:
    """One prompt as prompts/list shows it (MCP's camelCase keys)."""
    return {
        "name": prompt.name,
        "title": prompt.title,
        "description": prompt.description,
        "arguments": [
            {"name": argument.name, "description": argument.description, "required": argument.required}
            for argument in prompt.arguments
        ],
    }


def tool_listing(spec: ToolSpec) -> dict[str, Any]:
    """One tool as tools/list shows it (MCP's camelCase keys), schema keys sorted so the file is stable."""
    data: dict[str, Any] = {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": _sorted(spec.input_schema),
    }
    if spec.output_schema is not None:
        data["outputSchema"] = _sorted(spec.output_schema)
    data["annotations"] = {
        "title": spec.title,
        "readOnlyHint": spec.read_only,
        "destructiveHint": spec.destructive,
        "idempotentHint": spec.idempotent,
        "openWorldHint": spec.open_world,
    }
    return data


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _sorted(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [_sorted(item) for item in value]
    return value


def load_snapshot(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The surface snapshot in the file at `path`, None when there is no file; ConfigError when it is not one."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return _parse(text, Path(path))


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ConfigError(
            f"{str(path)!r} is not JSON ({error}); fix the merge, or regenerate it: run the same "
            "`mcp-gateway snapshot check` with --update"
        ) from None
    if isinstance(data, dict) and "modules" in data and "tools" not in data:
        raise ConfigError(
            f"{str(path)!r} is a catalog snapshot (`mcp-gateway catalog snapshot`), not a gateway surface snapshot; "
            "regenerate it: run the same `mcp-gateway snapshot check` with --update"
        )
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("tools"), list)
        or not isinstance(data.get("catalog"), dict)
    ):
        raise ConfigError(
            f"{str(path)!r} is not a gateway surface snapshot (no 'tools' list and 'catalog' object); "
            "regenerate it: run the same `mcp-gateway snapshot check` with --update"
        )
    return data


def check_snapshot(gateway: Served, path: str | os.PathLike[str], *, update: bool = False) -> SnapshotCheck:
    """Compare `gateway`'s surface with the snapshot file at `path`; with `update`, rewrite the file when it differs.

    Raises ConfigError when the file exists but is not a surface snapshot (unless `update`, which replaces it).
    """
    target = Path(path)
    current = gateway_snapshot(gateway)
    text = dump_snapshot(current)
    try:
        committed_text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        committed_text = ""
        missing = True
    else:
        missing = False
    committed: dict[str, Any] | None = None
    if not missing:
        try:
            committed = _parse(committed_text, target)
        except ConfigError:
            if not update:
                raise
    diff = diff_snapshots(committed, current) if committed is not None else SnapshotDiff()
    updated = False
    if update and committed_text != text:
        _write(target, text)
        updated = True
    return SnapshotCheck(
        path=target, diff=diff, current=current, committed_text=committed_text, missing=missing, updated=updated
    )


def _write(path: Path, text: str) -> None:
    """Replace the file in one step, so an interrupted update never leaves half a snapshot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
