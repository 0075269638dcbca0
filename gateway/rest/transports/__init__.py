"""Where the gateway's REST calls go, chosen once when the gateway is made: the app in-process, or upstream.

Both take a `RestRequest` and the caller's `RestContext` and answer an `HttpResponse`; see `Transport`.
"""

from __future__ import annotations

from gateway.rest.transports.asgi import AsgiTransport
from gateway.rest.transports.base import Transport, outgoing_headers
from gateway.rest.transports.upstream import UpstreamTransport

__all__ = ["AsgiTransport", "Transport", "UpstreamTransport", "outgoing_headers"]
