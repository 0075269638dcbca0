"""The REST API the identity-provider tests put behind the gateway: it accepts only the provider's JWT access
tokens, checked by itself (signature from the provider's keys, issuer, audience, per-operation scopes), and says
in its OpenAPI document which scopes each operation needs. `app` (for `serve --app`) is made from
ORDERS_API_ISSUER and ORDERS_API_AUDIENCE when they are set."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import httpx2
from fastapi import Depends, FastAPI, Header, HTTPException
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

__all__ = ["Api", "orders_api"]


@dataclass
class Api:
    """The REST API behind the gateway: it trusts the provider's access tokens only, and keeps what it was sent."""

    app: FastAPI
    received: list[str] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)


def orders_api(issuer: str, audience: str) -> Api:
    """The orders API for the provider at `issuer`, whose tokens for it carry `aud` `audience`."""
    jwks_uri = httpx2.get(f"{issuer}/.well-known/openid-configuration").json()["jwks_uri"]
    keys = KeySet.import_key_set(httpx2.get(jwks_uri).json())
    app = FastAPI(title="Orders API")
    api = Api(app)

    def token_claims(authorization: str = Header("")) -> dict[str, Any]:
        token = authorization.removeprefix("Bearer ")
        api.received.append(token)
        try:
            claims = dict(jwt.decode(token, keys, algorithms=["RS256", "ES256"]).claims)
            jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": issuer},
                aud={"essential": True, "value": audience},
                exp={"essential": True},
            ).validate(claims)
        except (JoseError, ValueError) as error:
            raise HTTPException(401, f"not a token of the provider for this API: {error}") from None
        api.claims.append(claims)
        return claims

    def scoped(scope: str) -> Any:
        def check(claims: dict[str, Any] = Depends(token_claims)) -> dict[str, Any]:  # noqa: B008
            if scope not in str(claims.get("scope", "")).split():
                raise HTTPException(403, f"the token lacks the scope {scope}")
            return claims

        return check

    @app.get("/me", operation_id="get_me", tags=["users"])
    def me(claims: dict[str, Any] = Depends(token_claims)) -> dict[str, Any]:  # noqa: B008
        return {"id": claims["sub"], "scope": claims.get("scope", "")}

    read, write = {"security": [{"provider": ["orders:read"]}]}, {"security": [{"provider": ["orders:write"]}]}

    @app.get("/orders", operation_id="list_orders", tags=["orders"], openapi_extra=read)
    def orders(claims: dict[str, Any] = Depends(scoped("orders:read"))) -> list[dict[str, Any]]:  # noqa: B008
        return [{"id": 1, "customer": claims["sub"]}]

    @app.post("/orders", operation_id="create_order", tags=["orders"], openapi_extra=write)
    def create(claims: dict[str, Any] = Depends(scoped("orders:write"))) -> dict[str, Any]:  # noqa: B008
        return {"id": 2, "customer": claims["sub"]}

    def openapi() -> dict[str, Any]:
        # The document says how the API is secured: the provider's OAuth scopes, per operation.
        if app.openapi_schema is None:
            schema = FastAPI.openapi(app)
            schema.setdefault("components", {})["securitySchemes"] = {
                "provider": {
                    "type": "openIdConnect",
                    "openIdConnectUrl": f"{issuer}/.well-known/openid-configuration",
                }
            }
            schema["security"] = [{"provider": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return api


def __getattr__(name: str) -> Any:
    # `serve --app tests.oauth.idp.api:app`: the API of the provider the environment names, made on first use.
    if name == "app":
        return orders_api(os.environ["ORDERS_API_ISSUER"], os.environ["ORDERS_API_AUDIENCE"]).app
    raise AttributeError(name)
