"""What the documentation's shell blocks run in place of a few programs, so that a block stays as people paste it:
`python -m tests.docs.command PROGRAM ARGS...` (the shell functions of `tests.docs.runners.SHELL_PRELUDE`).

- `mcp-gateway serve ...`: started for real on 127.0.0.1 and a free port (a `--host` or `--port` in the block is
  replaced), checked to answer `GET /` once uvicorn says it runs, then stopped.
- `mcp-gateway stdio ...`: started for real, sent MCP's `initialize`, checked to answer it, then closed.
- any other `mcp-gateway` command: run for real; its exit code is the block's.
- `haproxy ... -f FILE`: the configuration checked (`haproxy -c`) with the block's variables; a certificate the
  block names but this machine lacks is replaced by a self-signed one made for the check.
- `pip install ...`: each `openapi-mcp-gateway[extra]` (or `.[extra]`) must be an extra of pyproject.toml, and
  each other package a dependency it names; nothing is installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import tomllib
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO: Final = Path(__file__).resolve().parents[2]
DEADLINE: Final = 60.0
"""Seconds a served gateway may take to start, or a stdio one to answer."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _without_listen_flags(args: Sequence[str]) -> list[str]:
    """`args` without `--host`/`--port` and their values (both spellings: `--port 8001`, `--port=8001`)."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("--host", "--port"):
            skip = True
        elif not arg.startswith(("--host=", "--port=")):
            kept.append(arg)
    return kept


def _kill_after(process: subprocess.Popen[str], seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, process.kill)
    timer.daemon = True
    timer.start()
    return timer


def serve(args: Sequence[str]) -> int:
    """`mcp-gateway serve ARGS` on a free port: 0 once it answered GET /, 1 (with its output) otherwise."""
    port = _free_port()
    command = [sys.executable, "-m", "gateway.cli", "serve", *_without_listen_flags(args)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    environment = os.environ | {"MCP_GATEWAY_HOST": "127.0.0.1", "MCP_GATEWAY_PORT": str(port)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
    timer = _kill_after(process, DEADLINE)
    seen: list[str] = []
    answered: int | None = None
    try:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if "Uvicorn running on" in line:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
                    answered = answer.status
                break
    finally:
        timer.cancel()
        process.send_signal(signal.SIGINT)
        try:
            rest, _ = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            rest, _ = process.communicate()
        seen.append(rest or "")
    if answered != 200:
        sys.stderr.write("".join(seen))
        sys.stderr.write(f"docs-test: `mcp-gateway serve` did not answer GET / on port {port} (got {answered})\n")
        return 1
    return 0


def stdio(args: Sequence[str]) -> int:
    """`mcp-gateway stdio ARGS`: 0 once it answered `initialize`, 1 (with its output) otherwise."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "docs", "version": "0"}},
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "stdio", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    timer = _kill_after(process, DEADLINE)
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(initialize) + "\n")
        process.stdin.flush()
        answer = process.stdout.readline()
        process.stdin.close()
        errors = process.stderr.read() if process.stderr is not None else ""
        process.wait(timeout=15)
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    if '"result"' not in answer:
        sys.stderr.write(f"{errors}docs-test: `mcp-gateway stdio` answered initialize with {answer!r}\n")
        return 1
    return 0


def mcp_gateway(args: Sequence[str]) -> int:
    if args and args[0] == "serve":
        return serve(args[1:])
    if args and args[0] == "stdio":
        return stdio(args[1:])
    return subprocess.run([sys.executable, "-m", "gateway.cli", *args], check=False).returncode


def _self_signed_pem(directory: Path) -> Path:
    """A certificate chain and key for localhost, in one PEM, as HAProxy's `crt` takes it."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    path = directory / "self-signed.pem"
    path.write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return path


def haproxy(args: Sequence[str]) -> int:
    """`haproxy ... -f FILE`: `haproxy -c -f FILE` under the block's environment."""
    program = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(program).exists():
        sys.stderr.write("docs-test: haproxy is not installed; run scripts/install-haproxy (make test does)\n")
        return 1
    config = args[list(args).index("-f") + 1]
    environment = dict(os.environ)
    with tempfile.TemporaryDirectory() as scratch:
        cert = environment.get("MCP_TLS_CERT")
        if cert and not Path(cert).exists():
            environment["MCP_TLS_CERT"] = str(_self_signed_pem(Path(scratch)))
        return subprocess.run([program, "-c", "-q", "-f", config], env=environment, check=False).returncode


def pip(args: Sequence[str]) -> int:
    """`pip install ...`: 0 when every extra and package named is one pyproject.toml declares."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    named = {
        canonicalize_name(Requirement(line).name)
        for line in [*project["dependencies"], *(line for group in extras.values() for line in group)]
    }
    wrong: list[str] = []
    for arg in args:
        if arg in ("install", "-e", "--editable") or arg.startswith("-"):
            continue
        found = re.fullmatch(r"(openapi-mcp-gateway|\.)\[(?P<extras>[\w,-]+)\]", arg)
        if found is not None:
            wrong += [extra for extra in found["extras"].split(",") if extra not in extras]
        elif canonicalize_name(Requirement(arg).name) not in named:
            wrong.append(arg)
    if wrong:
        sys.stderr.write(f"docs-test: pip install names what pyproject.toml does not declare: {wrong}\n")
        return 1
    return 0


PROGRAMS: Final = {"mcp-gateway": mcp_gateway, "haproxy": haproxy, "pip": pip}


def main(argv: Sequence[str]) -> int:
    return PROGRAMS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
