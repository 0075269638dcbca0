"""The HTML document of a view: the static script and style inline, the view's JSON as data, a strict CSP.

`view_page(view)` is the whole page a host renders (`text/html;profile=mcp-app`). Nothing is loaded from outside:
the script and the style ship in the package (gateway/apps/static/) and are inlined, allowed by their SHA-256
hashes in a `default-src 'none'` policy; the view's JSON sits in a `<script type="application/json">` data block
with `<`, `>`, `&` and U+2028/2029 escaped, so no string in it can end the block or become markup. The same
view gives the same bytes, so hosts may cache a page for as long as the package and the document stay the same.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from importlib import resources
from typing import Final

from gateway.apps.views import View

__all__ = ["bundle_bytes", "content_security_policy", "view_page"]

_STATIC: Final = resources.files("gateway.apps") / "static"


@functools.cache
def _static(name: str) -> str:
    text = (_STATIC / name).read_text(encoding="utf-8")
    # Inlined as the element's text: either closing tag would end it early.
    if "</script" in text.lower() or "</style" in text.lower():
        raise RuntimeError(f"gateway/apps/static/{name} holds a closing tag and cannot be inlined")
    return text


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@functools.cache
def content_security_policy() -> str:
    """The page's Content-Security-Policy (in its `<meta http-equiv>`): only its own inline script and style run,
    nothing is fetched, framed or submitted."""
    return (
        "default-src 'none'; "
        f"script-src {_hash(_static('view.js'))}; "
        f"style-src {_hash(_static('view.css'))}; "
        "img-src data:; connect-src 'none'; font-src 'none'; media-src 'none'; frame-src 'none'; "
        "object-src 'none'; base-uri 'none'; form-action 'none'"
    )


def bundle_bytes() -> int:
    """The size of the view code every page carries (script and style), in bytes."""
    return len(_static("view.js").encode()) + len(_static("view.css").encode())


def _data(value: object) -> str:
    """`value` as JSON safe inside a `<script>` data block: no `<`, `>` or `&` (so no `</script>` or `<!--`), and
    ASCII only (so no U+2028/2029, which some parsers take for line ends)."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def view_page(view: View | None) -> str:
    """The page of `view`; None for the page that takes its view from each result (`call_function`'s)."""
    data = "" if view is None else f'<script type="application/json" id="gateway-view">{_data(view)}</script>'
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>View</title>"
        f"<style>{_static('view.css')}</style>"
        f'</head><body><main id="root"></main>{data}<script>{_static("view.js")}</script></body></html>\n'
    )
