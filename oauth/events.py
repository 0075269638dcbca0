"""What the authorization server tells operators about: logins, refusals and its token store's failures, for their
logs and metrics.

`OAuthServer.observe(listener)` adds a listener (the gateway's `Observer.oauth` counts them); every value
passed is from a closed set, never a credential, a client's input or a person's name.
"""

from __future__ import annotations

import logging
from typing import Literal, Protocol

__all__ = ["Endpoint", "Events", "LoginOutcome", "OAuthEvents"]

logger = logging.getLogger(__name__)

LoginOutcome = Literal["accepted", "refused", "limited", "allowed", "denied"]
"""A login step's end: the key or session `accepted` or `refused`, `limited` by too many tries, consent
`allowed` (a code is issued) or `denied`."""

Endpoint = Literal["authorize", "token", "revoke", "register", "resource"]
"""Where a request was refused; `resource` is the MCP endpoint's token check."""


class OAuthEvents(Protocol):
    """Receives the server's events; it must not raise and must not block."""

    def login(self, outcome: str) -> None: ...

    def refusal(self, endpoint: str, error: str) -> None: ...

    def store_failure(self, store: str) -> None: ...

    def store_state(self, store: str, up: bool) -> None: ...


class Events:
    """The listeners of one server; each event goes to all of them, a failing one logged and skipped."""

    def __init__(self) -> None:
        self.listeners: list[OAuthEvents] = []

    def login(self, outcome: LoginOutcome) -> None:
        for listener in self.listeners:
            try:
                listener.login(outcome)
            except Exception:
                logger.exception("an OAuth event listener failed")

    def refusal(self, endpoint: Endpoint, error: str) -> None:
        for listener in self.listeners:
            try:
                listener.refusal(endpoint, error)
            except Exception:
                logger.exception("an OAuth event listener failed")

    def store_failure(self, store: str) -> None:
        """An operation of `store` (e.g. "token store") failed because the store could not answer."""
        for listener in self.listeners:
            try:
                listener.store_failure(store)
            except Exception:
                logger.exception("an OAuth event listener failed")

    def store_state(self, store: str, up: bool) -> None:
        """`store` went down (its first failure) or came back."""
        for listener in self.listeners:
            try:
                listener.store_state(store, up)
            except Exception:
                logger.exception("an OAuth event listener failed")
