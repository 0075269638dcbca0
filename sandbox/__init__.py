"""Run short JavaScript programs that chain catalog calls, bounded in time, memory, calls and output.

`Sandbox(functions, limits).run(source, caller)` runs a script in a QuickJS context inside a warm worker
process and returns a `ScriptResult`. The script sees `api.<module>.<function>(args)`, `call(name, args)`,
`callAll([...])` and `console.log`, nothing else; every call comes back to the host through `caller`, an async
callback, so this package knows nothing of MCP, HTTP or credentials. `run(..., functions=names)` narrows one run
to some of the sandbox's functions (a caller's view): the others are as absent as names that never existed. The
host enforces every limit in `ScriptLimits` and kills the worker at the deadline.
"""

from __future__ import annotations

from sandbox.calls import ErrorReporter, FunctionCaller
from sandbox.errors import BusyError, CallError, LimitsError, SandboxError, SourceError
from sandbox.limits import ScriptLimits
from sandbox.pool import WorkerCrashError
from sandbox.results import FailureKind, ScriptFailure, ScriptResult
from sandbox.runner import Sandbox

__all__ = [
    "BusyError",
    "CallError",
    "ErrorReporter",
    "FailureKind",
    "FunctionCaller",
    "LimitsError",
    "Sandbox",
    "SandboxError",
    "ScriptFailure",
    "ScriptLimits",
    "ScriptResult",
    "SourceError",
    "WorkerCrashError",
]
