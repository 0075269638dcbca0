"""Secrets at rest: random tokens, their hashes, refresh tokens that name their grant, sealed REST credentials,
and form signatures."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from oauth.errors import StoreError

__all__ = ["RefreshTokens", "Sealer", "derive_key", "new_token", "token_hash"]


def new_token() -> str:
    """A fresh 256-bit random token, URL-safe (codes, access and refresh tokens, client ids, form ids)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The key a token is stored under: its SHA-256, so a leaked store holds no usable token."""
    return hashlib.sha256(token.encode()).hexdigest()


def derive_key(secret_key: bytes, purpose: bytes) -> bytes:
    """A 32-byte key for one purpose, derived from the server's secret key (HKDF, RFC 5869)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"mcp-gateway oauth " + purpose).derive(
        secret_key
    )


class Sealer:
    """Seals the users' REST credentials (authenticated encryption) and signs form values, from one secret key.

    Separate keys are derived for each purpose (HKDF, RFC 5869), so the secret key itself is used for neither.
    """

    def __init__(self, secret_key: bytes) -> None:
        self._fernet = Fernet(base64.urlsafe_b64encode(derive_key(secret_key, b"credentials")))
        self._mac_key = derive_key(secret_key, b"forms")

    def seal(self, headers: Mapping[str, str]) -> str:
        """The REST headers, encrypted and authenticated, as text to store."""
        return self._fernet.encrypt(json.dumps(dict(headers), sort_keys=True).encode()).decode()

    def unseal(self, sealed: str) -> dict[str, str]:
        """The REST headers `seal` sealed; StoreError when they were sealed with another key or tampered with."""
        try:
            value = json.loads(self._fernet.decrypt(sealed.encode()))
        except (InvalidToken, ValueError) as error:
            raise StoreError(
                "stored credentials cannot be decrypted: the secret key changed since they were stored; "
                "the user logs in again"
            ) from error
        return {str(name): str(text) for name, text in value.items()}

    def sign(self, *parts: str) -> str:
        """An HMAC-SHA256 signature of `parts` (e.g. a CSRF token binding a form to a browser cookie)."""
        message = "\x00".join(parts).encode()
        return base64.urlsafe_b64encode(hmac.digest(self._mac_key, message, "sha256")).decode().rstrip("=")

    def verify(self, signature: str, *parts: str) -> bool:
        """Whether `signature` is `sign(*parts)`, compared in constant time."""
        return hmac.compare_digest(signature.encode(), self.sign(*parts).encode())


class RefreshTokens:
    """Refresh tokens that name the grant they renew, signed so that only this server's tokens do.

    A token is `<grant id>.<nonce>.<tag>`: 256 random bits, and an HMAC-SHA256 of the grant id and the nonce under
    a key derived for this purpose. The store keeps only the newest refresh token of a grant (under its hash, as
    every token); a rotated one still names its grant by its signature, so presenting it again revokes the grant
    with no record kept per token (OAuth 2.1 §4.3.1). Tokens issued before this scheme are plain random tokens
    (no '.'), which `grant_id` does not read.
    """

    def __init__(self, secret_key: bytes) -> None:
        self._key = derive_key(secret_key, b"refresh tokens")

    def new(self, grant_id: str) -> str:
        """A fresh refresh token of the grant `grant_id` (a `new_token`, so it holds no '.')."""
        nonce = new_token()
        return f"{grant_id}.{nonce}.{self._tag(grant_id, nonce)}"

    def grant_id(self, token: str) -> str | None:
        """The grant a refresh token from `new` names; None for any other text, or a signature that is not ours
        (made with another secret key, or tampered with)."""
        parts = token.split(".")
        if len(parts) != 3 or not all(parts):
            return None
        grant_id, nonce, tag = parts
        return grant_id if hmac.compare_digest(tag.encode(), self._tag(grant_id, nonce).encode()) else None

    def _tag(self, grant_id: str, nonce: str) -> str:
        digest = hmac.digest(self._key, f"{grant_id}.{nonce}".encode(), "sha256")
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")
