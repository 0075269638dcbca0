"""The catalog as MCP resources, and the built-in prompts that teach an agent this API's workflow.

Resources (read-only; the text is what the tools answer, rendered by the same code):

| URI | what | type |
|---|---|---|
| `catalog://overview` | the server instructions: the API, how to use the tools, the modules | text/plain |
| `catalog://modules/{module}` | one module's functions, as `search_functions(module=...)` lists them | text/plain |
| `catalog://functions/{function}` | one function, as `describe_function` describes it | text/plain |
| `catalog://terms/{term}` | one term, as `explain_term` explains it | text/plain |
| `catalog://types` | `api` in TypeScript, as run_script has it (whole modules, to the cap) | text/x-typescript |
| `catalog://types/{module}` | one module's TypeScript declarations | text/x-typescript |
| `catalog://reference` | the reference page, where the gateway serves one | text/html |
| `catalog://snapshot` | the surface snapshot, as `snapshot check` commits it | application/json |

resources/list shows the fixed ones, then every module, function and term the caller sees (not each module's
declarations: the types template says where they are); the templates complete their variable by prefix, from the
caller's own names. Prompts: `work_with_api` (the workflow and the
caller's modules, with an optional task) and `explore_module` (one module's functions; its argument completes to
the caller's module names). Everything here answers from the caller policy: a function the caller does not see is
in no listing, completion, text or error of it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from catalog.errors import UnknownNameError
from catalog.render import function_line, module_line
from catalog.search import search
from gateway.errors import RequestError
from gateway.mcp.prompts import Prompt, PromptArgument, PromptSet, Renderer
from gateway.mcp.resources import Resource, ResourceEntry, ResourceSet, ResourceTemplate, expand
from gateway.policy import CallerPolicy
from gateway.tools.results import cap_lines
from gateway.tools.toolset import _MAX_MODULES_IN_INSTRUCTIONS, declared, described, explained, searched

if TYPE_CHECKING:
    from catalog.model import Catalog
    from gateway.apps import AppViews

__all__ = [
    "FUNCTION_TEMPLATE",
    "MODULE_TEMPLATE",
    "OVERVIEW_URI",
    "REFERENCE_URI",
    "SNAPSHOT_URI",
    "TERM_TEMPLATE",
    "TYPES_TEMPLATE",
    "TYPES_URI",
    "catalog_resources",
    "gateway_prompts",
]

OVERVIEW_URI: Final = "catalog://overview"
REFERENCE_URI: Final = "catalog://reference"
SNAPSHOT_URI: Final = "catalog://snapshot"
MODULE_TEMPLATE: Final = "catalog://modules/{module}"
FUNCTION_TEMPLATE: Final = "catalog://functions/{function}"
TERM_TEMPLATE: Final = "catalog://terms/{term}"
TYPES_URI: Final = "catalog://types"
TYPES_TEMPLATE: Final = "catalog://types/{module}"
_TEXT: Final = "text/plain"
_TYPESCRIPT: Final = "text/x-typescript"


def _unknown(error: UnknownNameError, template: str) -> RequestError:
    closest = f"; closest: {', '.join(error.suggestions)}" if error.suggestions else ""
    return RequestError(
        f"{error}{closest} (completion/complete on {template} lists the names)", data={"name": error.name}
    )


Document = Callable[[CallerPolicy], Awaitable[str]]
"""Reads a whole document for a caller (the reference page, the surface snapshot)."""


def catalog_resources(
    catalog: Catalog,
    *,
    name: str,
    max_output_bytes: int,
    reference: Document | None = None,
    snapshot: Document | None = None,
    views: AppViews | None = None,
) -> ResourceSet:
    """The catalog's resources: overview, `reference` page and `snapshot` (when given), modules, functions, terms,
    and the functions' MCP Apps `views` (when given; offered to clients that render them).

    Each is read from the caller's own view; `name` is the server's, for titles when the API has none. Texts an
    agent reads are cut to `max_output_bytes` as the tools cut them; the snapshot (JSON) and the reference page
    (HTML) are documents a cut would break: they are whole.
    """
    api = catalog.title.strip() or name
    limit = max_output_bytes

    async def overview(caller: CallerPolicy) -> str:
        text = caller.instructions
        seen = caller.catalog
        if len(seen.modules) > _MAX_MODULES_IN_INSTRUCTIONS:
            text += "\n\n" + search(seen).text
        return cap_lines(text, limit, f"read {MODULE_TEMPLATE} for one module's functions")

    async def module(values: Mapping[str, str], caller: CallerPolicy) -> str:
        try:
            return searched(search(caller.catalog, module=values["module"]).text, limit, values)
        except UnknownNameError as error:
            raise _unknown(error, MODULE_TEMPLATE) from None

    async def function(values: Mapping[str, str], caller: CallerPolicy) -> str:
        seen = caller.catalog
        try:
            return described(seen, seen.function(values["function"]), limit)
        except UnknownNameError as error:
            raise _unknown(error, FUNCTION_TEMPLATE) from None

    async def term(values: Mapping[str, str], caller: CallerPolicy) -> str:
        seen = caller.catalog
        try:
            return explained(seen, seen.term(values["term"]), limit)
        except UnknownNameError as error:
            raise _unknown(error, TERM_TEMPLATE) from None

    def whole_types(caller: CallerPolicy) -> str:
        instead = f"read {TYPES_TEMPLATE} for one module."
        return declared(caller.catalog, None, limit, whole_modules=True, instead=instead)

    async def types(caller: CallerPolicy) -> str:
        return per_view_types(caller)

    per_view_types = _per_view(whole_types)

    async def module_types(values: Mapping[str, str], caller: CallerPolicy) -> str:
        seen = caller.catalog
        try:
            functions = seen.module(values["module"]).functions
        except UnknownNameError as error:
            raise _unknown(error, TYPES_TEMPLATE) from None
        instead = "describe_function with format 'typescript' declares them a few at a time."
        return declared(seen, functions, limit, whole_modules=False, instead=instead)

    fixed = [
        Resource(
            uri=OVERVIEW_URI,
            name="overview",
            title=f"{api}: overview",
            description="What this API offers and how to use its tools: the server instructions and the modules.",
            mime_type=_TEXT,
            read=overview,
        )
    ]
    if reference is not None:
        fixed.append(
            Resource(
                uri=REFERENCE_URI,
                name="reference",
                title=f"{api}: reference page",
                description="The reference page for people: instructions, tools, modules, functions and terms.",
                mime_type="text/html",
                read=reference,
            )
        )
    if snapshot is not None:
        fixed.append(
            Resource(
                uri=SNAPSHOT_URI,
                name="snapshot",
                title=f"{api}: surface snapshot",
                description="Everything agents see, as the JSON file `mcp-gateway snapshot check` commits and "
                "compares.",
                mime_type="application/json",
                read=snapshot,
            )
        )

    fixed.append(
        Resource(
            uri=TYPES_URI,
            name="types",
            title=f"{api}: TypeScript declarations",
            description="The functions as run_script's `api` has them, in TypeScript: arguments, results, the "
            "types they use and doc comments.",
            mime_type=_TYPESCRIPT,
            read=types,
        )
    )

    def module_entries(caller: CallerPolicy) -> Sequence[ResourceEntry]:
        return [
            ResourceEntry(
                uri=expand(MODULE_TEMPLATE, {"module": item.name}),
                name=item.name,
                title=f"Module {item.name}",
                description=module_line(item),
                mime_type=_TEXT,
            )
            for item in caller.catalog.modules
        ]

    def function_entries(caller: CallerPolicy) -> Sequence[ResourceEntry]:
        return [
            ResourceEntry(
                uri=expand(FUNCTION_TEMPLATE, {"function": item.name}),
                name=item.name,
                title=item.summary or item.name,
                description=function_line(item),
                mime_type=_TEXT,
            )
            for item in caller.catalog.functions()
        ]

    def term_entries(caller: CallerPolicy) -> Sequence[ResourceEntry]:
        return [
            ResourceEntry(
                uri=expand(TERM_TEMPLATE, {"term": item.name}),
                name=item.name,
                title=f"Term {item.name}",
                description=(item.description.strip().split("\n", 1)[0][:160] or f"The data type {item.name}."),
                mime_type=_TEXT,
            )
            for item in caller.catalog.terms
        ]

    templates = [
        ResourceTemplate(
            uri_template=MODULE_TEMPLATE,
            name="module",
            title="A module's functions",
            description="The functions of one module, one line each, as search_functions lists them.",
            mime_type=_TEXT,
            read=module,
            complete={"module": _module_names},
            entries=_cached(module_entries),
        ),
        ResourceTemplate(
            uri_template=FUNCTION_TEMPLATE,
            name="function",
            title="A function's description",
            description="How to call one function (module.function), as describe_function describes it.",
            mime_type=_TEXT,
            read=function,
            complete={"function": lambda caller: list(caller.function_names)},
            entries=_cached(function_entries),
        ),
        ResourceTemplate(
            uri_template=TERM_TEMPLATE,
            name="term",
            title="A term's explanation",
            description="What one data type or concept means, as explain_term explains it.",
            mime_type=_TEXT,
            read=term,
            complete={"term": lambda caller: [item.name for item in caller.catalog.terms]},
            entries=_cached(term_entries),
        ),
        ResourceTemplate(
            uri_template=TYPES_TEMPLATE,
            name="module_types",
            title="A module's TypeScript declarations",
            description="The functions of one module as run_script's `api` has them, in TypeScript.",
            mime_type=_TYPESCRIPT,
            read=module_types,
            complete={"module": _module_names},
        ),
    ]
    if views is not None:
        fixed.extend(views.resources())
        templates.extend(views.templates())
    return ResourceSet(fixed, templates)


#: Distinct views whose resource listings are kept.
_CACHED_LISTINGS: Final = 32


def _cached(
    entries: Callable[[CallerPolicy], Sequence[ResourceEntry]],
) -> Callable[[CallerPolicy], Sequence[ResourceEntry]]:
    """`entries`, computed once per distinct view of the catalog."""
    kept: OrderedDict[frozenset[str] | None, Sequence[ResourceEntry]] = OrderedDict()

    def listed(caller: CallerPolicy) -> Sequence[ResourceEntry]:
        view = caller.view
        key = None if view.complete else view.names
        found = kept.get(key)
        if found is None:
            found = kept[key] = tuple(entries(caller))
            while len(kept) > _CACHED_LISTINGS:
                kept.popitem(last=False)
        return found

    return listed


def _per_view(text: Callable[[CallerPolicy], str]) -> Callable[[CallerPolicy], str]:
    """`text`, made once per distinct view of the catalog."""
    kept: OrderedDict[frozenset[str] | None, str] = OrderedDict()

    def made(caller: CallerPolicy) -> str:
        view = caller.view
        key = None if view.complete else view.names
        found = kept.get(key)
        if found is None:
            found = kept[key] = text(caller)
            while len(kept) > _CACHED_LISTINGS:
                kept.popitem(last=False)
        else:
            kept.move_to_end(key)
        return found

    return made


def gateway_prompts(catalog: Catalog, *, name: str, scripts: bool, operator: Sequence[Prompt] = ()) -> PromptSet:
    """The built-in prompts over `catalog` (mentioning run_script when `scripts`), then the operator's; each caller's
    own names complete and check their arguments, and the listings are of the caller's own modules."""
    api = catalog.title.strip() or name

    def work_with(arguments: Mapping[str, str], caller: CallerPolicy) -> str:
        parts = [f"Work with {api} through this server's tools.", caller.instructions]
        if scripts:
            parts.append(
                "For a task of many calls, run_script runs one short JavaScript program that makes them and returns "
                "only the result."
            )
        task = arguments.get("task", "").strip()
        parts.append(f"The task: {task}" if task else "Ask me what I want to do, then do it this way.")
        return "\n\n".join(parts)

    def explore(arguments: Mapping[str, str], caller: CallerPolicy) -> str:
        name = arguments["module"]
        listing = search(caller.catalog, module=name).text
        return (
            f"Explore the {name} module of {api}. Its functions:\n\n{listing}\n\n"
            "Say what the module is for and which function does what. Call describe_function with the names you "
            "would use for their exact arguments, and explain_term for the data types they take and return; "
            "call_function only when I ask you to do something."
        )

    builtin = [
        Prompt(
            name="work_with_api",
            title=f"Work with {api}",
            description=f"How to do a task with {api}: search for functions, describe them, call them; with the "
            "list of modules.",
            arguments=(PromptArgument(name="task", description="What you want to do, in a few words."),),
            template="{task}",
        ),
        Prompt(
            name="explore_module",
            title=f"Explore a module of {api}",
            description="Walk through one module's functions: what each does and how to call it.",
            arguments=(
                PromptArgument(name="module", description="The module to explore.", required=True, complete="modules"),
            ),
            template="{module}",
        ),
    ]
    renderers: dict[str, Renderer] = {"work_with_api": work_with, "explore_module": explore}
    return PromptSet(
        [*builtin, *operator],
        vocabularies={
            "modules": lambda caller: [item.name for item in caller.catalog.modules],
            "functions": lambda caller: list(caller.function_names),
            "terms": lambda caller: [item.name for item in caller.catalog.terms],
        },
        renderers=renderers,
    )


def _module_names(caller: CallerPolicy) -> list[str]:
    """The names a `{module}` template variable completes to: the caller's own modules."""
    return [item.name for item in caller.catalog.modules]
