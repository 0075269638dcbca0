"""Names an agent reads: snake_case modules and functions, MCP tool names, and path-based grouping."""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "TOOL_NAME_PATTERN",
    "clean_operation_id",
    "function_name_from_route",
    "is_valid_tool_name",
    "path_resource",
    "path_resources",
    "snake_case",
    "split_words",
    "tool_name",
]

#: claude.ai hides every tool of a server when one name fails this, and the LLM APIs enforce it too.
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^0-9a-zA-Z]+")
_VERSION_SEGMENT = re.compile(r"^(v\d+(\.\d+)*([a-z]+\d*)?|\d{4}-\d{2}-\d{2}|\d+(\.\d+)*)$", re.IGNORECASE)
_NOISE_SEGMENTS = frozenset({"api", "apis", "rest", "public", "latest"})
_PATH_PARAM = re.compile(r"^\{[^}]*\}$")
_PATH_WORDS = re.compile(r"[^0-9A-Za-z]+")
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def split_words(text: str) -> list[str]:
    """Split an identifier or phrase into lower-case words at camelCase, digits-to-letters and punctuation."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    spaced = _CAMEL_BOUNDARY.sub(" ", ascii_text)
    return [word.lower() for word in _NON_WORD.split(spaced) if word]


def snake_case(text: str) -> str:
    """The snake_case form of an identifier: `listPullRequests`, `list-pull-requests` → `list_pull_requests`.

    Never empty: text without any letter or digit becomes `unnamed`; a leading digit gets an `n` prefix so the
    result is a valid identifier in every language an agent may write.
    """
    name = "_".join(split_words(text))
    if not name:
        return "unnamed"
    if name[0].isdigit():
        name = f"n{name}"
    return name


def clean_operation_id(operation_id: str, *, method: str, path: str) -> str:
    """Strip the route suffix FastAPI appends to generated operationIds: `read_item_items__item_id__get` → `read_item`.

    FastAPI builds `{route name}{path with non-word characters as _}_{method}`. Its shapes vary: a route for
    several methods carries the first method's name on each, a sub-app's mount path may be in the documented
    path but not in the id, and custom id functions collapse `__`. So the id's words are compared with the
    path's: the trailing HTTP method and the path words the id ends with go (all of them, or at least two
    when the path has more in front), as long as a route name stays; anything else passes unchanged.
    """
    words = operation_id.split("_")
    if len(words) < 3 or words[-1].lower() not in _METHODS:
        return operation_id
    body = words[:-1]
    path_words = [word for word in _PATH_WORDS.split(path) if word]
    if not path_words:
        # The root path: `read_root__get`.
        name = "_".join(body).strip("_")
        return name if body[-1] == "" and any(ch.isalpha() for ch in name) else operation_id
    # Drop the path's words from the end of the id, matching the path from its end (empty words are the `__`
    # FastAPI writes for `/{`, which may or may not be there).
    index = len(body)
    remaining = list(path_words)
    while remaining and index > 0:
        if body[index - 1] == "":
            index -= 1
            continue
        if body[index - 1] != remaining[-1]:
            break
        remaining.pop()
        index -= 1
    matched = len(path_words) - len(remaining)
    if matched == 0 or (remaining and matched < 2):
        return operation_id
    name = "_".join(body[:index]).strip("_")
    return name if name and any(ch.isalpha() for ch in name) else operation_id


def function_name_from_route(method: str, path: str) -> str:
    """A name for an operation without operationId, from method and path: `GET /pets/{id}` → `get_pets_by_id`."""
    words: list[str] = [method.lower()]
    for segment in _meaningful_segments(path):
        if _PATH_PARAM.match(segment):
            words.append("by_" + snake_case(segment[1:-1]))
        else:
            words.append(snake_case(segment))
    return "_".join(words)


def path_resource(path: str) -> str | None:
    """The first meaningful static segment of a path, snake_case (`/api/v2/customers/{id}` → `customers`), or None."""
    for segment in _meaningful_segments(path):
        if not _PATH_PARAM.match(segment):
            return snake_case(segment)
    return None


def path_resources(path: str) -> list[str]:
    """Every static segment that names a resource, in order: `/v1/customers/{c}/sources/{id}` → customers, sources."""
    return [snake_case(segment) for segment in _meaningful_segments(path) if not _PATH_PARAM.match(segment)]


def tool_name(function_name: str) -> str:
    """The MCP tool name of a catalog function: `orders.create` → `orders-create` (names have no hyphen)."""
    return function_name.replace(".", "-")


def is_valid_tool_name(name: str) -> bool:
    """True when `name` satisfies ^[a-zA-Z0-9_-]{1,64}$."""
    return TOOL_NAME_PATTERN.match(name) is not None


def _meaningful_segments(path: str) -> list[str]:
    segments = [segment for segment in path.split("/") if segment]
    kept: list[str] = []
    for segment in segments:
        if not kept and (segment.lower() in _NOISE_SEGMENTS or _VERSION_SEGMENT.match(segment)):
            continue
        # Twilio-style `Accounts.json`: the extension is a format, not part of the name.
        kept.append(re.sub(r"\.(json|xml|yaml|csv)$", "", segment, flags=re.IGNORECASE))
    return kept
