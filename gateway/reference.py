"""The reference page: one self-contained HTML page that shows people exactly what an agent reads.

It holds the server instructions, every tool as tools/list shows it (description, annotations, schemas), the
resources and resource templates, the prompts with their arguments, every module with its functions, and every
term. A function's entry is the text describe_function returns and a term's
the text explain_term returns, character for character; the page only adds links around parts of that text:
types in signatures, arguments and fields link to their terms, a term's "Accepted by"/"Returned by" functions
link to them, and each term lists the other functions whose signatures mention it.

Everything from the API document is HTML-escaped, and the page's own Content-Security-Policy allows only its
inline style and script (by hash), so a hostile description cannot run code. It reads without JavaScript; the
script adds instant filtering, made for APIs of a thousand functions: the filter box stays on screen (on a phone
too), the matches come first (the instructions fold away while filtering), the counts follow the filter and a
filter nothing matches says so. `ReferencePage` serves it: rendered once, on first request, then the same bytes.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import re
import string
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from starlette.types import Receive, Scope, Send

from catalog.model import Catalog, Function, Term
from catalog.render import describe_function, explain_term
from gateway.errors import CredentialError, UnavailableError
from gateway.mcp.prompts import Prompt
from gateway.mcp.resources import Resource, ResourceTemplate
from gateway.mcp.toolspec import ToolSpec
from gateway.policy import CallerPolicy

if TYPE_CHECKING:
    from gateway.types import Served

__all__ = ["ReferencePage", "anchor", "reference_page", "render_reference"]

_TEMPLATE_TEXT = resources.files("gateway").joinpath("reference_page.html").read_text(encoding="utf-8")
_TEMPLATE = string.Template(_TEMPLATE_TEXT)


def _hash(pattern: str) -> str:
    found = re.search(pattern, _TEMPLATE_TEXT, re.DOTALL)
    if found is None:  # pragma: no cover - the template ships with the package
        raise RuntimeError(f"reference_page.html lost its {pattern!r} block")
    digest = hashlib.sha256(found.group(1).encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


#: Only the page's own inline style and script run (CSP Level 3 hash sources); nothing is fetched.
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {_hash(r'<style>(.*?)</style>')}; script-src {_hash(r'<script>(.*?)</script>')}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)

_ID_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
#: A run of characters that may be a type name inside a rendered type (`Order[]`, `(A | B)`, `{a: B}`).
_TOKEN = re.compile(r'[^\s,()\[\]{}|&:<>?"…]+')
#: What may stand before a type name: `: T`, `-> T`, `A | T`, `A & T`, `(T | U)`; anything else is not a type.
_TYPE_BEFORE = frozenset(":>|&(")
_ARG_FACTS = re.compile(r" \((?:path|query|header|cookie|body), (?:required|optional)")
_FIELD_FLAGS = re.compile(r" \((?:required|read-only|deprecated)(?:, (?:required|read-only|deprecated))*\)$")
_MARK = re.compile(r"\[(read|write|destructive|deprecated)\]")
_MODULE_LINE = re.compile(r"- (\S+) \(\d+\)")
_HINTS = (
    ("read_only", "read-only", "readOnlyHint"),
    ("destructive", "destructive", "destructiveHint"),
    ("idempotent", "idempotent", "idempotentHint"),
    ("open_world", "open world", "openWorldHint"),
)

Span = tuple[int, int, str, str]
"""(start, end, href, class) of a link inside one line of rendered text."""


def anchor(kind: str, name: str) -> str:
    """The element id of a `kind` (fn, term, tool, module) entry: `fn-orders.get_order`; other chars as `~hex~`."""
    return f"{kind}-" + "".join(char if char in _ID_CHARS else f"~{ord(char):x}~" for char in name)


def reference_page(gateway: Served, caller: CallerPolicy | None = None, hidden: frozenset[str] = frozenset()) -> str:
    """The reference page of `gateway` as `caller` may see it (its functions, the instructions it gets, the tools
    it is offered: not those in `hidden`), or whole for the operator (`caller` None)."""
    return render_reference(
        catalog=caller.catalog if caller is not None else gateway.catalog,
        name=gateway.name,
        version=gateway.version,
        instructions=caller.instructions if caller is not None else gateway.instructions,
        tools=[spec for spec in gateway.tools() if spec.name not in hidden],
        resources=gateway.resources.resources(),
        templates=gateway.resources.templates(),
        prompts=gateway.prompts.prompts(),
    )


def render_reference(
    *,
    catalog: Catalog,
    name: str,
    version: str,
    instructions: str,
    tools: Sequence[ToolSpec],
    resources: Sequence[Resource] = (),
    templates: Sequence[ResourceTemplate] = (),
    prompts: Sequence[Prompt] = (),
) -> str:
    """The whole page as one HTML string; equal inputs give equal pages."""
    linker = _Linker(catalog)
    modules = [(module, [linker.function(function) for function in module.functions]) for module in catalog.modules]
    terms = [linker.term(term) for term in catalog.terms]
    functions = sum(len(module.functions) for module in catalog.modules)
    lede = (
        f"What an agent sees through this MCP server: {len(tools)} tools, {functions} functions in "
        f"{len(catalog.modules)} modules, {len(catalog.terms)} terms. Function entries are exactly what "
        "describe_function returns, term entries what explain_term returns."
    )
    body: list[str] = ['<section id="instructions"><h2>Instructions</h2>']
    body.append(f'<pre class="instructions">{_instructions(instructions, catalog)}</pre></section>')
    body.append(f'<section id="tools" data-group><h2>Tools <span class="n">{len(tools)}</span></h2>')
    body.extend(_tool(spec) for spec in tools)
    body.append("</section>")
    if resources or templates:
        count = len(resources) + len(templates)
        body.append(f'<section id="resources" data-group><h2>Resources <span class="n">{count}</span></h2>')
        body.extend(_resource(r.uri, r.title, r.mime_type, r.description) for r in resources)
        body.extend(_resource(t.uri_template, t.title, t.mime_type, t.description) for t in templates)
        body.append("</section>")
    if prompts:
        body.append(f'<section id="prompts" data-group><h2>Prompts <span class="n">{len(prompts)}</span></h2>')
        body.extend(_prompt(prompt) for prompt in prompts)
        body.append("</section>")
    body.append(f'<section id="modules"><h2>Modules <span class="n">{len(catalog.modules)}</span></h2>')
    for module, entries in modules:
        ident = anchor("module", module.name)
        body.append(
            f'<section class="module" id="{ident}" data-group><h3><a href="#{ident}">{_e(module.name)}</a> '
            f'<span class="n">{len(entries)}</span></h3>'
        )
        if module.description.strip():
            body.append(f'<p class="doc">{_e(module.description.strip())}</p>')
        body.extend(entries)
        body.append("</section>")
    body.append("</section>")
    body.append(f'<section id="terms" data-group><h2>Terms <span class="n">{len(terms)}</span></h2>')
    body.extend(terms)
    body.append("</section>")
    return _TEMPLATE.substitute(
        csp=_e(CONTENT_SECURITY_POLICY),
        title=_e(f"{name} — reference for agents"),
        name=_e(name),
        version=_e(version),
        lede=_e(lede),
        toc=_toc(catalog, len(tools), len(resources) + len(templates), len(prompts)),
        body="\n".join(body),
    )


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _toc(catalog: Catalog, tools: int, resources: int = 0, prompts: int = 0) -> str:
    parts = [
        '<ol><li><a href="#instructions">Instructions</a></li>',
        f'<li data-toc="tools"><a href="#tools">Tools</a> <span class="n">{tools}</span></li>',
    ]
    if resources:
        parts.append(
            f'<li data-toc="resources"><a href="#resources">Resources</a> <span class="n">{resources}</span></li>'
        )
    if prompts:
        parts.append(f'<li data-toc="prompts"><a href="#prompts">Prompts</a> <span class="n">{prompts}</span></li>')
    parts += [
        f'<li data-toc="modules"><a href="#modules">Modules</a> <span class="n">{len(catalog.modules)}</span><ol>',
    ]
    for module in catalog.modules:
        ident = anchor("module", module.name)
        parts.append(
            f'<li data-toc="{ident}"><a href="#{ident}">{_e(module.name)}</a> '
            f'<span class="n">{len(module.functions)}</span></li>'
        )
    parts.append(
        f'</ol></li><li data-toc="terms"><a href="#terms">Terms</a> <span class="n">{len(catalog.terms)}</span>'
    )
    parts.append("</li></ol>")
    return "".join(parts)


def _instructions(text: str, catalog: Catalog) -> str:
    """The instructions, with the module names of their module list linked."""
    modules = {module.name for module in catalog.modules}
    lines = []
    for line in text.split("\n"):
        found = _MODULE_LINE.match(line)
        if found and found.group(1) in modules:
            lines.append(_emit(line, [(2, found.end(1), "#" + anchor("module", found.group(1)), "")]))
        else:
            lines.append(_e(line))
    return "\n".join(lines)


def _tool(spec: ToolSpec) -> str:
    ident = anchor("tool", spec.name)
    hints = "".join(
        f'<span class="hint{" on" if getattr(spec, field) else ""}" title="{hint}: '
        f'{"true" if getattr(spec, field) else "false"}">{label}</span>'
        for field, label, hint in _HINTS
    )
    parts = [
        f'<article class="item tool" id="{ident}" data-s="{_e(_key(spec.name, spec.title))}">',
        f'<h3><a class="self" href="#{ident}"><code>{_e(spec.name)}</code></a> — {_e(spec.title)}</h3>',
        f'<p class="hints">{hints}</p>',
        f'<pre class="description">{_e(spec.description)}</pre>',
        f"<details><summary>Input schema</summary><pre>{_e(_json(spec.input_schema))}</pre></details>",
    ]
    if spec.output_schema is not None:
        parts.append(f"<details><summary>Output schema</summary><pre>{_e(_json(spec.output_schema))}</pre></details>")
    parts.append("</article>")
    return "".join(parts)


def _resource(uri: str, title: str, mime_type: str, description: str) -> str:
    ident = anchor("resource", uri)
    return (
        f'<article class="item resource" id="{ident}" data-s="{_e(_key(uri, title))}">'
        f'<h3><a class="self" href="#{ident}"><code>{_e(uri)}</code></a> — {_e(title)}</h3>'
        f'<p class="hints"><span class="hint">{_e(mime_type)}</span></p>'
        f'<pre class="description">{_e(description)}</pre></article>'
    )


def _prompt(prompt: Prompt) -> str:
    ident = anchor("prompt", prompt.name)
    lines = [prompt.description]
    for argument in prompt.arguments:
        flags = "required" if argument.required else "optional"
        about = f" — {argument.description}" if argument.description else ""
        lines.append(f"  {argument.name} ({flags}){about}")
    return (
        f'<article class="item prompt" id="{ident}" data-s="{_e(_key(prompt.name, prompt.title or ""))}">'
        f'<h3><a class="self" href="#{ident}"><code>{_e(prompt.name)}</code></a> — {_e(prompt.title or prompt.name)}'
        f'</h3><pre class="description">{_e(chr(10).join(lines))}</pre></article>'
    )


def _json(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False)


def _key(*parts: str) -> str:
    """What the filter matches: the words given, lowercased, on one line."""
    return " ".join(" ".join(parts).lower().split())


def _emit(line: str, spans: Iterable[Span]) -> str:
    """`line` HTML-escaped, with each span wrapped in a link (or, without an href, a styled span)."""
    out: list[str] = []
    at = 0
    for start, end, href, css in sorted(spans):
        if start < at:
            continue
        out.append(_e(line[at:start]))
        text = _e(line[start:end])
        cls = f' class="{css}"' if css else ""
        out.append(f'<a{cls} href="{_e(href)}">{text}</a>' if href else f"<span{cls}>{text}</span>")
        at = end
    out.append(_e(line[at:]))
    return "".join(out)


class _Linker:
    """Turns describe_function and explain_term texts into HTML with links, and remembers who mentions a term."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.terms = {term.name for term in catalog.terms}
        self.functions = {function.name for function in catalog.functions()}
        #: term → functions whose describe_function text names it.
        self.mentions: dict[str, list[str]] = {}

    def function(self, function: Function) -> str:
        text = describe_function(self.catalog, function)
        lines = text.split("\n")
        rendered = [_e(line) for line in lines]
        rendered[0] = self._signature(function.name, lines[0])
        if len(lines) > 1:
            rendered[1] = self._route(lines[1])
        returns = max((i for i, line in enumerate(lines) if line.startswith("  Returns: ")), default=None)
        used: list[str] = []
        if returns is not None:
            if returns + 1 < len(lines) and lines[returns + 1].startswith("  Terms: "):
                rendered[returns + 1], used = self._terms_line(lines[returns + 1])
            names = set(used)
            rendered[returns] = _emit(lines[returns], self._types(lines[returns], len("  Returns: "), None, names))
            for i in _block(lines, returns, "  Args:"):
                facts = _ARG_FACTS.search(lines[i])
                rendered[i] = _emit(lines[i], self._types(lines[i], 4, facts.start() if facts else None, names))
        for term in used:
            self.mentions.setdefault(term, []).append(function.name)
        ident = anchor("fn", function.name)
        arg_names = " ".join(arg.name for arg in function.args)
        key = _key(function.name, function.summary, arg_names, " ".join(used))
        text_html = "\n".join(rendered)
        return f'<article class="item fn" id="{ident}" data-s="{_e(key)}"><pre>{text_html}</pre></article>'

    def term(self, term: Term) -> str:
        text = explain_term(self.catalog, term)
        lines = text.split("\n")
        rendered = [_e(line) for line in lines]
        head = lines[0]
        ident = anchor("term", term.name)
        if head.startswith(term.name):
            rendered[0] = _emit(head, [(0, len(term.name), f"#{ident}", "sig self")])
        end = len(lines)
        listed: set[str] = set()
        for label in ("  Returned by: ", "  Accepted by: "):
            if end > 1 and lines[end - 1].startswith(label):
                rendered[end - 1], names = self._functions_line(lines[end - 1], len(label))
                listed.update(names)
                end -= 1
        for i in range(1, end):
            line = lines[i]
            for label in ("  Type: ", "  One of: ", "  Any of: "):
                if line.startswith(label):
                    rendered[i] = _emit(line, self._types(line, len(label), None, self.terms))
        for i in _block(lines, end, "  Fields:"):
            line = lines[i]
            cut = line.find(" — ")
            stop = cut if cut >= 0 else len(line)
            flags = _FIELD_FLAGS.search(line[:stop])
            rendered[i] = _emit(line, self._types(line, 4, flags.start() if flags else stop, self.terms))
        others = [name for name in self.mentions.get(term.name, []) if name not in listed]
        key = _key(term.name, " ".join(term.aliases), head)
        text_html = "\n".join(rendered)
        parts = [f'<article class="item term" id="{ident}" data-s="{_e(key)}"><pre>{text_html}</pre>']
        if others:
            links = ", ".join(f'<a href="#{anchor("fn", name)}">{_e(name)}</a>' for name in others)
            parts.append(f'<p class="used">Also in the signatures of: {links}</p>')
        parts.append("</article>")
        return "".join(parts)

    def _signature(self, name: str, line: str) -> str:
        spans: list[Span] = []
        if line.startswith(name + "("):
            spans.append((0, len(name), "#" + anchor("fn", name), "self"))
        return '<span class="sig">' + _emit(line, spans + self._types(line, len(name), None, self.terms)) + "</span>"

    def _route(self, line: str) -> str:
        spans = [(m.start(), m.end(), "", f"mark-{m.group(1)}") for m in _MARK.finditer(line)]
        return f'<span class="route">{_emit(line, spans)}</span>'

    def _terms_line(self, line: str) -> tuple[str, list[str]]:
        start = len("  Terms: ")
        stop = line.rfind(" (")
        stop = stop if stop > start else len(line)
        spans: list[Span] = []
        names: list[str] = []
        at = start
        for name in line[start:stop].split(", "):
            if name in self.terms:
                spans.append((at, at + len(name), "#" + anchor("term", name), ""))
                names.append(name)
            at += len(name) + 2
        return _emit(line, spans), names

    def _functions_line(self, line: str, start: int) -> tuple[str, list[str]]:
        spans: list[Span] = []
        names: list[str] = []
        at = start
        for name in line[start:].split(", "):
            if name in self.functions:
                spans.append((at, at + len(name), "#" + anchor("fn", name), ""))
                names.append(name)
            at += len(name) + 2
        return _emit(line, spans), names

    def _types(self, line: str, start: int, stop: int | None, names: set[str]) -> list[Span]:
        """Links for the term names in type positions of `line[start:stop]`."""
        spans: list[Span] = []
        end = len(line) if stop is None else stop
        for found in _TOKEN.finditer(line, start, end):
            name = found.group()
            if name not in names:
                continue
            before = line[start : found.start()].rstrip()
            after = line[found.end() : found.end() + 1]
            if (before and before[-1] not in _TYPE_BEFORE) or after in (":", "?"):
                continue
            spans.append((found.start(), found.end(), "#" + anchor("term", name), ""))
        return spans


def _block(lines: Sequence[str], end: int, header: str) -> range:
    """The indices of the 4-space-indented lines right above `end`, when a `header` line opens them."""
    first = end
    while first > 1 and lines[first - 1].startswith("    "):
        first -= 1
    if first < end and lines[first - 1] == header:
        return range(first, end)
    return range(0)


#: Distinct callers' pages kept (each the page of one view and set of tools offered).
_CACHED_PAGES = 16

CallerOfScope = Callable[[Scope], Awaitable[CallerPolicy]]
"""The caller policy of an HTTP request to the page: from its credentials, or an anonymous caller without any;
CredentialError when it presents credentials that are refused."""


class ReferencePage:
    """An ASGI app that answers GET and HEAD with the page as the requester's caller policy shows it: rendered
    once per distinct view (in a worker thread) and gzipped once.

    Without credentials the page shows what an anonymous caller may see; credentials that are refused get 401 with
    the challenge. Responses carry an ETag (If-None-Match gives 304), the page's Content-Security-Policy, and the
    gzip body when the client accepts it; under per-caller views they are private to the requester.
    """

    def __init__(self, render: Callable[[CallerPolicy, frozenset[str]], str], caller_of: CallerOfScope) -> None:
        self._render = render
        self._caller_of = caller_of
        self._pages: OrderedDict[object, _Rendered] = OrderedDict()
        self._lock: anyio.Lock | None = None

    async def rendered(self, caller: CallerPolicy) -> _Rendered:
        """The page's bytes for `caller`, rendering them on first use for its view."""
        hidden = await caller.hidden_tools()
        view = caller.view
        key = (None if view.complete else view.names, hidden)
        page = self._pages.get(key)
        if page is None:
            if self._lock is None:
                self._lock = anyio.Lock()
            async with self._lock:
                page = self._pages.get(key)
                if page is None:
                    page = await anyio.to_thread.run_sync(lambda: _Rendered(self._render(caller, hidden)))
                    self._pages[key] = page
                    while len(self._pages) > _CACHED_PAGES:
                        self._pages.popitem(last=False)
        return page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 405, [(b"allow", b"GET, HEAD")], b"")
            return
        try:
            caller = await self._caller_of(scope)
        except CredentialError as error:
            # RFC 6750 §3: refused credentials get the challenge, never a page.
            challenge = [(b"www-authenticate", error.www_authenticate.encode("latin-1"))]
            await _respond(
                send, 401, [*challenge, (b"content-type", b"text/plain; charset=utf-8")], str(error).encode()
            )
            return
        except UnavailableError as error:
            retry = [(b"retry-after", str(error.retry_after).encode())]
            await _respond(send, 503, [*retry, (b"content-type", b"text/plain; charset=utf-8")], str(error).encode())
            return
        page = await self.rendered(caller)
        headers = dict(scope.get("headers") or [])
        per_caller = caller.policy.visibility.active
        common = [
            (b"etag", page.etag),
            # A page that depends on the credentials is the requester's alone: no shared cache keeps it.
            (b"cache-control", b"private, no-cache" if per_caller else b"no-cache"),
            (b"vary", b"accept-encoding, authorization" if per_caller else b"accept-encoding"),
        ]
        if page.etag in [tag.strip() for tag in headers.get(b"if-none-match", b"").split(b",")]:
            await _respond(send, 304, common, b"")
            return
        body = page.body
        extra = [
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-security-policy", (CONTENT_SECURITY_POLICY + "; frame-ancestors 'none'").encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
        ]
        if _accepts_gzip(headers.get(b"accept-encoding", b"")):
            body = page.gzipped
            extra.append((b"content-encoding", b"gzip"))
        await _respond(send, 200, [*common, *extra], body, head=scope["method"] == "HEAD")


class _Rendered:
    """The page as UTF-8 bytes, gzipped bytes and an entity tag."""

    def __init__(self, text: str) -> None:
        self.body = text.encode("utf-8")
        self.gzipped = gzip.compress(self.body, compresslevel=6, mtime=0)
        self.etag = b'"' + hashlib.sha256(self.body).hexdigest()[:32].encode("ascii") + b'"'


def _accepts_gzip(header: bytes) -> bool:
    for part in header.decode("latin-1").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            quality = params.strip().removeprefix("q=").strip()
            return not (params.strip().startswith("q=") and quality in ("0", "0.0", "0.00", "0.000"))
    return False


async def _respond(
    send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes, *, head: bool = False
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode("ascii"))],
        }
    )
    await send({"type": "http.response.body", "body": b"" if head else body})
