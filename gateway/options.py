"""`GatewayConfig`: everything a `Gateway` is made from, checked once, with messages that say what to fix."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from catalog.composite import Composite, Concept
from catalog.effects import EffectRules
from catalog.errors import CatalogConfigError
from catalog.model import Catalog
from catalog.schemas import DEFAULT_MAX_SCHEMA_NODES
from gateway.errors import ConfigError
from gateway.limits import Limits
from gateway.mcp.admission import Admission
from gateway.mcp.prompts import Prompt
from gateway.mcp.toolspec import ToolSpec
from gateway.observability import METRICS_READERS
from gateway.policy import Access
from gateway.requests import TrustedProxies
from gateway.rest.credentials import AuthFunc
from gateway.rest.transports.upstream import shown_url
from gateway.tools.research import ResearchConfig
from gateway.tools.scripts import ScriptConfig
from gateway.types import ErrorHook, ToolRunner

if TYPE_CHECKING:
    from gateway.mcp.tasks import TaskConfig

__all__ = ["GatewayConfig"]


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


@dataclass(frozen=True, kw_only=True)
class GatewayConfig:
    """The options of a `Gateway` (see its docstring for each); invalid combinations raise ConfigError.

    Sequences are stored as tuples, so a config can be shared and varied with `dataclasses.replace`.
    """

    spec: Any = None
    app: Any = None
    upstream: str | None = None
    catalog: Catalog | None = None
    prefix: str | None = None
    name: str | None = None
    version: str | None = None
    instructions: str = ""
    whoami: str | None = None
    whoami_fields: tuple[str, ...] | None = None
    auth: AuthFunc | None = None
    composites: tuple[Composite, ...] = ()
    concepts: Mapping[str, Concept] | None = None
    tools: tuple[str, ...] = ()
    additive: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    destructive: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    max_output_bytes: int = 24_000
    #: Render JSON results in the compact table encoding where it is at least 20% shorter (gateway/tools/_compact.py).
    compact_results: bool = False
    timeout: float = 30.0
    on_error: ErrorHook | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()
    other_hosts: tuple[str, ...] = ()
    max_schema_nodes: int = DEFAULT_MAX_SCHEMA_NODES
    extra_tools: tuple[tuple[ToolSpec, ToolRunner], ...] = ()
    research: bool | ResearchConfig = False
    reference_path: str | None = None
    script: ScriptConfig | None = None
    access: Access = field(default_factory=Access)
    limits: Limits = field(default_factory=Limits)
    tasks: TaskConfig | None = None
    progress_interval: float = 5.0
    prompts: tuple[Prompt, ...] = ()
    metrics_path: str | None = None
    #: Who may read the metrics page: addresses and networks (gateway.observability.METRICS_READERS by default).
    metrics_from: tuple[str, ...] = METRICS_READERS
    tracer_provider: Any = None
    caller_key: bytes | str | None = field(default=None, repr=False)
    #: How many MCP requests the HTTP endpoint works on at once (gateway/mcp/admission.py); None: every one at once.
    admission: Admission | None = field(default_factory=Admission)
    #: Derived: the proxies parsed, and the effect rules of read_only/destructive/writes.
    proxies: TrustedProxies = field(init=False, repr=False, compare=False)
    metrics_readers: TrustedProxies = field(init=False, repr=False, compare=False)
    effects: EffectRules = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("tools", "additive", "read_only", "destructive", "writes", "allowed_hosts", "allowed_origins"):
            object.__setattr__(self, name, _strings(name, getattr(self, name)))
        object.__setattr__(self, "trusted_proxies", _strings("trusted_proxies", self.trusted_proxies))
        hosts = _strings("other_hosts", self.other_hosts)
        for host in hosts:
            if not _HOST_NAME.match(host):
                raise ConfigError(f"other host {host!r} is a host name such as 'uploads.example.com', not a URL")
        object.__setattr__(self, "other_hosts", tuple(host.lower() for host in hosts))
        if self.whoami_fields is not None:
            object.__setattr__(self, "whoami_fields", _strings("whoami_fields", self.whoami_fields))
        object.__setattr__(self, "composites", tuple(self.composites))
        object.__setattr__(self, "extra_tools", tuple(self.extra_tools))
        if isinstance(self.prompts, Prompt) or not all(isinstance(prompt, Prompt) for prompt in self.prompts):
            raise ConfigError(f"prompts must be a list of gateway.prompts.Prompt values, not {self.prompts!r}")
        object.__setattr__(self, "prompts", tuple(self.prompts))
        if self.app is not None and self.upstream is not None:
            raise ConfigError("give app (in-process dispatch) or upstream (a base URL), not both")
        if self.max_output_bytes < 1000:
            raise ConfigError(f"max_output_bytes must be at least 1000, got {self.max_output_bytes!r}")
        if not self.progress_interval > 0:
            raise ConfigError(f"progress_interval must be a positive number of seconds, got {self.progress_interval!r}")
        if not self.timeout > 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {self.timeout!r}")
        if self.reference_path and not self.reference_path.startswith("/"):
            raise ConfigError(
                f"reference_path must be a URL path starting with '/', e.g. '/reference', not {self.reference_path!r}"
            )
        if self.metrics_path is not None and not self.metrics_path.startswith("/"):
            raise ConfigError(
                f"metrics_path must be a URL path starting with '/', e.g. '/metrics', not {self.metrics_path!r}"
            )
        if self.metrics_path is not None and self.metrics_path == self.reference_path:
            raise ConfigError(f"metrics_path and reference_path are both {self.metrics_path!r}; give each its own")
        if self.prefix is not None and self.prefix and not self.prefix.startswith("/"):
            raise ConfigError(f"prefix must be a URL path starting with '/', e.g. '/api', not {self.prefix!r}")
        if self.prefix is not None and self.app is None:
            raise ConfigError("prefix applies to an app called in-process; for an upstream, put the path in its URL")
        if self.upstream is not None and not self.upstream.startswith(("http://", "https://")):
            raise ConfigError(f"upstream must be an http(s) base URL, got {shown_url(self.upstream)!r}")
        if self.upstream is not None:
            refuse_userinfo(self.upstream, "upstream")
        if self.script is not None:
            if not isinstance(self.script, ScriptConfig):
                raise ConfigError(f"script must be a ScriptConfig, got {self.script!r}")
            if self.whoami is None:
                raise ConfigError(
                    "run_script needs whoami: name a function that fails without valid credentials "
                    "(e.g. whoami='users.get_current_user'); every script run calls it first"
                )
        if self.admission is not None and not isinstance(self.admission, Admission):
            raise ConfigError(f"admission must be a gateway.Admission or None, got {self.admission!r}")
        if not isinstance(self.access, Access):
            raise ConfigError(f"access must be a gateway.Access, got {self.access!r}")
        if not isinstance(self.limits, Limits):
            raise ConfigError(f"limits must be a gateway.Limits, got {self.limits!r}")
        if not isinstance(self.research, ResearchConfig | bool):
            raise ConfigError(f"research must be True, False or a ResearchConfig, got {self.research!r}")
        object.__setattr__(self, "proxies", TrustedProxies.parse(self.trusted_proxies))
        object.__setattr__(self, "metrics_readers", TrustedProxies.parse(_strings("metrics_from", self.metrics_from)))
        try:
            effects = EffectRules.of(read_only=self.read_only, destructive=self.destructive, writes=self.writes)
        except CatalogConfigError as error:
            raise ConfigError(str(error)) from None
        object.__setattr__(self, "effects", effects)
