"""A one-line test that a gateway's agent-facing surface still matches its committed snapshot::

    from gateway.testing import assert_snapshot

    def test_the_agent_facing_surface_is_reviewed() -> None:
        assert_snapshot(Gateway(app=app), "snapshots/api.json")

When the surface drifts the test fails with the classified diff (breaking and non-breaking changes). To accept
the changes, run the tests once with `MCP_GATEWAY_UPDATE_SNAPSHOTS=1`, which rewrites the file, and commit it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gateway.snapshot.check import FailOn, SnapshotCheck, check_snapshot, render_check

if TYPE_CHECKING:
    from gateway.gateway import Gateway

__all__ = ["UPDATE_ENV", "assert_snapshot"]

#: Set to 1 (or true/yes) to rewrite snapshot files instead of failing.
UPDATE_ENV = "MCP_GATEWAY_UPDATE_SNAPSHOTS"


def assert_snapshot(
    gateway: Gateway, path: str | os.PathLike[str], *, update: bool | None = None, fail_on: FailOn = "any"
) -> SnapshotCheck:
    """Raise AssertionError with a readable diff when `gateway` no longer matches the snapshot file at `path`.

    A relative `path` is relative to the current directory (the project root, under pytest). `update` rewrites
    the file instead (default: when the MCP_GATEWAY_UPDATE_SNAPSHOTS environment variable is 1, true or yes).
    `fail_on="breaking"` lets non-breaking drift pass. A missing file fails unless updating. Returns the check.
    """
    __tracebackhide__ = True  # pytest shows the assertion, not this helper's frame
    if update is None:
        update = os.environ.get(UPDATE_ENV, "").strip().lower() in ("1", "true", "yes")
    check = check_snapshot(gateway, path, update=update)
    if check.failed(fail_on):
        accept = f"{UPDATE_ENV}=1 pytest (then review and commit {os.fspath(path)})"
        raise AssertionError(render_check(check, "text", fail_on=fail_on, accept=accept))
    return check
