"""`Policy`: the one place that decides, for one caller, which functions exist, what it may do and how much it
may start. `Policy.of(request)` gives the `CallerPolicy` of one MCP request; every path asks it and none filters
on its own (tools, search, describe, explain, calls, promoted tools, scripts, resources, prompts, completions,
instructions, the reference page, ChatGPT search/fetch, tasks, subscriptions, and what errors suggest).
"""

from __future__ import annotations

import functools
import inspect
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from catalog.errors import UnknownNameError
from catalog.model import Catalog, Function
from catalog.suggestions import unknown_function
from gateway.errors import LimitError, ToolError
from gateway.limits import Limits, option_name
from gateway.policy.access import Access, View, Visibility
from gateway.policy.budgets import Budget, Lease
from gateway.policy.caller import Caller
from gateway.requests import RequestInfo

__all__ = ["ApprovalLevel", "CallerPolicy", "Policy", "ScriptRules", "serving"]

ApprovalLevel = Literal["none", "destructive", "writes"]
"""Which functions wait for a person's approval before they run: none, the destructive ones, or every function
that is not read-only."""

AllowHook = Callable[[Any], bool | Awaitable[bool]]
"""Decides from the caller's whoami answer (decoded JSON) whether it may run scripts; sync or async."""

Identify = Callable[["CallerPolicy"], Awaitable[Any]]
"""Calls the whoami function with the caller's credentials: its decoded answer, or ToolError when it fails."""

#: Distinct callers' instructions kept (as many as the visibility keeps views, and then some).
_CACHED_INSTRUCTIONS: Final = 64
#: How a refusal of an address's share ends: what the operator can do when many people share one address.
_SHARED_ADDRESS: Final = (
    " (where many people reach this server through one proxy or NAT, its operator can name the proxy with "
    "--trusted-proxy, or raise the limit)"
)


@dataclass(frozen=True, kw_only=True)
class ScriptRules:
    """What run_script may do: its tool's name, whether scripts may call functions that change data, and the
    `allow` hook on the caller's whoami answer (None: every caller whoami accepts)."""

    tool: str
    allow_writes: bool = False
    allow: AllowHook | None = field(default=None, compare=False)


class Policy:
    """The gateway's rules for every caller: `access` (who sees what), `limits` (budgets), `approval` (which
    functions wait for a person's approval), the promoted tools and the script rules; `of(request)` gives one
    request's `CallerPolicy`.

    `instructions(catalog)` renders the server instructions of a view; `identify` runs whoami for a caller
    (needed when `scripts.allow` is given).
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        access: Access | None = None,
        limits: Limits | None = None,
        instructions: Callable[[Catalog], str] | None = None,
        scripts: ScriptRules | None = None,
        identify: Identify | None = None,
        approval: ApprovalLevel = "none",
    ) -> None:
        self.catalog = catalog
        self.approval = approval
        self.access = access or Access()
        self.limits = limits or Limits()
        self.visibility = Visibility(catalog, self.access)
        self.scripts = scripts
        self._identify = identify
        self._render_instructions = instructions
        self._instructions: OrderedDict[frozenset[str] | None, str] = OrderedDict()
        #: Promoted tools by tool name, with their functions: a tool is offered to those who see its function.
        self.promoted: Mapping[str, Function] = {}
        limits_ = self.limits
        self.tasks = Budget(
            ("task running", "tasks running"),
            per_caller=limits_.tasks_running_per_caller,
            per_caller_option="tasks_running_per_caller",
            advice="wait for one to end (tasks/get) or cancel one (tasks/cancel), then send the call again",
            overall=limits_.tasks_running,
            overall_option="tasks_running",
            overall_advice="retry shortly, or make the call without a task",
        )
        self.subscriptions = Budget(
            ("subscriptions/listen stream open", "subscriptions/listen streams open"),
            per_caller=limits_.subscriptions_per_caller,
            per_caller_option="subscriptions_per_caller",
            advice="close one (or follow several tasks on one stream) before opening another",
            overall=limits_.subscriptions,
            overall_option="subscriptions",
        )
        self.script_runs = Budget(
            ("script running", "scripts running"),
            per_caller=limits_.scripts_per_caller,
            per_caller_option="scripts_per_caller",
            advice="wait for the result of the one running, then run the next",
        )

    @property
    def varies(self) -> bool:
        """Whether two callers may be offered different tools: a visibility rule with promoted tools, or an
        `allow` hook on scripts."""
        return (self.visibility.active and bool(self.promoted)) or (
            self.scripts is not None and self.scripts.allow is not None
        )

    def needs_approval(self, function: Function) -> bool:
        """Whether a call of `function` waits for a person's approval before it runs: with `approval`
        "destructive", a destructive function; with "writes", any function that is not read-only."""
        approval = self.approval
        if approval == "none" or function.read_only:
            return False
        return approval == "writes" or function.destructive

    def of(self, request: RequestInfo, caller: Caller | None = None) -> CallerPolicy:
        """The policy of the caller of `request` (`caller` when it was already made, e.g. an anonymous one)."""
        return CallerPolicy(self, request, caller)

    def instructions_of(self, view: View) -> str:
        """The server instructions for the functions of `view` (cached per distinct view)."""
        key = None if view.complete else view.names
        found = self._instructions.get(key)
        if found is None:
            found = self._render_instructions(view.catalog) if self._render_instructions is not None else ""
            self._instructions[key] = found
            while len(self._instructions) > _CACHED_INSTRUCTIONS:
                self._instructions.popitem(last=False)
        return found


class CallerPolicy:
    """One caller's answers: which functions exist for it, what it may do, how much it may start."""

    def __init__(self, policy: Policy, request: RequestInfo, caller: Caller | None = None) -> None:
        self.policy = policy
        #: The MCP request this policy answers for.
        self.request = request
        if caller is not None:
            self.__dict__["caller"] = caller
        self._me: tuple[Any] | None = None

    @functools.cached_property
    def caller(self) -> Caller:
        """Who is asking, made when a rule needs to know (a call without rules never does)."""
        return Caller.of(self.request)

    @property
    def owner(self) -> str:
        """Whose state the caller leaves on the server (its login and grant: `Caller.owner`)."""
        return self.caller.owner

    @property
    def person(self) -> str:
        """Whom the per-caller budgets count the caller as (the person who logged in: `Caller.person`)."""
        return self.caller.person

    @property
    def identified(self) -> bool:
        """Whether the gateway can tell this caller from others (`Caller.identified`)."""
        return self.caller.identified

    @functools.cached_property
    def address(self) -> str | None:
        """The key the caller's client address is counted under (`oauth.addresses.rate_key`: the address, an IPv6
        /64), as the server saw it after trusted proxies (`Peer.client`); None for callers without one (stdio,
        in-process, a Unix socket), which only their own and the overall limits count."""
        peer = self.request.peer
        if self.request.transport != "http" or peer is None or peer.client is None:
            return None
        # Imported here: the gateway builds without the oauth package until an HTTP caller is counted.
        from oauth.addresses import rate_key

        return rate_key(peer.client[0])

    # Which functions exist for the caller

    @functools.cached_property
    def view(self) -> View:
        """The caller's functions."""
        return self.policy.visibility.view(self.caller)

    @property
    def catalog(self) -> Catalog:
        """The catalog as the caller knows it: its functions only, terms cut to them."""
        return self.view.catalog if self.policy.visibility.active else self.policy.catalog

    def sees(self, function: Function) -> bool:
        """Whether `function` exists for the caller."""
        if "view" in self.__dict__:
            return self.view.allows(function)
        return self.policy.visibility.allows(self.caller, function)

    @property
    def function_names(self) -> tuple[str, ...]:
        """The full names of the caller's functions, in catalog order."""
        return tuple(function.name for function in self.catalog.functions())

    def function(self, name: str) -> Function:
        """The caller's function `name`; ToolError naming the closest of the caller's own functions when it has
        none (a function it does not see is unknown in the same words as one that does not exist)."""
        try:
            return self.catalog.function(name)
        except UnknownNameError as error:
            raise ToolError(unknown_function(self.catalog, name, error.suggestions)) from None

    @property
    def instructions(self) -> str:
        """The server instructions the caller gets: its own modules."""
        return self.policy.instructions_of(self.view)

    # What the caller may do

    async def identity(self) -> Any:
        """The caller's whoami answer (called once per request); ToolError when whoami fails or is not set."""
        if self._me is None:
            identify = self.policy._identify
            if identify is None:
                raise ToolError("this server has no whoami function to say who is calling")
            self._me = (await identify(self),)
        return self._me[0]

    async def may_run_scripts(self) -> bool:
        """Whether run_script is the caller's: scripts are served, and the `allow` hook (after whoami) says yes.

        Without a hook every caller may; a caller whoami refuses may not (its run would fail).
        """
        rules = self.policy.scripts
        if rules is None:
            return False
        if rules.allow is None:
            return True
        try:
            me = await self.identity()
        except ToolError:
            return False
        verdict = rules.allow(me)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return verdict is True

    def needs_approval(self, function: Function) -> bool:
        """Whether a call of `function` waits for a person's approval before it runs (`Policy.needs_approval`)."""
        return self.policy.needs_approval(function)

    def script_refusal(self, function: Function) -> str | None:
        """Why a script of this caller may not call `function` (None: it may); the function is the caller's."""
        if self.needs_approval(function):
            # A script cannot stop to ask a person; call_function can.
            return (
                f"{function.name} needs a person's approval before it runs, which a script cannot ask for; call it "
                "with call_function instead, which says how to get that approval"
            )
        rules = self.policy.scripts
        if not function.read_only and not (rules is not None and rules.allow_writes):
            return (
                f"{function.name} changes data, and scripts on this server may only call read-only functions; "
                "call it with call_function instead"
            )
        return None

    # Which tools the caller is offered

    def scopes_for_call(self, tool: str, arguments: Mapping[str, Any]) -> tuple[str, ...] | None:
        """The scopes the caller's grant lacks for a call of `tool` (call_function naming a function, or a promoted
        tool) that only the document's scopes keep from it: what a step-up asks for. None otherwise."""
        function = self.policy.promoted.get(tool)
        if function is not None:
            name: object = function.name
        elif tool == "call_function":
            name = arguments.get("name")
        else:
            return None
        if not isinstance(name, str) or self.caller.scopes is None:
            return None
        return self.policy.visibility.scopes_needed(self.caller, name)

    async def hidden_tools(self) -> frozenset[str]:
        """The tools the caller is not offered: promoted tools of functions it does not see, and run_script when
        the `allow` hook refuses it."""
        hidden = {tool for tool, function in self.policy.promoted.items() if not self.sees(function)}
        rules = self.policy.scripts
        if rules is not None and rules.allow is not None and not await self.may_run_scripts():
            hidden.add(rules.tool)
        return frozenset(hidden)

    async def hides_tool(self, name: str) -> bool:
        """Whether tool `name` is hidden from the caller (only run_script's `allow` hook may cost a whoami call)."""
        function = self.policy.promoted.get(name)
        if function is not None:
            return not self.sees(function)
        rules = self.policy.scripts
        if rules is not None and name == rules.tool and rules.allow is not None:
            return not await self.may_run_scripts()
        return False

    # How much the caller may start

    def start_task(self) -> Lease:
        """A place for one more task running; LimitError past the caller's or the server's limit."""
        return self.policy.tasks.take(self.person)

    def tasks_kept_refusal(self) -> LimitError:
        """The refusal of one more task to a caller who keeps its limit of tasks kept on the server
        (`Limits.tasks_stored_per_caller`; the task store counts them per person, atomically across instances)."""
        limit = self.policy.limits.tasks_stored_per_caller
        return LimitError(
            f"{self._who('keep')} {limit} tasks on this server, the most one caller may keep "
            f"({option_name('tasks_stored_per_caller')} is {limit}); {self._own_limit()}wait for older tasks to "
            "expire (their ttl), ask for a shorter ttl, or make the call without a task",
            limit="tasks_stored_per_caller",
            value=limit,
        )

    def _who(self, verb: str) -> str:
        """Who a per-caller limit counts: "you", or, for a caller the gateway cannot tell from others, all
        callers without credentials together."""
        return f"you {verb}" if self.identified else f"callers without credentials {verb}, together,"

    def _own_limit(self) -> str:
        return "" if self.identified else "send credentials to have a limit of your own, or "

    def tasks_kept_in_all_refusal(self) -> LimitError:
        """The refusal of one more task when the task store keeps its limit of tasks of all callers
        (`Limits.tasks_stored`; counted in the store, so switching tokens does not multiply it). It names no
        other caller and nothing of theirs."""
        limit = self.policy.limits.tasks_stored
        return LimitError(
            f"this server keeps {limit} tasks of all its callers, the most it keeps ({option_name('tasks_stored')} "
            f"is {limit}); retry later, as older tasks expire (each after its ttl), or make the call without a task",
            limit="tasks_stored",
            value=limit,
        )

    def tasks_kept_from_address_refusal(self) -> LimitError:
        """The refusal of one more task when the callers from the caller's client address keep their share of the
        task store (`Limits.tasks_stored_per_address`; counted in the store, so switching tokens does not multiply
        it). It names no other caller."""
        limit = self.policy.limits.tasks_stored_per_address
        return LimitError(
            f"callers from your client address keep {limit} tasks on this server together, whatever credentials "
            f"they send, the most one address may keep ({option_name('tasks_stored_per_address')} is {limit}); "
            "wait for older tasks to expire (their ttl), ask for a shorter ttl, or make the call without a task"
            f"{_SHARED_ADDRESS}",
            limit="tasks_stored_per_address",
            value=limit,
        )

    def approvals_pending_refusal(self) -> LimitError:
        """The refusal of one more call waiting for approval to a caller who has its limit waiting
        (`Limits.approvals_pending_per_caller`; the approval store counts them per person, atomically across
        instances)."""
        limit = self.policy.limits.approvals_pending_per_caller
        return LimitError(
            f"{self._who('have')} {limit} calls waiting for a person's approval, the most one caller may have "
            f"({option_name('approvals_pending_per_caller')} is {limit}); {self._own_limit()}have the person "
            "approve or cancel some, or wait for them to expire, then call again",
            limit="approvals_pending_per_caller",
            value=limit,
        )

    def approvals_pending_in_all_refusal(self) -> LimitError:
        """The refusal of one more call waiting for approval when the approval store keeps its limit of them for
        all callers (`Limits.approvals_pending`; counted in the store). It names no other caller."""
        limit = self.policy.limits.approvals_pending
        return LimitError(
            f"this server has {limit} calls of all its callers waiting for a person's approval, the most it keeps "
            f"({option_name('approvals_pending')} is {limit}); nothing ran; call again later, as waiting calls are "
            "approved or expire",
            limit="approvals_pending",
            value=limit,
        )

    def approvals_pending_from_address_refusal(self) -> LimitError:
        """The refusal of one more call waiting for approval when the callers from the caller's client address
        have their share of the approval store waiting (`Limits.approvals_pending_per_address`; counted in the
        store). It names no other caller."""
        limit = self.policy.limits.approvals_pending_per_address
        return LimitError(
            f"callers from your client address have {limit} calls waiting for a person's approval together, "
            "whatever credentials they send, the most one address may have "
            f"({option_name('approvals_pending_per_address')} is {limit}); nothing ran; have the person approve "
            f"or cancel some, or call again later, as waiting calls expire{_SHARED_ADDRESS}",
            limit="approvals_pending_per_address",
            value=limit,
        )

    def open_subscription(self) -> Lease:
        """A place for one more subscriptions/listen stream; LimitError past the caller's or the server's limit."""
        return self.policy.subscriptions.take(self.person)

    def run_script(self) -> Lease:
        """A place for one more script running; LimitError past the caller's limit."""
        return self.policy.script_runs.take(self.person)


serving: ContextVar[CallerPolicy | None] = ContextVar("gateway.serving", default=None)
"""The caller policy of the MCP request being served over HTTP, for what the SDK builds without a request at hand
(the server instructions in initialize and server/discover); None elsewhere (stdio, in-process calls)."""
