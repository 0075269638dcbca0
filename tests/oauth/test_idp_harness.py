"""The identity-provider harness is a real OpenID provider: our side acts as its client (PKCE, state, nonce, the
client secret), checks every JWT against the provider's JWKS, refreshes, revokes and exchanges tokens, and throws
each fault switch.

`scripts/install-node-tools` installs Node 22 and oidc-provider under `.tools/`; without them these tests skip.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest
from joserfc import jwt
from joserfc.errors import BadSignatureError, ExpiredTokenError, InvalidClaimError, JoseError
from joserfc.jwk import KeySet

from tests.oauth.conftest import query
from tests.oauth.idp import (
    ACCESS_TOKEN_TYPE,
    TOKEN_EXCHANGE,
    IdpClient,
    IdpSettings,
    RunningProvider,
    running_provider,
)

pytestmark = pytest.mark.anyio

API = "https://api.example.test"
#: Nothing listens here: `login` returns the redirect before anything would be sent to it.
REDIRECT_URI = "http://127.0.0.1:9/oauth/callback"
GATEWAY = IdpClient(client_id="gateway", client_secret="gateway-secret-0123456789abcdef", redirect_uris=(REDIRECT_URI,))
OTHER = IdpClient(
    client_id="other-gateway",
    client_secret="other-secret-0123456789abcdef",
    redirect_uris=(REDIRECT_URI,),
    token_endpoint_auth_method="client_secret_basic",
)
SETTINGS = IdpSettings(clients=(GATEWAY, OTHER), api=API, access_token_ttl=30)
ALGORITHMS = ["RS256", "ES256"]
ENDPOINTS = ("authorization_endpoint", "token_endpoint", "jwks_uri", "revocation_endpoint", "introspection_endpoint")


@pytest.fixture(scope="module")
def idp() -> Iterator[RunningProvider]:
    with running_provider(SETTINGS) as provider:
        yield provider


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    """A browser and back channel in one: keeps the provider's cookies, follows no redirects by itself."""
    async with httpx2.AsyncClient(timeout=10) as client:
        yield client


@dataclass(frozen=True, kw_only=True)
class Provider:
    """What the client learnt from discovery."""

    metadata: dict[str, Any]
    keys: KeySet


@dataclass(frozen=True, kw_only=True)
class Authorization:
    """An authorization request as the client sent it, with the secrets it keeps."""

    url: str
    state: str
    nonce: str
    code_verifier: str


async def discover(http: httpx2.AsyncClient, idp: RunningProvider) -> Provider:
    metadata = (await http.get(f"{idp.issuer}/.well-known/openid-configuration")).json()
    jwks = (await http.get(metadata["jwks_uri"])).json()
    return Provider(metadata=metadata, keys=KeySet.import_key_set(jwks))


def authorization(
    provider: Provider,
    client: IdpClient = GATEWAY,
    *,
    scope: str = "openid profile email orders:read",
    resource: str | None = API,
    pkce: bool = True,
) -> Authorization:
    """The authorization request URL: code flow, state, nonce, PKCE S256 (RFC 7636 §4.2), resource (RFC 8707)."""
    state, nonce, code_verifier = secrets.token_urlsafe(16), secrets.token_urlsafe(16), secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(code_verifier.encode()).digest()).rstrip(b"=").decode()
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": client.redirect_uris[0],
        "scope": scope,
        "state": state,
        "nonce": nonce,
    }
    if pkce:
        params |= {"code_challenge": challenge, "code_challenge_method": "S256"}
    if resource is not None:
        params["resource"] = resource
    url = f"{provider.metadata['authorization_endpoint']}?{urlencode(params)}"
    return Authorization(url=url, state=state, nonce=nonce, code_verifier=code_verifier)


async def token_request(
    http: httpx2.AsyncClient, provider: Provider, client: IdpClient = GATEWAY, /, **form: str
) -> httpx2.Response:
    """A token endpoint request with the client's secret, sent the way the client registered."""
    if client.token_endpoint_auth_method == "client_secret_basic":
        return await http.post(
            provider.metadata["token_endpoint"], data=form, auth=(client.client_id, client.client_secret)
        )
    data = {**form, "client_id": client.client_id, "client_secret": client.client_secret}
    return await http.post(provider.metadata["token_endpoint"], data=data)


async def sign_in(
    http: httpx2.AsyncClient,
    idp: RunningProvider,
    provider: Provider,
    client: IdpClient = GATEWAY,
    *,
    account: str = "bob",
    resource: str | None = API,
) -> tuple[Authorization, dict[str, Any]]:
    """Log `account` in and redeem the code (for the API when `resource`); the request and the token response."""
    request = authorization(provider, client)
    landed = await idp.login(http, request.url, account)
    answer = query(landed)
    assert answer["state"] == request.state, landed
    form = {"grant_type": "authorization_code", "code": answer["code"], "redirect_uri": client.redirect_uris[0]}
    form["code_verifier"] = request.code_verifier
    if resource is not None:
        form["resource"] = resource
    tokens = await token_request(http, provider, client, **form)
    assert tokens.status_code == 200, tokens.text
    return request, tokens.json()


def verified(token: str, provider: Provider, **expected: str) -> jwt.Token:
    """The JWT, its signature checked against the provider's JWKS, `exp` and each expected claim checked."""
    decoded = jwt.decode(token, provider.keys, algorithms=ALGORITHMS)
    claims: dict[str, jwt.ClaimsOption] = {name: {"essential": True, "value": v} for name, v in expected.items()}
    # mypy fears a claim named `now` or `leeway`, the registry's own keyword arguments.
    jwt.JWTClaimsRegistry(**claims).validate(decoded.claims)  # type: ignore[arg-type]
    return decoded


async def test_discovery_describes_a_code_flow_provider_with_pkce_refresh_revocation_and_token_exchange(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    metadata = provider.metadata
    assert metadata["issuer"] == idp.issuer == f"http://127.0.0.1:{idp.port}"
    for endpoint in ENDPOINTS:
        assert metadata[endpoint].startswith(f"{idp.issuer}/"), endpoint
    assert metadata["response_types_supported"] == ["code"]
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert {"authorization_code", "refresh_token", TOKEN_EXCHANGE} <= set(metadata["grant_types_supported"])
    assert {"client_secret_post", "client_secret_basic"} <= set(metadata["token_endpoint_auth_methods_supported"])
    assert {"openid", "offline_access", "profile", "email"} <= set(metadata["scopes_supported"])
    assert "RS256" in metadata["id_token_signing_alg_values_supported"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert {key.alg for key in provider.keys} == {"RS256", "ES256"}


async def test_bob_logs_in_with_pkce_state_and_nonce_and_gets_tokens_the_jwks_verifies(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    request = authorization(provider)
    landed = await idp.login(http, request.url, "bob")
    answer = query(landed)
    assert landed.startswith(f"{REDIRECT_URI}?")
    assert answer["state"] == request.state
    assert answer["iss"] == idp.issuer  # RFC 9207
    tokens = await token_request(
        http,
        provider,
        grant_type="authorization_code",
        code=answer["code"],
        redirect_uri=REDIRECT_URI,
        code_verifier=request.code_verifier,
        resource=API,
    )
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    assert body["token_type"] == "Bearer"
    assert body["refresh_token"]

    id_token = verified(body["id_token"], provider, iss=idp.issuer, aud=GATEWAY.client_id, nonce=request.nonce)
    assert id_token.claims["sub"] == "bob"
    assert id_token.claims["name"] == "Bob Builder"
    assert id_token.claims["email"] == "bob@example.test"

    access = verified(body["access_token"], provider, iss=idp.issuer, aud=API, sub="bob")
    assert access.header["typ"] == "at+jwt"  # RFC 9068
    assert access.claims["scope"] == body["scope"] == "orders:read"
    assert access.claims["client_id"] == GATEWAY.client_id
    assert access.claims["exp"] - access.claims["iat"] == body["expires_in"] == SETTINGS.access_token_ttl


async def test_alice_signs_in_through_a_client_that_authenticates_with_http_basic(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    request, body = await sign_in(http, idp, provider, OTHER, account="alice")
    id_token = verified(body["id_token"], provider, iss=idp.issuer, aud=OTHER.client_id, nonce=request.nonce)
    assert id_token.claims["sub"] == "alice"
    assert verified(body["access_token"], provider, aud=API).claims["sub"] == "alice"


async def test_an_authorization_request_without_pkce_is_refused(http: httpx2.AsyncClient, idp: RunningProvider) -> None:
    provider = await discover(http, idp)
    landed = await idp.login(http, authorization(provider, pkce=False).url)
    assert query(landed)["error"] == "invalid_request"


async def test_a_wrong_code_verifier_is_invalid_grant(http: httpx2.AsyncClient, idp: RunningProvider) -> None:
    provider = await discover(http, idp)
    request = authorization(provider)
    code = query(await idp.login(http, request.url))["code"]
    tokens = await token_request(
        http,
        provider,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT_URI,
        code_verifier=secrets.token_urlsafe(48),
    )
    assert tokens.status_code == 400
    assert tokens.json()["error"] == "invalid_grant"


async def test_denying_consent_sends_access_denied_back(http: httpx2.AsyncClient, idp: RunningProvider) -> None:
    provider = await discover(http, idp)
    request = authorization(provider)
    answer = query(await idp.login(http, request.url, decision="deny"))
    assert answer["error"] == "access_denied"
    assert answer["state"] == request.state


async def test_refresh_gives_a_new_api_token_and_a_reused_refresh_token_ends_the_grant(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    _, first = await sign_in(http, idp, provider)
    refreshed = await token_request(
        http, provider, grant_type="refresh_token", refresh_token=first["refresh_token"], resource=API
    )
    assert refreshed.status_code == 200, refreshed.text
    second = refreshed.json()
    old, new = (verified(body["access_token"], provider, aud=API) for body in (first, second))
    assert new.claims["jti"] != old.claims["jti"]
    assert new.claims["scope"] == "orders:read"
    # Rotation: the refresh token is new, and the old one used again revokes the whole grant.
    assert second["refresh_token"] != first["refresh_token"]
    for token in (first["refresh_token"], second["refresh_token"]):
        again = await token_request(http, provider, grant_type="refresh_token", refresh_token=token, resource=API)
        assert again.status_code == 400
        assert again.json()["error"] == "invalid_grant"


async def test_revoking_the_refresh_token_makes_refresh_fail(http: httpx2.AsyncClient, idp: RunningProvider) -> None:
    provider = await discover(http, idp)
    _, body = await sign_in(http, idp, provider)
    revoked = await http.post(
        provider.metadata["revocation_endpoint"],
        data={
            "token": body["refresh_token"],
            "token_type_hint": "refresh_token",
            "client_id": GATEWAY.client_id,
            "client_secret": GATEWAY.client_secret,
        },
    )
    assert revoked.status_code == 200, revoked.text  # RFC 7009 §2.2
    refreshed = await token_request(http, provider, grant_type="refresh_token", refresh_token=body["refresh_token"])
    assert refreshed.status_code == 400
    assert refreshed.json()["error"] == "invalid_grant"


async def test_token_exchange_turns_the_login_token_into_a_token_for_the_api(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    _, body = await sign_in(http, idp, provider, resource=None)
    # Without `resource` at the token endpoint, an openid grant gets an opaque token for userinfo.
    assert body["access_token"].count(".") == 0
    userinfo = await http.get(
        provider.metadata["userinfo_endpoint"], headers={"authorization": f"Bearer {body['access_token']}"}
    )
    assert userinfo.json()["sub"] == "bob"
    exchanged = await token_request(
        http,
        provider,
        grant_type=TOKEN_EXCHANGE,
        subject_token=body["access_token"],
        subject_token_type=ACCESS_TOKEN_TYPE,
        resource=API,
    )
    assert exchanged.status_code == 200, exchanged.text
    answer = exchanged.json()
    assert answer["issued_token_type"] == ACCESS_TOKEN_TYPE  # RFC 8693 §2.2.1
    assert answer["token_type"] == "Bearer"
    assert "refresh_token" not in answer
    access = verified(answer["access_token"], provider, iss=idp.issuer, aud=API, sub="bob")
    assert access.claims["scope"] == answer["scope"] == "orders:read"

    # The API token can be exchanged again (downscoped to what it holds), by `audience` this time.
    again = await token_request(
        http,
        provider,
        grant_type=TOKEN_EXCHANGE,
        subject_token=answer["access_token"],
        subject_token_type=ACCESS_TOKEN_TYPE,
        audience=API,
        scope="orders:read",
    )
    assert again.status_code == 200, again.text
    assert verified(again.json()["access_token"], provider, aud=API).claims["scope"] == "orders:read"


async def test_token_exchange_refuses_other_targets_ungranted_scopes_and_tokens_it_cannot_accept(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    _, body = await sign_in(http, idp, provider, resource=None)
    exchange = {"grant_type": TOKEN_EXCHANGE, "subject_token_type": ACCESS_TOKEN_TYPE}
    cases: list[tuple[IdpClient, dict[str, str], str]] = [
        (GATEWAY, {"subject_token": body["access_token"], "audience": "https://elsewhere.test"}, "invalid_target"),
        (GATEWAY, {"subject_token": body["access_token"], "scope": "orders:write"}, "invalid_scope"),
        (GATEWAY, {"subject_token": "not-a-token-of-this-provider"}, "invalid_request"),
        (GATEWAY, {"subject_token": body["id_token"]}, "invalid_request"),
        (OTHER, {"subject_token": body["access_token"]}, "invalid_request"),
    ]
    for client, form, error in cases:
        refused = await token_request(http, provider, client, **exchange, **form)
        assert (refused.status_code, refused.json()["error"]) == (400, error), (form, refused.text)


async def test_a_refused_refresh_is_invalid_grant_and_the_token_works_again_afterwards(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    _, body = await sign_in(http, idp, provider)
    form = {"grant_type": "refresh_token", "refresh_token": body["refresh_token"], "resource": API}
    with idp.faults(refresh="refuse"):
        refused = await token_request(http, provider, **form)
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_grant")
    assert (await token_request(http, provider, **form)).status_code == 200


async def test_a_slow_token_endpoint_outlasts_a_short_client_timeout(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    form = {"grant_type": "authorization_code", "code": "no-such-code", "redirect_uri": REDIRECT_URI}
    with idp.faults(token_delay_ms=300):
        with pytest.raises(httpx2.TimeoutException):
            await http.post(provider.metadata["token_endpoint"], data=form, timeout=0.05)
        started = time.monotonic()
        late = await token_request(http, provider, **form, code_verifier=secrets.token_urlsafe(48))
        assert time.monotonic() - started >= 0.3
    assert late.json()["error"] == "invalid_grant"


async def test_while_the_provider_is_down_connections_are_refused_and_its_tokens_survive(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    _, body = await sign_in(http, idp, provider)
    with idp.faults(down=True):
        with pytest.raises(httpx2.ConnectError):
            await http.get(f"{idp.issuer}/.well-known/openid-configuration")
    refreshed = await token_request(
        http, provider, grant_type="refresh_token", refresh_token=body["refresh_token"], resource=API
    )
    assert refreshed.status_code == 200, refreshed.text


@pytest.mark.parametrize(
    ("fault", "error", "claim"),
    [
        ("wrong_audience", InvalidClaimError, "aud"),
        ("wrong_issuer", InvalidClaimError, "iss"),
        ("wrong_nonce", InvalidClaimError, "nonce"),
        ("expired", ExpiredTokenError, None),
        ("wrong_signature", BadSignatureError, None),
    ],
)
async def test_each_spoiled_id_token_fails_the_check_it_aims_at(
    http: httpx2.AsyncClient, idp: RunningProvider, fault: str, error: type[JoseError], claim: str | None
) -> None:
    provider = await discover(http, idp)
    with idp.faults(id_token=fault):
        request, body = await sign_in(http, idp, provider)
    with pytest.raises(error) as raised:
        verified(body["id_token"], provider, iss=idp.issuer, aud=GATEWAY.client_id, nonce=request.nonce)
    if claim is not None:
        assert getattr(raised.value, "claim", None) == claim
    # Only the ID token is spoiled.
    verified(body["access_token"], provider, iss=idp.issuer, aud=API)


async def test_an_access_token_for_another_api_is_signed_by_the_provider_but_fails_the_apis_audience(
    http: httpx2.AsyncClient, idp: RunningProvider
) -> None:
    provider = await discover(http, idp)
    with idp.faults(access_token="wrong_audience"):
        request, body = await sign_in(http, idp, provider)
    with pytest.raises(InvalidClaimError) as raised:
        verified(body["access_token"], provider, iss=idp.issuer, aud=API)
    assert raised.value.claim == "aud"
    assert verified(body["access_token"], provider, iss=idp.issuer).claims["aud"] == "https://another-api.example.test"
    verified(body["id_token"], provider, iss=idp.issuer, aud=GATEWAY.client_id, nonce=request.nonce)


async def test_a_second_provider_signs_api_tokens_with_es256_and_its_own_short_lifetime(
    http: httpx2.AsyncClient,
) -> None:
    settings = dataclasses.replace(SETTINGS, access_token_alg="ES256", access_token_ttl=5)
    with running_provider(settings) as idp:
        provider = await discover(http, idp)
        _, body = await sign_in(http, idp, provider)
    access = verified(body["access_token"], provider, iss=idp.issuer, aud=API)
    assert access.header["alg"] == "ES256"
    assert access.claims["exp"] - access.claims["iat"] == body["expires_in"] == 5
