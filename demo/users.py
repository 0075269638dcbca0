"""The demo shop's `users` endpoints: who is calling, and who may call."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from demo._responses import FORBIDDEN
from demo.auth import CurrentUser, require_admin
from demo.dependencies import StoreDep
from demo.models import User

router = APIRouter(prefix="/users", tags=["users"])


@router.get("/me", summary="Get the current user")
async def get_current_user(user: CurrentUser) -> User:
    """Get the user the request's API key belongs to: id, name, email and role."""
    return user


@router.get("", summary="List users", dependencies=[Depends(require_admin)], responses=FORBIDDEN)
async def list_users(store: StoreDep) -> list[User]:
    """List every back-office user by id. Admins only."""
    return sorted(store.users.values(), key=lambda u: u.id)
