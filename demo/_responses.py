"""OpenAPI descriptions of the demo shop's error responses, shared by its routers."""

from __future__ import annotations

from typing import Any

from demo.models import Problem

Responses = dict[int | str, dict[str, Any]]

UNAUTHORIZED: Responses = {401: {"model": Problem, "description": "The request carries no API key or an unknown one."}}
FORBIDDEN: Responses = {403: {"model": Problem, "description": "Only users with the admin role may do this."}}
NOT_FOUND: Responses = {404: {"model": Problem, "description": "No record has this id."}}
CONFLICT: Responses = {409: {"model": Problem, "description": "The request clashes with the current state."}}


def ok(description: str, media_type: str) -> Responses:
    """A 200 response whose body is not JSON."""
    return {200: {"description": description, "content": {media_type: {}}}}
