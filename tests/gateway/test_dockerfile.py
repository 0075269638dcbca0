"""The Dockerfile, read statically (no Docker engine needed), and its command and health check run for real.

The image must be slim, run as a non-root user, expose the port the gateway listens on, serve the demo by
default with `mcp-gateway serve --host 0.0.0.0`, take what to serve from the environment, and check its health
with GET / on that port.
"""

from __future__ import annotations

import json
import os
import re
import shlex
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
    assert bases and all(re.fullmatch(r"python:3\.\d+-slim(-\w+)?", base) for base in bases), bases
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
    assert command_of(FINAL) == ["mcp-gateway", "serve", "--host", ALL_INTERFACES]
    assert env["MCP_GATEWAY_HOST"] == ALL_INTERFACES
    assert the_one(FINAL, "EXPOSE").args.split("/")[0] == env["MCP_GATEWAY_PORT"] == "8000"
    # With no spec, app or upstream set, `mcp-gateway serve` serves the bundled demo.
    assert not {"MCP_GATEWAY_SPEC", "MCP_GATEWAY_APP", "MCP_GATEWAY_UPSTREAM"} & env.keys()
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["mcp-gateway"] == "gateway.cli:main"


def test_it_installs_the_project_with_the_demo_extra_from_files_the_context_lets_in() -> None:
    runs = " ".join(i.args for i in ALL if i.keyword == "RUN")
    assert re.search(r"pip install [\"']?\.\[demo\][\"']?", runs), runs
    allowed = [line[1:].rstrip("/") for line in DOCKERIGNORE.read_text().splitlines() if line.startswith("!")]
    assert DOCKERIGNORE.read_text().splitlines()[1:2] == ["*"], ".dockerignore should start by excluding everything"
    for copy in (i for i in ALL if i.keyword == "COPY" and not i.args.startswith("--from")):
        *sources, _ = copy.args.split()
        for source in sources:
            assert (REPO / source).exists(), f"COPY {source}: no such file"
            assert source.rstrip("/") in allowed, f"COPY {source}: .dockerignore keeps it out of the context"
    packages = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert {name.rstrip("*") for name in packages["include"]} <= set(allowed)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.anyio
async def test_the_default_command_answers_the_health_check(tmp_path: Path) -> None:
    # The container's command and health check, run here; only the interface is loopback instead of 0.0.0.0.
    port = str(_free_port())
    env = {**os.environ, **env_of(FINAL), "MCP_GATEWAY_PORT": port, "MCP_GATEWAY_HOST": "127.0.0.1"}
    env["PATH"] = os.environ["PATH"]
    _, *args = command_of(FINAL)
    args[args.index("--host") + 1] = "127.0.0.1"
    health = the_one(FINAL, "HEALTHCHECK").args
    check = json.loads(health[health.index("CMD") + 3 :].strip())
    assert check[0] == "python"
    server = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", *args], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stderr is not None
        stderr = server.stderr

        def started() -> str:
            seen = ""
            for line in stderr:
                seen += line
                if "Application startup complete" in line or "Traceback" in line:
                    break
            return seen

        with anyio.fail_after(30):
            log = await anyio.to_thread.run_sync(started)
        assert "Application startup complete" in log, log
        with anyio.fail_after(30):
            answered = await anyio.run_process([sys.executable, *check[1:]], env=env, check=False)
        assert answered.returncode == 0, answered.stderr.decode()
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stderr is not None:
            server.stderr.close()
