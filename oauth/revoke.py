"""The revocation endpoint (RFC 7009): a client revokes a token, and with it the token's whole grant."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from oauth._http import NO_STORE, client_address, error_response, read_form
from oauth.clients import ClientRegistry
from oauth.errors import ProtocolError
from oauth.events import Events
from oauth.grants import Grants

__all__ = ["RevocationEndpoint"]


class RevocationEndpoint:
    """POST /revoke: 200 whether or not the token was known (RFC 7009 §2.2), 401 for an unknown client."""

    def __init__(self, clients: ClientRegistry, grants: Grants, events: Events | None = None) -> None:
        self.clients = clients
        self.grants = grants
        self.events = events or Events()

    async def __call__(self, request: Request) -> Response:
        """Revoke the token the form names."""
        authorization = request.headers.get("authorization")
        try:
            form = await read_form(request)
            address = client_address(request, self.clients.config.proxy_networks)
            client = await self.clients.authenticate(form, authorization, address=address)
            token = form.get("token")
            if not token:
                raise ProtocolError("invalid_request", "the token parameter is missing")
            await self.grants.revoke(token, client)
        except ProtocolError as error:
            self.events.refusal("revoke", error.code)
            return error_response(error, basic_challenge=authorization is not None)
        return Response(status_code=200, headers=NO_STORE)
