"""The gateway's own door into a host app: its paths are answered before the host's middleware runs.

An MCP request that went through the host's per-request middleware would hold whatever that middleware holds
(a concurrency slot, an admission token, a database session) while its calls re-enter the whole app from
inside it: a capacity limiter then refuses the nested call ("already holding a token"), and an admission
limit of one waits on itself. So the gateway answers its paths outside the host's middleware, and its
in-process calls go through the complete app, middleware included, exactly as REST requests do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["GatewayEntrance", "install", "route_path"]


def route_path(scope: Scope) -> str:
    """The request path below the scope's `root_path` (the part routing sees)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root) :] or "/"
    return path


class GatewayEntrance:
    """ASGI middleware serving `routes` (exact paths) itself and passing everything else to `app`.

    `on_startup` and `on_shutdown` run around the app's own lifespan: after it has started, and after it has
    shut down.
    """

    def __init__(
        self,
        app: ASGIApp,
        routes: Mapping[str, ASGIApp],
        *,
        on_startup: Callable[[], Awaitable[None]] | None = None,
        on_shutdown: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.app = app
        self.routes = dict(routes)
        self.on_startup = on_startup
        self.on_shutdown = on_shutdown

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            target = self.routes.get(route_path(scope))
            if target is not None:
                await target(scope, receive, send)
                return
        elif scope["type"] == "lifespan" and (self.on_startup or self.on_shutdown):
            await self.app(scope, receive, self._lifespan_send(send))
            return
        await self.app(scope, receive, send)

    def _lifespan_send(self, send: Send) -> Send:
        async def relay(message: Message) -> None:
            kind = message["type"]
            if kind == "lifespan.startup.complete" and self.on_startup is not None:
                await self.on_startup()
            elif kind == "lifespan.shutdown.complete" and self.on_shutdown is not None:
                await self.on_shutdown()
            await send(message)

        return relay


def install(app: Any, entrance: Callable[[ASGIApp], GatewayEntrance]) -> bool:
    """Put the entrance outside a Starlette or FastAPI app's middleware (the stack is built on first call, and
    rebuilt never); False when `app` is not such an app."""
    build = getattr(app, "build_middleware_stack", None)
    if not callable(build) or not hasattr(app, "middleware_stack"):
        return False
    if app.middleware_stack is not None:  # already serving: wrap the stack it built
        app.middleware_stack = entrance(app.middleware_stack)
        return True

    def build_with_entrance() -> ASGIApp:
        return entrance(build())

    app.build_middleware_stack = build_with_entrance
    return True
