"""`running_provider`: panva's certified oidc-provider (tests/oauth/idp/provider.mjs on `.tools/bin/node`) on a free
127.0.0.1 port, for tests that need an identity provider nobody here wrote.

Login goes through oidc-provider's development pages (devInteractions), driven with plain HTTP by `login`:

1. GET the authorization URL: 303 to `/interaction/{uid}` (cookies `_interaction`, `_interaction_resume`).
2. The login page: one `<form method=post action=/interaction/{uid}>` with hidden `prompt=login` and the inputs
   `login` (the account, i.e. the `sub`) and `password` (anything). POST it: 303 back to `/auth/{uid}`, which sends
   the browser to the next interaction.
3. The consent page (when this client lacks a grant for the scopes asked): the same form with hidden
   `prompt=consent` and no inputs; POST it to allow. `/interaction/{uid}/abort` (a link on both pages) denies.
4. `/auth/{uid}` answers 303 to the client's redirect_uri with `code`, `state` and `iss` (RFC 9207), or `error`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal
from urllib.parse import urljoin, urlsplit

import httpx2
import pytest

from tests.oauth.conftest import page_form

REPO = Path(__file__).resolve().parents[3]
NODE = REPO / ".tools" / "bin" / "node"
OIDC_PROVIDER = REPO / ".tools" / "npm" / "node_modules" / "oidc-provider"
SCRIPT = Path(__file__).with_name("provider.mjs")

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"

IdTokenFault = Literal[
    "ok", "wrong_audience", "wrong_issuer", "wrong_nonce", "expired", "wrong_signature", "unknown_key"
]
ClientAuthMethod = Literal["client_secret_post", "client_secret_basic"]

_READY = "oidc-provider ready at "
#: Redirects and pages a login may pass through: authorize, login, resume, consent, resume, the client.
_MAX_STEPS = 12


class IdpError(Exception):
    """The provider did not start or answer as asked, or its pages did not lead back to the client."""


@dataclass(frozen=True, kw_only=True)
class Account:
    """A person the provider knows; `sub` is also the login name typed on its login page."""

    sub: str
    name: str
    email: str


ALICE = Account(sub="alice", name="Alice Liddell", email="alice@example.test")
BOB = Account(sub="bob", name="Bob Builder", email="bob@example.test")


@dataclass(frozen=True, kw_only=True)
class IdpClient:
    """A confidential client registered at the provider: the gateway, as the provider sees it."""

    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    token_endpoint_auth_method: ClientAuthMethod = "client_secret_post"
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token", TOKEN_EXCHANGE)

    def __post_init__(self) -> None:
        if not self.redirect_uris:
            raise ValueError(f"client {self.client_id!r} needs at least one redirect URI")

    def metadata(self) -> dict[str, Any]:
        """The client's registration as oidc-provider reads it (RFC 7591 names)."""
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "redirect_uris": list(self.redirect_uris),
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "grant_types": list(self.grant_types),
            "response_types": ["code"],
        }


@dataclass(frozen=True, kw_only=True)
class Faults:
    """The provider's fault switches; the defaults are a healthy provider.

    `refresh="refuse"`: the refresh_token grant answers invalid_grant (nothing is consumed).
    `token_delay_ms`: the token endpoint answers that much later (the work is done either way).
    `down=True`: the provider's port refuses connections and open ones are cut; tokens survive, as in an outage.
    `id_token`: ID tokens from the token endpoint come spoiled: another `aud`, `iss` or `nonce`, already expired
    (each re-signed with the provider's key), or signed by a key outside its JWKS (`wrong_signature` under a
    published kid, `unknown_key` under a kid the JWKS does not have).
    `access_token="wrong_audience"`: JWT access tokens come re-signed for another API
    (`https://another-api.example.test`), as from a provider whose API settings are wrong.
    """

    refresh: Literal["ok", "refuse"] = "ok"
    token_delay_ms: int = 0
    down: bool = False
    id_token: IdTokenFault = "ok"
    access_token: Literal["ok", "wrong_audience"] = "ok"

    def __post_init__(self) -> None:
        if self.token_delay_ms < 0:
            raise ValueError(f"token_delay_ms must be 0 or more, not {self.token_delay_ms!r}")


@dataclass(frozen=True, kw_only=True)
class IdpSettings:
    """How `running_provider` configures the provider; vary with `dataclasses.replace`."""

    clients: tuple[IdpClient, ...]
    accounts: tuple[Account, ...] = (ALICE, BOB)
    #: The API's resource indicator (RFC 8707), which becomes the `aud` of its access tokens.
    api: str = "https://api.example.test"
    api_scopes: tuple[str, ...] = ("orders:read", "orders:write")
    access_token_ttl: int = 30
    id_token_ttl: int = 300
    refresh_token_ttl: int = 86400
    access_token_alg: Literal["RS256", "ES256"] = "RS256"
    rotate_refresh_tokens: bool = True
    #: 0 for a free port.
    port: int = 0

    def __post_init__(self) -> None:
        for name in ("access_token_ttl", "id_token_ttl", "refresh_token_ttl"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {getattr(self, name)!r}")
        if not self.clients:
            raise ValueError("the provider needs at least one client")


@dataclass
class RunningProvider:
    """The provider while it runs: its issuer, the settings it was started with, login and fault switches."""

    issuer: str
    admin_url: str
    settings: IdpSettings
    log_path: Path

    @property
    def port(self) -> int:
        return int(urlsplit(self.issuer).port or 0)

    @property
    def api(self) -> str:
        return self.settings.api

    def log(self) -> str:
        """What the provider wrote to stderr so far: one line per request, its warnings and errors."""
        return self.log_path.read_text(errors="replace")

    async def login(
        self,
        http: httpx2.AsyncClient,
        authorize_url: str,
        account: str = "bob",
        *,
        decision: Literal["allow", "deny"] = "allow",
    ) -> str:
        """Log `account` in through the provider's pages and allow (or deny) consent; the URL the browser is then
        sent to, off the provider (the client's redirect_uri with `code`, `state`, `iss`, or with `error`).

        `http` keeps the provider's cookies: a second login with it skips the pages already passed and stays the
        person who logged in first (ask with `prompt=login`, or use another `http`, to be someone else).
        The development pages take any login name, so an account the provider does not know is refused here.
        """
        known = [known.sub for known in self.settings.accounts]
        if account not in known:
            raise IdpError(f"the provider knows no account {account!r}; log in as one of {known}")
        response = await http.get(authorize_url, follow_redirects=False)
        for _ in range(_MAX_STEPS):
            if response.is_redirect:
                target = urljoin(str(response.url), response.headers["location"])
                if not target.startswith(f"{self.issuer}/"):
                    return target
                response = await http.get(target, follow_redirects=False)
                continue
            if response.status_code != 200:
                raise IdpError(f"the provider answered {response.status_code} at {response.url}: {response.text!r}")
            action, fields = page_form(response)
            if decision == "deny":
                response = await http.get(f"{action}/abort", follow_redirects=False)
            elif fields.get("prompt") == "login":
                data = {**fields, "login": account, "password": "any password"}
                response = await http.post(action, data=data, follow_redirects=False)
            elif fields.get("prompt") == "consent":
                response = await http.post(action, data=fields, follow_redirects=False)
            else:
                raise IdpError(f"unexpected page at {response.url}: {response.text!r}")
        raise IdpError(f"no redirect back to the client after {_MAX_STEPS} steps from {authorize_url!r}")

    def set_faults(self, faults: Faults) -> Faults:
        """Switch the provider's faults to exactly `faults`; the switches it reports in force."""
        with httpx2.Client(timeout=10) as admin:
            answer = admin.post(f"{self.admin_url}/faults", json=dataclasses.asdict(faults))
        if answer.status_code != 200:
            raise IdpError(f"the provider refused the faults {faults!r}: {answer.text}")
        return Faults(**answer.json())

    @contextlib.contextmanager
    def faults(self, **switches: Any) -> Iterator[Faults]:
        """Within the block, the provider has the faults named (`Faults` fields); healthy again afterwards."""
        in_force = self.set_faults(Faults(**switches))
        try:
            yield in_force
        finally:
            self.set_faults(Faults())


def tools_missing() -> str | None:
    """Why the provider cannot run here, or None when `.tools/` has what it needs."""
    if not NODE.exists() or not (OIDC_PROVIDER / "package.json").exists():
        return f"{NODE.parent.parent} lacks Node 22 or oidc-provider: run scripts/install-node-tools"
    return None


@contextlib.contextmanager
def running_provider(settings: IdpSettings, *, start_timeout: float = 10) -> Iterator[RunningProvider]:
    """Start the provider with `settings`, wait for its ready line, yield it, stop it.

    Skips the test when `.tools/` lacks Node 22 or oidc-provider (fails instead under CI, like the conformance test).
    """
    missing = tools_missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    with tempfile.TemporaryDirectory(prefix="oidc-provider-") as scratch:
        folder = Path(scratch)
        clients = folder / "clients.json"
        clients.write_text(json.dumps([client.metadata() for client in settings.clients]))
        accounts = folder / "accounts.json"
        accounts.write_text(json.dumps({a.sub: {"name": a.name, "email": a.email} for a in settings.accounts}))
        command = [str(NODE), str(SCRIPT), "--oidc-provider", str(OIDC_PROVIDER)]
        command += ["--clients", str(clients), "--accounts", str(accounts), "--port", str(settings.port)]
        command += ["--api", settings.api, "--api-scopes", " ".join(settings.api_scopes)]
        command += ["--access-token-ttl", str(settings.access_token_ttl), "--id-token-ttl", str(settings.id_token_ttl)]
        command += ["--refresh-token-ttl", str(settings.refresh_token_ttl)]
        command += ["--access-token-alg", settings.access_token_alg]
        command += ["--rotate-refresh-tokens", "true" if settings.rotate_refresh_tokens else "false"]
        log_path = folder / "provider.log"
        with log_path.open("wb") as log, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log) as process:
            try:
                assert process.stdout is not None
                line = _ready_line(process.stdout, start_timeout, log_path)
                issuer, _, admin_url = line.removeprefix(_READY).partition(" admin ")
                yield RunningProvider(issuer=issuer, admin_url=admin_url, settings=settings, log_path=log_path)
            finally:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _ready_line(stdout: IO[bytes], timeout: float, log_path: Path) -> str:
    """The provider's ready line, read as it arrives; IdpError with its log when it exits or takes too long."""
    deadline = time.monotonic() + timeout
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        while True:
            for line in buffer.decode(errors="replace").splitlines(keepends=True):
                if line.startswith(_READY) and line.endswith("\n"):
                    return line.strip()
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                raise IdpError(f"oidc-provider was not ready within {timeout} s; its log:\n{log_path.read_text()}")
            chunk = os.read(stdout.fileno(), 4096)
            if not chunk:
                raise IdpError(f"oidc-provider exited before it was ready; its log:\n{log_path.read_text()}")
            buffer += chunk
