"""MCP Apps views of the API's functions (SEP-1865): pages hosts render in a sandboxed frame beside a tool call.

Generated from the document, per function: a table for results that are lists (sortable, paged as the API pages),
a detail for one object, the answer as text otherwise, and a form of the arguments for writes a person approves.
One small static script and style (gateway/apps/static/) draw them all; `AppViews` serves them as `ui://`
resources and links tools and results to them, for clients that declare the UI extension only.
"""

from __future__ import annotations

from gateway.apps.page import bundle_bytes, content_security_policy, view_page
from gateway.apps.resources import CALL_FUNCTION_VIEW, VIEW_KEY, VIEW_TEMPLATE, AppViews
from gateway.apps.views import View, view_of

__all__ = [
    "CALL_FUNCTION_VIEW",
    "VIEW_KEY",
    "VIEW_TEMPLATE",
    "AppViews",
    "View",
    "bundle_bytes",
    "content_security_policy",
    "view_of",
    "view_page",
]
