"""`Grants` on a real SQLite store with a clock the test moves: each way a code, refresh or access token is
refused, with its error code and the words the client is told, and what a refusal leaves behind."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from oauth import OAuthConfig, TokenStore
from oauth._authlib import s256_challenge
from oauth._crypto import Sealer
from oauth.clients import Client
from oauth.errors import ProtocolError
from oauth.grants import AccessGrant, Grants, Principal, same_resource
from oauth.store import open_store
from tests.oauth.conftest import SECRET, FakeClock

pytestmark = pytest.mark.anyio

RESOURCE = "https://mcp.example.com/mcp"
REDIRECT = "https://claude.ai/api/mcp/auth_callback"
VERIFIER = "v" * 43
CLIENT = Client(client_id="client-a", redirect_uris=(REDIRECT,))
OTHER = Client(client_id="client-b", redirect_uris=(REDIRECT,))
ALICE = Principal(subject="alice", name="Alice", credentials={"authorization": "Bearer alice-key"})


@pytest.fixture
async def store() -> AsyncIterator[TokenStore]:
    opened = open_store(":memory:")
    yield opened
    await opened.aclose()


def grants_on(store: TokenStore, clock: FakeClock | None = None, *, secret: bytes = SECRET) -> Grants:
    config = OAuthConfig(issuer="https://mcp.example.com", resource=RESOURCE, secret_key=secret)
    return Grants(config, store, Sealer(secret), clock=clock)


async def code_for(
    grants: Grants, *, given: bool = True, scopes: tuple[str, ...] = ("mcp", "orders"), resource: str = RESOURCE
) -> str:
    return await grants.issue_code(
        client=CLIENT,
        redirect_uri=REDIRECT,
        redirect_uri_given=given,
        code_challenge=s256_challenge(VERIFIER),
        scopes=scopes,
        principal=ALICE,
        resource=resource,
    )


async def refused(grants: Grants, **exchange: object) -> ProtocolError:
    arguments: dict[str, object] = {
        "client": CLIENT,
        "redirect_uri": REDIRECT,
        "code_verifier": VERIFIER,
        "resource": None,
        **exchange,
    }
    with pytest.raises(ProtocolError) as error:
        await grants.exchange_code(**arguments)  # type: ignore[arg-type]
    return error.value


def said(error: ProtocolError) -> tuple[str, str]:
    return error.code, error.description


# Codes


async def test_a_code_becomes_bearer_tokens_that_stand_for_the_user_the_client_and_the_scopes(
    store: TokenStore,
) -> None:
    clock = FakeClock()
    grants = grants_on(store, clock)
    tokens = await grants.exchange_code(
        code=await code_for(grants), client=CLIENT, redirect_uri=REDIRECT, code_verifier=VERIFIER, resource=None
    )
    assert tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] == 3600
    assert tokens["scope"] == "mcp orders"
    grant = await grants.check_access_token(tokens["access_token"])
    assert grant == AccessGrant(
        client_id="client-a",
        subject="alice",
        scopes=("mcp", "orders"),
        credentials=ALICE.credentials,
        login=grant.login if grant is not None else "",
    )


async def test_each_way_a_code_is_refused_says_why(store: TokenStore) -> None:
    grants = grants_on(store)
    code = await code_for(grants)
    assert said(await refused(grants, code="never-issued")) == (
        "invalid_grant",
        "the authorization code is unknown or expired; authorize again",
    )
    assert said(await refused(grants, code=code, client=OTHER)) == (
        "invalid_grant",
        "the authorization code was issued to another client",
    )
    assert said(await refused(grants, code=code, redirect_uri="https://claude.ai/other")) == (
        "invalid_grant",
        "redirect_uri differs from the one in the authorization request",
    )
    assert said(await refused(grants, code=code, redirect_uri=None)) == (
        "invalid_grant",
        "redirect_uri differs from the one in the authorization request",
    )
    assert said(await refused(grants, code=code, code_verifier=None)) == (
        "invalid_grant",
        "code_verifier is missing; send the PKCE verifier of this code",
    )
    assert said(await refused(grants, code=code, code_verifier="w" * 43)) == (
        "invalid_grant",
        "code_verifier does not match the code_challenge (PKCE S256)",
    )
    assert said(await refused(grants, code=code, resource="https://elsewhere.example.com/mcp")) == (
        "invalid_target",
        "resource 'https://elsewhere.example.com/mcp' is not the one this code was issued for",
    )
    # None of those refusals used the code up.
    tokens = await grants.exchange_code(
        code=code, client=CLIENT, redirect_uri=REDIRECT, code_verifier=VERIFIER, resource=RESOURCE + "/"
    )
    assert tokens["access_token"]


async def test_a_code_whose_authorization_request_named_no_redirect_uri_takes_none_or_the_registered_one(
    store: TokenStore,
) -> None:
    grants = grants_on(store)
    for redirect_uri in (None, REDIRECT):
        code = await code_for(grants, given=False)
        tokens = await grants.exchange_code(
            code=code, client=CLIENT, redirect_uri=redirect_uri, code_verifier=VERIFIER, resource=None
        )
        assert tokens["access_token"]
    code = await code_for(grants, given=False)
    assert said(await refused(grants, code=code, redirect_uri="https://claude.ai/other"))[0] == "invalid_grant"


async def test_a_code_used_twice_revokes_what_it_issued_and_the_operator_is_told_which_client(
    store: TokenStore, caplog: pytest.LogCaptureFixture
) -> None:
    grants = grants_on(store)
    code = await code_for(grants)
    tokens = await grants.exchange_code(
        code=code, client=CLIENT, redirect_uri=REDIRECT, code_verifier=VERIFIER, resource=None
    )
    with caplog.at_level(logging.WARNING, logger="oauth.grants"):
        error = await refused(grants, code=code)
    assert said(error) == (
        "invalid_grant",
        "the authorization code was already used; the tokens issued for it are revoked",
    )
    assert await grants.check_access_token(tokens["access_token"]) is None
    assert [record.getMessage() for record in caplog.records] == [
        "authorization code reused by client 'client-a'; its tokens are revoked"
    ]


async def test_a_code_whose_login_was_revoked_gives_no_tokens(store: TokenStore) -> None:
    grants = grants_on(store)
    code = await code_for(grants)
    record = await store.get("code", _hash(code))
    assert record is not None
    await store.delete("grant", record["grant_id"])
    assert said(await refused(grants, code=code)) == ("invalid_grant", "the authorization was revoked; authorize again")


async def test_a_code_expires_after_its_minute() -> None:
    clock = FakeClock()
    timed = open_store(":memory:", clock=clock)
    try:
        grants = grants_on(timed, clock)
        code = await code_for(grants)
        clock.advance(61)
        assert said(await refused(grants, code=code))[1].startswith("the authorization code is unknown or expired")
    finally:
        await timed.aclose()


# Refresh tokens


async def _tokens(grants: Grants, **options: object) -> dict[str, object]:
    code = await code_for(grants, **options)  # type: ignore[arg-type]
    return await grants.exchange_code(
        code=code, client=CLIENT, redirect_uri=REDIRECT, code_verifier=VERIFIER, resource=None
    )


async def test_a_resource_with_or_without_a_trailing_slash_is_the_same_resource(store: TokenStore) -> None:
    grants = grants_on(store)
    tokens = await _tokens(grants, resource=RESOURCE + "/")
    assert await grants.check_access_token(str(tokens["access_token"])) is not None
    renewed = await grants.refresh(
        refresh_token=str(tokens["refresh_token"]), client=CLIENT, scope=None, resource=RESOURCE
    )
    assert await grants.check_access_token(str(renewed["access_token"])) is not None


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (RESOURCE, RESOURCE + "/", True),
        (RESOURCE + "//", RESOURCE, True),
        (RESOURCE + "X", RESOURCE, False),
        (RESOURCE, RESOURCE + "X", False),
        (RESOURCE, RESOURCE + "/v2", False),
    ],
)
def test_two_resources_are_the_same_only_when_they_differ_by_trailing_slashes(a: str, b: str, same: bool) -> None:
    assert same_resource(a, b) is same


async def test_a_refresh_may_narrow_the_scopes_and_drops_scopes_never_granted(store: TokenStore) -> None:
    grants = grants_on(store)
    first = await _tokens(grants)
    narrowed = await grants.refresh(
        refresh_token=str(first["refresh_token"]), client=CLIENT, scope="orders admin", resource=None
    )
    unknown_only = await grants.refresh(
        refresh_token=str(narrowed["refresh_token"]), client=CLIENT, scope="admin", resource=RESOURCE
    )
    assert narrowed["scope"] == "orders"
    assert unknown_only["scope"] == "mcp orders"  # nothing asked for was granted: the grant's own scopes


async def test_every_token_of_one_login_names_the_same_login_and_another_login_another(store: TokenStore) -> None:
    grants = grants_on(store)
    first = await _tokens(grants)
    narrowed = await grants.refresh(
        refresh_token=str(first["refresh_token"]), client=CLIENT, scope="orders", resource=None
    )
    again = await _tokens(grants)
    checked = [await grants.check_access_token(str(tokens["access_token"])) for tokens in (first, narrowed, again)]
    logins = [grant.login for grant in checked if grant is not None]
    assert len(logins) == 3 and logins[0] == logins[1] != logins[2]
    assert all(len(login) == 64 and int(login, 16) >= 0 for login in logins)  # an opaque name, not the grant's key


async def test_each_way_a_refresh_is_refused_says_why(store: TokenStore, caplog: pytest.LogCaptureFixture) -> None:
    grants = grants_on(store)
    refresh_token = str((await _tokens(grants))["refresh_token"])

    async def refresh_refused(**options: object) -> tuple[str, str]:
        arguments: dict[str, object] = {"refresh_token": refresh_token, "client": CLIENT, "scope": None}
        arguments.setdefault("resource", None)
        arguments.update(options)
        with pytest.raises(ProtocolError) as error:
            await grants.refresh(**arguments)  # type: ignore[arg-type]
        return said(error.value)

    assert await refresh_refused(refresh_token="never-issued") == (
        "invalid_grant",
        "the refresh token is unknown, expired or revoked; authorize again",
    )
    assert await refresh_refused(client=OTHER) == ("invalid_grant", "the refresh token was issued to another client")
    assert await refresh_refused(resource="https://elsewhere.example.com/mcp") == (
        "invalid_target",
        "resource 'https://elsewhere.example.com/mcp' is not the one this token was issued for",
    )
    renewed = await grants.refresh(refresh_token=refresh_token, client=CLIENT, scope=None, resource=None)
    with caplog.at_level(logging.WARNING, logger="oauth.grants"):
        assert await refresh_refused() == (
            "invalid_grant",
            "the refresh token was already used; every token of this login is revoked",
        )
    assert await grants.check_access_token(str(renewed["access_token"])) is None
    assert [record.getMessage() for record in caplog.records] == [
        "refresh token reused by client 'client-a'; its grant is revoked"
    ]


class RevokedWhileClaimed:
    """A real store where the login is revoked the moment its code is claimed: a revocation that lands between
    the checks of a code exchange and the tokens it issues."""

    def __init__(self, store: TokenStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def claim(self, kind: str, key: str) -> tuple[dict[str, object] | None, bool]:
        record = await self.store.get(kind, key)  # type: ignore[arg-type]
        if kind == "code" and record is not None:
            await self.store.delete("grant", str(record["grant_id"]))
        return await self.store.claim(kind, key)  # type: ignore[arg-type]


async def test_a_login_revoked_while_its_code_is_exchanged_gives_no_tokens(store: TokenStore) -> None:
    grants = grants_on(RevokedWhileClaimed(store))  # type: ignore[arg-type]
    code = await code_for(grants)
    assert said(await refused(grants, code=code)) == ("invalid_grant", "the authorization was revoked; authorize again")


async def test_an_access_token_lives_no_longer_than_its_refresh_token(store: TokenStore) -> None:
    clock = FakeClock()
    config = OAuthConfig(
        issuer="https://mcp.example.com",
        resource=RESOURCE,
        secret_key=SECRET,
        access_token_ttl=7200,
        refresh_token_ttl=1800,
    )
    grants = Grants(config, store, Sealer(SECRET), clock=clock)
    tokens = await _tokens(grants)
    assert tokens["expires_in"] == 1800


# Access tokens and revocation


async def test_an_access_token_whose_credentials_cannot_be_unsealed_is_refused_and_the_operator_told_why(
    store: TokenStore, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = await _tokens(grants_on(store))
    rekeyed = grants_on(store, secret=b"another-secret-of-at-least-32-bytes!!")
    with caplog.at_level(logging.WARNING, logger="oauth.grants"):
        assert await rekeyed.check_access_token(str(tokens["access_token"])) is None
    assert [record.getMessage() for record in caplog.records] == [
        "the credentials of a grant cannot be unsealed (was the secret key changed?)"
    ]


@pytest.mark.parametrize("which", ["access_token", "refresh_token"])
async def test_revoking_either_token_revokes_the_whole_login(store: TokenStore, which: str) -> None:
    grants = grants_on(store)
    tokens = await _tokens(grants)
    await grants.revoke(str(tokens[which]), CLIENT)
    assert await grants.check_access_token(str(tokens["access_token"])) is None
    with pytest.raises(ProtocolError):
        await grants.refresh(refresh_token=str(tokens["refresh_token"]), client=CLIENT, scope=None, resource=None)


async def test_a_client_cannot_revoke_another_clients_token_and_unknown_tokens_are_ignored(
    store: TokenStore,
) -> None:
    grants = grants_on(store)
    tokens = await _tokens(grants)
    with pytest.raises(ProtocolError) as error:
        await grants.revoke(str(tokens["access_token"]), OTHER)
    assert said(error.value) == ("unauthorized_client", "the token was issued to another client")
    await grants.revoke("never-issued", CLIENT)
    assert await grants.check_access_token(str(tokens["access_token"])) is not None


def _hash(token: str) -> str:
    from oauth._crypto import token_hash

    return token_hash(token)
