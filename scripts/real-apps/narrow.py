"""The caller policy on a real app: a caller who does not see some of its functions, on every path it can reach.

Two gateways over the app, each with every path on (promoted tools, one of them hidden; run_script where the app
has a whoami function; tasks; ChatGPT search/fetch; the reference page; metrics; an operator prompt that completes
function names): one with `Access(hide=...)`, and one behind a real OAuth server with `Access(scopes=...)`, probed
with a token granted a narrower scope than the app's whole API. The paths are enumerated from the gateway itself
(the JSON-RPC methods its server answers, its tools, resources, templates, prompts and HTTP routes); each is
probed as that caller, and no answer may name a function it does not see.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: What a 2026-07-28 request carries in its `_meta`, with the tasks extension declared.
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "narrow-trial", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}


@dataclass(frozen=True, kw_only=True)
class Narrow:
    """How an app's caller is narrowed: the patterns hidden from everyone, a hidden function and a visible read
    (each promoted to a tool), and the OAuth scopes: what each reaches and the one the narrow token is granted."""

    hide: tuple[str, ...]
    hidden: str
    visible: str
    scopes: Mapping[str, tuple[str, ...]]
    granted: tuple[str, ...]


@dataclass(frozen=True)
class Probe:
    path: str
    shown: str


def paths_of(gateway: Any, path: str) -> list[str]:
    """Every path the gateway lets a caller reach, as `kind:name`."""
    from gateway.mcp import _sdk

    found = {f"method:{method}" for method in _sdk.served_methods(gateway.endpoint.server)}
    found |= {"method:initialize", "method:tasks/update"}
    found |= {f"tool:{spec.name}" for spec in gateway.tools()}
    found |= {f"resource:{resource.uri}" for resource in gateway.resources.resources()}
    found |= {f"template:{template.uri_template}" for template in gateway.resources.templates()}
    found |= {f"prompt:{prompt.name}" for prompt in gateway.prompts.prompts()}
    found |= {f"route:{route}" for route in gateway._routes(path)}
    return sorted(found)


class Prober:
    """Probes each path of one gateway at `base` (in-process) as the caller with `token`."""

    def __init__(self, http: Any, mcp_path: str, token: str | None, narrow: Narrow, hidden: Sequence[str]) -> None:
        self.http = http
        self.mcp_path = mcp_path
        self.token = token
        self.narrow = narrow
        self.hidden = hidden
        #: Names the caller asked for itself, echoed back in an error: not a leak.
        self.asked: set[str] = set()

    def headers(self, version: str = "2025-11-25", **extra: str) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": version, **extra}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        return headers

    async def rpc(self, method: str, params: Mapping[str, Any] | None = None, **headers: str) -> str:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            body["params"] = dict(params)
        answer = await self.http.post(self.mcp_path, json=body, headers=self.headers(**headers))
        return str(answer.text)

    async def modern(self, method: str, params: Mapping[str, Any], **headers: str) -> str:
        answer = await self.http.post(
            self.mcp_path,
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": MODERN_META}},
            headers=self.headers("2026-07-28", **{"mcp-method": method, **headers}),
        )
        return str(answer.text)

    async def tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        return await self.rpc("tools/call", {"name": name, "arguments": dict(arguments)})

    def ask(self, *names: str) -> None:
        self.asked.update(names)

    def leaked(self, text: str) -> list[str]:
        """The hidden names `text` holds, besides those the caller asked for itself."""
        for name in sorted(self.asked, key=len, reverse=True):
            text = text.replace(name, "")
        return sorted({name for name in self.hidden if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w])", text)})

    # The probes: each returns all the caller was shown.

    async def initialize(self) -> str:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        return await self.rpc("initialize", params)

    async def discover(self) -> str:
        return await self.modern("server/discover", {})

    async def tasks(self) -> str:
        hidden_tool = self.narrow.hidden.replace(".", "-", 1)
        self.ask(hidden_tool, self.narrow.hidden)
        texts = [
            await self.rpc("tools/call", {"name": hidden_tool, "arguments": {}, "task": {}}),
            await self.rpc("tasks/list", {}),
            await self.rpc("tasks/get", {"taskId": "not-a-task"}),
        ]
        return " ".join(texts)

    async def listen(self) -> str:
        return await self.modern("subscriptions/listen", {"notifications": {"taskIds": ["not-a-task"]}})

    async def reads(self) -> str:
        self.ask(f"catalog://functions/{self.narrow.hidden}", self.narrow.hidden)
        uris = ("catalog://overview", "catalog://reference", f"catalog://functions/{self.narrow.hidden}")
        texts = [await self.rpc("resources/read", {"uri": uri}) for uri in uris]
        module = self.narrow.hidden.split(".")[0]
        self.ask(f"catalog://modules/{module}")
        texts.append(await self.rpc("resources/read", {"uri": f"catalog://modules/{module}"}))
        return " ".join(texts)

    async def types(self) -> str:
        """The TypeScript declarations, whole and of the hidden function's module, with each function they declare
        also written as `module.function` (the declarations nest functions in modules), so a hidden one shows."""
        module = self.narrow.hidden.split(".")[0]
        texts: list[str] = []
        for uri in ("catalog://types", f"catalog://types/{module}"):
            answer = await self.rpc("resources/read", {"uri": uri})
            texts.extend([answer, *_declared(answer)])
        return " ".join(texts)

    async def completions(self) -> str:
        module = self.narrow.hidden.split(".")[0]
        asked = [
            {"ref": ref, "argument": {"name": argument, "value": value}}
            for ref, argument in (
                ({"type": "ref/resource", "uri": "catalog://functions/{function}"}, "function"),
                ({"type": "ref/resource", "uri": "catalog://modules/{module}"}, "module"),
                ({"type": "ref/prompt", "name": "call_one"}, "function"),
                ({"type": "ref/prompt", "name": "explore_module"}, "module"),
            )
            for value in ("", module[:3])
        ]
        return " ".join([await self.rpc("completion/complete", params) for params in asked])

    async def prompts(self) -> str:
        module = self.narrow.hidden.split(".")[0]
        self.ask(module, self.narrow.hidden)
        return " ".join(
            [
                await self.rpc("prompts/get", {"name": "work_with_api", "arguments": {}}),
                await self.rpc("prompts/get", {"name": "explore_module", "arguments": {"module": module}}),
                await self.rpc("prompts/get", {"name": "call_one", "arguments": {"function": self.narrow.hidden}}),
            ]
        )

    async def page(self, route: str) -> str:
        headers = {"authorization": f"Bearer {self.token}"} if self.token else {}
        answer = await self.http.get(route, headers=headers)
        return f"{answer.status_code} {answer.text}"

    async def anonymous_page(self, route: str) -> str:
        answer = await self.http.get(route)
        return f"{answer.status_code} {answer.text}"


def probes(prober: Prober, narrow: Narrow, reference: str, metrics: str) -> dict[str, Callable[[], Awaitable[str]]]:
    """One probe per path kind and name (the tools' own probes by tool name)."""
    p = prober
    near = narrow.hidden[:-1]  # a misspelling of a hidden name, whose suggestions must not name it
    p.ask(near, narrow.hidden.replace(".", "-", 1))
    tools: dict[str, Callable[[], Awaitable[str]]] = {
        "whoami": lambda: p.tool("whoami", {}),
        "search_functions": lambda: _joined(
            p.tool("search_functions", {}), p.tool("search_functions", {"query": narrow.hidden.split(".")[1]})
        ),
        "describe_function": lambda: p.tool("describe_function", {"names": [narrow.hidden, near]}),
        "explain_term": lambda: p.tool("explain_term", {"name": narrow.hidden.split(".")[0]}),
        "call_function": lambda: _joined(
            p.tool("call_function", {"name": narrow.hidden, "args": {}}), p.tool("call_function", {"name": near})
        ),
        "run_script": lambda: p.tool(
            "run_script",
            {
                "code": f"try {{ await call('{near}', {{}}) }} catch (e) {{ JSON.stringify([Object.keys(api), "
                "Object.values(api).map((m) => Object.keys(m)), e.message]) }"
            },
        ),
        "search": lambda: p.tool("search", {"query": narrow.hidden.split(".")[1].replace("_", " ")}),
        "fetch": lambda: p.tool("fetch", {"id": f"function:{near}"}),
        narrow.visible.replace(".", "-", 1): lambda: p.tool(narrow.visible.replace(".", "-", 1), {}),
        narrow.hidden.replace(".", "-", 1): lambda: p.tool(narrow.hidden.replace(".", "-", 1), {}),
    }
    methods: dict[str, Callable[[], Awaitable[str]]] = {
        "initialize": p.initialize,
        "server/discover": p.discover,
        "ping": lambda: p.rpc("ping"),
        "tools/list": lambda: p.rpc("tools/list", {}),
        "tools/call": lambda: _joined(*(probe() for probe in tools.values())),
        "resources/list": lambda: p.rpc("resources/list", {}),
        "resources/templates/list": lambda: p.rpc("resources/templates/list", {}),
        "resources/read": lambda: _joined(p.reads(), p.types()),
        "resources/subscribe": lambda: p.rpc("resources/subscribe", {"uri": f"catalog://functions/{narrow.hidden}"}),
        "resources/unsubscribe": lambda: p.rpc("resources/unsubscribe", {"uri": "catalog://overview"}),
        "prompts/list": lambda: p.rpc("prompts/list", {}),
        "prompts/get": p.prompts,
        "completion/complete": p.completions,
        "tasks/get": p.tasks,
        "tasks/result": lambda: p.rpc("tasks/result", {"taskId": "not-a-task"}),
        "tasks/list": lambda: p.rpc("tasks/list", {}),
        "tasks/cancel": lambda: p.rpc("tasks/cancel", {"taskId": "not-a-task"}),
        "tasks/update": lambda: p.modern("tasks/update", {"taskId": "not-a-task"}, **{"mcp-name": "not-a-task"}),
        "subscriptions/listen": p.listen,
    }
    table: dict[str, Callable[[], Awaitable[str]]] = {f"method:{name}": probe for name, probe in methods.items()}
    table.update({f"tool:{name}": probe for name, probe in tools.items()})
    table["resource:catalog://overview"] = lambda: p.rpc("resources/read", {"uri": "catalog://overview"})
    table["resource:catalog://reference"] = lambda: p.rpc("resources/read", {"uri": "catalog://reference"})
    for template in ("modules/{module}", "functions/{function}", "terms/{term}"):
        table[f"template:catalog://{template}"] = p.reads
    table["resource:catalog://types"] = p.types
    table["template:catalog://types/{module}"] = p.types
    for prompt in ("work_with_api", "explore_module", "call_one"):
        table[f"prompt:{prompt}"] = p.prompts
    table[f"route:{p.mcp_path}"] = lambda: p.page(p.mcp_path)
    table[f"route:{reference}"] = lambda: _joined(p.page(reference), p.anonymous_page(reference))
    table[f"route:{metrics}"] = lambda: p.anonymous_page(metrics)
    return table


def _declared(answer: str) -> list[str]:
    """`module.function` for each function a resources/read answer of TypeScript declarations declares."""
    try:
        contents = json.loads(answer).get("result", {}).get("contents", [])
    except (ValueError, AttributeError):
        return []
    names: list[str] = []
    for content in contents:
        module = None
        for line in str(content.get("text", "")).splitlines():
            if found := re.match(r"^  (\w+): \{", line):
                module = found.group(1)
            elif (found := re.match(r"^    (\w+)\(", line)) and module is not None:
                names.append(f"{module}.{found.group(1)}")
    return names


async def _joined(*calls: Awaitable[str]) -> str:
    return " ".join([await call for call in calls])


async def probe_every_path(
    gateway: Any, app_with_gateway: Any, path: str, token: str | None, narrow: Narrow, hidden: Sequence[str]
) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The enumerated paths, the hidden names each showed (none, when the policy holds) and the paths without a
    probe."""
    import httpx2

    reference = gateway.reference_path
    metrics = gateway.metrics_path
    transport = httpx2.ASGITransport(app_with_gateway, client=("203.0.113.7", 4000))
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost", timeout=60) as http:
        prober = Prober(http, path, token, narrow, hidden)
        table = probes(prober, narrow, reference, metrics)
        enumerated = paths_of(gateway, path)
        leaks: dict[str, list[str]] = {}
        for name in enumerated:
            probe = table.get(name)
            if probe is None:
                continue
            shown = await probe()
            found = prober.leaked(shown)
            if found:
                leaks[name] = found
    return enumerated, leaks, [name for name in enumerated if name not in table]


def full_gateway(app: Any, spec: Any, narrow: Narrow, access: Any, *, pages: str, auth: Any = None) -> Any:
    """A gateway over `app` with every path on and the caller narrowed by `access`; its reference page and metrics
    at `/<pages>-reference` and `/<pages>-metrics`."""
    from gateway import Access, Gateway
    from gateway.mcp.prompts import Prompt, PromptArgument
    from gateway.mcp.tasks import TaskConfig
    from gateway.options import Additions, Effects, Observability, Output
    from gateway.tools.scripts import ScriptConfig

    if not isinstance(access, Access):
        raise TypeError(f"access must be an Access, got {access!r}")
    return Gateway(
        app=app,
        whoami=spec.whoami,
        auth=auth,
        tools=[narrow.visible, narrow.hidden],
        scripts=ScriptConfig() if spec.whoami else None,
        tasks=TaskConfig(),
        research=True,
        access=access,
        effects=Effects(**spec.effects),
        output=Output(reference_path=f"/{pages}-reference", name=f"{spec.key} (narrowed)"),
        observability=Observability(metrics_path=f"/{pages}-metrics"),
        additions=Additions(
            prompts=[
                Prompt(
                    name="call_one",
                    description="Call one function.",
                    arguments=(PromptArgument(name="function", required=True, complete="functions"),),
                    template="Call {function}.",
                )
            ]
        ),
    )


async def narrow_token(server: Any, scopes: Sequence[str], credentials: Mapping[str, str]) -> str:
    """An access token of the app's user (its REST `credentials`) granted `scopes`, issued by `server` as its
    authorization endpoint would after a login and consent."""
    from oauth import Principal
    from oauth._authlib import s256_challenge

    client = await server.clients.find("trial", address="127.0.0.1")
    verifier = "v" * 64
    code = await server.grants.issue_code(
        client=client,
        redirect_uri=REDIRECT,
        redirect_uri_given=True,
        code_challenge=s256_challenge(verifier),
        scopes=list(scopes),
        resource=f"{ISSUER}/mcp",
        principal=Principal(subject="trial-user", name="trial-user", credentials=dict(credentials)),
    )
    tokens = await server.grants.exchange_code(
        code=code, client=client, redirect_uri=REDIRECT, code_verifier=verifier, resource=None
    )
    return str(tokens["access_token"])


ISSUER = "http://localhost"
REDIRECT = "http://127.0.0.1:9999/callback"


def oauth_server(scopes: Sequence[str]) -> Any:
    from oauth import ApiKeyLogin, OAuthConfig, OAuthServer, PreregisteredClient

    async def whoami(headers: Any) -> Any:
        return {"id": "trial-user"}

    config = OAuthConfig(
        issuer=ISSUER,
        resource=f"{ISSUER}/mcp",
        secret_key=b"a-trial-secret-of-at-least-32-bytes!",
        scopes=tuple(scopes),
        clients=(PreregisteredClient(client_id="trial", redirect_uris=(REDIRECT,)),),
    )
    return OAuthServer(config, login=ApiKeyLogin(whoami))


def describe(enumerated: Sequence[str]) -> str:
    """The enumerated paths, counted by kind, for the report."""
    kinds: dict[str, int] = {}
    for name in enumerated:
        kind = name.split(":", 1)[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{count} {kind}s" for kind, count in kinds.items())


__all__ = ["Narrow", "describe", "full_gateway", "json", "narrow_token", "oauth_server", "probe_every_path"]
