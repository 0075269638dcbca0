"""Secrets at rest: random tokens, their hashes, sealed REST credentials, and form signatures."""

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

__all__ = ["Sealer", "derive_key", "new_token", "token_hash"]


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
