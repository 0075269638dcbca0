"""The frames the host and a worker process exchange over the worker's stdin and stdout.

A frame is `>II` (header length, payload length), a JSON header object (ASCII), then the payload bytes: the
JSON text of call arguments, of a call's answer or of the script's result, passed through without being
decoded twice. The host never trusts a length a worker sends: `frame_sizes` refuses anything over the caps.
A view names its functions by their place in the init list, one bit each, so a catalog of thousands of
functions takes a few hundred bytes, and a view cannot name a function the worker was not given.

host → worker   init {limits}        + names JSON once, at start-up: every function a run may see
                view {}              + bitmap     the functions the runs see from now on (empty: all of them),
                                                  sent before a run only when its functions differ from the last
                run {timeout}        + source     one script
                reply {id, ok}       + JSON text  the answer to a call (ok) or its error info
worker → host   ready {}                          after init
                call {id, name}      + args JSON
                log {}               + line (UTF-8)
                done {ok, kind, ...} + JSON text  the result, or the error info, of the script
"""

from __future__ import annotations

import json
import struct
from collections.abc import Collection, Mapping, Sequence
from typing import Any

__all__ = ["PREFIX", "ProtocolError", "bitmap", "encode", "frame_sizes", "parse_header", "selection"]

PREFIX = struct.Struct(">II")
MAX_HEADER_BYTES = 64 * 1024


class ProtocolError(Exception):
    """A frame broke the protocol (a length over its cap, a header that is not a JSON object)."""


def encode(header: Mapping[str, Any], payload: bytes = b"") -> bytes:
    """One frame: the prefix, the header as compact ASCII JSON, the payload."""
    head = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return PREFIX.pack(len(head), len(payload)) + head + payload


def frame_sizes(prefix: bytes, *, max_payload: int) -> tuple[int, int]:
    """The header and payload lengths of a frame; ProtocolError when either is over its cap."""
    header_size, payload_size = PREFIX.unpack(prefix)
    if header_size > MAX_HEADER_BYTES or payload_size > max_payload:
        raise ProtocolError(f"frame of {header_size}+{payload_size} bytes is over the cap ({max_payload})")
    return header_size, payload_size


def parse_header(data: bytes) -> dict[str, Any]:
    """The header object; ProtocolError when it is not a JSON object with a string `op`."""
    try:
        header = json.loads(data)
    except ValueError as error:
        raise ProtocolError(f"frame header is not JSON: {error}") from None
    if not isinstance(header, dict) or not isinstance(header.get("op"), str):
        raise ProtocolError("frame header is not an object with an 'op'")
    return header


def bitmap(functions: Sequence[str], chosen: Collection[str]) -> bytes:
    """The `view` payload that selects `chosen` out of `functions` (the init list): bit i of byte i // 8, least
    significant first, is set when function i is chosen."""
    bits = bytearray((len(functions) + 7) // 8)
    for index, name in enumerate(functions):
        if name in chosen:
            bits[index >> 3] |= 1 << (index & 7)
    return bytes(bits)


def selection(functions: Sequence[str], bits: bytes) -> tuple[str, ...] | None:
    """The functions a `view` payload selects out of `functions`, in their order; None (all of them) for an
    empty payload. ProtocolError for a payload of the wrong length: the two sides disagree on the list."""
    if not bits:
        return None
    if len(bits) != (len(functions) + 7) // 8:
        raise ProtocolError(f"a view of {len(bits)} bytes for {len(functions)} functions")
    return tuple(name for index, name in enumerate(functions) if bits[index >> 3] >> (index & 7) & 1)
