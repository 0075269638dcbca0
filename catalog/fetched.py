"""The seam through which the catalog reads other documents: a `fetch` callable that its caller supplies.

The catalog opens no connection itself, as the sandbox is handed a `call` callback: `load_document` and the
ref bundler ask `fetch(uri)` for the bytes at a `file:` or `http(s):` URI. The default, `read_file`, reads
local files only; the gateway's `fetch_document` adds http(s) with its HTTP client and a deadline.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from catalog.errors import DocumentError

__all__ = ["MAX_BYTES", "Fetch", "Fetched", "looks_like_html", "read_file", "read_regular_file", "uri_path"]

#: Largest document a fetch returns, from a file or a URL.
MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """What a fetch found: the document's bytes and, when the source said, its media type ('application/json')."""

    content: bytes
    media_type: str | None = None


#: Reads the document at a URI; raises DocumentError (with the URI as location) saying why it cannot.
Fetch = Callable[[str], Fetched]


def uri_path(uri: str) -> str:
    """The local path a `file:` URI names."""
    path = unquote(urlsplit(uri).path)
    if os.name == "nt":  # pragma: no cover - file:///C:/x is C:\x
        from nturl2path import url2pathname

        return url2pathname(urlsplit(uri).path)
    return path


def read_file(uri: str) -> Fetched:
    """The default fetch: the bytes of a `file:` URI; any other scheme is refused with what to pass instead."""
    if urlsplit(uri).scheme != "file":
        raise DocumentError(
            f"cannot fetch {uri!r}: the catalog reads only local files by itself; pass fetch= a function that "
            "fetches URLs (gateway.fetch_document does), or download the document and load the file",
            location=uri,
        )
    path = Path(uri_path(uri))
    try:
        return Fetched(content=read_regular_file(path))
    except FileNotFoundError:
        raise DocumentError(f"file {str(path)!r} does not exist; check the path", location=str(path)) from None
    except OSError as exc:
        raise DocumentError(f"cannot read {str(path)!r}: {exc.strerror}", location=str(path)) from None


def read_regular_file(path: Path) -> bytes:
    """The bytes of the regular file at `path`; DocumentError for a device, pipe or socket, or past MAX_BYTES.

    OSError as `open` raises it (IsADirectoryError for a directory). A pipe is opened without waiting for a
    writer, so that neither /dev/zero nor a FIFO can hold or fill the process.
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise DocumentError(
                f"{str(path)!r} is not a regular file (a device, pipe or socket); a document and the files its refs "
                "name must be regular files",
                location=str(path),
            )
        content = file.read(MAX_BYTES + 1)
    if len(content) > MAX_BYTES:
        raise DocumentError(
            f"{str(path)!r} is larger than {MAX_BYTES // (1024 * 1024)} MiB, the most one document file may hold",
            location=str(path),
        )
    return content


def looks_like_html(fetched: Fetched) -> bool:
    """Whether the fetched bytes are a web page rather than a document (by media type, else by their start)."""
    media = (fetched.media_type or "").split(";")[0].strip().lower()
    if media in ("text/html", "application/xhtml+xml"):
        return True
    start = fetched.content[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return start.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))
