"""The bundled demo API: a small online shop in FastAPI that `mcp-gateway serve` runs when given no app.

It has several tags, reads and writes, enums, nested and recursive schemas, cursor pagination, API-key auth
(`DEMO_KEYS`), form, multipart, plain-text and PNG endpoints, and a store opened by the app's lifespan.
"""

from __future__ import annotations

from demo.app import create_app
from demo.auth import ADMIN_KEY, DEMO_KEYS, MEMBER_KEY

__all__ = ["ADMIN_KEY", "DEMO_KEYS", "MEMBER_KEY", "create_app"]
