"""The discovery documents: authorization server metadata (RFC 8414, also at the OIDC discovery path) and
protected resource metadata (RFC 9728), with the well-known paths each is served at."""

from __future__ import annotations

from typing import NotRequired, TypedDict
from urllib.parse import urlsplit

from oauth import _authlib
from oauth.clients import AUTH_METHODS
from oauth.config import OAuthConfig

__all__ = [
    "ProtectedResourceMetadata",
    "ServerMetadata",
    "resource_metadata",
    "resource_metadata_paths",
    "resource_metadata_url",
    "server_metadata",
    "server_metadata_paths",
]


class ServerMetadata(TypedDict):
    """RFC 8414 §2 authorization server metadata, as this server fills it in."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: NotRequired[str]
    revocation_endpoint: str
    scopes_supported: list[str]
    response_types_supported: list[str]
    response_modes_supported: list[str]
    grant_types_supported: list[str]
    token_endpoint_auth_methods_supported: list[str]
    revocation_endpoint_auth_methods_supported: list[str]
    code_challenge_methods_supported: list[str]
    client_id_metadata_document_supported: bool
    authorization_response_iss_parameter_supported: bool


class ProtectedResourceMetadata(TypedDict):
    """RFC 9728 §2 protected resource metadata of the MCP endpoint."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str]
    bearer_methods_supported: list[str]
    resource_name: str


def server_metadata(config: OAuthConfig) -> ServerMetadata:
    """The authorization server metadata document; checked with authlib's RFC 8414 rules."""
    metadata: ServerMetadata = {
        "issuer": config.issuer,
        "authorization_endpoint": config.endpoint("authorize"),
        "token_endpoint": config.endpoint("token"),
        "revocation_endpoint": config.endpoint("revoke"),
        "scopes_supported": list(config.scopes),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
        # OAuth 2.1 §4.1.1 and MCP authorization: S256 only, never plain.
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": config.client_metadata_documents,
        # RFC 9207 §3: every authorization response carries iss.
        "authorization_response_iss_parameter_supported": True,
    }
    if config.dynamic_registration:
        metadata["registration_endpoint"] = config.endpoint("register")
    _authlib.validate_server_metadata(metadata)
    return metadata


def server_metadata_paths(config: OAuthConfig) -> list[str]:
    """Where the metadata is served: RFC 8414 §3.1 (the well-known segment before the issuer's path), the OIDC
    discovery form of it, and OIDC Discovery 1.0 §4 (appended to the issuer's path) when the issuer has one."""
    path = config.issuer_path
    paths = [f"/.well-known/oauth-authorization-server{path}", f"/.well-known/openid-configuration{path}"]
    if path:
        paths.append(f"{path}/.well-known/openid-configuration")
    return paths


def resource_metadata(config: OAuthConfig) -> ProtectedResourceMetadata:
    """The protected resource metadata of the MCP endpoint."""
    return {
        "resource": config.resource,
        "authorization_servers": [config.issuer],
        "scopes_supported": list(config.scopes),
        "bearer_methods_supported": ["header"],
        "resource_name": config.resource_name,
    }


def resource_metadata_paths(config: OAuthConfig) -> list[str]:
    """Where the resource metadata is served: RFC 9728 §3.1's path-suffixed form for the MCP path, and the
    root form that clients of earlier MCP revisions try."""
    suffixed = f"/.well-known/oauth-protected-resource{config.resource_path}"
    return list(dict.fromkeys([suffixed, "/.well-known/oauth-protected-resource"]))


def resource_metadata_url(config: OAuthConfig) -> str:
    """The URL a 401's `resource_metadata` parameter points to (RFC 9728 §5.1)."""
    parts = urlsplit(config.resource)
    return f"{parts.scheme}://{parts.netloc}{resource_metadata_paths(config)[0]}"
