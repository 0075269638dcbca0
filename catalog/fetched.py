"""The seam through which the catalog reads other documents: a `fetch` callable that its caller supplies.

The catalog opens no connection itself, as the sandbox is handed a `call` callback: `load_document` and the
ref bundler ask `fetch(uri, loading)` for the bytes at a `file:` or `http(s):` URI. The default, `read_file`,
reads local files only; the gateway's `fetch_document` adds http(s) with its HTTP client and a deadline.

Every fetch of one load goes through one `Fetching`, which holds what a document's refs may read wherever the
bytes come from: at most `FetchLimits.documents` distinct documents, all within `FetchLimits.seconds`, and a
local file only inside the root document's folder (or below it). `Loading` tells the fetch the root and the
deadline, so that a URL fetch can end at the load's deadline and tell the root's origin from others (the
gateway's fetch lets refs and redirects reach the root's origin or public addresses only).
"""

from __future__ import annotations

import errno
import math
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from catalog.errors import CatalogConfigError, DocumentError, FetchLimitError

__all__ = [
    "MAX_BYTES",
    "Fetch",
    "FetchLimits",
    "Fetched",
    "Fetching",
    "Loading",
    "looks_like_html",
    "read_file",
    "read_regular_file",
    "uri_path",
]

#: Largest document a fetch returns, from a file or a URL.
MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """What a fetch found: the document's bytes and, when the source said, its media type ('application/json')."""

    content: bytes
    media_type: str | None = None


@dataclass(frozen=True, kw_only=True)
class FetchLimits:
    """How much loading one document may fetch: the document and every file or URL its refs name, together.

    `seconds` bounds the time all their fetches take (each URL also has its fetch's own timeout); `documents`
    bounds how many distinct ones are fetched. DigitalOcean's multi-file document reads 2,849 files in about 2 s.
    """

    seconds: float = 600.0
    documents: int = 10_000

    def __post_init__(self) -> None:
        if isinstance(self.seconds, bool) or not isinstance(self.seconds, int | float) or not self.seconds > 0:
            raise CatalogConfigError(f"FetchLimits.seconds must be a positive number, got {self.seconds!r}")
        if isinstance(self.documents, bool) or not isinstance(self.documents, int) or self.documents < 1:
            raise CatalogConfigError(
                f"FetchLimits.documents must be a whole number of at least 1, got {self.documents!r}"
            )


@dataclass(frozen=True, kw_only=True)
class Loading:
    """The load a fetch serves: its root document's URI ("" when it has none) and the `time.monotonic()` by
    which all of its fetches must have ended (`limit` seconds after it began)."""

    root: str
    deadline: float = math.inf
    limit: float = math.inf

    def overtime(self) -> FetchLimitError:
        """The error for a load that went past its deadline."""
        return FetchLimitError(
            f"loading {_shown(self.root)} and the documents its refs name took longer than {self.limit:g} s, the "
            "most one load may fetch for; bundle the document into one file (e.g. `npx @redocly/cli bundle`) and "
            "load that, or pass load_document a larger FetchLimits(seconds=...)",
            location=_shown(self.root),
        )


#: Reads the document at a URI for the load `loading`; raises DocumentError (with the URI as location) saying why
#: it cannot. A fetch that cannot end by `loading.deadline` raises `loading.overtime()`.
Fetch = Callable[[str, Loading], Fetched]


class Fetching:
    """The fetches of one load: each URI through `fetch`, once `limits` and the rule for local files allow it.

    A `file:` URI is read only when the root document is a local file too and the file lies in the root's
    folder or below it (symbolic links resolved first), so that a document cannot show its readers
    `../../etc/passwd`. FetchLimitError past the deadline or the number of documents; DocumentError for a
    file outside the folder.
    """

    def __init__(
        self,
        fetch: Fetch,
        *,
        root: str,
        limits: FetchLimits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fetch = fetch
        self.limits = limits
        self.clock = clock
        self.loading = Loading(root=root, deadline=clock() + limits.seconds, limit=limits.seconds)
        self.fetched: set[str] = set()
        self._folder: Path | None = None

    def __call__(self, uri: str) -> Fetched:
        if self.clock() > self.loading.deadline:
            raise self.loading.overtime()
        if uri not in self.fetched and len(self.fetched) >= self.limits.documents:
            raise FetchLimitError(
                f"loading {_shown(self.loading.root)} would fetch more than {self.limits.documents:,} documents "
                "(the files and URLs its refs name), the most one load may fetch; bundle the document into one "
                "file (e.g. `npx @redocly/cli bundle`) and load that, or pass load_document a larger "
                "FetchLimits(documents=...)",
                location=_shown(self.loading.root),
            )
        if urlsplit(uri).scheme == "file":
            self._check_inside_folder(uri)
        self.fetched.add(uri)
        return self.fetch(uri, self.loading)

    def _check_inside_folder(self, uri: str) -> None:
        """DocumentError unless the file `uri` names lies in the root document's folder or below it."""
        if urlsplit(self.loading.root).scheme != "file":
            raise DocumentError(
                f"{uri!r} is a local file, and only a document read from a local file may read files through "
                "its refs; download the document with its files and load it from there",
                location=uri,
            )
        if self._folder is None:
            self._folder = Path(os.path.realpath(Path(uri_path(self.loading.root)).parent))
        path = uri_path(uri)
        if not Path(os.path.realpath(path)).is_relative_to(self._folder):
            raise DocumentError(
                f"{path!r} is outside {str(self._folder)!r}, the folder of the document, and a document's refs "
                "read only files in its folder and below it; copy the file there, or bundle the document into "
                "one file (e.g. `npx @redocly/cli bundle`) and load that",
                location=path,
            )


def _shown(uri: str) -> str:
    """A root URI as messages name it: a local path, a URL, or '<document>' when there is none."""
    if not uri:
        return "<document>"
    return uri_path(uri) if urlsplit(uri).scheme == "file" else uri


def uri_path(uri: str) -> str:
    """The local path a `file:` URI names."""
    path = unquote(urlsplit(uri).path)
    if os.name == "nt":  # pragma: no cover - file:///C:/x is C:\x
        from nturl2path import url2pathname

        return url2pathname(urlsplit(uri).path)
    return path


def read_file(uri: str, loading: Loading | None = None) -> Fetched:
    """The default fetch: the bytes of a `file:` URI; any other scheme is refused with what to pass instead.

    `loading` is not needed: a regular file of at most MAX_BYTES is read at once, and `Fetching` has already
    checked that the load may read it.
    """
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
