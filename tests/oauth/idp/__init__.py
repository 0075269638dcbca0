"""A real OpenID Connect provider for the tests: panva's certified oidc-provider on 127.0.0.1 (provider.mjs), started
by `running_provider` with the clients, accounts, API audience and token lifetimes a test names, driven through its
login pages with httpx2 and given faults (refused refresh, slow token endpoint, outage, spoiled ID tokens) on demand.
"""

from __future__ import annotations

from tests.oauth.idp.provider import (
    ACCESS_TOKEN_TYPE,
    ALICE,
    BOB,
    TOKEN_EXCHANGE,
    Account,
    Faults,
    IdpClient,
    IdpError,
    IdpSettings,
    RunningProvider,
    running_provider,
    tools_missing,
)

__all__ = [
    "ACCESS_TOKEN_TYPE",
    "ALICE",
    "BOB",
    "TOKEN_EXCHANGE",
    "Account",
    "Faults",
    "IdpClient",
    "IdpError",
    "IdpSettings",
    "RunningProvider",
    "running_provider",
    "tools_missing",
]
