"""The discovery documents, at every well-known path clients try, for a host-only and a path issuer."""

from __future__ import annotations

import httpx2
import pytest

from gateway.rest.lifespan import app_lifespan
from oauth import ConfigError, OAuthConfig
from tests.oauth.conftest import SECRET, build_site

pytestmark = pytest.mark.anyio


async def test_the_authorization_server_metadata_advertises_what_mcp_clients_need() -> None:
    site = build_site("https://gw.example")
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=site.base) as web,
    ):
        oauth = await web.get("/.well-known/oauth-authorization-server")
        oidc = await web.get("/.well-known/openid-configuration")
        protected = await web.get("/.well-known/oauth-protected-resource/mcp")
        root = await web.get("/.well-known/oauth-protected-resource")
        preflight = await web.options("/token", headers={"origin": "https://inspector.example"})
    await site.server.aclose()
    metadata = oauth.json()
    assert oidc.json() == metadata
    assert metadata["issuer"] == "https://gw.example"
    assert metadata["authorization_endpoint"] == "https://gw.example/authorize"
    assert metadata["registration_endpoint"] == "https://gw.example/register"
    assert metadata["revocation_endpoint"] == "https://gw.example/revoke"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert "none" in metadata["token_endpoint_auth_methods_supported"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert protected.json() == root.json()
    assert protected.json()["resource"] == "https://gw.example/mcp"
    assert protected.json()["authorization_servers"] == ["https://gw.example"]
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"


async def test_an_issuer_with_a_path_serves_its_metadata_and_endpoints_under_that_path() -> None:
    site = build_site("https://gw.example/tenant")
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url="https://gw.example") as web,
    ):
        inserted = await web.get("/.well-known/oauth-authorization-server/tenant")
        appended = await web.get("/tenant/.well-known/openid-configuration")
        register = await web.post("/tenant/register", json={"redirect_uris": ["https://claude.ai/cb"]})
    await site.server.aclose()
    assert inserted.json()["issuer"] == "https://gw.example/tenant"
    assert appended.json()["token_endpoint"] == "https://gw.example/tenant/token"
    assert register.status_code == 201


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"issuer": "http://gw.example"}, "must use https"),
        ({"issuer": "https://gw.example/"}, "must not end with '/'"),
        ({"issuer": "https://gw.example?x=1"}, "no query"),
        ({"secret_key": b"short"}, "at least 32"),
        ({"scopes": ("has space",)}, "scope token"),
        ({"code_ttl": 3600}, "at most 600"),
        ({"default_scopes": "mcp"}, r"^default_scopes must be a tuple of some of scopes \('mcp',\), got 'mcp'$"),
        ({"default_scopes": ("mcp", "admin")}, r"default_scopes must be a tuple of some of scopes .*'admin'\)$"),
    ],
)
def test_a_config_that_cannot_be_served_says_what_to_fix(options: dict[str, object], problem: str) -> None:
    settings: dict[str, object] = {"issuer": "https://gw.example", "resource": "https://gw.example/mcp"}
    with pytest.raises(ConfigError, match=problem):
        OAuthConfig(**{"secret_key": SECRET, **settings, **options})  # type: ignore[arg-type]


def test_a_client_that_names_no_scope_is_given_the_default_scopes_or_else_all_of_them() -> None:
    settings: dict[str, object] = {"issuer": "https://gw.example", "resource": "https://gw.example/mcp"}
    every = OAuthConfig(**settings, secret_key=SECRET, scopes=("mcp", "admin"))  # type: ignore[arg-type]
    some = OAuthConfig(**settings, secret_key=SECRET, scopes=("mcp", "admin"), default_scopes=("admin",))  # type: ignore[arg-type]
    assert (every.default_scopes, every.initial_scopes) == (None, ("mcp", "admin"))
    assert some.initial_scopes == ("admin",)
