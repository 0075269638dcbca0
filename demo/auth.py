"""API-key authentication for the demo shop: `Authorization: Bearer <key>` or `X-API-Key: <key>`."""

from __future__ import annotations

from types import MappingProxyType
from typing import Annotated, Final

from fastapi import Depends, HTTPException, status
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from demo._seed import USERS
from demo.models import Role, User

__all__ = ["ADMIN_KEY", "DEMO_KEYS", "MEMBER_KEY", "AdminUser", "CurrentUser", "current_user", "require_admin"]

ADMIN_KEY: Final = "demo-key-alice"
MEMBER_KEY: Final = "demo-key-bob"
DEMO_KEYS: Final = MappingProxyType({ADMIN_KEY: USERS[0], MEMBER_KEY: USERS[1]})
"""The seeded API keys and the user each one signs in as: Alice is an admin, Bob a member."""

_bearer = HTTPBearer(auto_error=False, description="An API key sent as `Authorization: Bearer <key>`.")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key sent as `X-API-Key: <key>`.")


def _unauthorized(detail: str) -> HTTPException:
    # RFC 9110 §11.6.1: a 401 names the scheme the client should use.
    return HTTPException(status.HTTP_401_UNAUTHORIZED, detail=detail, headers={"WWW-Authenticate": "Bearer"})


async def current_user(
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_api_key)],
) -> User:
    """The user whose API key the request carries; 401 when it carries none or an unknown one."""
    key = bearer.credentials if bearer is not None else api_key
    if not key:
        raise _unauthorized("missing API key; send it as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'")
    user = DEMO_KEYS.get(key)
    if user is None:
        raise _unauthorized("unknown API key; check the key you were given, it is case-sensitive")
    return user


CurrentUser = Annotated[User, Depends(current_user)]


async def require_admin(user: CurrentUser) -> User:
    """The current user, who must be an admin; 403 otherwise."""
    if user.role is not Role.admin:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            detail=f"this operation needs the admin role; user {user.id} ({user.name}) has role {user.role.value!r}",
        )
    return user


AdminUser = Annotated[User, Depends(require_admin)]
