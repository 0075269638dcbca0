"""Small FastAPI apps that reproduce the shapes of real ones the gateway broke on (and no longer does).

Each is importable as `tests.gateway.shapes:<name>` for `mcp-gateway serve --app` and `stdio --app`. The
shapes: a middleware holding a per-request capacity-limiter token, an admission limit of one request in flight,
an API mounted as a sub-app under `/api` (its own document, or one whose server URL is `/api`), POST
endpoints that only read and POST endpoints that delete, a `me` endpoint answering with a token and a private
key, a handler that raises, and an API authenticated with HTTP Basic.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

KEY = "shape-key"
ITEMS = {1: {"id": 1, "name": "anvil"}, 2: {"id": 2, "name": "rope"}}


def _key(request: Request) -> str:
    if request.headers.get("authorization") != f"Bearer {KEY}":
        raise HTTPException(status_code=401, detail="a valid bearer token is needed")
    return KEY


def _items_api(title: str, **options: Any) -> FastAPI:
    api = FastAPI(title=title, **options)

    @api.get("/items", tags=["items"], operation_id="list_items")
    async def list_items(key: str = Depends(_key)) -> list[dict[str, Any]]:
        return list(ITEMS.values())

    @api.get("/items/{item_id}", tags=["items"], operation_id="get_item")
    async def get_item(item_id: int, key: str = Depends(_key)) -> dict[str, Any]:
        if item_id not in ITEMS:
            raise HTTPException(status_code=404, detail=f"no item {item_id}")
        return ITEMS[item_id]

    @api.get("/me", tags=["users"], operation_id="read_me")
    async def read_me(key: str = Depends(_key)) -> dict[str, Any]:
        return {"id": 7, "name": "Ada", "email": "ada@example.com", "role": "admin"}

    return api


class PerRequestLimiter:
    """Holds a capacity-limiter token for the whole request, as apps that bound their concurrency do."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.limiter = anyio.CapacityLimiter(40)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async with self.limiter:
            await self.app(scope, receive, send)


class AdmitOne:
    """Admits one request in flight; another waits a moment, then is told 503, as load-shedding apps do."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.slot = anyio.Semaphore(1)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with anyio.move_on_after(2):
            async with self.slot:
                await self.app(scope, receive, send)
                return
        await JSONResponse({"detail": "busy"}, status_code=503)(scope, receive, send)


def limited_app() -> FastAPI:
    """An app with a per-request capacity limiter around everything (a factory, as `--app` accepts)."""
    app = _items_api("Limited shop")
    app.add_middleware(PerRequestLimiter)
    return app


def admit_one_app() -> FastAPI:
    """An app that admits one request in flight."""
    app = _items_api("Admit-one shop")
    app.add_middleware(AdmitOne)
    return app


def _host(api: FastAPI) -> FastAPI:
    host = FastAPI(title="Host")

    @host.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    host.mount("/api", api)
    return host


#: The API's own app, mounted under /api of `mounted`; its document describes /items, not /api/items.
sub_api = _items_api("Mounted shop")
mounted = _host(sub_api)


def publishing_host() -> FastAPI:
    """A host that mounts its API under /api and publishes the API's document (/items) as its own (Prefect's shape)."""
    api = _items_api("Published shop")
    host = _host(api)
    host.openapi = api.openapi  # type: ignore[method-assign]
    return host


#: An API whose document says `servers: [{url: /api}]`, mounted there.
relative_api = _items_api("Relative shop", servers=[{"url": "/api"}])
relative = _host(relative_api)


def effects_app() -> FastAPI:
    """POST endpoints that read and that delete, marked in the document and not."""
    app = FastAPI(title="Effects")

    @app.post("/flows/filter", tags=["flows"], operation_id="read_flows", openapi_extra={"x-mcp-read-only": True})
    async def read_flows(key: str = Depends(_key)) -> list[dict[str, Any]]:
        return [{"id": 1, "name": "nightly"}]

    @app.post("/flows/count", tags=["flows"], operation_id="count_flows")
    async def count_flows(key: str = Depends(_key)) -> int:
        return 1

    @app.post("/flows/bulk_delete", tags=["flows"], operation_id="bulk_delete_flows")
    async def bulk_delete_flows(key: str = Depends(_key)) -> dict[str, int]:
        return {"deleted": 0}

    @app.post("/flows/purge", tags=["flows"], operation_id="purge_flows", openapi_extra={"x-mcp-destructive": True})
    async def purge_flows(key: str = Depends(_key)) -> dict[str, int]:
        return {"purged": 0}

    @app.post("/flows", tags=["flows"], operation_id="create_flow")
    async def create_flow(key: str = Depends(_key)) -> dict[str, int]:
        return {"id": 2}

    return app


def secrets_app() -> FastAPI:
    """A `me` endpoint that answers with the caller's API token and SSH private key beside the identity."""
    app = FastAPI(title="Secrets")

    @app.get("/users/me", tags=["users"], operation_id="get_me")
    async def get_me(key: str = Depends(_key)) -> dict[str, Any]:
        return {
            "id": 42,
            "name": "Grace",
            "email": "grace@example.com",
            "role": "owner",
            "api_token": "tok_0123456789abcdef",
            "settings": {"theme": "dark", "ssh_private_key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n"},
            "keys": [{"id": 1, "value": "sk-live-0123456789abcdefghij"}],
            "last_login": "2026-12-01T10:00:00Z",
        }

    return app


def raising_app() -> FastAPI:
    """A handler with a bug."""
    app = _items_api("Raising shop")

    @app.get("/reports/{report_id}", tags=["reports"], operation_id="get_report")
    async def get_report(report_id: int, key: str = Depends(_key)) -> dict[str, Any]:
        raise ZeroDivisionError("division by zero in the report builder")

    return app


BASIC_USER, BASIC_PASSWORD = "ada", "s3cret"


def basic_app() -> FastAPI:
    """An API authenticated with HTTP Basic (RFC 7617)."""
    app = FastAPI(title="Basic shop")
    expected = "Basic " + base64.b64encode(f"{BASIC_USER}:{BASIC_PASSWORD}".encode()).decode()

    def basic(request: Request) -> str:
        if request.headers.get("authorization") != expected:
            raise HTTPException(status_code=401, detail="basic credentials needed")
        return BASIC_USER

    @app.get("/me", tags=["users"], operation_id="read_me")
    async def read_me(user: str = Depends(basic)) -> dict[str, str]:
        return {"name": user}

    return app
