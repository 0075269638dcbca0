"""`OAuthServer`: the authorization server's routes, and the `auth` function that guards the MCP endpoint."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from oauth import pages
from oauth._crypto import Sealer, derive_key
from oauth._http import error_response
from oauth.authorize import Authorization
from oauth.cimd import ClientDocuments
from oauth.clients import ClientRegistry
from oauth.config import OAuthConfig
from oauth.errors import ErrorCode, ProtocolError, StoreError, StoreUnavailableError
from oauth.events import Endpoint as EndpointName
from oauth.events import Events, OAuthEvents
from oauth.grants import Grants
from oauth.login import ApiKeyLogin, Login
from oauth.metadata import resource_metadata, resource_metadata_paths, server_metadata, server_metadata_paths
from oauth.outage import Outage, WatchedStore
from oauth.registration import RegistrationEndpoint
from oauth.resource import ResourceGuard
from oauth.revoke import RevocationEndpoint
from oauth.store import Clock, TokenStore
from oauth.store_sqlite import SqliteStore
from oauth.token import TokenEndpoint
from oauth.upstream import ProviderLogin

__all__ = ["OAuthServer"]

logger = logging.getLogger(__name__)

Endpoint = Callable[[Request], Awaitable[Response]]

# Browser-based MCP clients read metadata and call these endpoints cross-origin; none of them uses cookies.
_CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "86400",
}


def _cors(endpoint: Endpoint) -> Endpoint:
    async def handle(request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=_CORS)
        response = await endpoint(request)
        response.headers.update(_CORS)
        return response

    return handle


def _store_faults(endpoint: Endpoint, name: EndpointName, events: Events) -> Endpoint:
    """`endpoint`, answering a store that fails as an OAuth error rather than a bare 500.

    A store that cannot answer is 503 with Retry-After: `temporarily_unavailable` at the authorization endpoint
    (a page for a browser, JSON for anything else: the client cannot be looked up to redirect to it, RFC 6749
    §4.1.2.1), `server_error` with a description at the others. A record the store cannot read is 500
    `server_error`, logged. Either way nothing is issued.
    """
    page = name == "authorize"

    async def handle(request: Request) -> Response:
        try:
            return await endpoint(request)
        except StoreUnavailableError as error:
            code: ErrorCode = "temporarily_unavailable" if page else "server_error"
            events.refusal(name, code)
            failed = ProtocolError(code, str(error), status=503, retry_after=error.retry_after)
            if page and _wants_html(request):
                response: Response = pages.error_page(
                    "Logging in is unavailable for a moment",
                    "The server cannot reach its token store right now; nothing is wrong with your account or the "
                    f"app. Try again in a minute. ({code})",
                    status=503,
                )
                response.headers["Retry-After"] = str(error.retry_after)
                return response
            return error_response(failed)
        except StoreError:
            logger.exception("the %s endpoint could not use the token store", name)
            events.refusal(name, "server_error")
            failed = ProtocolError(
                "server_error", "the token store failed; the operator has the details in the server's log"
            )
            if page and _wants_html(request):
                return pages.error_page("Logging in failed", f"{failed.description}.", status=500)
            return error_response(failed)

    return handle


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "") or "accept" not in request.headers


def _document(body: Mapping[str, Any]) -> Endpoint:
    async def serve(request: Request) -> Response:
        return JSONResponse(dict(body), headers={"Cache-Control": "public, max-age=300"})

    return serve


class OAuthServer:
    """An OAuth 2.1 authorization server for one MCP endpoint, served next to it.

    Give the config, how people log in (`oauth.login.ApiKeyLogin` or `SessionLogin`) and a store (default:
    an in-memory SQLite database, for one process; use `open_store` for a file or Redis). Then pass `auth` to
    the gateway (`Gateway(auth=server.auth)`) and add `routes()` to the app that serves the MCP endpoint (or
    call `mount(app)`). `documents` fetches Client ID Metadata Documents (a default fetcher when None).
    """

    def __init__(
        self,
        config: OAuthConfig,
        *,
        login: Login,
        store: TokenStore | None = None,
        documents: ClientDocuments | None = None,
        clock: Clock | None = None,
    ) -> None:
        clock = clock or time.time
        self.config = config
        #: Where logins and refusals are reported; add listeners with `observe`.
        self.events = Events()
        #: The token store's state: its outages are logged once each and reported to `events` listeners.
        self.outage = Outage("token store")
        self.outage.listeners.append(self.events)
        self.store = WatchedStore(store if store is not None else SqliteStore(":memory:", clock=clock), self.outage)
        self.documents = documents if documents is not None else ClientDocuments(clock=clock)
        self.metadata = server_metadata(config)
        sealer = Sealer(config.secret_key)
        if isinstance(login, ApiKeyLogin) and not login.keyed:
            login = login.with_subject_key(derive_key(config.secret_key, b"subjects"))
        self.clients = ClientRegistry(
            config, self.store, documents=self.documents, server_metadata=self.metadata, clock=clock
        )
        if isinstance(login, ProviderLogin):
            login = login.bound(callback=config.endpoint("authorize/callback"))
        self.login = login
        self.grants = Grants(
            config, self.store, sealer, clock=clock, renewer=login if isinstance(login, ProviderLogin) else None
        )
        self.authorization = Authorization(
            config, self.store, sealer, self.clients, self.grants, login, clock=clock, events=self.events
        )
        self.guard = ResourceGuard(config, self.grants, events=self.events)
        self.auth = self.guard.rest_headers
        """The gateway's `auth` function: an MCP access token becomes the logged-in user's REST headers."""

    def routes(self) -> list[BaseRoute]:
        """The routes of the authorization server and of the resource metadata, at the configured paths."""
        base = self.config.issuer_path
        clients, grants, events = self.clients, self.grants, self.events
        documents = [(path, _document(self.metadata)) for path in server_metadata_paths(self.config)]
        protected = _document(resource_metadata(self.config))
        documents += [(path, protected) for path in resource_metadata_paths(self.config)]
        routes: list[BaseRoute] = [Route(path, _cors(serve), methods=["GET", "OPTIONS"]) for path, serve in documents]
        authorization = self.authorization
        token, revoke = TokenEndpoint(clients, grants, events), RevocationEndpoint(clients, grants, events)
        routes += [
            Route(f"{base}/authorize", _store_faults(authorization.start, "authorize", events), methods=["GET"]),
            Route(
                f"{base}/authorize/login",
                _store_faults(authorization.submit_key, "authorize", events),
                methods=["POST"],
            ),
            Route(
                f"{base}/authorize/consent", _store_faults(authorization.decide, "authorize", events), methods=["POST"]
            ),
            Route(
                f"{base}/authorize/callback",
                _store_faults(authorization.callback, "authorize", events),
                methods=["GET"],
            ),
            Route(f"{base}/token", _cors(_store_faults(token, "token", events)), methods=["POST", "OPTIONS"]),
            Route(f"{base}/revoke", _cors(_store_faults(revoke, "revoke", events)), methods=["POST", "OPTIONS"]),
        ]
        if self.config.dynamic_registration:
            register = _store_faults(RegistrationEndpoint(clients, events), "register", events)
            routes.append(Route(f"{base}/register", _cors(register), methods=["POST", "OPTIONS"]))
        return routes

    async def ready(self) -> str | None:
        """None when the token store answers a write and a read now; else that it is unavailable (for readiness
        checks, e.g. `gateway.readiness.add(server.ready)`; what failed is in the log)."""
        return await self.store.probe()

    def observe(self, listener: OAuthEvents) -> None:
        """Report logins and refusals to `listener` too (e.g. `gateway.observer.oauth`, for metrics)."""
        self.events.listeners.append(listener)

    def mount(self, app: Any) -> None:
        """Add the routes to a Starlette or FastAPI app (before its own, so that nothing shadows them)."""
        router = getattr(app, "router", app)
        router.routes[0:0] = self.routes()

    async def aclose(self) -> None:
        """Close the store, the metadata-document fetcher and the identity provider's client."""
        await self.documents.aclose()
        if isinstance(self.login, ProviderLogin):
            await self.login.aclose()
        await self.store.aclose()
