"""The caller policy: for one caller, which functions exist, what it may do and how much it may start.

`Policy` holds the gateway's rules (`Access`, `Limits`, promoted tools, script rules); `Policy.of(request)` is
one request's `CallerPolicy`, which every path of the gateway asks instead of filtering on its own.
"""

from __future__ import annotations

from gateway.policy.access import Access, ScopeMap, View, Visibility, VisibleHook
from gateway.policy.budgets import Budget, Lease
from gateway.policy.caller import Caller
from gateway.policy.policy import ApprovalLevel, CallerPolicy, Policy, ScriptRules, serving

__all__ = [
    "Access",
    "ApprovalLevel",
    "Budget",
    "Caller",
    "CallerPolicy",
    "Lease",
    "Policy",
    "ScopeMap",
    "ScriptRules",
    "View",
    "Visibility",
    "VisibleHook",
    "serving",
]
