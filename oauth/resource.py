"""The resource server side: the MCP endpoint accepts only this server's access tokens, and each becomes the
REST headers of the user who logged in. This is the one place the oauth package meets the gateway: the
gateway's `auth` function (`gateway.rest.credentials.AuthFunc`: a token in, REST headers out). A refused token
raises this package's own `TokenError`, carrying the WWW-Authenticate challenge, which the gateway answers
with a 401.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from oauth.config import OAuthConfig
from oauth.errors import TokenError
from oauth.events import Events
from oauth.grants import Grants
from oauth.metadata import resource_metadata_url

__all__ = ["ResourceGuard", "ScopedHeaders"]


class ScopedHeaders(dict[str, str]):
    """The REST headers of a valid access token, with its grant: the `scopes` it was issued for (RFC 6749 §3.3),
    the `client_id` of the client it was issued to, the `subject` who logged in and the `login` (an opaque name of
    the grant, the same for every token of one login).

    The gateway reads the grant to decide which functions the caller sees and may call, whose state is whose (the
    login and scopes, not the headers, which an identity provider renews) and whose budgets a call counts against
    (the subject's).
    """

    def __init__(
        self,
        headers: Mapping[str, str],
        scopes: tuple[str, ...],
        client_id: str | None = None,
        *,
        subject: str | None = None,
        login: str | None = None,
        challenge: Callable[[Sequence[str]], str] | None = None,
    ) -> None:
        super().__init__(headers)
        self.scopes = scopes
        self.client_id = client_id
        self.subject = subject
        self.login = login
        self._challenge = challenge

    def insufficient_scope(self, needed: Sequence[str]) -> str:
        """The WWW-Authenticate value of a 403 asking for more scopes (RFC 6750 §3.1, MCP scope step-up): the
        scopes already granted and `needed`, where to log in, what failed."""
        scopes = list(dict.fromkeys((*self.scopes, *needed)))
        if self._challenge is not None:
            return self._challenge(scopes)
        return f'Bearer error="insufficient_scope", scope="{" ".join(scopes)}"'


class ResourceGuard:
    """Turns an MCP request's bearer token into REST headers, or refuses it with an RFC 6750 challenge.

    The MCP access token itself never reaches the REST API: the headers are the ones the user logged in with.
    """

    def __init__(self, config: OAuthConfig, grants: Grants, *, events: Events | None = None) -> None:
        self.config = config
        self.grants = grants
        self.events = events or Events()

    def challenge(
        self, error: str | None = None, description: str | None = None, *, scopes: Sequence[str] | None = None
    ) -> str:
        """The WWW-Authenticate value of a 401 (or a 403 with `insufficient_scope`): where the resource metadata is
        and which scopes to ask for (RFC 9728 §5.1, MCP authorization: scope selection and step-up)."""
        asked = self.config.initial_scopes if scopes is None else scopes
        parts = [f'resource_metadata="{resource_metadata_url(self.config)}"', f'scope="{" ".join(asked)}"']
        if error is not None:
            parts.append(f'error="{error}"')
        if description is not None:
            parts.append(f'error_description="{description}"')
        return "Bearer " + ", ".join(parts)

    async def rest_headers(self, token: str | None) -> Mapping[str, str]:
        """The gateway's `auth` function: REST headers (with the token's scopes) for a valid token; TokenError
        (401) otherwise."""
        if not token:
            # RFC 6750 §3.1: a request without credentials gets a challenge without an error code.
            self.events.refusal("resource", "no_token")
            raise TokenError(
                "this MCP server needs OAuth: connect through the client's OAuth flow",
                www_authenticate=self.challenge(),
            )
        grant = await self.grants.check_access_token(token)
        if grant is None:
            self.events.refusal("resource", "invalid_token")
            raise TokenError(
                "the access token is invalid, expired, revoked or for another resource; refresh it or authorize again",
                www_authenticate=self.challenge("invalid_token", "the access token is not valid for this resource"),
            )
        return ScopedHeaders(
            grant.credentials,
            grant.scopes,
            grant.client_id,
            subject=grant.subject,
            login=grant.login,
            challenge=lambda scopes: self.challenge(
                "insufficient_scope", "the call needs more scopes than the token holds", scopes=scopes
            ),
        )
