"""The OAuth 2.1 authorization server that logs hosted MCP clients (claude.ai, ChatGPT) in and guards the MCP
endpoint: metadata discovery, dynamic and metadata-document clients, PKCE codes, rotating refresh tokens,
revocation, an API-key or host-session login, and a SQLite or Redis token store. `OAuthServer.auth` is the
gateway's `auth` function: an MCP access token becomes the REST headers of the user who logged in.
"""

from __future__ import annotations

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
