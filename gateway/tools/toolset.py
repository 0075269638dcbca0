"""The gateway's tools: the fixed set (whoami, search, describe, explain, call) and promoted functions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import anyio
import jsonschema

from catalog.errors import SchemaTooLargeError, UnknownNameError, shown
from catalog.model import Catalog, Function, Term
from catalog.render import describe_function, explain_term, term_fields, term_part
from catalog.schemas import DEFAULT_MAX_SCHEMA_NODES, count_nodes, inline_refs
from catalog.search import MAX_QUERY_CHARS, Ranking, search
from catalog.suggestions import unknown_function
from catalog.typescript import declarations
from gateway._quick_check import Check, quick_check
from gateway.apps import AppViews
from gateway.errors import ConfigError, ToolError
from gateway.mcp.capabilities import renders_ui
from gateway.mcp.toolspec import TextContent, ToolResult, ToolSpec
from gateway.policy import CallerPolicy
from gateway.requests import RestContext
from gateway.rest.dispatcher import CallOutcome, Dispatcher
from gateway.tools._compact import COMPACT_HELP
from gateway.tools._response_check import ResponseCheck
from gateway.tools.confirmation import (
    APPROVE_TOOL,
    CANCEL_TOOL,
    CONFIRMATION,
    Confirmation,
    Run,
    app_tool_specs,
    confirmation_property,
)
from gateway.tools.identity import REDACTED, identity_view
from gateway.tools.results import cap_lines, fit_texts, response_result, value_result
from gateway.types import RestContextFor, ToolRunner
from gateway.validators import validator_for

__all__ = ["FIXED_TOOLS", "ToolSet", "declared", "instructions_for", "read_only_spec"]

FIXED_TOOLS = ("whoami", "search_functions", "describe_function", "explain_term", "call_function")
_MAX_DESCRIBE = 20
_MAX_MODULES_IN_INSTRUCTIONS = 80


def read_only_spec(
    name: str, title: str, description: str, schema: dict[str, Any], *, open_world: bool = False
) -> ToolSpec:
    """A tool that only reads: not destructive, idempotent; open-world only when it reaches past the catalog."""
    return ToolSpec(
        name=name,
        title=title,
        description=description,
        input_schema=schema,
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=open_world,
    )


def _fixed_specs(compact: bool = False, *, approval: bool = False) -> list[ToolSpec]:
    call_properties: dict[str, Any] = {
        "name": {"type": "string", "description": "Full function name, module.function."},
        "args": {"type": "object", "description": "The function's arguments.", "default": {}},
    }
    if approval:
        call_properties[CONFIRMATION] = confirmation_property()
    return [
        read_only_spec(
            "whoami",
            "Who am I",
            "Who the API thinks the caller is (the account the credentials belong to). Call it first when a task "
            "depends on the current user.",
            {"type": "object", "properties": {}, "additionalProperties": False},
        ),
        read_only_spec(
            "search_functions",
            "Search functions",
            "Find API functions for a task. With a query ('refund a charge'), the best matches, one line each: "
            "signature, summary and [read]/[write]/[destructive]. With only a module, all its functions. With "
            "nothing, the list of modules. Then call describe_function for the exact signature.",
            {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "maxLength": MAX_QUERY_CHARS,
                        "description": "The task in a few words.",
                    },
                    "module": {"type": "string", "description": "Restrict to one module."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                },
                "additionalProperties": False,
            },
        ),
        read_only_spec(
            "describe_function",
            "Describe functions",
            "How to call functions: typed arguments (where each goes, required or optional, enums and defaults), "
            "the result type, and the terms worth looking up with explain_term.",
            {
                "type": "object",
                "properties": {
                    "names": {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "maxItems": _MAX_DESCRIBE,
                        "description": "Full function names, module.function.",
                    },
                    "format": {
                        "type": "string",
                        "enum": ["text", "typescript"],
                        "default": "text",
                        "description": "typescript: their TypeScript declarations (`api.module.function(args)` as a "
                        "script calls it, with the types they use).",
                    },
                },
                "required": ["names"],
                "additionalProperties": False,
            },
        ),
        read_only_spec(
            "explain_term",
            "Explain a term",
            "What a term of the API means: a data type's fields with their types, or a concept's explanation, "
            "with the functions that accept and return it.",
            {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "A term name or alias, e.g. 'Order'."}},
                "required": ["name"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            name="call_function",
            title="Call a function",
            description="Call an API function with the caller's credentials. args is a flat object of the "
            "function's arguments as describe_function lists them. Returns the API's response; an API error "
            "comes back as an error with the status and body, so you can correct the call."
            + (f" {COMPACT_HELP}" if compact else ""),
            input_schema={
                "type": "object",
                "properties": call_properties,
                "required": ["name"],
                "additionalProperties": False,
            },
            read_only=False,
            destructive=True,
            idempotent=False,
            open_world=True,
        ),
    ]


def _promoted_spec(function: Function, *, additive: bool, compact: bool = False, approval: bool = False) -> ToolSpec:
    """The promoted tool of `function`; with `approval` (its calls wait for a person's), a `confirmation` argument
    and no output schema, since a first call answers what would happen instead of the function's result."""
    problem = function.promotion_problem
    if problem is not None:
        raise ConfigError(f"cannot promote {function.name!r} to a tool: {problem}")
    try:
        schema = function.input_schema()
    except SchemaTooLargeError as error:
        raise ConfigError(f"cannot promote {function.name!r} to a tool: {error}") from None
    schema = inline_refs(schema, max_nodes=max(count_nodes(schema), DEFAULT_MAX_SCHEMA_NODES))
    if approval:
        if CONFIRMATION in schema.get("properties", {}):
            raise ConfigError(
                f"cannot promote {function.name!r} to a tool with approval: it has an argument named "
                f"{CONFIRMATION!r}, which approval adds; call it with call_function instead"
            )
        schema = {**schema, "properties": {**schema.get("properties", {}), CONFIRMATION: confirmation_property()}}
    method = function.method
    read_only = function.read_only
    destructive = not read_only and (function.destructive or not additive)
    idempotent = read_only or method in ("PUT", "DELETE")
    description = function.summary
    if function.description and function.description != function.summary:
        description = f"{function.summary}\n\n{function.description[:1000]}"
    if compact:
        description = f"{description}\n\n{COMPACT_HELP}"
    return ToolSpec(
        name=function.tool_name,
        title=function.summary[:80] or function.name,
        description=description,
        input_schema=schema,
        output_schema=None if approval else _output_schema(function),
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        open_world=True,
    )


def _output_schema(function: Function) -> dict[str, Any] | None:
    """The promoted tool's outputSchema: the 2xx result's schema when it is an object, refs inlined where finite."""
    try:
        schema = function.output_schema()
    except SchemaTooLargeError:
        return None  # too large to advertise: the tool answers without declaring its result's shape
    if schema is None:
        return None
    schema = inline_refs(schema, max_nodes=max(count_nodes(schema), DEFAULT_MAX_SCHEMA_NODES))
    if schema.get("type") != "object":
        # A recursive object type stays a $ref; MCP wants `type: object` at the root all the same.
        schema = {"type": "object", **schema}
    return schema


def _linked(spec: ToolSpec, ui: dict[str, Any] | None) -> ToolSpec:
    """`spec` with `_meta.ui` linking its view (MCP Apps), when it has one."""
    if ui is None:
        return spec
    meta = dict(spec.meta or {})
    meta["ui"] = {**dict(meta.get("ui") or {}), **ui}
    return replace(spec, meta=meta)


def instructions_for(catalog: Catalog, operator: str) -> str:
    """The server instructions: the operator's paragraph, then the modules and how to use the tools."""
    count = len(catalog.functions())
    title = catalog.title.strip()
    api = f"the {title}" if title.lower() == "api" or title.lower().endswith(" api") else f"the {title} API"
    parts = [operator.strip()] if operator.strip() else []
    parts.append(
        f"This server gives access to {api}: {count} functions in {len(catalog.modules)} modules. "
        "To do a task: 1) search_functions with the task in a few words (or a module name) to find functions; "
        "2) describe_function with their names for the exact arguments; 3) call_function with the name and args. "
        "explain_term tells what a data type or concept means; whoami tells who the caller is."
    )
    lines = []
    for module in catalog.modules[:_MAX_MODULES_IN_INSTRUCTIONS]:
        first = module.description.strip().split("\n", 1)[0][:120]
        lines.append(f"- {module.name} ({len(module.functions)})" + (f": {first}" if first else ""))
    if len(catalog.modules) > _MAX_MODULES_IN_INSTRUCTIONS:
        lines.append(f"- … {len(catalog.modules) - _MAX_MODULES_IN_INSTRUCTIONS} more (search_functions lists all)")
    if lines:
        parts.append("Modules:\n" + "\n".join(lines))
    return "\n\n".join(parts)


class ToolSet:
    """The tools one gateway serves, and the handler the MCP endpoint runs them with."""

    def __init__(
        self,
        *,
        catalog: Catalog,
        dispatcher: Dispatcher,
        rest_context: RestContextFor,
        server_name: str,
        whoami: str | None,
        promoted: Sequence[str],
        additive: Sequence[str],
        max_output_bytes: int,
        compact_results: bool = False,
        extra: Sequence[tuple[ToolSpec, ToolRunner]] = (),
        whoami_fields: Sequence[str] | None = None,
        scripts: bool = False,
        ranking: Ranking | None = None,
        apps: bool = False,
        confirmation: Confirmation | None = None,
        needs_approval: Callable[[Function], bool] | None = None,
    ) -> None:
        self.catalog = catalog
        #: The approval step of calls that wait for a person's (None: no call waits).
        self.confirmation = confirmation
        approves = needs_approval if confirmation is not None else None
        self.ranking = ranking
        self.dispatcher = dispatcher
        self.rest_context = rest_context
        self.server_name = server_name
        self.max_output_bytes = max_output_bytes
        self.compact_results = compact_results
        #: True when run_script is served, so a cut result may suggest it.
        self.scripts = scripts
        self.whoami = self._whoami_function(whoami)
        self.whoami_fields = tuple(whoami_fields) if whoami_fields is not None else None
        unknown_additive = [name for name in additive if name not in promoted]
        if unknown_additive:
            raise ConfigError(f"additive names functions that are not promoted tools: {', '.join(unknown_additive)}")
        self._runners: dict[str, ToolRunner] = {
            "whoami": self._whoami,
            "search_functions": self._search,
            "describe_function": self._describe,
            "explain_term": self._explain,
            "call_function": self._call,
        }
        self.specs: list[ToolSpec] = _fixed_specs(compact_results, approval=confirmation is not None)
        #: Checks promoted tools' answers against the document before they become structured content.
        self.responses = ResponseCheck(catalog.resolver.document if catalog.resolver is not None else None)
        self._output_validators: dict[str, tuple[Check | None, jsonschema.protocols.Validator]] = {}
        #: Promoted tools, whose arguments the dispatcher checks (the endpoint need not check them twice).
        self.self_validating: set[str] = set()
        #: Promoted tools by tool name, with their functions (hidden from callers who may not see those).
        self.promoted: dict[str, Function] = {}
        for spec, runner in extra:
            self.specs.append(spec)
            self._runners[spec.name] = runner
        seen: set[str] = set()
        for name in promoted:
            if name in seen:
                raise ConfigError(f"tools names {name!r} twice; promote each function once")
            seen.add(name)
            function = self._known(name, "tools")
            approval = approves is not None and approves(function)
            spec = _promoted_spec(function, additive=name in additive, compact=compact_results, approval=approval)
            if spec.name in self._runners:
                raise ConfigError(f"promoted tool {spec.name!r} clashes with a tool of the same name")
            self.promoted[spec.name] = function
            self.specs.append(spec)
            self.self_validating.add(spec.name)
            self._runners[spec.name] = self._promoted_runner(function, spec)
        if confirmation is not None:
            # After every other tool: only an MCP Apps client, for its approval form, is offered these.
            for spec in app_tool_specs():
                if spec.name in self._runners:
                    raise ConfigError(f"tool {spec.name!r}, which approval adds, clashes with a tool of the same name")
                self.specs.append(spec)
            approve = confirmation.approve
            self._runners[APPROVE_TOOL] = lambda args, caller: approve(args, caller, self._runner_for(caller))
            self._runners[CANCEL_TOOL] = confirmation.cancel
        #: The functions' MCP Apps views (None: not served); tools link them for clients that render them.
        self.views: AppViews | None = None
        if apps:
            self.views = AppViews(catalog, self.promoted)
            views = self.views
            self.specs = [_linked(spec, views.tool_ui(spec.name)) for spec in self.specs]

    def _known(self, name: str, option: str) -> Function:
        try:
            return self.catalog.function(name)
        except UnknownNameError as error:
            near = error.suggestions or _near_by_function_name(name, self.catalog)
            hint = (
                f"; did you mean {', '.join(near)}?"
                if near
                else "; no function has a near name: give the full `module.function` name "
                "(`mcp-gateway catalog search SPEC WORDS` finds functions by task)"
            )
            raise ConfigError(f"{option}: the catalog has no function {name!r}{hint}") from None

    def _whoami_function(self, name: str | None) -> Function | None:
        if name is None:
            return None
        function = self._known(name, "whoami")
        required = [arg.name for arg in function.args if arg.required]
        if required:
            raise ConfigError(
                f"whoami: {name!r} has required arguments ({', '.join(required)}); name a function that needs none"
            )
        return function

    async def handle(self, name: str, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        """Run tool `name` for `caller` (the endpoint has validated `args` against the tool's schema)."""
        runner = self._runners.get(name)
        if runner is None:
            raise ToolError(f"unknown tool {name!r}")
        return fit_texts(await runner(args, caller), self.max_output_bytes)

    async def _whoami(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        context = await self.rest_context(caller.request)
        if self.whoami is None:
            credentialed = caller.request.bearer_token is not None or any(
                name.lower() == "authorization" for name, _ in context.headers
            )
            return value_result(
                _NO_FUNCTION,
                {
                    "server": self.server_name,
                    "api": self.catalog.title,
                    "credential_presented": credentialed,
                    "credential_checked": False,
                    "note": "this server has no whoami function, so nothing checked the credential: the first call "
                    "that needs it will tell whether the API accepts it",
                },
                max_output_bytes=self.max_output_bytes,
                scripts=self.scripts,
            )
        outcome = await self.dispatcher.call(self.whoami, {}, context)
        response = outcome.response
        if response is None or response.status >= 300 or not response.is_json:
            return self._result(outcome, context)
        try:
            answer = response.json()
        except ValueError:
            return self._result(outcome, context)
        view = identity_view(answer, self.whoami_fields)
        result = value_result(self.whoami, view.value, max_output_bytes=self.max_output_bytes, scripts=self.scripts)
        notes = []
        if view.left_out:
            notes.append(
                f"whoami shows only the fields the operator chose; left out: {_listed(view.left_out)}"
                if view.chosen
                else f"left out because they look like credentials: {_listed(view.left_out)}"
            )
        if view.redacted:
            listed = _listed(view.redacted)
            notes.append(f"redacted in place because they hold credentials, shown as {REDACTED}: {listed}")
        if not notes:
            return result
        note = f"({'; '.join(notes)})"
        return ToolResult(content=(*result.content, TextContent(text=note)), structured=result.structured)

    async def _search(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        try:
            result = search(
                caller.catalog,
                args.get("query") or None,
                module=args.get("module"),
                limit=args.get("limit", 10),
                ranking=self.ranking,
            )
        except UnknownNameError as error:
            raise ToolError(_unknown(error, "search_functions() with no arguments lists the modules")) from None
        return ToolResult.text(searched(result.text, self.max_output_bytes, args))

    async def _describe(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        if args.get("format") == "typescript":
            return self._declare(args, caller)
        parts: list[str] = []
        unknown = 0
        size = 0
        names = list(dict.fromkeys(args["names"]))
        catalog = caller.catalog
        for index, name in enumerate(names):
            # Room for this description, keeping room to name the rest should they not fit after it.
            later = names[index + 1 :]
            room = self.max_output_bytes - size - (len(self._rest_note(later).encode()) + 2 if later else 0)
            try:
                function = catalog.function(name)
            except UnknownNameError as error:
                unknown += 1
                part = unknown_function(
                    catalog, name, error.suggestions, hint=f"({_not_a_function_hint(catalog, name)})"
                )
            else:
                part = described(catalog, function, max(room, 300), others=len(names) - 1)
            if parts and len(part.encode()) > room:
                # Whole descriptions or none: the rest is named, to describe in another call.
                parts.append(self._rest_note(names[index:]))
                break
            parts.append(part)
            size += len(part.encode()) + 2
        text = "\n\n".join(parts)
        if unknown == len(parts):
            return ToolResult.error(text)
        return ToolResult.text(text)

    def _declare(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        """describe_function's TypeScript: one declaration of the known functions, the unknown names said first."""
        catalog = caller.catalog
        found: list[Function] = []
        unknown: list[str] = []
        for name in dict.fromkeys(args["names"]):
            try:
                found.append(catalog.function(name))
            except UnknownNameError as error:
                unknown.append("// " + _unknown(error, _not_a_function_hint(catalog, name)).replace("\n", " "))
        if not found:
            return ToolResult.error("\n".join(unknown))
        head = "".join(f"{line}\n" for line in unknown)
        room = self.max_output_bytes - len(head.encode())
        instead = "describe_function with format 'typescript' declares them a few at a time."
        return ToolResult.text(head + declared(catalog, found, room, whole_modules=False, instead=instead))

    def _rest_note(self, rest: Sequence[str]) -> str:
        return (
            f"… {len(rest)} more not described here (over the {self.max_output_bytes}-byte limit): "
            f"{', '.join(map(shown, rest))}; describe them in another call"
        )

    async def _explain(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        catalog = caller.catalog
        name = args["name"]
        term: Term | None
        try:
            term = catalog.term(name)
        except UnknownNameError as error:
            term = term_part(catalog, name)
            if term is None:
                raise ToolError(_unknown(error, "describe_function lists the terms a function uses")) from None
        return ToolResult.text(explained(catalog, term, self.max_output_bytes))

    async def _call(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        function = caller.function(args["name"])
        call_args = args.get("args") or {}
        if self.confirmation is not None and caller.needs_approval(function):
            result = await self.confirmation.call(
                function, call_args, args.get(CONFIRMATION), caller, tool="call_function", run=self._runner_for(caller)
            )
        else:
            result = await self._run(function, call_args, await self.rest_context(caller.request))
        return self._viewed(result, function)

    def _viewed(self, result: ToolResult, function: Function) -> ToolResult:
        """`result` of a call of `function` through call_function or approve_call, with the function's view in its
        `_meta` for a client that renders MCP Apps: the page those tools link learns there what it shows."""
        if self.views is None or not renders_ui.get():
            return result
        return replace(result, meta={**(result.meta or {}), **self.views.result_meta(function)})

    def _runner_for(self, caller: CallerPolicy) -> Run:
        """Runs a call whose arguments were checked, as call_function answers it, for `caller`."""

        async def run(function: Function, arguments: Mapping[str, Any]) -> ToolResult:
            context = await self.rest_context(caller.request)
            return self._viewed(await self._run(function, arguments, context, validated=True), function)

        return run

    def _promoted_runner(self, function: Function, spec: ToolSpec) -> ToolRunner:
        async def run(args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
            if not caller.sees(function):
                # The endpoint lists promoted tools per caller; this keeps a direct call from reaching one hidden.
                raise ToolError(f"unknown tool {function.tool_name!r}")
            if self.confirmation is not None and caller.needs_approval(function):
                confirmation = args.pop(CONFIRMATION, None)
                run = self._runner_for(caller)
                return await self.confirmation.call(function, args, confirmation, caller, tool=spec.name, run=run)
            # The endpoint left these arguments to the dispatcher, which checks them against the same schema.
            context = await self.rest_context(caller.request)
            outcome = await self.dispatcher.call(function, args, context)
            result = self._result(outcome, context)
            if spec.output_schema is None or result.is_error:
                return result
            return await self._structured(spec, outcome, result)

        return run

    async def _structured(self, spec: ToolSpec, outcome: CallOutcome, result: ToolResult) -> ToolResult:
        """`result` when its structured content is the declared result, else its text as a failed result.

        A tool with an outputSchema must answer with conforming structured content (clients fail the call
        otherwise); a failed result is not checked, so the agent still reads the answer, told why it is text.
        """
        function = outcome.function
        name = function.name
        response = outcome.response
        described = f"{name} answered what its document does not describe, so the answer comes as text only"
        if result.structured is None:
            why = f"{name}'s answer is over the output limit or not a JSON object, so it comes as text only"
        elif not self._fits_output(spec, result.structured):
            # openapi-core says whether the document is what is wrong (and tells the operator so, once).
            if response is not None and not await anyio.to_thread.run_sync(self.responses.conforms, function, response):
                why = described
            else:
                why = f"{name}'s answer does not match the result type it declares, so it comes as text only"
        elif (
            response is not None
            and not self.responses.audited(function, response)
            and not await anyio.to_thread.run_sync(self.responses.conforms, function, response)
        ):
            why = described
        else:
            return result
        note = TextContent(text=f"({why}: the call itself succeeded; call_function returns the same answer.)")
        return ToolResult(content=(*result.content, note), is_error=True)

    def _fits_output(self, spec: ToolSpec, structured: Any) -> bool:
        """Whether `structured` validates against the tool's output schema (a compiled quick yes, else jsonschema)."""
        checks = self._output_validators.get(spec.name)
        if checks is None:
            schema = spec.output_schema or {}
            checks = (quick_check(schema), validator_for(schema)(schema))
            self._output_validators[spec.name] = checks
        quick, validator = checks
        return (quick is not None and quick(structured)) or validator.is_valid(structured)

    async def _run(
        self, function: Function, args: Mapping[str, Any], context: RestContext, *, validated: bool = False
    ) -> ToolResult:
        return self._result(await self.dispatcher.call(function, args, context, validated=validated), context)

    def _result(self, outcome: CallOutcome, context: RestContext) -> ToolResult:
        function = outcome.function
        options: dict[str, Any] = {
            "max_output_bytes": self.max_output_bytes,
            "scripts": self.scripts,
            "compact": self.compact_results,
        }
        if outcome.response is None:
            return value_result(function, outcome.value, **options)
        return response_result(
            function, outcome.response, credential_hint=context.refusal_hint(outcome.response.status), **options
        )


def searched(text: str, max_output_bytes: int, args: Mapping[str, Any]) -> str:
    """search_functions' text for `args` (query, module), cut at whole lines to fit, saying how to narrow."""
    return cap_lines(text, max_output_bytes, _search_narrowing(args))


def explained(catalog: Catalog, term: Term, max_output_bytes: int) -> str:
    """explain_term's text for one term, cut at whole lines to fit, naming the fields left out."""
    text = explain_term(catalog, term)
    fields = term_fields(catalog, term)
    how = (
        f"explain_term('{term.name}.<field>') explains one field, e.g. explain_term('{term.name}.{fields[-1]}')"
        if fields
        else "the text is the term's own description"
    )
    return _cut_naming(text, max_output_bytes, how, "fields", fields)


#: Room kept under the output cap for the comment that says what was left out.
_DECLARATION_NOTE = 600


def declared(
    catalog: Catalog, functions: Sequence[Function] | None, max_bytes: int, *, whole_modules: bool, instead: str
) -> str:
    """TypeScript declarations of `functions` (all of `catalog`'s: None) within `max_bytes`, ending with a comment
    that names what was left out (whole modules when `whole_modules`) and `instead`, what to read for it."""
    budget = max(max_bytes - _DECLARATION_NOTE, 200)
    found = declarations(catalog, functions, max_chars=budget, whole_modules=whole_modules)
    while len(found.text.encode()) > budget and budget > 200:
        # Characters past ASCII take more bytes than the character budget counted.
        budget -= len(found.text.encode()) - budget
        found = declarations(catalog, functions, max_chars=max(budget, 200), whole_modules=whole_modules)
    notes: list[str] = []
    if found.left_out:
        names = list(dict.fromkeys(name.split(".", 1)[0] for name in found.left_out)) if whole_modules else []
        what = f"{len(names)} modules" if whole_modules else f"{len(found.left_out)} functions"
        notes.append(_note(f"// Cut at the size limit: {what} left out", names or list(found.left_out), instead))
    if found.open_types:
        fields = "explain_term gives their fields."
        notes.append(_note("// Left open to keep within the size limit", list(found.open_types), fields))
    return found.text + "".join(f"{note}\n" for note in notes)


def _note(head: str, names: Sequence[str], then: str) -> str:
    """`head (some of names); then`, naming fewer names until it fits in half the room kept for notes."""
    for count in (8, 5, 3, 1):
        note = f"{head} ({_few(names, count)}); {then}"
        if len(note.encode()) < _DECLARATION_NOTE // 2:
            return note
    return f"{head}; {then}"


def _few(names: Sequence[str], count: int = 8) -> str:
    """The first `count` names, each cut to 60 characters, and how many more."""
    shown_names = [name if len(name) <= 60 else name[:59] + "…" for name in names[:count]]
    return ", ".join(shown_names) + (f", … {len(names) - count} more" if len(names) > count else "")


def _search_narrowing(args: Mapping[str, Any]) -> str:
    """How to get a shorter search answer, for the arguments given."""
    module = args.get("module")
    if args.get("query"):
        within = "" if module else ", or give a module to search within"
        return f"ask for fewer hits with a smaller limit{within}"
    if module:
        return f"search with a query (the task in a few words) and module={module!r} to get fewer functions"
    return "search with a query (the task in a few words), or give one module to list its functions"


def described(catalog: Catalog, function: Function, max_output_bytes: int, *, others: int = 0) -> str:
    """describe_function's text for one function, cut at whole lines to fit, naming the arguments left out."""
    text = describe_function(catalog, function)
    args = [arg.name for arg in function.args]
    how = "call_function names any argument it refuses; explain_term gives the fields of the terms listed"
    if function.body_term:
        how = f"explain_term('{function.body_term}.<field>') explains one body field; {how}"
    if others:
        how = f"describe one function per call; {how}"
    return _cut_naming(text, max_output_bytes, how, "lines", args)


def _cut_naming(text: str, max_output_bytes: int, how: str, unit: str, names: Sequence[str]) -> str:
    """`text` cut at whole lines to fit, naming which of `names` (one per indented line) fell in the cut."""
    if len(text.encode()) <= max_output_bytes:
        return text
    cut = cap_lines(text, max_output_bytes, how, unit=unit)
    shown_text = cut.rsplit("\n… [cut:", 1)[0]
    left = [name for name in names if f"    {name}:" not in shown_text and f"    {name}?:" not in shown_text]
    if not left:
        return cut
    listed = ", ".join(left[:30]) + (f", … {len(left) - 30} more" if len(left) > 30 else "")
    return cap_lines(text, max_output_bytes, how, unit=unit, left_out=f"left out: {listed}")


def _unknown(error: UnknownNameError, hint: str) -> str:
    closest = f" Closest: {', '.join(error.suggestions)}." if error.suggestions else ""
    said = str(error)
    return f"{said[:1].upper()}{said[1:]}.{closest} ({hint})"  # not capitalize(): it lowercases the name


def _not_a_function_hint(catalog: Catalog, name: str) -> str:
    """What to do about a name describe_function does not know: explain_term when it names a term."""
    try:
        term = catalog.term(name)
    except UnknownNameError:
        return "search_functions finds functions by task"
    return f"{term.name} is a term, not a function: explain_term explains it"


_NO_FUNCTION = Function(
    name="gateway.whoami",
    module="gateway",
    summary="",
    description="",
    method="",
    path="",
    args=(),
    returns=None,
    return_schema=None,
    deprecated=False,
    read_only=True,
    destructive=False,
)


def _near_by_function_name(name: str, catalog: Catalog) -> list[str]:
    """Full names whose function part (after the module) is near `name`'s, for a name given without its module
    or with another one."""
    import difflib

    by_tail: dict[str, list[str]] = {}
    for function in catalog.functions():
        by_tail.setdefault(function.name.rpartition(".")[2], []).append(function.name)
    tails = difflib.get_close_matches(name.rpartition(".")[2], list(by_tail), n=5, cutoff=0.5)
    return [full for tail in tails for full in by_tail[tail]][:5]


def _listed(paths: Sequence[str]) -> str:
    """The first 20 of whoami's `paths`, and how many more."""
    return ", ".join(paths[:20]) + (f", … {len(paths) - 20} more" if len(paths) > 20 else "")
