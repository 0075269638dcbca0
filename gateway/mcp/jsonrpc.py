"""JSON-RPC 2.0 envelopes as the HTTP transport reads them: what one message is, and the protocol errors it sends.

Protocol errors say what was wrong in a sentence and never carry a validator's dump: the client shows the
message to a person, and a dump echoes the request back (JSON-RPC 2.0 §5.1 codes: -32600 for an invalid
request object, a refused batch and an oversized body).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError, RequestId, jsonrpc_message_adapter
from pydantic import ValidationError

__all__ = ["BATCH_VERSIONS", "Envelope", "batch_refusal", "envelope_of", "invalid_request", "too_large"]

BATCH_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26"})
"""The protocol versions whose servers must accept JSON-RPC batches (MCP 2025-03-26 transports: "MUST support
receiving" them); 2025-06-18 removed batching."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """One well-formed JSON-RPC message: a request (`id` set), a notification, or a response to the server."""

    kind: Literal["request", "notification", "response"]
    id: RequestId | None
    method: str
    params: dict[str, Any] | None


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def envelope_of(raw: object) -> Envelope | JSONRPCError:
    """The message `raw` (parsed JSON) is, or the -32600 error naming what makes it none (id echoed if valid)."""
    if not isinstance(raw, dict):
        return invalid_request(f"a JSON-RPC message is a JSON object, not {_json_type(raw)}")
    request_id = raw.get("id")
    echo = request_id if _valid_id(request_id) else None
    if raw.get("jsonrpc") != "2.0":
        return invalid_request('the message must have "jsonrpc": "2.0"', echo)
    if "id" in raw and not _valid_id(request_id):
        return invalid_request('"id" must be a string or an integer', None)
    if "method" in raw:
        method, params = raw["method"], raw.get("params")
        if not isinstance(method, str):
            return invalid_request('"method" must be a string', echo)
        if params is not None and not isinstance(params, dict):
            return invalid_request('"params" must be an object (MCP passes parameters by name)', echo)
        problem = _sdk_problem(raw)
        if problem is not None:
            return invalid_request(problem, echo)
        kind: Literal["request", "notification"] = "request" if "id" in raw else "notification"
        return Envelope(kind=kind, id=echo, method=method, params=params)
    if ("result" in raw) != ("error" in raw) and "id" in raw:
        problem = _sdk_problem(raw)
        if problem is not None:
            return invalid_request(problem, echo)
        return Envelope(kind="response", id=echo, method="", params=None)
    return invalid_request(
        'the message has neither "method" (a request or notification) nor one of "result" and "error" with an '
        '"id" (a response)',
        echo,
    )


def _sdk_problem(raw: dict[str, Any]) -> str | None:
    # What the checks above let through must also be a message to the SDK; whatever else it refuses is named
    # by its field, not dumped.
    try:
        jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValidationError as error:
        fields = sorted({str(detail["loc"][1]) for detail in error.errors() if len(detail["loc"]) > 1})
        named = f" (check {', '.join(repr(name) for name in fields[:5])})" if fields else ""
        return f"the message is not a valid JSON-RPC 2.0 request, notification or response{named}"
    return None


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"


def invalid_request(message: str, request_id: RequestId | None = None) -> JSONRPCError:
    """A -32600 Invalid Request error carrying `message`."""
    return JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {message}")
    )


def batch_refusal(version: str) -> JSONRPCError:
    """The error for a batch sent at a version without batches."""
    return invalid_request(
        f"JSON-RPC batches are not part of MCP {version} (2025-06-18 removed them); send each request in its own "
        "POST, or negotiate 2025-03-26 to batch"
    )


def too_large(limit: int, size: int | None) -> JSONRPCError:
    """The error for a request body over `limit` bytes (`size` when declared up front)."""
    said = f" is {size:,} bytes," if size is not None else " is"
    return invalid_request(
        f"the request body{said} over this server's limit of {limit:,} bytes (max_body_bytes); send less in one "
        "call, e.g. split the work across several calls"
    )
