"""The deployment of `deploy/haproxy.cfg` run on 127.0.0.1: one redis-server, several `mcp-gateway serve --oauth`
instances sharing it, and HAProxy in front, each on a free port. Used by the deployment tests and bench/soak.py.

Processes are waited for by their own "ready" log lines (no polling), and their output goes to files in `logs`.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
import shutil
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import httpx2

from demo import MEMBER_KEY
from oauth._authlib import s256_challenge
from tests.conftest import free_port
from tests.oauth.conftest import REDIRECT_URI, Browser, query

REPO = Path(__file__).resolve().parents[2]
HAPROXY_CFG = REPO / "deploy" / "haproxy.cfg"
SECRET = "a-shared-secret-of-at-least-32-characters"


def _binary(name: str, install: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise RuntimeError(f"{name} is missing: run {install} (make test does)")
    return found


@dataclass
class Process:
    """A child process whose output is copied to `log`; `ready` is set when a line holds `marker`."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    ready: threading.Event
    #: The thread copying the output; it ends at the output's end, once the process has exited.
    copier: threading.Thread

    @property
    def pid(self) -> int:
        return self.popen.pid

    def rss_kib(self) -> int:
        """The process's resident memory now, in KiB (Linux /proc)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError(f"{self.name} (pid {self.pid}) has no VmRSS: has it exited?")


def start_process(
    name: str,
    argv: Sequence[str],
    *,
    marker: bytes,
    logs: Path,
    env: dict[str, str],
    setup: Callable[[], None] | None = None,
) -> Process:
    """Start `argv` (with `setup` run in the child before it), its output copied to `logs/<name>.log`; return once
    a line holds `marker`."""
    log = logs / f"{name}.log"
    popen = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=logs, preexec_fn=setup
    )
    ready = threading.Event()

    def copy() -> None:
        assert popen.stdout is not None
        with log.open("wb") as out:
            for line in popen.stdout:
                out.write(line)
                out.flush()
                if marker in line:
                    ready.set()
        ready.set()  # it exited: whoever waits sees it

    copier = threading.Thread(target=copy, name=f"log-{name}", daemon=True)
    copier.start()
    process = Process(name=name, popen=popen, log=log, ready=ready, copier=copier)
    if not ready.wait(120) or popen.poll() is not None:
        popen.kill()
        popen.wait(timeout=5)
        copier.join(timeout=5)
        if popen.stdout is not None and not copier.is_alive():
            popen.stdout.close()
        raise RuntimeError(f"{name} did not start; its log:\n{log.read_text(errors='replace')}")
    return process


def stop_process(process: Process) -> None:
    """SIGTERM, then SIGKILL after 15 s."""
    process.popen.terminate()
    try:
        process.popen.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.popen.kill()
        process.popen.wait(timeout=5)
    process.copier.join(timeout=5)  # the rest of its output, before the pipe is closed under the copier
    if process.popen.stdout is not None and not process.copier.is_alive():
        process.popen.stdout.close()


@dataclass
class Redis:
    """The cluster's redis-server, which a test may stop (by its pid) and start again on the same port and data."""

    process: Process
    argv: list[str]
    logs: Path
    env: dict[str, str]

    def stop(self) -> None:
        """Stop the server as an operator or a crash would: SIGTERM to its pid (it writes its data first)."""
        stop_process(self.process)

    def start(self) -> None:
        """Start it again, with the same port and data folder."""
        self.process = start_process(
            "redis", self.argv, marker=b"Ready to accept connections", logs=self.logs, env=self.env
        )


@dataclass
class Cluster:
    """The running deployment: the public URL is the balancer's."""

    base: str
    redis_url: str
    instances: list[Process]
    instance_ports: list[int]
    balancer: Process
    stats_url: str
    redis: Redis

    def states(self) -> dict[str, str]:
        """Each instance's state in the balancer (UP, DOWN, ...), by server name."""
        with urllib.request.urlopen(self.stats_url, timeout=5) as answer:  # noqa: S310 - our own http URL
            rows = csv.DictReader(io.StringIO(answer.read().decode().lstrip("# ")))
            return {
                row["svname"]: row["status"].split()[0]
                for row in rows
                if row["pxname"] == "gateways" and row["svname"] not in ("FRONTEND", "BACKEND")
            }

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    def served(self) -> dict[str, int]:
        """HTTP responses each instance has given through the balancer (HAProxy's statistics), by server name."""
        with urllib.request.urlopen(self.stats_url, timeout=5) as answer:  # noqa: S310 - our own http URL
            rows = csv.DictReader(io.StringIO(answer.read().decode().lstrip("# ")))
            return {
                row["svname"]: int(row["hrsp_1xx"] or 0)
                + sum(int(row[f"hrsp_{n}xx"] or 0) for n in range(2, 6))
                + int(row["hrsp_other"] or 0)
                for row in rows
                if row["pxname"] == "gateways" and row["svname"] not in ("FRONTEND", "BACKEND")
            }


def environment() -> dict[str, str]:
    """This process's environment without MCP_GATEWAY_* settings, for the processes the tests start."""
    return {key: value for key, value in os.environ.items() if not key.startswith("MCP_GATEWAY_")}


@contextmanager
def running_cluster(
    logs: Path,
    *,
    instances: int = 3,
    extra_args: Sequence[str] = (),
    persistent: bool = False,
    balancer_port: int | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[Cluster]:
    """Redis, `instances` gateways (the demo shop with --oauth, unless `extra_args` serve another app) and HAProxy,
    on free 127.0.0.1 ports (the balancer on `balancer_port` when given: a provider must know the callback before).
    A `persistent` Redis keeps its data in an append-only file in `logs`, so tokens survive its restart.
    `extra_env` is added to the instances' environment."""
    if not 1 <= instances <= 3:
        raise ValueError(f"deploy/haproxy.cfg names 3 instances; asked for {instances}")
    redis_server = _binary("redis-server", "scripts/install-redis")
    haproxy = _binary("haproxy", "scripts/install-haproxy")
    logs.mkdir(parents=True, exist_ok=True)
    base_env = environment()
    with ExitStack() as stack:
        redis_port = free_port()
        redis_argv = [redis_server, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""]
        if persistent:
            redis_argv += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(logs)]
        else:
            redis_argv += ["--appendonly", "no"]
        redis = Redis(
            start_process("redis", redis_argv, marker=b"Ready to accept connections", logs=logs, env=base_env),
            redis_argv,
            logs,
            base_env,
        )
        stack.callback(lambda: stop_process(redis.process))
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        lb_port, stats_port = balancer_port or free_port(), free_port()
        base = f"http://127.0.0.1:{lb_port}"
        ports = [free_port() for _ in range(instances)]
        gateways: list[Process] = []
        env = {**base_env, "MCP_GATEWAY_OAUTH_SECRET": SECRET, **(extra_env or {})}
        for number, port in enumerate(ports, start=1):
            argv = [
                sys.executable,
                "-m",
                "gateway.cli",
                "serve",
                "--oauth",
                "--port",
                str(port),
                "--public-url",
                base,
                "--oauth-store",
                redis_url,
                "--trusted-proxy",
                "127.0.0.1",
                *extra_args,
            ]
            gateway = start_process(f"gw{number}", argv, marker=b"Application startup complete", logs=logs, env=env)
            stack.callback(stop_process, gateway)
            gateways.append(gateway)
        lb_env = {
            **base_env,
            "MCP_BIND": f"127.0.0.1:{lb_port}",
            "MCP_STATS_BIND": f"127.0.0.1:{stats_port}",
            **{f"MCP_GATEWAY_{n}": f"127.0.0.1:{port}" for n, port in enumerate(ports, start=1)},
        }
        # The instances not run here point at a closed port: HAProxy's health check takes them out.
        for n in range(instances + 1, 4):
            lb_env[f"MCP_GATEWAY_{n}"] = f"127.0.0.1:{free_port()}"
        balancer = start_process(
            "haproxy", [haproxy, "-W", "-db", "-f", str(HAPROXY_CFG)], marker=b"Loading success", logs=logs, env=lb_env
        )
        stack.callback(stop_process, balancer)
        yield Cluster(
            base=base,
            redis_url=redis_url,
            instances=gateways,
            instance_ports=ports,
            balancer=balancer,
            stats_url=f"http://127.0.0.1:{stats_port}/stats;csv",
            redis=redis,
        )


@dataclass(frozen=True)
class Tokens:
    """What a login gave a client."""

    client_id: str
    access: str
    refresh: str


async def login(base: str, web: httpx2.AsyncClient, *, name: str = "Claude") -> Tokens:
    """The whole OAuth flow against the server at `base`: register, log in as Bob with his API key, allow, and
    exchange the code (with PKCE)."""
    registered = await web.post(
        f"{base}/register",
        json={"redirect_uris": [REDIRECT_URI], "client_name": name, "token_endpoint_auth_method": "none"},
    )
    registered.raise_for_status()
    client_id = registered.json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code_challenge": s256_challenge(verifier),
        "code_challenge_method": "S256",
        "scope": "mcp",
    }
    landed = await Browser(web, key=MEMBER_KEY).authorize(f"{base}/authorize?{urlencode(params)}")
    form = {
        "grant_type": "authorization_code",
        "code": query(landed)["code"],
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code_verifier": verifier,
    }
    tokens = await web.post(f"{base}/token", data=form)
    tokens.raise_for_status()
    return Tokens(client_id, tokens.json()["access_token"], tokens.json()["refresh_token"])
