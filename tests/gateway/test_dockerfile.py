"""The Dockerfile, read statically (no Docker engine needed), and its command and health check run for real.

The image must be slim and pinned (a Python patch release, dependencies from constraints.txt), run as a
non-root user, expose the port the gateway listens on, serve the demo by default with a bare `mcp-gateway serve`
whose settings all come from the environment, and check its health with `mcp-gateway health` at the address
those same settings name. Where a Docker daemon runs, the image is built and run for real.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
ALL_INTERFACES = "0.0.0.0"  # noqa: S104 - what the container must listen on; this test binds loopback only


@dataclass(frozen=True, kw_only=True)
class Instruction:
    """One Dockerfile instruction: its keyword (upper-case) and its arguments, continuation lines joined."""

    keyword: str
    args: str

    def exec_form(self) -> list[str]:
        """The arguments of a JSON (exec form) instruction."""
        value = json.loads(self.args)
        assert isinstance(value, list), f"{self.keyword} is not in exec form: {self.args!r}"
        return [str(item) for item in value]


def instructions(text: str) -> list[Instruction]:
    """The instructions of a Dockerfile: comments dropped, backslash continuations joined."""
    found: list[Instruction] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = (pending + stripped).strip()
        pending = ""
        keyword, _, args = whole.partition(" ")
        found.append(Instruction(keyword=keyword.upper(), args=args.strip()))
    return found


def final_stage(all_instructions: list[Instruction]) -> list[Instruction]:
    """The instructions from the last FROM on: the image that ships."""
    starts = [i for i, instruction in enumerate(all_instructions) if instruction.keyword == "FROM"]
    assert starts, "the Dockerfile has no FROM"
    return all_instructions[starts[-1] :]


def env_of(stage: list[Instruction]) -> dict[str, str]:
    """The variables the stage's ENV instructions set (`KEY=VALUE` form)."""
    env: dict[str, str] = {}
    for instruction in stage:
        if instruction.keyword == "ENV":
            for item in shlex.split(instruction.args):
                key, sep, value = item.partition("=")
                assert sep, f"ENV uses the legacy 'KEY VALUE' form: {instruction.args!r}"
                env[key] = value
    return env


def the_one(stage: list[Instruction], keyword: str) -> Instruction:
    matches = [instruction for instruction in stage if instruction.keyword == keyword]
    assert len(matches) == 1, f"expected one {keyword} in the final stage, found {len(matches)}"
    return matches[0]


def command_of(stage: list[Instruction]) -> list[str]:
    """ENTRYPOINT followed by CMD, both in exec form: what the container runs by default."""
    return the_one(stage, "ENTRYPOINT").exec_form() + the_one(stage, "CMD").exec_form()


ALL = instructions(DOCKERFILE.read_text(encoding="utf-8"))
FINAL = final_stage(ALL)


def test_every_stage_builds_on_a_slim_python_image() -> None:
    args = {i.args.split("=", 1)[0]: i.args.split("=", 1)[1] for i in ALL if i.keyword == "ARG" and "=" in i.args}
    python = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    bases = [
        i.args.split()[0].replace("${PYTHON_VERSION}", args.get("PYTHON_VERSION", "?"))
        for i in ALL
        if i.keyword == "FROM"
    ]
    # Pinned to a patch release (python:3.11.13-slim-bookworm), so a rebuild does not change the interpreter.
    assert bases and all(re.fullmatch(r"python:3\.\d+\.\d+-slim(-\w+)?", base) for base in bases), bases
    minimum = python.removeprefix(">=")
    assert all(
        tuple(map(int, base[7:].split("-")[0].split("."))) >= tuple(map(int, minimum.split("."))) for base in bases
    )


def test_the_image_runs_as_a_non_root_user_before_its_command() -> None:
    users = [(index, i.args) for index, i in enumerate(FINAL) if i.keyword == "USER"]
    assert users, "the final stage never switches away from root"
    index, user = users[-1]
    assert user.split(":")[0] not in ("root", "0")
    command_at = min(n for n, i in enumerate(FINAL) if i.keyword in ("ENTRYPOINT", "CMD"))
    assert index < command_at
    assert not any(i.keyword == "RUN" for i in FINAL[index:]), "RUN after USER would need root again"


def test_it_serves_the_demo_on_all_interfaces_on_the_exposed_port_by_default() -> None:
    env = env_of(FINAL)
    # No flags: a flag in CMD would override the MCP_GATEWAY_* variable a `docker run -e` sets.
    assert command_of(FINAL) == ["mcp-gateway", "serve"]
    assert env["MCP_GATEWAY_HOST"] == ALL_INTERFACES
    assert the_one(FINAL, "EXPOSE").args.split("/")[0] == env["MCP_GATEWAY_PORT"] == "8000"
    # With no spec, app or upstream set, `mcp-gateway serve` serves the bundled demo.
    assert not {"MCP_GATEWAY_SPEC", "MCP_GATEWAY_APP", "MCP_GATEWAY_UPSTREAM"} & env.keys()
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["mcp-gateway"] == "gateway.cli:main"


def test_it_installs_the_project_with_the_extras_it_serves_from_files_the_context_lets_in() -> None:
    runs = " ".join(i.args for i in ALL if i.keyword == "RUN")
    installed = re.search(r"pip install [\"']?\.\[([a-z,]+)\][\"']?", runs)
    assert installed, runs
    # The demo, and every feature the image served before the extras existed (docs/install.md).
    assert set(installed.group(1).split(",")) == {"demo", "oauth", "redis", "scripts", "strict", "speed"}
    allowed = [line[1:].rstrip("/") for line in DOCKERIGNORE.read_text().splitlines() if line.startswith("!")]
    assert DOCKERIGNORE.read_text().splitlines()[1:2] == ["*"], ".dockerignore should start by excluding everything"
    for copy in (i for i in ALL if i.keyword == "COPY" and not i.args.startswith("--from")):
        *sources, _ = copy.args.split()
        for source in sources:
            assert (REPO / source).exists(), f"COPY {source}: no such file"
            assert source.rstrip("/") in allowed, f"COPY {source}: .dockerignore keeps it out of the context"
    packages = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert {name.rstrip("*") for name in packages["include"]} <= set(allowed)


def test_installs_are_pinned_by_the_committed_constraints_for_every_dependency() -> None:
    starts = [i for i, instruction in enumerate(ALL) if instruction.keyword == "FROM"]
    build = ALL[starts[0] : starts[1]]
    assert env_of(build)["PIP_CONSTRAINT"] == "/src/constraints.txt"
    assert any(i.keyword == "COPY" and "constraints.txt" in i.args.split() for i in build)
    pins = [line for line in (REPO / "constraints.txt").read_text().splitlines() if not line.startswith("#")]
    assert pins and all(re.fullmatch(r"[a-z0-9.-]+==[\w.]+", pin) for pin in pins), pins
    # Every distribution the project and its `all` extra need, at the version installed here (scripts/lock).
    checked = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "lock"), "--check"], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_trusted_proxies_are_set_through_their_variable_and_trust_nobody_by_default() -> None:
    assert env_of(FINAL)["MCP_GATEWAY_TRUSTED_PROXIES"] == ""
    assert "MCP_GATEWAY_TRUSTED_PROXIES=" in DOCKERFILE.read_text()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _started(server: subprocess.Popen[str]) -> str:
    assert server.stderr is not None
    seen = ""
    for line in server.stderr:
        seen += line
        if "Application startup complete" in line or "Traceback" in line:
            break
    return seen


@pytest.mark.anyio
async def test_the_health_check_follows_the_host_and_port_the_environment_sets(tmp_path: Path) -> None:
    # The container's command and health check, run here with the address moved by variables alone: another
    # loopback address than 127.0.0.1 and a free port, as `docker run -e MCP_GATEWAY_HOST=... -e ..._PORT=...`.
    port = str(_free_port())
    env = {**os.environ, **env_of(FINAL), "MCP_GATEWAY_PORT": port, "MCP_GATEWAY_HOST": "127.0.0.2"}
    env["PATH"] = os.environ["PATH"]
    _, *args = command_of(FINAL)
    health = the_one(FINAL, "HEALTHCHECK").args
    check = json.loads(health[health.index("CMD") + 3 :].strip())
    assert check[0] == "mcp-gateway"
    server = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", *args], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        with anyio.fail_after(60):
            log = await anyio.to_thread.run_sync(_started, server)
        assert "Application startup complete" in log, log
        with anyio.fail_after(30):
            answered = await anyio.run_process([sys.executable, "-m", "gateway.cli", *check[1:]], env=env, check=False)
        assert answered.returncode == 0, answered.stderr.decode()
        moved = {**env, "MCP_GATEWAY_PORT": str(_free_port())}
        with anyio.fail_after(30):
            refused = await anyio.run_process([sys.executable, "-m", "gateway.cli", *check[1:]], env=moved, check=False)
        assert refused.returncode == 1
        assert "did not answer" in refused.stderr.decode()
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stderr is not None:
            server.stderr.close()


def _docker_unavailable() -> str | None:
    docker = shutil.which("docker")
    if docker is None:
        return "no docker command on PATH"
    try:
        info = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        return "`docker info` did not answer within 30 s"
    if info.returncode != 0:
        return f"`docker info` failed, no Docker daemon: {(info.stderr or info.stdout).strip().splitlines()[-1:]}"
    return None


@pytest.mark.anyio
async def test_the_built_image_serves_on_the_port_its_environment_sets_and_reports_healthy() -> None:
    reason = _docker_unavailable()
    if reason is not None:
        pytest.skip(f"building the image needs a Docker daemon: {reason}")
    tag = f"mcp-gateway-test:{os.getpid()}"
    with anyio.fail_after(900):
        built = await anyio.run_process(["docker", "build", "-q", "-t", tag, str(REPO)], check=False)
    assert built.returncode == 0, built.stderr.decode()
    name = f"mcp-gateway-test-{os.getpid()}"
    try:
        started = await anyio.run_process(
            ["docker", "run", "-d", "--name", name, "-e", "MCP_GATEWAY_PORT=9001", tag], check=False
        )
        assert started.returncode == 0, started.stderr.decode()
        logs = subprocess.Popen(
            ["docker", "logs", "-f", name], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
        )
        try:
            with anyio.fail_after(120):
                log = await anyio.to_thread.run_sync(_started, logs)
        finally:
            logs.terminate()
            logs.wait(timeout=10)
            if logs.stderr is not None:
                logs.stderr.close()
        assert "0.0.0.0:9001" in log, log
        health = await anyio.run_process(["docker", "exec", name, "mcp-gateway", "health"], check=False)
        assert health.returncode == 0, health.stderr.decode()
        user = await anyio.run_process(["docker", "exec", name, "id", "-u"], check=False)
        assert user.stdout.decode().strip() == "10001"
    finally:
        await anyio.run_process(["docker", "rm", "-f", name], check=False)
        await anyio.run_process(["docker", "rmi", "-f", tag], check=False)
