"""Where calls go when the operator names no upstream: the document's first absolute server URL, within limits.

Every call carries its caller's credentials, so a document (perhaps fetched from a URL someone else controls)
may not send them over plain http to another machine; one fetched from a URL that names another host for its
API is allowed (GitHub's document is on raw.githubusercontent.com, its API on api.github.com), with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from urllib.parse import urlsplit

from catalog.servers import first_absolute_server
from gateway.errors import ConfigError
from gateway.rest.transports.upstream import plain_http_away, shown_url

__all__ = ["document_upstream"]

logger = logging.getLogger("gateway")


def document_upstream(servers: Sequence[str], document_url: str | None) -> str | None:
    """The document's first absolute server URL (`servers` as the catalog resolved them), None when it has none.

    ConfigError when that URL is plain http to a host other than this machine; a warning naming both hosts when
    the document was fetched from `document_url` and the URL is on another host.
    """
    upstream = first_absolute_server(servers)
    if upstream is None:
        return None
    shown = shown_url(upstream)
    host = urlsplit(upstream).hostname or ""
    if plain_http_away(upstream):
        raise ConfigError(
            f"the document's first server URL {shown} is plain http to {host}, another machine: every caller's "
            "credentials would go there unencrypted, to a host the document chose. If that is really where the "
            f"API lives, name it yourself: --upstream {shown} (Gateway(upstream={shown!r}) in Python), or its "
            "https URL"
        )
    fetched_from = urlsplit(document_url).hostname if document_url else None
    if fetched_from and fetched_from != host:
        logger.warning(
            "the API's document came from %s, and its first server URL sends every call, with the caller's "
            "credentials, to %s: if that is not the API's host, name the right one with --upstream (upstream= in "
            "Python); naming it also silences this",
            fetched_from,
            host,
        )
    logger.info("calls go to %s, the document's first server URL (--upstream names another)", shown)
    return upstream
