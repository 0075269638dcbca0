"""The client side of the identity-provider login in the authlib adapter: a provider's key set read, and its ID
tokens checked (OpenID Connect Core §3.1.3.7) on tokens minted here with joserfc, each rule broken in turn."""

from __future__ import annotations

import base64
import functools
import json
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, Key, KeySet, OctKey, OKPKey, RSAKey

from oauth._authlib import IdTokenError, UnknownKeyError, key_set, oauth_client, token_audiences, verify_id_token

ISSUER = "https://idp.example"
CLIENT_ID = "gateway"
NONCE = "n-0S6_WzA2Mj"
NOW = 1_800_000_000.0


@functools.cache
def rsa_key(kid: str = "k1") -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid})


def keys(*signing: Key) -> KeySet:
    """The provider's published key set: the public halves of `signing` (the RSA key k1 when none)."""
    return key_set({"keys": [key.as_dict(private=False) for key in signing or (rsa_key(),)]})


def claims(**changes: Any) -> dict[str, Any]:
    """Claims that hold, with `changes` (a None value leaves the claim out)."""
    base: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "bob",
        "aud": CLIENT_ID,
        "exp": int(NOW) + 300,
        "iat": int(NOW),
        "nonce": NONCE,
    }
    base.update(changes)
    return {name: value for name, value in base.items() if value is not None}


def id_token(key: Key | None = None, alg: str = "RS256", **changes: Any) -> str:
    key = key or rsa_key()
    return jwt.encode({"alg": alg, "kid": key.kid}, claims(**changes), key, algorithms=[alg])


def verify(token: str, published: KeySet | None = None, *, now: float = NOW) -> dict[str, Any]:
    return verify_id_token(token, published or keys(), issuer=ISSUER, client_id=CLIENT_ID, nonce=NONCE, now=now)


def refusal(token: str, published: KeySet | None = None, *, now: float = NOW) -> IdTokenError:
    with pytest.raises(IdTokenError) as refused:
        verify(token, published, now=now)
    return refused.value


def test_an_id_token_that_holds_gives_its_claims() -> None:
    assert verify(id_token(name="Bob")) == claims(name="Bob")


@pytest.mark.parametrize(
    ("alg", "make"),
    [
        ("RS256", rsa_key),
        ("RS384", rsa_key),
        ("RS512", rsa_key),
        ("PS256", rsa_key),
        ("PS384", rsa_key),
        ("PS512", rsa_key),
        ("ES256", lambda: ECKey.generate_key("P-256", parameters={"kid": "ec"})),
        ("ES384", lambda: ECKey.generate_key("P-384", parameters={"kid": "ec"})),
        ("ES512", lambda: ECKey.generate_key("P-521", parameters={"kid": "ec"})),
        pytest.param(
            "EdDSA",
            lambda: OKPKey.generate_key("Ed25519", parameters={"kid": "ed"}),
            # joserfc warns when signing with it (RFC 9864 names Ed25519 instead); providers still sign with it.
            marks=pytest.mark.filterwarnings("ignore:EdDSA is deprecated"),
        ),
    ],
)
def test_id_tokens_signed_with_each_asymmetric_algorithm_are_accepted(alg: str, make: Any) -> None:
    key = make()
    assert verify(id_token(key, alg), keys(key))["sub"] == "bob"


def test_an_id_token_from_another_issuer_for_another_client_or_login_is_refused() -> None:
    changed: tuple[dict[str, Any], ...] = ({"iss": "https://other.example"}, {"aud": "another-client"}, {"nonce": "x"})
    for changes in changed:
        error = refusal(id_token(**changes))
        assert type(error) is IdTokenError, changes
        assert str(error).startswith("the ID token's claims do not hold: "), changes


@pytest.mark.parametrize("claim", ["iss", "sub", "aud", "exp", "nonce"])
def test_an_id_token_without_an_essential_claim_is_refused(claim: str) -> None:
    left_out: dict[str, Any] = {claim: None}
    assert str(refusal(id_token(**left_out))).startswith("the ID token's claims do not hold: ")


def test_an_id_token_is_accepted_for_up_to_a_minute_past_its_expiry_and_refused_after() -> None:
    expires = int(NOW) + 300
    assert verify(id_token(), now=expires + 59)["sub"] == "bob"
    assert verify(id_token(), now=expires + 59.9)["sub"] == "bob"  # whole seconds, as the claims count them
    assert str(refusal(id_token(), now=expires + 60)).startswith("the ID token's claims do not hold: ")


def test_an_id_token_issued_more_than_a_minute_ahead_of_the_clock_is_refused() -> None:
    assert verify(id_token(iat=int(NOW) + 60))["sub"] == "bob"
    refusal(id_token(iat=int(NOW) + 61))
    refusal(id_token(nbf=int(NOW) + 61))


def test_an_id_token_for_several_audiences_must_name_this_client_as_its_authorized_party() -> None:
    assert verify(id_token(aud=[CLIENT_ID]))["aud"] == [CLIENT_ID]
    assert verify(id_token(aud=[CLIENT_ID, "api"], azp=CLIENT_ID))["azp"] == CLIENT_ID
    for azp in (None, "api"):
        error = refusal(id_token(aud=[CLIENT_ID, "api"], azp=azp))
        assert str(error) == "the ID token has several audiences and its azp is not this client"
    assert str(refusal(id_token(aud=["api", "other"], azp=CLIENT_ID))).startswith("the ID token's claims do not hold")


def test_an_id_token_signed_by_a_key_the_provider_does_not_publish_is_an_unknown_key() -> None:
    # A kid the key set does not hold: perhaps a rotation, so the caller fetches the keys again.
    error = refusal(id_token(rsa_key("k2")))
    assert isinstance(error, UnknownKeyError)
    assert str(error).startswith("no key of the provider verifies the ID token: ")
    # No kid, and several keys to choose from.
    unnamed = jwt.encode({"alg": "RS256"}, claims(), rsa_key())
    assert isinstance(refusal(unnamed, keys(rsa_key(), rsa_key("k2"))), UnknownKeyError)


def test_an_id_token_whose_signature_does_not_verify_under_its_kid_is_refused_not_an_unknown_key() -> None:
    forger = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    for token in (id_token(forger), id_token()[:-4] + "AAAA"):
        error = refusal(token)
        assert type(error) is IdTokenError
        assert str(error).startswith("the ID token's signature does not verify: ")


def test_an_unsigned_id_token_or_one_signed_with_a_shared_secret_is_refused() -> None:
    _, payload, _ = id_token().split(".")
    unsigned = f"{_segment({'alg': 'none', 'kid': 'k1'})}.{payload}."
    secret = OctKey.import_key(b"s" * 32, parameters={"kid": "k1"})
    for token in (unsigned, id_token(secret, "HS256")):
        error = refusal(token)
        assert type(error) is IdTokenError
        assert str(error).startswith("the ID token's signature does not verify: ")


def _segment(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def test_a_token_that_is_not_a_jwt_is_refused() -> None:
    for token in ("", "garbage", "a.b.c"):
        assert type(refusal(token)) is IdTokenError


def test_a_key_set_that_is_not_one_is_refused_saying_it_cannot_be_read() -> None:
    for document in ({}, {"keys": "none"}, {"keys": [{"kty": "RSA"}]}, {"keys": [{"kty": "unknown"}]}):
        with pytest.raises(ValueError, match=r"^the provider's key set cannot be read: "):
            key_set(document)
    assert [key.kid for key in keys(rsa_key(), rsa_key("k2")).keys] == ["k1", "k2"]


def test_a_token_checked_against_something_that_is_no_key_set_is_an_unknown_key() -> None:
    with pytest.raises(UnknownKeyError):
        verify_id_token(id_token(), "no keys", issuer=ISSUER, client_id=CLIENT_ID, nonce=NONCE, now=NOW)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_the_oauth_client_authenticates_at_the_providers_endpoints_as_configured() -> None:
    client = oauth_client("gw", "s3cret", auth_method="client_secret_post", timeout=4.5)
    try:
        assert (client.client_id, client.client_secret) == ("gw", "s3cret")
        assert client.token_endpoint_auth_method == "client_secret_post"
        assert client.revocation_endpoint_auth_method == "client_secret_post"
        assert client.timeout.read == 4.5
    finally:
        await client.aclose()


def test_an_access_tokens_audiences_are_read_from_a_jwt_and_unknown_for_an_opaque_token() -> None:
    assert token_audiences(id_token(aud="https://api.example")) == ("https://api.example",)
    assert token_audiences(id_token(aud=["https://api.example", "gateway"])) == ("https://api.example", "gateway")
    for unknown in (id_token(aud=None), id_token(aud=7), id_token(aud=["api", 7]), "opaque-token", "a.b.c", ""):
        assert token_audiences(unknown) is None, unknown
