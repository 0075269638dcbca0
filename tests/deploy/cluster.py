"""The deployment of `deploy/haproxy.cfg` run on 127.0.0.1: one redis-server, several `mcp-gateway serve --oauth`
instances sharing it, and HAProxy in front, each on a free port. Used by the deployment tests and bench/soak.py.

Processes are waited for by their own "ready" log lines (no polling), and their output goes to files in `logs`.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HAPROXY_CFG = REPO / "deploy" / "haproxy.cfg"
SECRET = "a-shared-secret-of-at-least-32-characters"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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

    @property
    def pid(self) -> int:
        return self.popen.pid

    def rss_kib(self) -> int:
        """The process's resident memory now, in KiB (Linux /proc)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError(f"{self.name} (pid {self.pid}) has no VmRSS: has it exited?")


def _start(name: str, argv: Sequence[str], *, marker: bytes, logs: Path, env: dict[str, str]) -> Process:
    log = logs / f"{name}.log"
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=logs)
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

    threading.Thread(target=copy, name=f"log-{name}", daemon=True).start()
    process = Process(name=name, popen=popen, log=log, ready=ready)
    if not ready.wait(120) or popen.poll() is not None:
        popen.kill()
        popen.wait(timeout=5)
        if popen.stdout is not None:
            popen.stdout.close()
        raise RuntimeError(f"{name} did not start; its log:\n{log.read_text(errors='replace')}")
    return process


def _stop(process: Process) -> None:
    process.popen.terminate()
    try:
        process.popen.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.popen.kill()
        process.popen.wait(timeout=5)
    if process.popen.stdout is not None:
        process.popen.stdout.close()


@dataclass
class Cluster:
    """The running deployment: the public URL is the balancer's."""

    base: str
    redis_url: str
    instances: list[Process]
    instance_ports: list[int]
    balancer: Process
    stats_url: str

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


@contextmanager
def running_cluster(logs: Path, *, instances: int = 3, extra_args: Sequence[str] = ()) -> Iterator[Cluster]:
    """Redis, `instances` gateways (the demo shop with --oauth) and HAProxy, on free 127.0.0.1 ports."""
    if not 1 <= instances <= 3:
        raise ValueError(f"deploy/haproxy.cfg names 3 instances; asked for {instances}")
    redis_server = _binary("redis-server", "scripts/install-redis")
    haproxy = _binary("haproxy", "scripts/install-haproxy")
    logs.mkdir(parents=True, exist_ok=True)
    base_env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_GATEWAY_")}
    with ExitStack() as stack:
        redis_port = free_port()
        redis = _start(
            "redis",
            [redis_server, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            marker=b"Ready to accept connections",
            logs=logs,
            env=base_env,
        )
        stack.callback(_stop, redis)
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        lb_port, stats_port = free_port(), free_port()
        base = f"http://127.0.0.1:{lb_port}"
        ports = [free_port() for _ in range(instances)]
        gateways: list[Process] = []
        env = {**base_env, "MCP_GATEWAY_OAUTH_SECRET": SECRET}
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
            gateway = _start(f"gw{number}", argv, marker=b"Application startup complete", logs=logs, env=env)
            stack.callback(_stop, gateway)
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
        balancer = _start(
            "haproxy", [haproxy, "-W", "-db", "-f", str(HAPROXY_CFG)], marker=b"Loading success", logs=logs, env=lb_env
        )
        stack.callback(_stop, balancer)
        yield Cluster(
            base=base,
            redis_url=redis_url,
            instances=gateways,
            instance_ports=ports,
            balancer=balancer,
            stats_url=f"http://127.0.0.1:{stats_port}/stats;csv",
        )
