"""Prefect's server app as an object, for `--app prefect_asgi:app` (what `prefect server start` builds)."""

from __future__ import annotations

from prefect.server.api.server import create_app

app = create_app(final=True)
