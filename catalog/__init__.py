"""Turn an OpenAPI 3.x document into the agent-facing catalog: modules, functions and a glossary of terms."""

from __future__ import annotations

__all__: list[str] = []
