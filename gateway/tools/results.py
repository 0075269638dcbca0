"""Turn a REST response into what the agent reads: text, structured content, images, resources, or errors."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from catalog.model import Function
from gateway.mcp.toolspec import Content, EmbeddedResource, ImageContent, TextContent, ToolResult
from gateway.rest.request import HttpResponse
from gateway.tools._compact import compact_text

__all__ = ["cap_lines", "cap_text", "fit_texts", "response_result", "value_result"]

#: Argument names that narrow a listing; the cut hint names those the function has.
_NARROWING = ("limit", "per_page", "page_size", "size", "max_results", "top", "page", "cursor", "offset", "fields")
_STATUS_HINTS = {
    400: "Fix the arguments; describe_function shows the signature.",
    401: "The API rejected the credentials the gateway sent for this caller: check the token (over HTTP the MCP "
    "client's Authorization: Bearer ...; over stdio MCP_GATEWAY_TOKEN).",
    403: "The caller's credentials lack permission for this function.",
    404: "Nothing found there: check the ids (search_functions finds functions that list them).",
    405: "The API does not allow this method here.",
    409: "The request conflicts with the current state; read the resource again before retrying.",
    422: "Fix the arguments named in the body; describe_function shows the signature.",
    429: "Rate limited: wait before retrying.",
}

#: For a call during which the app itself failed (an exception in its code): not the gateway's fault, not transient.
_RAISED_HINT = (
    "The API's own code failed on this call (the gateway relayed its answer); the same call will likely fail "
    "again, so try other arguments or another function, or report it to the API's operator."
)


def response_result(
    function: Function,
    response: HttpResponse,
    *,
    max_output_bytes: int,
    scripts: bool = False,
    credential_hint: str = "",
    compact: bool = False,
) -> ToolResult:
    """The tool result for a REST response: an error result for 4xx/5xx, else content by media type.

    `credential_hint` replaces the general advice on an error status (where this caller's credentials come from;
    `RestContext.refusal_hint` says for which statuses).
    """
    media = response.content_type
    if response.status >= 400:
        return _error(function, response, max_output_bytes, credential_hint)
    location = response.headers.get("location")
    if 300 <= response.status < 400 and location:
        # A download link (GitHub's archives) or a moved resource: the gateway does not follow it, the agent may.
        return ToolResult.text(
            cap_text(f"HTTP {response.status} {response.reason}: the answer is at {location} (not followed).", 4096)
        )
    if not response.body:
        return ToolResult.text(f"HTTP {response.status} {response.reason}: done, no content.")
    if response.is_json:
        try:
            return value_result(
                function, response.json(), max_output_bytes=max_output_bytes, scripts=scripts, compact=compact
            )
        except ValueError:
            return ToolResult.text(cap_text(response.text, max_output_bytes, function, scripts=scripts))
    if media.startswith("text/") or media in ("application/xml", "application/yaml", "application/x-yaml"):
        return ToolResult.text(cap_text(response.text, max_output_bytes, function, scripts=scripts))
    if len(response.body) > max_output_bytes * 4:
        return ToolResult.error(
            f"{function.name} returned {len(response.body)} bytes of {media or 'binary data'}, over the "
            f"{max_output_bytes * 4}-byte limit for binary results; ask for a smaller variant if the function has one."
        )
    if media.startswith("image/"):
        return ToolResult(content=(ImageContent(data=response.body, mime_type=media),))
    uri = f"rest://{function.module}/{function.function_name}"
    return ToolResult(
        content=(EmbeddedResource(blob=response.body, mime_type=media or "application/octet-stream", uri=uri),)
    )


def value_result(
    function: Function, value: Any, *, max_output_bytes: int, scripts: bool = False, compact: bool = False
) -> ToolResult:
    """A JSON value as compact text, with `structured` content when it is an object that fits and nests little.

    With `compact`, the text is the table encoding of `gateway.tools._compact` where that is at least 20% shorter.
    """
    text = compact_text(value) if compact else None
    as_json = ""
    if text is None:
        text = as_json = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    capped = cap_text(text, max_output_bytes, function, scripts=scripts)
    structured = (
        value if isinstance(value, dict) and capped is text and _nests_within(value, _MAX_NESTING, as_json) else None
    )
    return ToolResult(content=(TextContent(text=capped),), structured=structured)


#: The deepest value sent as structured content: the SDK's serializer refuses past about 250 levels, which would
#: fail the whole MCP response; deeper values go as text only.
_MAX_NESTING = 100


def _nests_within(value: Any, limit: int, text: str = "") -> bool:
    """True when `value` has at most `limit` levels of objects and arrays; `text`, its JSON when at hand, settles
    most values at once: fewer brackets in it than `limit` leave no room for more levels."""
    if text and text.count("{") + text.count("[") <= limit:
        return True
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return False
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True


def cap_text(text: str, max_output_bytes: int, function: Function | None = None, *, scripts: bool = False) -> str:
    """`text` cut to `max_output_bytes` (UTF-8) with a hint on how to narrow the request; unchanged when it fits.

    The hint offers run_script only when `scripts` says it is served.
    """
    if len(text) * 4 <= max_output_bytes:  # UTF-8 takes at most 4 bytes a character
        return text
    encoded = text.encode()
    if len(encoded) <= max_output_bytes:
        return text
    narrowing = [arg.name for arg in function.args if arg.name in _NARROWING] if function is not None else []
    if narrowing:
        how = f"pass {', '.join(narrowing)} to get less"
    elif scripts:
        how = "filter with the function's arguments, or use run_script to extract only what you need"
    else:
        how = "filter with the function's arguments to get less"
    note = f"\n… [cut: the result is {len(encoded)} bytes, over the {max_output_bytes}-byte limit; {how}]"
    room = max(max_output_bytes - len(note.encode()), 0)
    return encoded[:room].decode("utf-8", "ignore") + note


def cap_lines(text: str, max_output_bytes: int, how: str, *, unit: str = "lines", left_out: str = "") -> str:
    """`text` cut after the last whole line that fits in `max_output_bytes` (UTF-8), with a note; unchanged if it fits.

    The note says how much was left out and `how` to narrow; `left_out` (names of what was cut, say) goes in it
    too when there is room.
    """
    encoded = text.encode()
    if len(encoded) <= max_output_bytes:
        return text
    lines = text.split("\n")

    def note(shown: int) -> str:
        named = f" ({left_out})" if left_out else ""
        return (
            f"\n… [cut: {shown} of {len(lines)} {unit} shown{named}; the whole answer is {len(encoded)} bytes, "
            f"over the {max_output_bytes}-byte limit; {how}]"
        )

    if len(note(len(lines)).encode()) > max_output_bytes // 2:
        left_out = ""  # the names would crowd out the answer itself
    room = max_output_bytes - len(note(len(lines)).encode())
    kept: list[str] = []
    size = 0
    for line in lines:
        size += len(line.encode()) + 1
        if size > room:
            break
        kept.append(line)
    if not kept:  # one line longer than the limit: a part of it
        return encoded[: max(room, 0)].decode("utf-8", "ignore") + note(0)
    return "\n".join(kept) + note(len(kept))


def fit_texts(result: ToolResult, max_output_bytes: int) -> ToolResult:
    """`result` with its text blocks cut to fit `max_output_bytes` together: the net under every tool."""
    total = sum(len(text.encode()) for text in result.texts)
    if total <= max_output_bytes:
        return result
    budget = max_output_bytes
    blocks: list[Content] = []
    for block in result.content:
        if isinstance(block, TextContent):
            if budget < _MIN_BLOCK:
                continue  # an earlier block used the limit up, and said it was cut
            cut = cap_text(block.text, budget)
            budget -= len(cut.encode())
            blocks.append(TextContent(text=cut))
        else:
            blocks.append(block)
    # Structured content is the whole answer, which no longer fits: the text alone says what was cut.
    return replace(result, content=tuple(blocks), structured=None)


#: The least room worth giving a text block after earlier ones: enough for the cut note.
_MIN_BLOCK = 256


def _error(function: Function, response: HttpResponse, max_output_bytes: int, credential_hint: str) -> ToolResult:
    body = response.body.decode("utf-8", "replace").strip()
    if response.raised:
        hint = _RAISED_HINT
    elif credential_hint:
        hint = credential_hint
    else:
        hint = _STATUS_HINTS.get(response.status, "The API failed; retry later." if response.status >= 500 else "")
    route = f"{function.method} {function.path}"
    text = f"HTTP {response.status} {response.reason} from {function.name} ({route})."
    if hint:
        text += f" {hint}"
    if body:
        text += f"\n{body}"
    return ToolResult.error(cap_text(text, max_output_bytes, None))
