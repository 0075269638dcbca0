"""The OAuth 2.1 authorization server that logs hosted MCP clients (claude.ai, ChatGPT) in and guards the MCP
endpoint: metadata discovery, dynamic and metadata-document clients, PKCE codes, rotating refresh tokens,
revocation, an API-key or host-session login, and a SQLite or Redis token store. `OAuthServer.auth` is the
gateway's `auth` function: an MCP access token becomes the REST headers of the user who logged in.

It needs the `oauth` extra (authlib). The names below are imported on first use (PEP 562), so that the modules the
gateway's task store shares (`oauth.outage`, `oauth.sqlite_file`, `oauth.redis_client`) load without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oauth.app import OAuthServer
    from oauth.cimd import ClientDocuments, FetchBudgets
    from oauth.config import OAuthConfig, PreregisteredClient
    from oauth.errors import (
        ConfigError,
        LoginError,
        OAuthError,
        ProtocolError,
        StoreError,
        StoreUnavailableError,
        TokenError,
    )
    from oauth.grants import Principal
    from oauth.login import ApiKeyLogin, Login, SessionLogin, bearer_headers
    from oauth.store import TokenStore, open_store
    from oauth.store_sqlite import SqliteStore

__all__ = [
    "ApiKeyLogin",
    "ClientDocuments",
    "ConfigError",
    "FetchBudgets",
    "Login",
    "LoginError",
    "OAuthConfig",
    "OAuthError",
    "OAuthServer",
    "PreregisteredClient",
    "Principal",
    "ProtocolError",
    "SessionLogin",
    "SqliteStore",
    "StoreError",
    "StoreUnavailableError",
    "TokenError",
    "TokenStore",
    "bearer_headers",
    "open_store",
]

_HOMES = {
    "oauth.app": ("OAuthServer",),
    "oauth.cimd": ("ClientDocuments", "FetchBudgets"),
    "oauth.config": ("OAuthConfig", "PreregisteredClient"),
    "oauth.errors": (
        "ConfigError",
        "LoginError",
        "OAuthError",
        "ProtocolError",
        "StoreError",
        "StoreUnavailableError",
        "TokenError",
    ),
    "oauth.grants": ("Principal",),
    "oauth.login": ("ApiKeyLogin", "Login", "SessionLogin", "bearer_headers"),
    "oauth.store": ("TokenStore", "open_store"),
    "oauth.store_sqlite": ("SqliteStore",),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'oauth' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
