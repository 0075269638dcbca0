"""The dynamic client registration endpoint (RFC 7591): how claude.ai and ChatGPT introduce themselves."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from oauth._http import client_address, error_response, json_response, read_json
from oauth.clients import ClientRegistry
from oauth.errors import ProtocolError
from oauth.events import Events

__all__ = ["RegistrationEndpoint"]


class RegistrationEndpoint:
    """POST /register: 201 with the client information, 400 with an RFC 7591 §3.2.2 error, or 429 / 503
    `temporarily_unavailable` when an address or the server reached its registration limit."""

    def __init__(self, clients: ClientRegistry, events: Events | None = None) -> None:
        self.clients = clients
        self.events = events or Events()

    async def __call__(self, request: Request) -> Response:
        """Register the client the JSON body describes."""
        try:
            address = client_address(request, self.clients.config.proxy_networks)
            metadata = await read_json(request)
            information = await self.clients.register(metadata, address=address)
        except ProtocolError as error:
            self.events.refusal("register", error.code)
            return error_response(error)
        return json_response(information, status=201)
