"""Errors of the sandbox package.

SandboxError
├── LimitsError    ScriptLimits were given a value they cannot work with (says which and what to use), or a
│                  sandbox function names it cannot take (at construction, or a run's `functions`)
├── SourceError    the source was refused before it ran: too large, or not text QuickJS can take
├── BusyError      every slot stayed busy for the whole wait: retry shortly
└── CallError      raised by the host's function caller: the call throws a JS Error the script can catch

A script that runs and fails (an uncaught exception, a timeout, memory, a worker that died) is not an
exception on the host: `Sandbox.run` returns a `ScriptResult` whose `failure` says what happened, with the
console lines gathered up to that point.
"""

from __future__ import annotations

__all__ = ["BusyError", "CallError", "LimitsError", "SandboxError", "SourceError"]


class SandboxError(Exception):
    """Root of every error the sandbox raises."""


class LimitsError(SandboxError):
    """A ScriptLimits field is out of range, or a list of function names is not one the sandbox can take."""


class SourceError(SandboxError):
    """The source of a script was refused before it ran; the message says how to fix it."""


class BusyError(SandboxError):
    """No script slot became free within the wait; the caller should retry shortly."""


class CallError(SandboxError):
    """A catalog call failed in a way the script may handle: it throws an Error with `status` and `body`.

    Raise it from the function caller given to `Sandbox.run`; `message` is written for the agent (what failed
    and what to call next), `status` is the HTTP status when there is one, `body` the decoded response body.
    """

    def __init__(self, message: str, *, status: int | None = None, body: object = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
