"""What whoami shows of the caller: the identity, never the credentials a `me` endpoint may answer with.

Real `me` endpoints return API tokens, SSH private keys and password hashes beside the name and email, and
agents are told to call whoami first, which would put those secrets in the conversation. By default the
identity is kept and every value whose name or shape is a credential is left out, recursively; an operator
can instead choose the fields (`whoami_fields`, dotted paths). The answer always says what was left out.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["IdentityView", "identity_view", "looks_secret"]

#: Name words that mark a credential wherever they stand in a field name (`github_token`, `passwordHash`).
_SECRET_WORDS: Final = frozenset(
    {"token", "tokens", "secret", "secrets", "password", "passwords", "passphrase", "passwd", "pwd"}
    | {"credential", "credentials", "cookie", "cookies", "salt", "otp", "totp", "hotp", "jwt", "bearer"}
)
#: Adjacent name words that mark one (`private_key`, `apiKey`, `ssh_keys`, `session_id`).
_SECRET_PAIRS: Final = frozenset(
    {("private", "key"), ("api", "key"), ("access", "key"), ("secret", "key"), ("ssh", "key"), ("signing", "key")}
    | {("session", "id"), ("session", "key"), ("refresh", "key"), ("password", "hash"), ("master", "key")}
    | {("client", "secret"), ("auth", "key"), ("encryption", "key"), ("recovery", "code"), ("recovery", "codes")}
)
_WORD: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
#: Values that are credentials whatever their field is called.
_SECRET_VALUES: Final = (
    re.compile(r"-----BEGIN [A-Z0-9 ]*(PRIVATE KEY|CERTIFICATE|SIGNATURE|PGP)[A-Z0-9 ]*-----"),
    re.compile(r"^eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*$"),  # a JWT (RFC 7519 compact form)
    re.compile(r"^(sk|pk|rk)-[\w-]{16,}$"),  # OpenAI, Anthropic and LiteLLM style keys
    re.compile(r"^(ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprs]|shpat|sk_live|sk_test|rk_live)[_-][\w-]{10,}$"),
    re.compile(r"^(AKIA|ASIA)[0-9A-Z]{16}$"),  # AWS access key ids
    re.compile(r"^\$(2[aby]?|argon2id?|pbkdf2[\w-]*|scrypt|6|5)\$"),  # password hashes
    re.compile(r"^ssh-(rsa|ed25519|dss)|^ecdsa-sha2-", re.IGNORECASE),
)
_UUID: Final = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")
_OPAQUE: Final = re.compile(r"^[A-Za-z0-9_\-+/=.]{32,}$")


@dataclass(frozen=True, kw_only=True)
class IdentityView:
    """The identity shown, and the dotted paths of what was left out."""

    value: Any
    left_out: tuple[str, ...]
    chosen: bool


def identity_view(value: Any, fields: Sequence[str] | None = None) -> IdentityView:
    """`value` without its credentials, or with only `fields` (dotted paths) when the operator chose them."""
    if fields is not None:
        return _chosen(value, fields)
    left_out: list[str] = []
    kept = _without_secrets(value, "", left_out)
    return IdentityView(value=kept, left_out=tuple(left_out), chosen=False)


def looks_secret(name: str, value: Any) -> bool:
    """True when a field's name or its value's shape says it holds a credential."""
    words = [word.lower() for word in _WORD.findall(name)]
    if any(word in _SECRET_WORDS for word in words) or name.lower() in ("key", "keys", "auth", "authorization"):
        return True
    if any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words)):
        return True
    return isinstance(value, str) and _secret_value(value)


def _secret_value(text: str) -> bool:
    stripped = text.strip()
    if any(pattern.search(stripped) for pattern in _SECRET_VALUES):
        return True
    # A long opaque string mixing cases and digits: a key, not an id (UUIDs and URLs are kept).
    return (
        bool(_OPAQUE.match(stripped))
        and not _UUID.match(stripped)
        and any(c.islower() for c in stripped)
        and any(c.isupper() for c in stripped)
        and any(c.isdigit() for c in stripped)
    )


def _without_secrets(value: Any, path: str, left_out: list[str]) -> Any:
    if isinstance(value, Mapping):
        kept: dict[str, Any] = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if looks_secret(str(key), item):
                left_out.append(where)
                continue
            kept[str(key)] = _without_secrets(item, where, left_out)
        return kept
    if isinstance(value, list):
        return [_without_secrets(item, f"{path}[{index}]", left_out) for index, item in enumerate(value)]
    if isinstance(value, str) and _secret_value(value):
        left_out.append(path or "(the whole answer)")
        return None
    return value


def _chosen(value: Any, fields: Sequence[str]) -> IdentityView:
    if not isinstance(value, Mapping):
        return IdentityView(value=value, left_out=(), chosen=True)
    kept: dict[str, Any] = {}
    for field in fields:
        node: Any = value
        parts = field.split(".")
        for part in parts:
            node = node.get(part) if isinstance(node, Mapping) else None
        if node is None:
            continue
        target = kept
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = node
    top = {field.split(".", 1)[0] for field in fields}
    left_out = tuple(str(key) for key in value if key not in top)
    return IdentityView(value=kept, left_out=left_out, chosen=True)
