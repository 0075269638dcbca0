"""Tools as clients see them (`ToolSpec`) and what a tool call answers (`ToolResult` and its content blocks).

Plain frozen dataclasses with no MCP SDK types in them, so the tools can be built, listed and called
in-process (`McpEndpoint.call_tool`) exactly as a client sees them over MCP.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import jsonschema

from catalog.naming import is_valid_tool_name
from gateway.errors import ConfigError
from gateway.validators import validator_for

__all__ = [
    "Content",
    "EmbeddedResource",
    "ImageContent",
    "TextContent",
    "ToolResult",
    "ToolSpec",
]


def _check_schema(tool: str, field_name: str, schema: object) -> None:
    """Refuse a schema that is not a JSON Schema object with `type: object` at its root."""
    if not isinstance(schema, dict):
        raise ConfigError(f"tool {tool!r}: {field_name} must be a JSON Schema object (a dict), got {schema!r}")
    # MCP 2025-11-25 server/tools: inputSchema and outputSchema MUST have type "object" at the root.
    if schema.get("type") != "object":
        raise ConfigError(
            f"tool {tool!r}: {field_name} must have 'type': 'object' at its root, got {schema.get('type')!r}; "
            "wrap other values in an object property"
        )
    try:
        validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as error:
        raise ConfigError(f"tool {tool!r}: {field_name} is not a valid JSON Schema: {error.message}") from None
    try:
        json.dumps(schema)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"tool {tool!r}: {field_name} is not JSON-serializable: {error}") from None


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """One tool as clients see it in tools/list; every annotation is explicit, never left to MCP's defaults.

    OpenAI's app review rejects tools whose hints are missing, so all four hints and the title are required.
    `input_schema` and `output_schema` are JSON Schema 2020-12 objects with `type: object` at the root; they
    are treated as immutable once given. A tool with an `output_schema` must answer every successful call
    with `structured` content (MCP 2025-06-18 server/tools: structured content MUST conform to it). `meta` is the
    tool's `_meta`, shown only to clients that render MCP Apps: `{"ui": {"resourceUri": "ui://..."}}` links the view
    a host renders its results in, `{"ui": {"visibility": ["app"]}}` marks a tool only an app may call.
    """

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    meta: Mapping[str, Any] | None = None

    @functools.cached_property
    def app_only(self) -> bool:
        """Whether only an app (MCP Apps), never the model, calls this tool: `_meta.ui.visibility` is `["app"]`
        (read once: every tools/call asks)."""
        ui = self.meta.get("ui") if self.meta is not None else None
        visibility = ui.get("visibility") if isinstance(ui, Mapping) else None
        return isinstance(visibility, list | tuple) and list(visibility) == ["app"]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not is_valid_tool_name(self.name):
            raise ConfigError(f"tool name {self.name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$ (letters, digits, _ and -)")
        if not self.title.strip():
            raise ConfigError(f"tool {self.name!r}: title must not be empty; clients show it to people")
        if not self.description.strip():
            raise ConfigError(f"tool {self.name!r}: description must not be empty; agents choose tools by it")
        for hint in ("read_only", "destructive", "idempotent", "open_world"):
            if not isinstance(getattr(self, hint), bool):
                raise ConfigError(f"tool {self.name!r}: {hint} must be True or False, got {getattr(self, hint)!r}")
        _check_schema(self.name, "input_schema", self.input_schema)
        if self.output_schema is not None:
            _check_schema(self.name, "output_schema", self.output_schema)
        ui = self.meta.get("ui") if self.meta is not None else None
        if isinstance(ui, Mapping) and not str(ui.get("resourceUri", "ui://")).startswith("ui://"):
            # MCP Apps: a view is a ui:// resource; hosts render nothing else.
            raise ConfigError(f"tool {self.name!r}: _meta.ui.resourceUri must be ui://..., got {ui['resourceUri']!r}")


@dataclass(frozen=True, kw_only=True)
class TextContent:
    """Text for the agent."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ImageContent:
    """An image; `data` is the raw bytes (the transport base64-encodes them)."""

    data: bytes
    mime_type: str


@dataclass(frozen=True, kw_only=True)
class EmbeddedResource:
    """Binary content that is not an image, embedded as a blob resource identified by `uri`."""

    blob: bytes
    mime_type: str
    uri: str


Content: TypeAlias = TextContent | ImageContent | EmbeddedResource
"""One content block of a tool result."""


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a tool call answers: content blocks, optional structured content, and whether it failed.

    `is_error` marks a failure the agent can act on (MCP's `isError`); protocol failures such as an unknown
    tool are not results but errors. `meta` is the result's `_meta`, which a client hands its app but not the
    model.
    """

    content: tuple[Content, ...]
    structured: dict[str, Any] | None = None
    is_error: bool = False
    meta: dict[str, Any] | None = None

    @classmethod
    def text(cls, text: str, *, structured: dict[str, Any] | None = None) -> ToolResult:
        """A successful result of one text block."""
        return cls(content=(TextContent(text=text),), structured=structured)

    @classmethod
    def error(cls, text: str) -> ToolResult:
        """A failed result whose text tells the agent what went wrong and what to do next."""
        return cls(content=(TextContent(text=text),), is_error=True)

    @property
    def texts(self) -> tuple[str, ...]:
        """The text of every text block, in order."""
        return tuple(block.text for block in self.content if isinstance(block, TextContent))
