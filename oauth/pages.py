"""The login, consent and error pages: plain server-rendered HTML, readable on a phone, no script at all.

Every page is sent with headers that keep it out of frames (clickjacking), out of caches and out of other
sites' Referer headers (`same-origin`, not `no-referrer`: with that, browsers send `Origin: null` on the form
posts, and the origin check would refuse them), and with a Content-Security-Policy that allows only its own
inline style (by nonce) and form posts to this server (and, for the consent form, the client's redirect URI,
which the post redirects to).
"""

from __future__ import annotations

import secrets
from html import escape
from typing import Final
from urllib.parse import urlsplit

from starlette.responses import HTMLResponse

from oauth.clients import Client

__all__ = ["consent_page", "error_page", "login_page", "page_headers", "return_page"]

_STYLE: Final = """
:root { color-scheme: light dark; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
body { margin: 0; padding: 1.5rem 1rem; display: flex; justify-content: center; line-height: 1.5; }
main { width: 100%; max-width: 26rem; }
h1 { font-size: 1.35rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
.host { font-family: ui-monospace, monospace; word-break: break-all; }
label { display: block; font-weight: 600; margin-bottom: .35rem; }
input[type=password] { box-sizing: border-box; width: 100%; font-size: 1rem; padding: .7rem; margin-bottom: 1rem;
  border: 1px solid #888; border-radius: .4rem; }
button, a.button { font-size: 1rem; padding: .75rem 1.2rem; border-radius: .4rem; border: 1px solid #888;
  cursor: pointer; min-width: 7rem; color: inherit; text-decoration: none; text-align: center; }
button.primary { background: #1f6feb; border-color: #1f6feb; color: #fff; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; }
.error { border-left: 4px solid #d1242f; padding: .5rem .75rem; background: rgba(209, 36, 47, .08); }
.note { font-size: .9rem; opacity: .8; }
form { margin-bottom: 1.25rem; }
"""


def _origin_source(uri: str) -> str:
    """The CSP source expression that allows a redirect to `uri`: its origin, or its scheme for a native app."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"


def page_headers(nonce: str, redirect_uri: str | None = None) -> dict[str, str]:
    """The security headers of every page; `redirect_uri` is where the page's form post may redirect."""
    form_action = "'self'" + (f" {_origin_source(redirect_uri)}" if redirect_uri else "")
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'nonce-{nonce}'; form-action {form_action}; "
            "frame-ancestors 'none'; base-uri 'none'"
        ),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cache-Control": "no-store",
        "Pragma": "no-cache",
    }


def _page(title: str, body: str, *, status: int = 200, redirect_uri: str | None = None) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    html = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="referrer" content="same-origin"><title>{escape(title)}</title>'
        f'<style nonce="{nonce}">{_STYLE}</style></head>'
        f"<body><main>{body}</main></body></html>\n"
    )
    return HTMLResponse(html, status_code=status, headers=page_headers(nonce, redirect_uri))


def _hidden(**fields: str) -> str:
    return "".join(f'<input type="hidden" name="{name}" value="{escape(value)}">' for name, value in fields.items())


def _redirect_host(redirect_uri: str) -> str:
    """Where a redirect URI leads, as a person reads it: its host (and port), or the whole URI of a native app."""
    return urlsplit(redirect_uri).netloc or redirect_uri


def _client_line(client: Client, redirect_uri: str) -> str:
    host = escape(_redirect_host(redirect_uri))
    if client.source == "document":
        origin = escape(urlsplit(client.client_id).netloc)
        who = f'<strong>{escape(client.display_name)}</strong> (from <span class="host">{origin}</span>)'
    elif client.source == "registered":
        # A dynamically registered client names itself; the redirect host is the part that can be trusted.
        who = f"<strong>{escape(client.display_name)}</strong> (a name the app gave itself)"
    else:
        who = f"<strong>{escape(client.display_name)}</strong>"
    return f'<p>{who} will receive access at <span class="host">{host}</span>.</p>'


def login_page(
    *,
    resource_name: str,
    client: Client,
    redirect_uri: str,
    key_label: str,
    action: str,
    request_id: str,
    csrf: str,
    error: str | None = None,
    status: int = 200,
) -> HTMLResponse:
    """The API-key form: the person pastes the key they use with the REST API."""
    problem = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    body = (
        f"<h1>Connect to {escape(resource_name)}</h1>"
        f"{_client_line(client, redirect_uri)}"
        f"{problem}"
        f'<form method="post" action="{escape(action)}">'
        f"{_hidden(request_id=request_id, csrf=csrf)}"
        f'<label for="api_key">Your {escape(key_label)} for {escape(resource_name)}</label>'
        f'<input type="password" id="api_key" name="api_key" autocomplete="off" required autofocus>'
        f'<div class="actions"><button class="primary" type="submit">Continue</button></div>'
        "</form>"
        f'<p class="note">The key is checked with {escape(resource_name)} and kept encrypted on this server. '
        "The app never sees it.</p>"
    )
    return _page(f"Log in to {resource_name}", body, status=status)


def consent_page(
    *,
    resource_name: str,
    client: Client,
    redirect_uri: str,
    user_name: str,
    credential: str,
    action: str,
    request_id: str,
    csrf: str,
) -> HTMLResponse:
    """The consent form: names the client, where it will be redirected, the user, and what the access means.

    Said in plain words, not as scope names: the client's calls carry the user's own `credential` (e.g. "API
    key"), so it can do whatever the user can do with the API.
    """
    body = (
        f"<h1>Allow access to {escape(resource_name)}?</h1>"
        f"{_client_line(client, redirect_uri)}"
        f"<p>It can use {escape(resource_name)} on your behalf, as <strong>{escape(user_name)}</strong>, with your "
        f"{escape(credential)}: it can read and change your data as you could yourself.</p>"
        f'<form method="post" action="{escape(action)}">'
        f"{_hidden(request_id=request_id, csrf=csrf)}"
        '<div class="actions">'
        '<button class="primary" type="submit" name="decision" value="allow">Allow</button>'
        '<button type="submit" name="decision" value="deny">Deny</button>'
        "</div></form>"
        '<p class="note">Allow only apps you trust. You can revoke access by disconnecting the app.</p>'
    )
    return _page(f"Allow access to {resource_name}?", body, redirect_uri=redirect_uri)


def error_page(title: str, message: str, *, status: int = 400) -> HTMLResponse:
    """A page that explains a failed authorization; never a redirect, so it cannot be an open redirect."""
    body = f'<h1>{escape(title)}</h1><p class="error" role="alert">{escape(message)}</p>'
    return _page(title, body, status=status)


def return_page(*, error: str, description: str, redirect_uri: str, location: str) -> HTMLResponse:
    """The page for a refused request of a client anyone could have set up (registered dynamically, or named by a
    metadata document): it names the error and the host of `redirect_uri`, with a link to `location` (the error
    response) that the person may follow. Never an automatic redirect, so that nobody can register a client and
    use this server to send people to a site of their choosing (RFC 9700 §4.11.2)."""
    host = escape(_redirect_host(redirect_uri))
    body = (
        "<h1>The app's request was refused</h1>"
        f'<p class="error" role="alert">{escape(error)}: {escape(description)}</p>'
        f'<p>The app asked to be sent back to <span class="host">{host}</span>. Follow the link only if you started '
        "connecting this app yourself, just now.</p>"
        f'<div class="actions"><a class="button" href="{escape(location)}" rel="noreferrer">Back to {host}</a></div>'
    )
    return _page("The app's request was refused", body, status=400)
