"""Trial of the gateway on real, large FastAPI applications installed from PyPI (not part of `make test`).

For each app (Prefect's server, LiteLLM's proxy, dstack's server; see apps.py) it builds the app the way its
own server does, then serves the gateway three ways and talks to each through the official `mcp` client:

  a. the README's mount, `Gateway(app=app, whoami=...).mount(app, "/mcp")`, on real uvicorn on 127.0.0.1;
  b. `mcp-gateway serve --app module:attr` as a subprocess (streamable HTTP client);
  c. `mcp-gateway stdio --app module:attr` through the SDK's stdio client.

Through (a) it checks tools/list, ten realistic searches (the expected function in the top 5), describe_function
on the hits, reads and a write (create, read back, delete) via call_function compared with the same REST call
made straight to the app (status and JSON body, ids and timestamps aside), bad arguments (the error must name
the problem) and whoami; (b) and (c) repeat a smaller set. The catalog checks (names, title, bounds, marks,
line lengths, the mount path) need no transport. One table per app; exit 1 when any check fails.

Install once (a virtualenv outside the repo; REAL_APPS_VENV chooses where):

    scripts/real-apps/install

Run (inside a network namespace with only loopback, so no app can reach the internet):

    scripts/real-apps/run                    # all three apps
    scripts/real-apps/run dstack litellm     # some of them
    scripts/real-apps/run --json out.json    # also write every check as JSON

or without the namespace: `$REAL_APPS_VENV/bin/python scripts/real-apps/trial.py`. Each app runs in a process of
its own with its data in a temporary directory; its logs go to `<tmp>/<app>/trial.log` (the path is printed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from apps import APPS, PREFECT_AUTH, AppSpec, BadArgs, Call, child_env  # noqa: E402

#: How long one MCP or REST exchange, and one server start, may take.
CALL_TIMEOUT = 60.0
START_TIMEOUT = 180.0
#: Keys whose values differ between two equal answers (ids, clocks, generated keys) and are not compared.
VOLATILE = re.compile(
    r"(^|_)(id|ids|created|updated|created_at|updated_at|expires|expires_at|timestamp|time|"
    r"ssh_public_key|ssh_private_key|token|_response_ms|system_fingerprint|owner)$"
)
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")
#: A route suffix FastAPI's generate_unique_id leaves in an operation id: `..._v1_batches_get`.
#: The longest search line an agent should have to read.
MAX_LINE = 250


@dataclass(frozen=True, kw_only=True)
class Check:
    app: str
    way: str
    name: str
    ok: bool
    observed: str = ""


class Recorder:
    """Collects the checks of one app; `attempt` turns any exception into a failed check."""

    def __init__(self, app: str) -> None:
        self.app = app
        self.checks: list[Check] = []

    def add(self, way: str, name: str, ok: bool, observed: str = "") -> bool:
        self.checks.append(Check(app=self.app, way=way, name=name, ok=ok, observed="" if ok else observed))
        mark = "pass" if ok else "FAIL"
        print(f"[{self.app}] {way:8} {mark} {name}" + ("" if ok else f": {_short(observed, 300)}"), flush=True)
        return ok

    async def attempt(self, way: str, name: str, run: Callable[[], Awaitable[tuple[bool, str]]]) -> bool:
        import anyio

        try:
            with anyio.fail_after(CALL_TIMEOUT):
                ok, observed = await run()
        except Exception as error:  # a check that raises has failed; say how
            return self.add(way, name, False, f"{type(error).__name__}: {error}")
        return self.add(way, name, ok, observed)


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Comparing answers


def normalized(value: Any) -> Any:
    """`value` with ids, timestamps and generated keys replaced, so two equal answers compare equal."""
    if isinstance(value, dict):
        return {k: "<volatile>" if VOLATILE.search(str(k)) else normalized(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [normalized(item) for item in value]
    if isinstance(value, str) and (UUID.match(value) or STAMP.match(value)):
        return "<volatile>"
    return value


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What a caller learnt: success or not, the HTTP status when it was said, the body."""

    ok: bool
    status: int | None
    body: Any
    text: str


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def from_tool(result: Any) -> Answer:
    """The answer a call_function result gives the agent."""
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    if result.is_error:
        match = re.match(r"HTTP (\d{3}) ", text)
        body = _json_or_text(text.partition("\n")[2]) if "\n" in text else None
        return Answer(ok=False, status=int(match.group(1)) if match else None, body=body, text=text)
    if re.match(r"HTTP 2\d\d .*: done, no content\.$", text):
        return Answer(ok=True, status=None, body=None, text=text)
    body = result.structured_content if result.structured_content is not None else _json_or_text(text)
    return Answer(ok=True, status=None, body=body, text=text)


def from_rest(response: Any) -> Answer:
    body = _json_or_text(response.text) if response.content else None
    return Answer(ok=response.status_code < 400, status=response.status_code, body=body, text=response.text)


def same(gateway: Answer, rest: Answer) -> tuple[bool, str]:
    """Whether the gateway's answer says what the REST answer says; the difference when not."""
    observed = f"gateway: {_short(gateway.text, 260)} | REST: HTTP {rest.status} {_short(rest.text, 120)}"
    if gateway.ok != rest.ok:
        return False, observed
    if not gateway.ok and gateway.status != rest.status:
        return False, observed
    if normalized(gateway.body) != normalized(rest.body):
        return False, "bodies differ; " + observed
    return True, ""


# Talking to the gateway


def tool_text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def hit_names(text: str) -> list[str]:
    """The function names of search_functions' lines, in order."""
    return [m.group(1) for line in text.splitlines() if (m := re.match(r"([\w.]+)\(", line))]


class Way:
    """One way of serving the gateway, reached through an MCP client, with the REST app beside it."""

    def __init__(self, name: str, spec: AppSpec, client: Any, rest: Any, rec: Recorder) -> None:
        self.name, self.spec, self.client, self.rest, self.rec = name, spec, client, rest, rec

    async def call(self, function: str, args: Mapping[str, Any]) -> Any:
        return await self.client.call_tool("call_function", {"name": function, "args": dict(args)})

    async def rest_call(self, call: Call) -> Answer:
        response = await self.rest.request(
            call.method, call.path, json=call.json, params=dict(call.params or {}), headers=dict(self.spec.rest_headers)
        )
        return from_rest(response)

    async def tools_list(self) -> None:
        async def run() -> tuple[bool, str]:
            names = [tool.name for tool in (await self.client.list_tools()).tools]
            fixed = {"whoami", "search_functions", "describe_function", "explain_term", "call_function"}
            return fixed <= set(names), f"tools: {names}"

        await self.rec.attempt(self.name, "tools/list has the fixed tools", run)

    async def searches(self, only: int | None = None) -> tuple[list[str], list[str]]:
        """Each search; returns the expected functions found, and every search line seen."""
        found: list[str] = []
        lines: list[str] = []
        for query, expected in self.spec.searches[:only]:

            async def run(query: str = query, expected: str = expected) -> tuple[bool, str]:
                result = await self.client.call_tool("search_functions", {"query": query, "limit": 5})
                text = tool_text(result)
                lines.extend(text.splitlines())
                top = hit_names(text)[:5]
                if expected in top:
                    found.append(expected)
                    return True, ""
                return False, f"{expected} not in top 5: {', '.join(top) or _short(text, 200)}"

            await self.rec.attempt(self.name, f"search {query!r} finds {expected}", run)
        return found, lines

    async def describe(self, names: list[str]) -> None:
        async def run() -> tuple[bool, str]:
            result = await self.client.call_tool("describe_function", {"names": names})
            text = tool_text(result)
            missing = [name for name in names if name not in text]
            return (not result.is_error and not missing), f"missing {missing}: {_short(text, 200)}"

        await self.rec.attempt(self.name, f"describe_function on the {len(names)} hits", run)

    async def compare(self, call: Call, kind: str) -> None:
        async def run() -> tuple[bool, str]:
            rest = await self.rest_call(call)
            gateway = from_tool(await self.call(call.function, call.args))
            return same(gateway, rest)

        await self.rec.attempt(self.name, f"{kind}: {call.label} ({call.function}) = REST", run)

    async def write_cycle(self) -> None:
        """Create, read back, delete through REST; then the same through the gateway, compared step by step."""
        rest_answers = [await self.rest_call(call) for call in self.spec.writes]
        for call, rest in zip(self.spec.writes, rest_answers, strict=True):

            async def run(call: Call = call, rest: Answer = rest) -> tuple[bool, str]:
                return same(from_tool(await self.call(call.function, call.args)), rest)

            await self.rec.attempt(self.name, f"write: {call.label} ({call.function}) = REST", run)

    async def bad_args(self, bad: BadArgs) -> None:
        async def run() -> tuple[bool, str]:
            result = await self.call(bad.function, bad.args)
            text = tool_text(result)
            said = result.is_error and "Invalid arguments" in text and all(w in text for w in bad.expect)
            return said, text

        await self.rec.attempt(self.name, f"bad args: {bad.label} is an argument error naming it", run)

    async def unknown_function(self) -> None:
        async def run() -> tuple[bool, str]:
            result = await self.call("no_such.function", {})
            text = tool_text(result)
            return result.is_error and "Unknown function" in text, text

        await self.rec.attempt(self.name, "bad args: unknown function is named", run)

    async def whoami(self) -> None:
        spec = self.spec

        async def run() -> tuple[bool, str]:
            result = await self.client.call_tool("whoami", {})
            text = tool_text(result)
            if spec.whoami is None:
                return (not result.is_error and '"credential_checked":false' in text), text
            return (not result.is_error and all(word in text for word in spec.identity)), text

        label = f"whoami ({spec.whoami}) says who the caller is" if spec.whoami else "whoami without a function"
        await self.rec.attempt(self.name, label, run)
        if spec.secrets:

            async def clean() -> tuple[bool, str]:
                text = tool_text(await self.client.call_tool("whoami", {}))
                leaked = [secret for secret in spec.secrets if secret in text]
                return not leaked, f"whoami shows {leaked}: {_short(text, 200)}"

            await self.rec.attempt(self.name, "whoami keeps tokens and private keys out", clean)


# Servers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def uvicorn_on_free_port(app: Any) -> AsyncIterator[str]:
    """The app on real uvicorn on 127.0.0.1, with its own lifespan; yields the base URL."""
    import anyio
    import uvicorn

    class Server(uvicorn.Server):
        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self.startup_done = anyio.Event()

        async def startup(self, sockets: Any = None) -> None:
            try:
                await super().startup(sockets)
            finally:
                self.startup_done.set()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", access_log=False)
    server = Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        with anyio.fail_after(START_TIMEOUT):
            await server.startup_done.wait()
        if not server.started:
            raise RuntimeError("uvicorn did not start the app; see the log")
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


def gateway_bin() -> str:
    return str(Path(sys.executable).with_name("mcp-gateway"))


@asynccontextmanager
async def serve_subprocess(
    spec: AppSpec, ref: str, data: Path, log: Path, env: Mapping[str, str] | None = None
) -> AsyncIterator[tuple[str | None, str]]:
    """`mcp-gateway serve --app ref` on a free port; yields (MCP URL or None when it did not start, its output)."""
    import anyio
    import httpx2

    port = free_port()
    args = [gateway_bin(), "serve", "--app", ref, "--port", str(port), *effect_options(spec)]
    if spec.whoami:
        args += ["--whoami", spec.whoami]
    with log.open("w") as out:
        process = subprocess.Popen(  # noqa: S603 - our own CLI, arguments from this file
            args, env={**child_env(spec, data), **(env or {})}, cwd=HERE, stdout=out, stderr=subprocess.STDOUT
        )
    url: str | None = None
    try:
        deadline = time.monotonic() + START_TIMEOUT
        async with httpx2.AsyncClient() as http:
            while process.poll() is None and time.monotonic() < deadline:
                try:
                    await http.get(f"http://127.0.0.1:{port}/", timeout=2)
                    url = f"http://127.0.0.1:{port}/mcp"
                    break
                except httpx2.TransportError:
                    await anyio.sleep(0.25)  # polling a child process's port: no event to wait on
        yield url, log.read_text(errors="replace")
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@asynccontextmanager
async def mcp_http(url: str, bearer: str | None, extra: Mapping[str, str] | None = None) -> AsyncIterator[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = dict(extra or {})
    if bearer:
        headers["authorization"] = f"Bearer {bearer}"
    async with (
        httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client


@asynccontextmanager
async def mcp_stdio(
    spec: AppSpec, ref: str, data: Path, log: Path, env: Mapping[str, str] | None = None
) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = ["stdio", "--app", ref, *effect_options(spec)]
    if spec.whoami:
        args += ["--whoami", spec.whoami]
    environment = child_env(spec, data)
    if spec.bearer:
        environment["MCP_GATEWAY_TOKEN"] = spec.bearer
    environment.update(env or {})
    params = StdioServerParameters(command=gateway_bin(), args=args, env=environment, cwd=str(HERE))
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as c:
            yield c


# The trial of one app


#: The gateway's warnings while it was built.
WARNINGS: list[str] = []


class _Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            WARNINGS.append(record.getMessage())


def catalog_checks(spec: AppSpec, gateway: Any, app: Any, rec: Recorder) -> None:
    from catalog.render import describe_function

    catalog = gateway.catalog
    functions = catalog.functions()
    rec.add("catalog", f"the app's own document builds a catalog ({len(functions)} functions)", bool(functions))
    if catalog.title == "FastAPI":
        # The app keeps FastAPI's default title: the gateway must say so at start-up.
        rec.add(
            "catalog",
            "the app's title is FastAPI's default, and building the gateway warns about it",
            any("FastAPI's default 'FastAPI'" in line for line in WARNINGS),
            f"warnings: {WARNINGS[:3]}",
        )
    else:
        rec.add("catalog", "server name is the API's title", gateway.name == catalog.title, f"name {gateway.name!r}")
    from catalog.naming import clean_operation_id, snake_case

    # A name that is the whole generated id although a shorter route name was there to take.
    suffixed = [
        f.name
        for f in functions
        if f.operation_id
        and clean_operation_id(f.operation_id, method=f.method, path=f.path) != f.operation_id
        and f.function_name.endswith(snake_case(f.operation_id))
    ]
    rec.add(
        "catalog",
        "no FastAPI route suffixes left in function names",
        not suffixed,
        f"{len(suffixed)} of {len(functions)}, e.g. {', '.join(suffixed[:3])}",
    )
    floats: list[str] = []
    for function in functions:
        text = describe_function(catalog, function)
        floats.extend(m.group(0) for m in re.finditer(r"\b(min|max)\w* -?\d+\.0\b", text))
    rec.add(
        "catalog",
        "integer bounds print as integers",
        not floats,
        f"{len(floats)} bounds like {sorted(set(floats))[:3]}",
    )
    wrong_reads = [n for n in spec.post_reads if n in {f.name for f in functions} and not catalog.function(n).read_only]
    rec.add(
        "catalog",
        f"POST reads are reads ({', '.join(spec.post_reads)})",
        not wrong_reads,
        f"classified as writes: {', '.join(wrong_reads)}",
    )
    if spec.post_deletes:
        names = {f.name for f in functions}
        soft = [n for n in spec.post_deletes if n in names and not catalog.function(n).destructive]
        rec.add(
            "catalog",
            f"POST deletes are destructive ({', '.join(spec.post_deletes)})",
            not soft,
            f"not destructive: {', '.join(soft)}",
        )
    taken = [getattr(route, "path", None) for route in getattr(app, "router", app).routes]
    if "/mcp" in taken:
        from gateway import ConfigError, Gateway

        try:
            Gateway(app=app).mount(app, "/mcp")
            refused = ""
        except ConfigError as error:
            refused = str(error)
        rec.add(
            "catalog",
            "the app serves /mcp itself: mounting there is refused, naming another path",
            "already serves /mcp" in refused,
            refused or "the mount shadowed the app's own /mcp without a word",
        )
    else:
        rec.add("catalog", "the README's mount path /mcp is free in the app", True)


def effect_options(spec: AppSpec) -> list[str]:
    """The operator's effect rules as CLI options."""
    flags = {"read_only": "--read-only", "destructive": "--destructive", "writes": "--writes"}
    return [word for key, patterns in spec.effects.items() for pattern in patterns for word in (flags[key], pattern)]


async def way_mount(spec: AppSpec, app: Any, base: str, rest: Any, rec: Recorder) -> None:
    """(a) The README's mount, on real uvicorn."""
    async with mcp_http(f"{base}{spec.mcp_path}", spec.bearer) as client:
        way = Way("a:mount", spec, client, rest, rec)
        await way.tools_list()
        found, lines = await way.searches()
        longest = max(lines, key=len, default="")
        rec.add(
            "a:mount",
            f"search lines stay readable (<= {MAX_LINE} chars)",
            len(longest) <= MAX_LINE,
            f"longest is {len(longest)} chars: {longest[:120]}…",
        )
        if found:
            await way.describe(found)
        for call in spec.reads:
            await way.compare(call, "read")
        await way.write_cycle()
        for bad in spec.bad:
            await way.bad_args(bad)
        await way.unknown_function()
        await way.whoami()


async def way_serve(spec: AppSpec, rest: Any, tmp: Path, rec: Recorder) -> None:
    """(b) `mcp-gateway serve --app`, with the app's own reference first, then our one-line module."""
    refs = [spec.cli_ref] + ([spec.cli_fallback] if spec.cli_fallback else [])
    for index, ref in enumerate(refs):
        async with serve_subprocess(spec, ref, tmp / f"serve{index}", tmp / f"serve{index}.log") as (url, output):
            rec.add("b:serve", f"serve --app {ref} starts", url is not None, _tail(output))
            if url is None:
                continue
            async with mcp_http(url, spec.bearer) as client:
                way = Way("b:serve", spec, client, rest, rec)
                await way.tools_list()
                await way.searches(only=1)
                await way.compare(spec.reads[1], "read")
                await way.compare(spec.writes[0], "write")
                await way.compare(spec.writes[-1], "delete")
                await way.whoami()
            return


async def way_stdio(spec: AppSpec, rest: Any, tmp: Path, rec: Recorder) -> None:
    """(c) `mcp-gateway stdio --app` through the SDK's stdio client."""
    ref = spec.cli_fallback or spec.cli_ref
    log = tmp / "stdio.log"

    async def start() -> tuple[bool, str]:
        async with mcp_stdio(spec, ref, tmp / "stdio", log) as client:
            way = Way("c:stdio", spec, client, rest, rec)
            await way.tools_list()
            await way.compare(spec.reads[1], "read")
            await way.whoami()
        return True, ""

    import anyio

    try:
        with anyio.fail_after(START_TIMEOUT):
            ok, observed = await start()
    except BaseException as error:  # the SDK raises groups; a broken pipe is the answer here
        if isinstance(error, KeyboardInterrupt):
            raise
        ok, observed = False, f"{_leaf(error)}; server stderr: {_tail(log.read_text(errors='replace'))}"
    rec.add("c:stdio", f"stdio --app {ref} serves a session", ok, observed)


async def litellm_admission_limit(spec: AppSpec, base: str, rest: Any, rec: Recorder) -> None:
    """LiteLLM with `general_settings.max_in_flight_requests_per_worker: 1`, set live as an operator would."""
    from litellm.proxy import proxy_server

    proxy_server.general_settings["max_in_flight_requests_per_worker"] = 1
    try:
        async with mcp_http(f"{base}{spec.mcp_path}", spec.bearer) as client:
            way = Way("a:mount", spec, client, rest, rec)
            await way.compare(spec.reads[0], "read with an admission limit of 1")
    finally:
        proxy_server.general_settings.pop("max_in_flight_requests_per_worker", None)


async def prefect_api_at_root(spec: AppSpec, rest: Any, tmp: Path, rec: Recorder) -> None:
    """Prefect with its API mounted at / (PREFECT_SERVER_API_BASE_PATH=/), so that the document's paths route:
    what works once the prefix is right, and how an exception inside the app reaches the agent."""
    env = {"PREFECT_SERVER_API_BASE_PATH": "/"}
    ref = spec.cli_fallback or spec.cli_ref
    async with serve_subprocess(spec, ref, tmp / "serve-root", tmp / "serve-root.log", env) as (url, output):
        rec.add("b:root", f"serve --app {ref} with the API at / starts", url is not None, _tail(output))
        if url is None:
            return
        async with mcp_http(url, spec.bearer) as client:
            way = Way("b:root", spec, client, rest, rec)
            await way.compare(spec.reads[1], "read")
            await way.write_cycle()
            if spec.failing is not None:
                await way.compare(spec.failing, "API error")


async def prefect_basic_auth(spec: AppSpec, tmp: Path, rec: Recorder) -> None:
    """Prefect with PREFECT_SERVER_API_AUTH_STRING: its REST API wants `Authorization: Basic ...`."""
    import anyio

    log = tmp / "stdio-auth.log"
    # The token is the user:password pair; the header template makes it Prefect's Basic credentials.
    env = {
        "PREFECT_SERVER_API_AUTH_STRING": PREFECT_AUTH,
        "MCP_GATEWAY_TOKEN": PREFECT_AUTH,
        "MCP_GATEWAY_AUTH_HEADERS": "Authorization: Basic {basic}",
    }

    async def run() -> tuple[bool, str]:
        async with mcp_stdio(spec, spec.cli_fallback or spec.cli_ref, tmp / "stdio-auth", log, env) as client:
            text = tool_text(await client.call_tool("call_function", {"name": "flows.read_flows", "args": {}}))
        return not text.startswith("HTTP 4"), text

    try:
        with anyio.fail_after(START_TIMEOUT):
            ok, observed = await run()
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        ok, observed = False, f"{_leaf(error)}; server stderr: {_tail(log.read_text(errors='replace'))}"
    rec.add("c:stdio", "the CLI sends Prefect's Basic auth (MCP_GATEWAY_AUTH_HEADERS)", ok, observed)


def _leaf(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


def _tail(text: str, lines: int = 4) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return " / ".join(kept)


async def trial(spec: AppSpec, tmp: Path) -> list[Check]:
    """Every check on one app; runs in a process of its own (the app's configuration is process-wide)."""
    import httpx2

    rec = Recorder(spec.key)
    os.environ.update(child_env(spec, tmp / "mount"))
    try:
        app = spec.build()
    except Exception as error:
        rec.add("build", "the app builds", False, f"{type(error).__name__}: {error}")
        return rec.checks
    rec.add("build", f"the app builds ({type(app).__name__})", True)
    from gateway import Gateway
    from gateway.options import Effects

    # The README's three lines.
    logging.getLogger("gateway").addHandler(_Collect())
    try:
        gateway = Gateway(app=app, whoami=spec.whoami, effects=Effects(**spec.effects))
        catalog_checks(spec, gateway, app, rec)
        gateway.mount(app, spec.mcp_path)
        narrowed = narrowed_gateways(spec, app) if spec.narrow is not None else []
    except Exception as error:
        rec.add("build", f"Gateway(app=app).mount(app, {spec.mcp_path!r})", False, f"{type(error).__name__}: {error}")
        return rec.checks
    async with uvicorn_on_free_port(app) as base, httpx2.AsyncClient(base_url=base, timeout=CALL_TIMEOUT) as rest:
        await way_mount(spec, app, base, rest, rec)
        if "litellm_admission_limit" in spec.extra:
            await litellm_admission_limit(spec, base, rest, rec)
        await way_serve(spec, rest, tmp, rec)
        await way_stdio(spec, rest, tmp, rec)
        if "prefect_api_at_root" in spec.extra:
            await prefect_api_at_root(spec, rest, tmp, rec)
        if "prefect_basic_auth" in spec.extra:
            await prefect_basic_auth(spec, tmp, rec)
        for narrowed_gateway in narrowed:
            await way_narrow(spec, app, narrowed_gateway, rec)
    return rec.checks


@dataclass
class Narrowed:
    """A gateway whose caller sees less than the app's whole API, mounted at `path`, probed with `token`."""

    label: str
    gateway: Any
    path: str
    hidden: list[str]
    token: Callable[[], Awaitable[str | None]]


def narrowed_gateways(spec: AppSpec, app: Any) -> list[Narrowed]:
    """Two gateways with every path on, mounted beside the README's: one hiding `narrow.hide` from every caller,
    one behind a real OAuth server whose scopes map to functions, probed with a token of a narrower scope."""
    import fnmatch

    from narrow import full_gateway, narrow_token, oauth_server

    from gateway import Access

    narrow = spec.narrow
    if narrow is None:
        return []
    hiding = full_gateway(app, spec, narrow, Access(hide=narrow.hide), pages="narrow")
    names = [function.name for function in hiding.catalog.functions()]

    def matching(patterns: Sequence[str]) -> set[str]:
        return {name for name in names if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)}

    hidden_by_hide = sorted(matching(narrow.hide))
    reached = matching([pattern for scope in narrow.granted for pattern in narrow.scopes[scope]])
    hidden_by_scope = sorted(set(names) - reached)
    server = oauth_server(list(narrow.scopes))
    scoped = full_gateway(app, spec, narrow, Access(scopes=dict(narrow.scopes)), pages="oauth", auth=server.auth)

    async def bearer() -> str | None:
        return spec.bearer

    async def token() -> str | None:
        return await narrow_token(server, narrow.granted, spec.rest_headers)

    hiding.mount(app, "/narrow-mcp")
    scoped.mount(app, "/oauth-mcp")
    return [
        Narrowed("narrow:hide", hiding, "/narrow-mcp", _with_tools(hidden_by_hide), bearer),
        Narrowed("narrow:scopes", scoped, "/oauth-mcp", _with_tools(hidden_by_scope), token),
    ]


def _with_tools(names: Sequence[str]) -> list[str]:
    """Function names and the tool names promoting them would take (`module-function`)."""
    return sorted({*names, *(name.replace(".", "-", 1) for name in names)})


async def way_narrow(spec: AppSpec, app: Any, narrowed: Narrowed, rec: Recorder) -> None:
    """Every path the narrowed gateway lets a caller reach, probed as that caller: none names a hidden function."""
    from narrow import describe, probe_every_path

    narrow = spec.narrow
    if narrow is None:
        return
    await narrowed.gateway._start()
    try:
        enumerated, leaks, unprobed = await probe_every_path(
            narrowed.gateway, app, narrowed.path, await narrowed.token(), narrow, narrowed.hidden
        )
    finally:
        await narrowed.gateway._close()
    rec.add(narrowed.label, f"{len(narrowed.hidden) // 2} functions hidden; paths: {describe(enumerated)}", True)
    rec.add(narrowed.label, "every enumerated path has a probe", not unprobed, ", ".join(unprobed))
    rec.add(
        narrowed.label,
        "no path shows the caller a function hidden from it",
        not leaks,
        "; ".join(f"{path}: {', '.join(found[:5])}" for path, found in leaks.items()),
    )


# Tables


def table(app: str, title: str, checks: list[Check]) -> str:
    passed = sum(check.ok for check in checks)
    rows = [f"{app}: {title}: {passed} passed, {len(checks) - passed} failed", ""]
    width = min(max((len(f"{c.way} {c.name}") for c in checks), default=10), 78)
    for check in checks:
        name = f"{check.way} {check.name}"
        rows.append(f"  {'pass' if check.ok else 'FAIL'}  {name:<{width}}")
        if not check.ok:
            rows.extend(
                textwrap.wrap(_short(check.observed, 600), 110, initial_indent=" " * 8, subsequent_indent=" " * 8)
            )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "apps", nargs="*", metavar="APP", help=f"some of {', '.join(APPS)} (default: those installed here)"
    )
    parser.add_argument("--json", type=Path, help="also write every check to this file")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--keep", action="store_true", help="keep the apps' temporary data and logs")
    options = parser.parse_args()
    unknown = [key for key in options.apps if key not in APPS]
    if unknown:
        parser.error(f"unknown app {', '.join(unknown)}; choose from {', '.join(APPS)}")
    if options.one:
        import anyio

        spec = APPS[options.one]
        try:
            checks = anyio.run(trial, spec, options.out.parent)
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt):
                raise
            traceback.print_exc()
            checks = [Check(app=spec.key, way="trial", name="ran to the end", ok=False, observed=_leaf(error))]
        options.out.write_text(json.dumps([asdict(check) for check in checks]))
        return 0
    every: list[Check] = []
    tmp = Path(tempfile.mkdtemp(prefix="real-apps-"))
    import importlib.util

    installed = [key for key, spec in APPS.items() if importlib.util.find_spec(spec.module) is not None]
    for key in options.apps or installed:
        spec = APPS[key]
        folder = tmp / key
        folder.mkdir()
        log = folder / "trial.log"
        print(f"== {key}: {spec.title} (log: {log})", flush=True)
        with log.open("w") as out:
            subprocess.run(  # noqa: S603 - this script, run again for one app
                [sys.executable, __file__, "--one", key, "--out", str(folder / "checks.json")],
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
                env=child_env(spec, folder / "mount"),
            )
        result = folder / "checks.json"
        checks = (
            [Check(**item) for item in json.loads(result.read_text())]
            if result.exists()
            else [Check(app=key, way="trial", name="the trial ran", ok=False, observed=_tail(log.read_text()))]
        )
        every.extend(checks)
        print(table(key, spec.title, checks) + "\n", flush=True)
    failed = sum(not check.ok for check in every)
    print(f"{len(every) - failed} passed, {failed} failed")
    if options.json:
        options.json.write_text(json.dumps([asdict(check) for check in every], indent=1))
    if not options.keep and not failed:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
