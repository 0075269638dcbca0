"""What whoami shows of the caller: the identity, never the credentials a `me` endpoint may answer with.

Real `me` endpoints return API tokens, SSH private keys and password hashes beside the name and email, and
agents are told to call whoami first, which would put those secrets in the conversation. By default the
identity is kept and every value whose name or shape is a credential is left out, recursively. A name that only
mentions a credential keeps a value that cannot be one (`password_changed_at`, `tokens_used`, `has_password`).
A credential inside a value that is kept is redacted in place as `REDACTED`, the rest of the value kept: the
password of a URL, `password=…` pairs of connection and query strings, `Authorization: Bearer …`. An operator
can instead choose the fields (`whoami_fields`, dotted paths), shown as they are. The answer always says what
was left out and what was redacted.
"""

from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

__all__ = ["REDACTED", "IdentityView", "identity_view", "looks_secret"]

#: What stands in place of a credential redacted inside a value.
REDACTED: Final = "…"

#: Name words that mark a credential wherever they stand in a field name (`github_token`, `passwordHash`).
_SECRET_WORDS: Final = frozenset(
    {"token", "tokens", "secret", "secrets", "password", "passwords", "passphrase", "passwd", "pwd", "apikey"}
    | {"credential", "credentials", "cookie", "cookies", "salt", "otp", "totp", "hotp", "jwt", "bearer"}
    | {"pin", "pins", "passcode"}
)
#: Adjacent name words that mark one (`private_key`, `apiKey`, `ssh_keys`, `session_id`); the second word may be
#: plural.
_SECRET_PAIRS: Final = frozenset(
    {("private", "key"), ("api", "key"), ("access", "key"), ("secret", "key"), ("ssh", "key"), ("signing", "key")}
    | {("session", "id"), ("session", "key"), ("refresh", "key"), ("password", "hash"), ("master", "key")}
    | {("client", "secret"), ("auth", "key"), ("encryption", "key"), ("recovery", "code"), ("recovery", "codes")}
    | {("account", "key"), ("access", "signature")}
)
#: Whole names that mark one.
_SECRET_NAMES: Final = frozenset({"key", "keys", "auth", "authorization"})
_WORD: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
#: Name words that say a number is a time (`token_expires_at`, `passwordChangedOn`, `expires_in`)...
_TIME_LAST_WORDS: Final = frozenset({"at", "on", "time", "date", "datetime", "timestamp", "ts", "until", "since"})
_TIME_WORDS: Final = frozenset(
    {"expires", "expire", "expiry", "expiration", "expired", "changed", "rotated", "updated", "created", "issued"}
    | {"modified", "ttl"}
)
#: ...or a quantity (`token_count`, `tokens_used`, `password_min_length`, plain plurals such as `tokens`).
_QUANTITY_WORDS: Final = frozenset(
    {"count", "counts", "used", "usage", "total", "remaining", "left", "limit", "max", "min", "quota", "size"}
    | {"length", "len", "attempts", "tries", "failures", "version", "age", "days", "hours", "minutes", "seconds"}
    | {"ms", "tokens", "secrets", "passwords", "credentials", "cookies", "keys", "pins"}
)
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
#: An ISO 8601 date or date-time (RFC 3339 and the forms `datetime.fromisoformat` reads).
_ISO_TIME: Final = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?")

#: The user information of a URL, `scheme://user:password@` (RFC 3986 §3.2.1); the password runs to the last `@`
#: of the authority, as servers split an unencoded `@` in it.
_URL_USERINFO: Final = re.compile(r"(?P<head>\b[A-Za-z][\w+.-]*://)(?P<user>[^\s:/?#@]*)(?::(?P<password>[^\s/?#]*))?@")
#: `name=value` (connection strings, query strings, libpq) and `Name: value` (headers, YAML, JSON text); a name
#: before `:` may have a few words (`API key: …`).
_PAIR_NAME: Final = re.compile(
    r"(?<![\w-])(?P<name>[A-Za-z_][\w-]*(?: [A-Za-z_][\w-]*){0,3}?)[\"']?(?P<sep>\s*=\s*|\s*:(?=[\s\"'])\s*)"
)
#: The value after a credential's name: quoted, braced (ODBC) or up to the next delimiter, after an authorization
#: scheme, which is kept (RFC 9110 §11.4)...
_CREDENTIAL_TEXT: Final = re.compile(
    r"(?:(?:Bearer|Basic|Digest|Token|Bot|ApiKey|Negotiate|NTLM)\s+)?"
    r"(?P<value>\"[^\"]*\"|'[^']*'|\{[^}]*\}|[^\s;&\"'<>]+)"
)
#: ...and after any other name, up to the next `=` too (a credential there has a credential's shape, `state=eyJ…`),
#: so that a value holding pairs of its own is read once, pair by pair.
_OTHER_TEXT: Final = re.compile(r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s;&\"'<>=]+=*)")
#: A bearer token (RFC 6750 §2.1) or Basic credentials (RFC 7617) anywhere in text.
_SCHEME_TOKEN: Final = re.compile(r"(?<![\w-])(?P<scheme>[Bb]earer|Basic)\s+(?P<value>[A-Za-z0-9\-._~+/]+=*)")
_QUOTES: Final = {'"': '"', "'": "'", "{": "}"}


@dataclass(frozen=True, kw_only=True)
class IdentityView:
    """The identity shown, the dotted paths of what was left out, and of what had a credential redacted in place."""

    value: Any
    left_out: tuple[str, ...]
    chosen: bool
    redacted: tuple[str, ...] = ()


def identity_view(value: Any, fields: Sequence[str] | None = None) -> IdentityView:
    """`value` without its credentials, or with only `fields` (dotted paths) when the operator chose them."""
    if fields is not None:
        return _chosen(value, fields)
    found = _Found()
    kept = _without_secrets(value, "", found)
    return IdentityView(value=kept, left_out=tuple(found.left_out), chosen=False, redacted=tuple(found.redacted))


def looks_secret(name: str, value: Any) -> bool:
    """True when a field's name or its value's shape says it holds a credential.

    A name that mentions a credential keeps a value that cannot be one: null; a boolean (`has_password`,
    `api_key: true`); a number the name calls a time or a quantity (`token_expires_at`, `tokens_used`), while
    other numbers stay hidden as they may be the credential (`token: 12345678`, `otp`, `pin`); an ISO 8601 time
    under a name with words beside the credential's (`password_changed_at`, not `password`).
    """
    if isinstance(value, str) and _secret_value(value):
        return True
    name_is = _Name.read(name)
    if not name_is.secret:
        return False
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return not name_is.measure
    if isinstance(value, str):
        return name_is.bare or not _timestamp(value)
    return True


@dataclass(frozen=True, kw_only=True)
class _Name:
    """What a field name says about its value."""

    secret: bool  # it names a credential
    bare: bool  # every word belongs to the credential (`password`, `api_key`, `password_hash`)
    measure: bool  # a word calls the value a time or a quantity

    @classmethod
    def read(cls, name: str) -> _Name:
        words = [word.lower() for word in _WORD.findall(name)]
        covered = [word in _SECRET_WORDS for word in words]
        for index, (first, second) in enumerate(itertools.pairwise(words)):
            if (first, second) in _SECRET_PAIRS or (first, second.removesuffix("s")) in _SECRET_PAIRS:
                covered[index] = covered[index + 1] = True
        whole = name.strip().lower() in _SECRET_NAMES
        measure = bool(words) and (
            words[-1] in _TIME_LAST_WORDS or any(word in _TIME_WORDS or word in _QUANTITY_WORDS for word in words)
        )
        return cls(secret=whole or any(covered), bare=whole or (bool(words) and all(covered)), measure=measure)


def _timestamp(text: str) -> bool:
    stripped = text.strip()
    if not _ISO_TIME.fullmatch(stripped):
        return False
    try:
        datetime.fromisoformat(stripped)
    except ValueError:
        return False
    return True


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


def _redact(text: str) -> str:
    """`text` with every credential inside it replaced by `REDACTED`: URL passwords, secret pairs, bearer tokens."""
    return _SCHEME_TOKEN.sub(_redact_scheme_token, _redact_pairs(_URL_USERINFO.sub(_redact_userinfo, text)))


def _masked(text: str) -> bool:
    """True for a value that holds nothing to hide: empty, or masked already (`****`, `…`)."""
    return not text.strip("*•…")


def _redact_userinfo(match: re.Match[str]) -> str:
    user, password = match["user"], match["password"]
    if password is not None and not _masked(password):
        return f"{match['head']}{user}:{REDACTED}@"
    if password is None and user and _secret_value(user):  # a token as the user (`https://ghp_…@github.com`)
        return f"{match['head']}{REDACTED}@"
    return match[0]


def _redact_pairs(text: str) -> str:
    kept: list[str] = []
    start = 0
    for pair in _PAIR_NAME.finditer(text):
        if pair.start() < start:  # inside a value redacted already
            continue
        # `host=db user=app`: a name before `=` is one word, so the value before it is not part of it.
        name = pair["name"] if ":" in pair["sep"] else pair["name"].rsplit(" ", 1)[-1]
        found = (_CREDENTIAL_TEXT if _Name.read(name).secret else _OTHER_TEXT).match(text, pair.end())
        if found is None:
            continue
        value = found["value"]
        quoted = len(value) > 1 and _QUOTES.get(value[0]) == value[-1]
        inner = value[1:-1] if quoted else value
        if _masked(inner) or not looks_secret(name, inner):
            continue
        kept += [text[start : found.start("value")], f"{value[0]}{REDACTED}{value[-1]}" if quoted else REDACTED]
        start = found.end("value")
    return "".join([*kept, text[start:]])


def _redact_scheme_token(match: re.Match[str]) -> str:
    """`Bearer …` when the value is that alone or the token looks like one, not in prose (`a Bearer token`);
    `Basic …` when the token decodes to `user:password`, not in prose (`Basic plan`)."""
    token = match["value"]
    if match["scheme"] == "Basic":
        try:
            credential = b":" in base64.b64decode(token, validate=True)
        except ValueError:
            credential = False
    else:
        whole = match.string.strip() == match[0]
        credential = whole or _secret_value(token) or (len(token) >= 8 and any(c.isdigit() for c in token))
    return f"{match['scheme']} {REDACTED}" if credential else match[0]


class _Found:
    """The paths of what `_without_secrets` left out and of what it redacted in place."""

    def __init__(self) -> None:
        self.left_out: list[str] = []
        self.redacted: list[str] = []


def _without_secrets(value: Any, path: str, found: _Found) -> Any:
    if isinstance(value, Mapping):
        kept: dict[str, Any] = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if looks_secret(str(key), item):
                found.left_out.append(where)
                continue
            kept[str(key)] = _without_secrets(item, where, found)
        return kept
    if isinstance(value, list):
        return [_without_secrets(item, f"{path}[{index}]", found) for index, item in enumerate(value)]
    if isinstance(value, str):
        if _secret_value(value):
            found.left_out.append(path or "(the whole answer)")
            return None
        shown = _redact(value)
        if shown != value:
            found.redacted.append(path or "(the whole answer)")
        return shown
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
