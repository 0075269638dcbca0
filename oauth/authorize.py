"""The authorization endpoint (OAuth 2.1 §4.1.1) and the login and consent forms behind it.

GET /authorize checks the request; until the client and its redirect URI are known good, every problem is an
error page, never a redirect (RFC 6749 §4.1.2.1: no open redirect). Later problems go back to the client as
`error` redirects: at once for a client the operator configured; for one anyone could have set up (registered
dynamically, or named by a metadata document), through a page with a link the person may follow, since before
the person logs in and consents nothing but the client vouches for its redirect URI (RFC 9700 §4.11.2).

A valid request becomes a pending request in the store, bound to this browser by a cookie, and the login page
(or, when the host app's session already names the user, the consent page) is shown. Each form carries a CSRF
token: an HMAC of the pending request's id and the browser cookie. Allowing redirects with a single-use code,
`state` and `iss` (RFC 9207).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from oauth import _authlib, pages
from oauth._crypto import Sealer, new_token, token_hash
from oauth._http import client_address, read_form, single_values
from oauth._limits import Limit, Scope, spend
from oauth.clients import Client, ClientRegistry
from oauth.config import OAuthConfig
from oauth.errors import ErrorCode, LoginError, ProtocolError, ProviderUnavailableError
from oauth.events import Events
from oauth.grants import Grants, Principal, same_resource
from oauth.login import ApiKeyLogin, Login, ProviderRedirect
from oauth.store import Clock, TokenStore

__all__ = ["Authorization"]

logger = logging.getLogger(__name__)

_MAX_KEY_ATTEMPTS: Final = 5
#: The window of `key_checks_per_address` and `key_checks_per_network`, whatever login the keys are for: a person
#: mistyping keys stays far below them, a script guessing keys meets them at once.
_KEY_WINDOW: Final = 900.0
#: Whose requests a spent limit counted, as the page says it.
_FROM: Final[dict[Scope, str]] = {
    "address": "from this address",
    "network": "from this address's network",
    "overall": "just now",
}
_START_AGAIN: Final = "Go back to the app and connect again."
#: The longest `state` accepted. It is kept with the pending login and comes back in the redirect URL, so an
#: unbounded one lets a visitor store about 64 KiB per login. Clients send a random value of 22 to 64 characters,
#: at times with a short return path; Connect2id refuses more than 1024 in a query response too.
_MAX_STATE: Final = 1024


class Authorization:
    """The three steps a browser goes through: `start` (GET /authorize), `submit_key` (POST of the login form)
    and `decide` (POST of the consent form)."""

    def __init__(
        self,
        config: OAuthConfig,
        store: TokenStore,
        sealer: Sealer,
        clients: ClientRegistry,
        grants: Grants,
        login: Login,
        *,
        clock: Clock | None = None,
        events: Events | None = None,
    ) -> None:
        self.config = config
        self.events = events or Events()
        self.store = store
        self.sealer = sealer
        self.clients = clients
        self.grants = grants
        self.login = login
        self._clock = clock or time.time
        # RFC 6265bis §4.1.3.2: __Host- cookies are Secure, host-only and Path=/; plain http gets a plain name.
        self.cookie_name = "__Host-mcp-oauth" if config.secure_cookies else "mcp-oauth"
        self.login_action = config.endpoint("authorize/login")
        self.consent_action = config.endpoint("authorize/consent")

    # GET /authorize

    async def start(self, request: Request) -> Response:
        """Check an authorization request and show the login or consent page."""
        try:
            params = single_values(request.query_params.multi_items())
        except ProtocolError as error:
            return pages.error_page("The app sent a malformed request", f"{error.description}. {_START_AGAIN}")
        client_id = params.get("client_id")
        if not client_id:
            return pages.error_page("The app sent an incomplete request", f"client_id is missing. {_START_AGAIN}")
        # Of what the pending login keeps, only `state` is taken as sent: the client's redirect URI and challenge
        # are checked against bounds, its scopes and resource against this server's.
        state = params.get("state")
        if state is not None and len(state) > _MAX_STATE:
            return pages.error_page(
                "The app sent a malformed request",
                f"Its state is {len(state)} characters long; at most {_MAX_STATE} are accepted. {_START_AGAIN}",
            )
        # Each login started is a pending request in the store (and perhaps a metadata document fetched):
        # counted per address before anything is looked up, so one address cannot fill the store.
        address = client_address(request, self.config.proxy_networks)
        config, ttl = self.config, self.config.login_ttl
        spent = await spend(
            self.store,
            "logins",
            address,
            (
                Limit(scope="address", most=config.pending_logins_per_address, window=ttl),
                Limit(scope="network", most=config.pending_logins_per_network, window=ttl),
                Limit(scope="overall", most=config.pending_logins, window=ttl),
            ),
        )
        if spent is not None:
            self.events.login("limited")
            minutes = max(1, int(ttl // 60))
            return pages.error_page(
                "Too many logins",
                f"Too many logins were started {_FROM[spent.scope]}. Wait {minutes} minutes.",
                status=429,
            )
        try:
            client = await self.clients.find(client_id, address=address)
        except ProtocolError as error:
            return _unidentified(error)
        if client is None:
            return pages.error_page(
                "Unknown app", f"No app with client_id {client_id!r} is registered here. {_START_AGAIN}"
            )
        redirect_uri = client.redirect_uri(params.get("redirect_uri"))
        if redirect_uri is None and "redirect_uri" not in params:
            # OAuth 2.1 §4.1.1: redirect_uri may be left out only when the client registered exactly one.
            return pages.error_page(
                "The app did not say where to return",
                f"The app registered {len(client.redirect_uris)} redirect addresses and sent no redirect_uri to "
                f"choose one, so the login stops here. {_START_AGAIN}",
            )
        if redirect_uri is None:
            return pages.error_page(
                "The app's redirect address is not registered",
                f"redirect_uri {params.get('redirect_uri')!r} is not one this app registered, so the login stops here.",
            )
        try:
            code_challenge, scopes, resource = self._checked(params)
        except ProtocolError as error:
            self.events.refusal("authorize", error.code)
            location = self._error_location(redirect_uri, state, error.code, error.description)
            if client.source == "configured":
                return _redirect(location, 302)
            return pages.return_page(
                error=error.code, description=error.description, redirect_uri=redirect_uri, location=location
            )
        try:
            outcome = await self.login.current(request)
        except LoginError as error:
            return pages.error_page("You could not be logged in", str(error))
        if isinstance(outcome, Response):
            return outcome
        if outcome is not None:
            self.events.login("accepted")
        cookie = request.cookies.get(self.cookie_name) or new_token()
        request_id = new_token()
        expires_at = self._clock() + self.config.login_ttl
        record: dict[str, Any] = {
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "redirect_uri_given": "redirect_uri" in params,
            "state": state,
            "code_challenge": code_challenge,
            "scopes": scopes,
            "resource": resource,
            "browser": token_hash(cookie),
            "principal": self._sealed(outcome) if outcome is not None else None,
            "expires_at": expires_at,
        }
        csrf = self.sealer.sign("form", request_id, cookie)
        if outcome is None and isinstance(self.login, ProviderRedirect):
            # The person logs in at the identity provider, which sends the browser back to the callback.
            try:
                url, kept = await self.login.begin(scopes)
            except ProviderUnavailableError as error:
                return _provider_down(error)
            record["upstream"] = self.sealer.seal(kept)
            await self.store.put("request", request_id, record, expires_at=expires_at)
            await self.store.put(
                "request", _state_key(kept["state"]), {"request_id": request_id}, expires_at=expires_at
            )
            response: Response = _redirect(url, 303)
        else:
            await self.store.put("request", request_id, record, expires_at=expires_at)
            if outcome is not None:
                response = self._consent(client, record, outcome.name, request_id, csrf)
            else:
                response = self._login_form(client, redirect_uri, request_id, csrf)
        response.set_cookie(
            self.cookie_name,
            cookie,
            max_age=int(self.config.login_ttl),
            path="/",
            secure=self.config.secure_cookies,
            httponly=True,
            samesite="lax",
        )
        return response

    def _checked(self, params: dict[str, str]) -> tuple[str, list[str], str]:
        """The code challenge, granted scopes and resource of a request whose client is known."""
        if params.get("response_type") != "code":
            raise ProtocolError(
                "unsupported_response_type", f"response_type must be 'code', got {params.get('response_type')!r}"
            )
        challenge = params.get("code_challenge")
        if not challenge:
            raise ProtocolError("invalid_request", "code_challenge is required (PKCE with S256)")
        if params.get("code_challenge_method") != "S256":
            # OAuth 2.1 §4.1.1 and MCP authorization: S256 is required; `plain` (the RFC 7636 default) is refused.
            raise ProtocolError("invalid_request", "code_challenge_method must be S256; plain is not accepted")
        if not _authlib.is_code_challenge(challenge):
            raise ProtocolError("invalid_request", "code_challenge is not 43 to 128 characters of [A-Za-z0-9-._~]")
        # RFC 8707 §2: the resource is the MCP endpoint; a client that omits it means this one.
        resource = params.get("resource") or self.config.resource
        if not same_resource(resource, self.config.resource):
            raise ProtocolError(
                "invalid_target", f"resource {resource!r} is not served here; use {self.config.resource!r}"
            )
        # Scopes this server does not know are dropped, not refused, so a client's guess never breaks the login.
        scopes = [name for name in _authlib.scope_list(params.get("scope")) if name in self.config.scopes]
        return challenge, scopes or list(self.config.initial_scopes), self.config.resource

    def _error_location(self, redirect_uri: str, state: str | None, code: ErrorCode, description: str) -> str:
        """The error response (RFC 6749 §4.1.2.1, RFC 9207 `iss`) at the client's redirect URI."""
        params = [("error", code), ("error_description", description)]
        if state is not None:
            params.append(("state", state))
        params.append(("iss", self.config.issuer))
        return _authlib.add_query(redirect_uri, params)

    def _error_redirect(
        self, redirect_uri: str, state: str | None, code: ErrorCode, description: str, *, status: int
    ) -> Response:
        return _redirect(self._error_location(redirect_uri, state, code, description), status)

    def _sealed(self, principal: Principal) -> dict[str, Any]:
        sealed: dict[str, Any] = {
            "subject": principal.subject,
            "name": principal.name,
            "credentials": self.sealer.seal(principal.credentials),
        }
        if principal.upstream is not None:
            sealed["upstream"] = self.sealer.seal(principal.upstream)
        if principal.scopes is not None:
            sealed["scopes"] = list(principal.scopes)
        return sealed

    # GET /authorize/callback: back from the identity provider

    async def callback(self, request: Request) -> Response:
        """Finish a login at the identity provider: the answer must carry the `state` of a login this browser
        started here, used once; then the consent page, as after a key."""
        try:
            params = single_values(request.query_params.multi_items())
        except ProtocolError as error:
            return pages.error_page("The identity provider sent a malformed answer", f"{error.description}.")
        state = params.get("state")
        if not state or not isinstance(self.login, ProviderRedirect):
            return pages.error_page("This page was not opened by a login", f"The answer has no state. {_START_AGAIN}")
        found = await self.store.get("request", _state_key(state))
        if found is None:
            return pages.error_page(
                "This login has expired", f"It took too long, or was never started here. {_START_AGAIN}"
            )
        request_id = found["request_id"]
        record = await self.store.get("request", request_id)
        cookie = request.cookies.get(self.cookie_name)
        if record is None:
            return pages.error_page("This login has expired", f"The login took too long. {_START_AGAIN}")
        if not cookie or token_hash(cookie) != record["browser"]:
            logger.warning("refused an identity provider's answer in a browser that did not start the login")
            return pages.error_page(
                "This login was started in another browser",
                f"Finish it in the browser where you started it. {_START_AGAIN}",
                status=403,
            )
        _, first = await self.store.claim("request", _state_key(state))
        if not first or "upstream" not in record:
            logger.warning("refused an identity provider's answer whose state was used already (a replay?)")
            return pages.error_page("This login was finished already", f"Its answer came twice. {_START_AGAIN}")
        client = await self._client_of(request, record)
        if isinstance(client, Response):
            return client
        if params.get("error") == "access_denied":
            # The person declined at the provider: the app hears so, as from a denied consent.
            self.events.login("denied")
            await self.store.delete("request", request_id)
            return self._error_redirect(
                record["redirect_uri"], record["state"], "access_denied", "the user did not log in", status=303
            )
        try:
            principal = await self.login.complete(params, self.sealer.unseal(record["upstream"]))
        except LoginError as error:
            self.events.login("refused")
            await self.store.delete("request", request_id)
            return pages.error_page("You could not be logged in", str(error))
        except ProviderUnavailableError as error:
            await self.store.delete("request", request_id)
            return _provider_down(error)
        self.events.login("accepted")
        del record["upstream"]
        record["principal"] = self._sealed(principal)
        await self.store.put("request", request_id, record, expires_at=record["expires_at"])
        csrf = self.sealer.sign("form", request_id, cookie)
        return self._consent(client, record, principal.name, request_id, csrf)

    def _login_form(
        self, client: Client, redirect_uri: str, request_id: str, csrf: str, *, error: str | None = None
    ) -> Response:
        label = self.login.key_label if isinstance(self.login, ApiKeyLogin) else "API key"
        return pages.login_page(
            resource_name=self.config.resource_name,
            client=client,
            redirect_uri=redirect_uri,
            key_label=label,
            action=self.login_action,
            request_id=request_id,
            csrf=csrf,
            error=error,
            status=400 if error else 200,
        )

    def _consent(self, client: Client, record: dict[str, Any], user: str, request_id: str, csrf: str) -> Response:
        return pages.consent_page(
            resource_name=self.config.resource_name,
            client=client,
            redirect_uri=record["redirect_uri"],
            user_name=user,
            credential=self.login.key_label if isinstance(self.login, ApiKeyLogin) else "account",
            action=self.consent_action,
            request_id=request_id,
            csrf=csrf,
        )

    # The two forms

    async def _pending(self, request: Request) -> tuple[dict[str, str], dict[str, Any], Client] | Response:
        """The form, its pending request and client; an error page when the form is stale or forged."""
        origin = request.headers.get("origin")
        own = urlsplit(self.config.issuer)
        if origin is not None and origin != f"{own.scheme}://{own.netloc}":
            return pages.error_page("This form came from another site", "The request was refused.", status=403)
        try:
            form = await read_form(request)
        except ProtocolError as error:
            return pages.error_page("The form could not be read", error.description)
        request_id, csrf = form.get("request_id", ""), form.get("csrf", "")
        record = await self.store.get("request", request_id) if request_id else None
        if record is None:
            return pages.error_page("This page has expired", f"The login took too long. {_START_AGAIN}")
        cookie = request.cookies.get(self.cookie_name)
        if (
            not cookie
            or token_hash(cookie) != record.get("browser")
            or not self.sealer.verify(csrf, "form", request_id, cookie)
        ):
            logger.warning("refused a login form whose CSRF token or browser cookie does not match")
            return pages.error_page(
                "This form could not be verified",
                f"It was not sent from the page this browser opened. {_START_AGAIN}",
                status=403,
            )
        client = await self._client_of(request, record)
        if isinstance(client, Response):
            return client
        return form, record, client

    async def _client_of(self, request: Request, record: Mapping[str, Any]) -> Client | Response:
        """The client a login in progress (`record`) is for, or the page to answer when it is gone or cannot be
        identified any more."""
        address = client_address(request, self.config.proxy_networks)
        try:
            client = await self.clients.find(record["client_id"], address=address)
        except ProtocolError as error:
            return _unidentified(error)
        if client is None:
            return pages.error_page("Unknown app", f"The app is no longer registered. {_START_AGAIN}")
        return client

    async def submit_key(self, request: Request) -> Response:
        """Check the pasted API key; show the consent page, or the login page again with what went wrong."""
        pending = await self._pending(request)
        if isinstance(pending, Response):
            return pending
        form, record, client = pending
        request_id, csrf = form["request_id"], form["csrf"]
        if record["principal"] is not None:
            return self._consent(client, record, record["principal"]["name"], request_id, csrf)
        # Every key checked counts, before it is checked: against this login (a few tries at a typo) and against
        # the address it comes from (a new login costs nothing, so only that limits guessing).
        address = client_address(request, self.config.proxy_networks)
        spent = await spend(
            self.store,
            "API keys",
            address,
            (
                Limit(scope="address", most=self.config.key_checks_per_address, window=_KEY_WINDOW),
                Limit(scope="network", most=self.config.key_checks_per_network, window=_KEY_WINDOW),
            ),
        )
        if spent is not None:
            self.events.login("limited")
            minutes = int(_KEY_WINDOW // 60)
            return pages.error_page(
                "Too many attempts", f"Too many keys came {_FROM[spent.scope]}. Wait {minutes} minutes.", status=429
            )
        tries = await self.store.count(f"request:{request_id}", window=self.config.login_ttl)
        if tries > _MAX_KEY_ATTEMPTS:
            self.events.login("limited")
            return await self._attempts_used_up(request_id)
        try:
            principal = await self.login.check_key(form.get("api_key", ""))
        except LoginError as error:
            self.events.login("refused")
            if tries >= _MAX_KEY_ATTEMPTS:
                return await self._attempts_used_up(request_id)
            return self._login_form(client, record["redirect_uri"], request_id, csrf, error=str(error))
        self.events.login("accepted")
        record["principal"] = self._sealed(principal)
        await self.store.put("request", request_id, record, expires_at=record["expires_at"])
        return self._consent(client, record, principal.name, request_id, csrf)

    async def _attempts_used_up(self, request_id: str) -> Response:
        """End a login whose keys were refused too often: the request is gone, the app must start again."""
        await self.store.delete("request", request_id)
        return pages.error_page("Too many attempts", f"The key was refused {_MAX_KEY_ATTEMPTS} times. {_START_AGAIN}")

    async def decide(self, request: Request) -> Response:
        """Redirect back to the client: with a code when the user allowed, with `access_denied` otherwise."""
        pending = await self._pending(request)
        if isinstance(pending, Response):
            return pending
        form, record, client = pending
        decision = form.get("decision")
        if record["principal"] is None:
            return pages.error_page("Log in first", f"This browser has not logged in for this request. {_START_AGAIN}")
        if decision not in ("allow", "deny"):
            return pages.error_page("The form could not be read", "Choose Allow or Deny.")
        _, first = await self.store.claim("request", form["request_id"])
        await self.store.delete("request", form["request_id"])
        if not first:
            return pages.error_page("Already answered", f"This request was answered already. {_START_AGAIN}")
        redirect_uri, state = record["redirect_uri"], record["state"]
        if decision == "deny":
            self.events.login("denied")
            return self._error_redirect(redirect_uri, state, "access_denied", "the user denied access", status=303)
        sealed = record["principal"]
        principal = Principal(
            subject=sealed["subject"],
            name=sealed["name"],
            credentials=self.sealer.unseal(sealed["credentials"]),
            upstream=self.sealer.unseal(sealed["upstream"]) if "upstream" in sealed else None,
        )
        # A provider may grant fewer scopes than were asked: the grant holds those it granted.
        granted = sealed.get("scopes")
        scopes = [name for name in record["scopes"] if granted is None or name in granted]
        code = await self.grants.issue_code(
            client=client,
            redirect_uri=redirect_uri,
            redirect_uri_given=record["redirect_uri_given"],
            code_challenge=record["code_challenge"],
            scopes=scopes,
            resource=record["resource"],
            principal=principal,
        )
        self.events.login("allowed")
        params = [("code", code)]
        if state is not None:
            params.append(("state", state))
        params.append(("iss", self.config.issuer))
        return _redirect(_authlib.add_query(redirect_uri, params), 303)


def _unidentified(error: ProtocolError) -> Response:
    """The page for a client that could not be looked up: 429 when its metadata document may not be fetched now
    (the page says when to try again), 400 when the client is at fault."""
    if error.code != "temporarily_unavailable":
        return pages.error_page("This app could not be identified", error.description)
    response = pages.error_page("This app could not be identified", error.description, status=error.status)
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response


def _state_key(state: str) -> str:
    """Where the pending login a provider's `state` belongs to is found (the state itself is never stored)."""
    return f"state:{token_hash(state)}"


def _provider_down(error: ProviderUnavailableError) -> Response:
    logger.warning("the identity provider is unavailable: %s", error.detail)
    response = pages.error_page(
        "The identity provider cannot be reached",
        f"Logging in needs it, and it did not answer. Try again in a minute. {_START_AGAIN}",
        status=503,
    )
    response.headers["Retry-After"] = str(error.retry_after)
    return response


def _redirect(url: str, status: int) -> Response:
    return RedirectResponse(
        url, status_code=status, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
    )
