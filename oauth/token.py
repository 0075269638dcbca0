"""The token endpoint (OAuth 2.1 §3.2): authorization codes and refresh tokens become access tokens."""

from __future__ import annotations

import logging
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from oauth._http import client_address, error_response, json_response, read_form
from oauth.clients import ClientRegistry
from oauth.errors import ProtocolError
from oauth.events import Events
from oauth.grants import Grants

__all__ = ["TokenEndpoint"]

logger = logging.getLogger(__name__)


#: The parameters each grant type cannot do without (code_verifier is PKCE's: its absence is `invalid_grant`).
_REQUIRED: Final[dict[str, tuple[str, ...]]] = {"authorization_code": ("code",), "refresh_token": ("refresh_token",)}


class TokenEndpoint:
    """POST /token: `authorization_code` (with PKCE) and `refresh_token` (rotating) grants."""

    def __init__(self, clients: ClientRegistry, grants: Grants, events: Events | None = None) -> None:
        self.clients = clients
        self.grants = grants
        self.events = events or Events()

    async def __call__(self, request: Request) -> Response:
        """Answer one token request with tokens or an RFC 6749 §5.2 error, never cached."""
        authorization = request.headers.get("authorization")
        try:
            form = await read_form(request)
            address = client_address(request, self.clients.config.proxy_networks)
            client = await self.clients.authenticate(form, authorization, address=address)
            grant_type = form.get("grant_type")
            # RFC 6749 §5.2: a missing parameter is an invalid request, whatever its value would have been.
            if not grant_type:
                raise ProtocolError("invalid_request", "the token request has no grant_type; send authorization_code")
            missing = [name for name in _REQUIRED.get(grant_type, ()) if not form.get(name)]
            if missing:
                raise ProtocolError("invalid_request", f"the token request has no {missing[0]}")
            if grant_type == "authorization_code":
                tokens = await self.grants.exchange_code(
                    code=form["code"],
                    client=client,
                    redirect_uri=form.get("redirect_uri"),
                    code_verifier=form.get("code_verifier"),
                    resource=form.get("resource"),
                )
            elif grant_type == "refresh_token":
                tokens = await self.grants.refresh(
                    refresh_token=form["refresh_token"],
                    client=client,
                    scope=form.get("scope"),
                    resource=form.get("resource"),
                )
            else:
                raise ProtocolError(
                    "unsupported_grant_type",
                    f"grant_type {grant_type!r} is not supported; use authorization_code or refresh_token",
                )
        except ProtocolError as error:
            self.events.refusal("token", error.code)
            return error_response(error, basic_challenge=authorization is not None)
        await self.clients.mark_used(client)
        return json_response(tokens)
