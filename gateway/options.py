"""`GatewayConfig`: everything a `Gateway` is made from, in small groups, checked once, with messages that say what
to fix. It is the one list of the gateway's options: `Gateway(...)` takes its fields, and the command line's flags
and `MCP_GATEWAY_*` variables are generated from the fields' `cli(...)` metadata (`gateway.flags`).

The groups, like httpx's `Timeout` and `Limits`: `Access` (who sees which functions, `gateway.policy`), `Effects`
(what functions do), `Limits` (budgets and timeouts, `gateway.limits`), `Security` (hosts, origins, proxies),
`Output` (what agents and people are shown), `Observability` (metrics, traces, error reports) and `Additions`
(what the operator writes by hand: composites, concepts, prompts, tools).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Final, get_args
from urllib.parse import urlsplit

from catalog.composite import Composite, Concept
from catalog.effects import EffectRules
from catalog.errors import CatalogConfigError
from catalog.search import Ranking
from gateway.errors import ConfigError
from gateway.extras import require
from gateway.flags import choice, cli, seconds, whole
from gateway.limits import Limits
from gateway.mcp.prompts import Prompt
from gateway.mcp.tasks.config import TaskConfig
from gateway.mcp.toolspec import ToolSpec
from gateway.observability import METRICS_READERS
from gateway.policy import Access, ApprovalLevel
from gateway.requests import TrustedProxies
from gateway.rest.credentials import AuthFunc, header_templates
from gateway.rest.transports.upstream import shown_url
from gateway.tools.research import ResearchConfig
from gateway.tools.scripts import ScriptConfig
from gateway.types import ErrorHook, ToolRunner

if TYPE_CHECKING:
    from gateway.mcp.tasks.store import Clock, TaskStore

__all__ = [
    "Additions",
    "Effects",
    "GatewayConfig",
    "Observability",
    "Output",
    "Security",
    "refuse_userinfo",
]


#: A host name (RFC 1123) or an IP address, with an optional port.
_HOST_NAME: Final = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d{1,5})?$")


def refuse_userinfo(url: str, what: str) -> None:
    """ConfigError when `url` carries a user name or password, which the gateway would send and print."""
    if urlsplit(url).username is not None:
        raise ConfigError(
            f"{what} {shown_url(url)!r} carries a user name or password: the gateway would send it with every "
            "caller's request and could print it. Give a service credential as a header instead, e.g. "
            "auth=header_templates(['Authorization: Basic {basic}']) (--auth-header) with the credential as the "
            "token (MCP_GATEWAY_TOKEN over stdio)"
        )


def _strings(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError(f"{name} must be a list of strings, not {value!r}")
    if not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{name} must be a list of strings, got {list(value)!r}")
    return tuple(value)


def _path(name: str, value: str | None, example: str) -> None:
    if value and not value.startswith("/"):
        raise ConfigError(f"{name} must be a URL path starting with '/', e.g. {example!r}, not {value!r}")


@dataclass(frozen=True, kw_only=True)
class Security:
    """Who may reach the gateway, and where its calls may go.

    `allowed_hosts` and `allowed_origins`: the Host headers and browser origins the HTTP endpoint answers besides
    loopback (a name, `name:port`, `*.domain` or `*`; `scheme://host[:port]`). `trusted_proxies`: the proxies
    (addresses, networks, or `*`) whose `X-Forwarded-For` and `-Proto` are believed; others' are rebuilt.
    `other_hosts`: the hosts besides the upstream that functions with servers of their own may be called at, with
    the caller's credentials, over https only (e.g. `uploads.github.com`).
    """

    allowed_hosts: Sequence[str] = field(
        default=(),
        metadata=cli(
            "also accept this Host header (name, name:port, *.domain or *); loopback is always accepted",
            name="allowed-host",
            metavar="HOST",
            where="serve",
        ),
    )
    allowed_origins: Sequence[str] = field(
        default=(),
        metadata=cli(
            "also accept this browser Origin (scheme://host[:port])",
            name="allowed-origin",
            metavar="ORIGIN",
            where="serve",
        ),
    )
    trusted_proxies: Sequence[str] = field(
        default=(),
        metadata=cli(
            "a proxy (address, network such as 10.0.0.0/8, or *) whose X-Forwarded-For and -Proto are believed; "
            "without one, forwarded headers are never trusted",
            name="trusted-proxy",
            metavar="ADDRESS",
            where="serve",
        ),
    )
    other_hosts: Sequence[str] = field(
        default=(),
        metadata=cli(
            "a host besides --upstream that functions with servers of their own may be called at, with the "
            "caller's credentials, over https (catalog check lists them)",
            name="other-host",
            metavar="HOST",
        ),
    )
    #: Derived: the proxies parsed.
    proxies: TrustedProxies = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("allowed_hosts", "allowed_origins", "trusted_proxies"):
            object.__setattr__(self, name, _strings(name, getattr(self, name)))
        hosts = _strings("other_hosts", self.other_hosts)
        for host in hosts:
            if not _HOST_NAME.match(host):
                raise ConfigError(f"other host {host!r} is a host name such as 'uploads.example.com', not a URL")
        object.__setattr__(self, "other_hosts", tuple(host.lower() for host in hosts))
        object.__setattr__(self, "proxies", TrustedProxies.parse(self.trusted_proxies))


@dataclass(frozen=True, kw_only=True)
class Effects:
    """What functions do, where the HTTP method and the document's `x-mcp-read-only` / `x-mcp-destructive` say
    otherwise: patterns on function names (`*.count_*`) for functions that only read, destroy, or write
    additively. `additive`: promoted tools (full names) whose writes add without destroying (no destructive hint).

    `approval`: which functions wait for a person's approval before they run ("destructive", "writes": every
    function that is not read-only; "none": none, the default); see `gateway.tools.confirmation`. Each call
    waiting gets a one-time handle that expires after `approval_ttl` seconds, kept in `approval_store` (a
    `TaskStore`, or a URL for `open_task_store`: `redis://...` when several instances serve; None: the task
    store when tasks are served, else this process's memory); `approval_clock` moves time in tests.
    """

    read_only: Sequence[str] = field(default=(), metadata=cli("functions that only read", metavar="PATTERN"))
    destructive: Sequence[str] = field(
        default=(), metadata=cli("functions that delete or overwrite data", metavar="PATTERN")
    )
    writes: Sequence[str] = field(default=(), metadata=cli("functions that change data, additively", metavar="PATTERN"))
    additive: Sequence[str] = field(
        default=(), metadata=cli("a promoted tool whose writes only add (not destructive)", metavar="FUNCTION")
    )
    approval: ApprovalLevel = field(
        default="none",
        metadata=cli(
            "functions that wait for a person's approval before they run: destructive ones, writes (every function "
            "that is not read-only), or none",
            parse=choice(*get_args(ApprovalLevel)),
            metavar="{none,destructive,writes}",
        ),
    )
    approval_ttl: float = field(
        default=600.0, metadata=cli("seconds a call waits for a person's approval before it expires", parse=seconds)
    )
    approval_store: TaskStore | str | None = field(
        default=None,
        metadata=cli(
            "where calls waiting for approval are kept: redis://... when several instances serve, or a SQLite file "
            "(default: the --tasks-store, else the --oauth-store with --oauth, else this process's memory)",
            metavar="URL",
        ),
    )
    approval_clock: Clock | None = field(default=None, repr=False, compare=False)
    #: Derived: the rules the catalog builder applies.
    rules: EffectRules = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("read_only", "destructive", "writes", "additive"):
            object.__setattr__(self, name, _strings(name, getattr(self, name)))
        try:
            rules = EffectRules.of(read_only=self.read_only, destructive=self.destructive, writes=self.writes)
        except CatalogConfigError as error:
            raise ConfigError(str(error)) from None
        object.__setattr__(self, "rules", rules)
        if self.approval not in get_args(ApprovalLevel):
            raise ConfigError(
                f"approval must be one of {', '.join(map(repr, get_args(ApprovalLevel)))}, got {self.approval!r}"
            )
        ttl = self.approval_ttl
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl < float("inf"):
            raise ConfigError(f"approval_ttl must be a positive number of seconds, got {ttl!r}")
        store = self.approval_store
        if store is not None and not isinstance(store, str) and not callable(getattr(store, "claim", None)):
            raise ConfigError(f"approval_store must be a store URL or a TaskStore, got {store!r}")

    @property
    def given(self) -> bool:
        """Whether any pattern reclassifies functions."""
        return bool(self.read_only or self.destructive or self.writes)


@dataclass(frozen=True, kw_only=True)
class Output:
    """What agents and people are shown: the server's `name`, `version` and `instructions` (a paragraph about the
    API, before the generated one), the most bytes of text one tool answer holds, JSON results as compact tables
    where that is 20% shorter, the fields whoami shows (dotted paths; default: all but credentials), the seconds
    between "still working" progress notifications, where the reference page is served (None: /reference
    with ChatGPT's catalog search/fetch, else nowhere; '' for nowhere), whether search reranks its hits with
    sentence embeddings where the `semantic` extra is installed (`semantic_search`; False: lexical only), and
    whether clients that render MCP Apps views get them (`apps`; see docs/apps.md)."""

    name: str | None = field(default=None, metadata=cli("server name shown to clients"))
    version: str | None = field(default=None, metadata=cli("server version shown to clients", name="server-version"))
    instructions: str = field(default="", metadata=cli("a paragraph about the API, for agents"))
    max_output_bytes: int = field(
        default=24_000,
        metadata=cli("the most bytes of text one tool answer holds (about 6k tokens by default)", parse=whole(1)),
    )
    compact_results: bool = field(
        default=False,
        metadata=cli("JSON results as header-and-rows tables where that is 20%% shorter (bench/compact_results.py)"),
    )
    whoami_fields: Sequence[str] | None = field(
        default=None,
        metadata=cli(
            "show only this field of the whoami answer (dotted paths; default: all but credentials)",
            name="whoami-field",
            metavar="FIELD",
            repeat=True,
        ),
    )
    progress_interval: float = field(
        default=5.0, metadata=cli("seconds between the progress notifications of a long call", parse=seconds)
    )
    reference_path: str | None = field(
        default=None,
        metadata=cli(
            "serve the reference page for people at PATH (default: /reference for the demo, else off; '' for off)",
            metavar="PATH",
            where="http",
        ),
    )

    semantic_search: bool = field(
        default=True,
        metadata=cli(
            "rerank search hits with sentence embeddings where the `semantic` extra is installed "
            "(--no-semantic-search: lexical ranking only)"
        ),
    )

    apps: bool = field(
        default=True,
        metadata=cli(
            "show results as tables, details and approval forms in clients that render MCP Apps views "
            "(--no-apps: text only, for every client)"
        ),
    )

    @property
    def ranking(self) -> Ranking:
        """How search ranks: with the `semantic` extra where installed, unless `semantic_search` is False."""
        return Ranking(semantic=None if self.semantic_search else False)

    def __post_init__(self) -> None:
        if not isinstance(self.semantic_search, bool):
            raise ConfigError(f"semantic_search must be True or False, got {self.semantic_search!r}")
        if not isinstance(self.apps, bool):
            raise ConfigError(f"apps must be True or False, got {self.apps!r}")
        if self.whoami_fields is not None:
            object.__setattr__(self, "whoami_fields", _strings("whoami_fields", self.whoami_fields))
        if isinstance(self.max_output_bytes, bool) or not isinstance(self.max_output_bytes, int):
            raise ConfigError(f"max_output_bytes must be a whole number of bytes, got {self.max_output_bytes!r}")
        if self.max_output_bytes < 1000:
            raise ConfigError(f"max_output_bytes must be at least 1000, got {self.max_output_bytes!r}")
        if not self.progress_interval > 0:
            raise ConfigError(f"progress_interval must be a positive number of seconds, got {self.progress_interval!r}")
        _path("reference_path", self.reference_path, "/reference")


@dataclass(frozen=True, kw_only=True)
class Observability:
    """How operators see what agents do: Prometheus metrics at `metrics_path` (needs the `metrics` extra), read
    from `metrics_from` only (addresses and networks; loopback and private networks by default); OpenTelemetry
    spans with `tracer_provider` (or the global one an SDK sets); `caller_key` keys the caller hash of the call log
    and spans (random per process by default; the same on every instance matches callers); `on_error` receives
    each tool call that failed unexpectedly."""

    metrics_path: str | None = field(
        default=None,
        metadata=cli(
            "serve Prometheus metrics at PATH, e.g. /metrics (needs pip install 'openapi-mcp-gateway[metrics]')",
            metavar="PATH",
            where="serve",
        ),
    )
    metrics_from: Sequence[str] = field(
        default=METRICS_READERS,
        metadata=cli(
            "serve the metrics page to this address or network (default: loopback and private networks)",
            metavar="NETWORK",
            where="serve",
        ),
    )
    tracer_provider: Any = None
    caller_key: bytes | str | None = field(
        default=None,
        repr=False,
        metadata=cli("keys the caller hash of the call log (the same on every instance matches callers)", flag=False),
    )
    on_error: ErrorHook | None = None
    #: Derived: `metrics_from` parsed.
    metrics_readers: TrustedProxies = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _path("metrics_path", self.metrics_path, "/metrics")
        object.__setattr__(self, "metrics_from", _strings("metrics_from", self.metrics_from))
        object.__setattr__(self, "metrics_readers", TrustedProxies.parse(self.metrics_from))


@dataclass(frozen=True, kw_only=True)
class Additions:
    """What the operator writes by hand: `composites` (functions made of others) and `concepts` (glossary terms)
    added to the catalog, `prompts` served after the built-in ones, and `tools` (a `ToolSpec` with its runner each)
    served after the fixed ones."""

    composites: Sequence[Composite] = ()
    concepts: Mapping[str, Concept] | None = None
    prompts: Sequence[Prompt] = ()
    tools: Sequence[tuple[ToolSpec, ToolRunner]] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "composites", tuple(self.composites))
        object.__setattr__(self, "tools", tuple(self.tools))
        if isinstance(self.prompts, Prompt) or not all(isinstance(prompt, Prompt) for prompt in self.prompts):
            raise ConfigError(f"prompts must be a list of gateway.Prompt values, not {self.prompts!r}")
        object.__setattr__(self, "prompts", tuple(self.prompts))


def _group(name: str, value: object, kind: type) -> None:
    if not isinstance(value, kind):
        raise ConfigError(f"{name} must be a gateway.{kind.__name__}, e.g. {name}={kind.__name__}(...), got {value!r}")


@dataclass(frozen=True, kw_only=True)
class GatewayConfig:
    """The options of a `Gateway` (see its docstring), in groups; invalid combinations raise ConfigError.

    Sequences are stored as tuples, so a config can be shared and varied with `dataclasses.replace`.
    """

    app: Any = field(
        default=None,
        metadata=cli(
            "ASGI app to dispatch to in-process (its own openapi() is the spec unless --spec is given)",
            metavar="MODULE:ATTR",
        ),
    )
    spec: Any = field(default=None, metadata=cli("OpenAPI document: path or URL"))
    upstream: str | None = field(
        default=None,
        metadata=cli(
            "base URL of a remote REST API to call over HTTP (needs --spec; default: its first absolute server URL, "
            "which must be https or on this machine)",
            metavar="URL",
        ),
    )
    prefix: str | None = field(
        default=None,
        metadata=cli(
            "path before every documented path in the app, e.g. /api for a sub-app mounted there (default: the "
            "document's relative server URL)",
            metavar="PATH",
        ),
    )
    whoami: str | None = field(
        default=None,
        metadata=cli(
            "the function that says who the caller is (e.g. users.get_current_user); the whoami tool calls it",
            metavar="FUNCTION",
        ),
    )
    auth: AuthFunc | None = field(
        default=None,
        metadata=cli(
            "send the token to the API as this header instead of 'Authorization: Bearer', e.g. 'X-API-Key: "
            "{token}', 'Authorization: Basic {basic}', or 'X-Key: {key}' with 'X-Secret: {secret}'",
            name="auth-header",
            env="AUTH_HEADERS",
            metavar="TEMPLATE",
            repeat=True,
            build=lambda templates: header_templates(templates),
        ),
    )
    tools: Sequence[str] = field(
        default=(), metadata=cli("promote a catalog function to a tool of its own", name="tool", metavar="FUNCTION")
    )
    scripts: ScriptConfig | None = field(
        default=None,
        metadata=cli(
            "offer run_script, sandboxed JavaScript that chains calls (needs --whoami, the demo has one, and the "
            "'scripts' extra)"
        ),
    )
    tasks: TaskConfig | None = field(
        default=None,
        metadata=cli("serve task-augmented tool calls (MCP tasks: a call that outlives the client's request timeout)"),
    )
    research: bool | ResearchConfig = field(
        default=False,
        metadata=cli(
            "also serve ChatGPT's search/fetch pair over the catalog (deep research, company knowledge)",
            name="chatgpt-tools",
            env="CHATGPT_TOOLS",
        ),
    )
    access: Access = field(default_factory=Access)
    effects: Effects = field(default_factory=Effects)
    limits: Limits = field(default_factory=Limits)
    security: Security = field(default_factory=Security)
    output: Output = field(default_factory=Output)
    observability: Observability = field(default_factory=Observability)
    additions: Additions = field(default_factory=Additions)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", _strings("tools", self.tools))
        for name, kind in (
            ("access", Access),
            ("effects", Effects),
            ("limits", Limits),
            ("security", Security),
            ("output", Output),
            ("observability", Observability),
            ("additions", Additions),
        ):
            _group(name, getattr(self, name), kind)
        from catalog.model import Catalog

        if self.app is not None and self.upstream is not None:
            raise ConfigError("give app (in-process dispatch) or upstream (a base URL), not both")
        if self.prefix and not self.prefix.startswith("/"):
            raise ConfigError(f"prefix must be a URL path starting with '/', e.g. '/api', not {self.prefix!r}")
        if self.prefix is not None and self.app is None:
            raise ConfigError("prefix applies to an app called in-process; for an upstream, put the path in its URL")
        if self.upstream is not None and not self.upstream.startswith(("http://", "https://")):
            raise ConfigError(f"upstream must be an http(s) base URL, got {shown_url(self.upstream)!r}")
        if self.upstream is not None:
            refuse_userinfo(self.upstream, "upstream")
        if self.scripts is not None:
            if not isinstance(self.scripts, ScriptConfig):
                raise ConfigError(f"scripts must be a ScriptConfig, got {self.scripts!r}")
            if self.whoami is None:
                raise ConfigError(
                    "run_script needs whoami: name a function that fails without valid credentials "
                    "(e.g. whoami='users.get_current_user'); every script run calls it first"
                )
            require("scripts", "run_script (scripts=ScriptConfig(), --scripts)")
        if not isinstance(self.research, ResearchConfig | bool):
            raise ConfigError(f"research must be True, False or a ResearchConfig, got {self.research!r}")
        metrics, reference = self.observability.metrics_path, self.output.reference_path
        if metrics is not None and metrics == reference:
            raise ConfigError(f"metrics_path and reference_path are both {metrics!r}; give each its own")
        if isinstance(self.spec, Catalog) and self.effects.given:
            raise ConfigError(
                "read_only, destructive and writes apply when the gateway builds the catalog; with a built "
                "catalog as spec, pass effects=EffectRules(...) to build_catalog instead"
            )
        if isinstance(self.spec, Catalog) and (self.additions.composites or self.additions.concepts):
            raise ConfigError(
                "composites and concepts are added when the gateway builds the catalog; with a built catalog as "
                "spec, pass them to build_catalog instead"
            )


GROUPS: Final = ("access", "effects", "limits", "security", "output", "observability", "additions")
"""The fields of `GatewayConfig` that are groups of options."""


def options_of(config: GatewayConfig) -> Mapping[str, Any]:
    """`config` as the keyword arguments of `Gateway(...)` that make it."""
    return {item.name: getattr(config, item.name) for item in fields(config)}
