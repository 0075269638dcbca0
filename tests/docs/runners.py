"""How each kind of block is tested (docs/contributing.md, "Code blocks are tested", says the same for people).

Every block runs in a fresh working folder (`workdir`): `myapi/main.py` (the examples' `myapi.main:app`, the demo
shop), `openapi.yaml` (the demo's document), an empty `snapshots/`, and links to the repository's `deploy/` and
`scripts/`; the repository is on PYTHONPATH, and no `MCP_GATEWAY_*` variable is set but
`MCP_GATEWAY_SEMANTIC_SEARCH=0` and those the block's comment sets (`env=NAME=VALUE`).

- `python`: run by the project's Python, after the prelude its `fixture=` names (`app`: the demo app as `app`;
  `oauth`: that and an `OAuthServer` as `oauth`); then every `test_*` function it defines is called.
- `sh` (or `bash`, `shell`): run by bash with `set -e -o pipefail`, every command for real, except that
  `mcp-gateway`, `haproxy` and `pip` go through `tests.docs.command` and `make` is a dry run (`make -n`) in the
  repository. With `check=exists`, each command is only run with `--help` (and `make` dry), for commands that take
  an hour.
- `json`, `yaml`: parsed.
- `haproxy`: its lines must be lines of deploy/haproxy.cfg, in the same order and next to each other.
- `text`: needs `check=paths` (each `name.py` and `name/` it mentions exists under `root=`, default the
  repository) or `check=call-log` (each line has the fields, in order, of a real call-log line).
- `markdown`: an example of the `docs-test` comments themselves; each must read and name known options.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import yaml

from tests.docs.blocks import REPO, Block

__all__ = ["FIXTURES", "OPTIONS", "RUNNERS", "SHELL_PRELUDE", "BlockFailedError", "make_workdir", "run"]

TIMEOUT: Final = 120.0
"""Seconds one block may run."""

OPTIONS: Final = frozenset({"fixture", "env", "check", "root"})
"""The keys a `docs-test` comment may give."""


class BlockFailedError(AssertionError):
    """A block did not do what its page says: the message holds its output."""


MYAPI: Final = '''"""The examples' `myapi.main:app`: the bundled demo shop, standing in for your app."""

from demo import create_app

app = create_app()
'''

_APP: Final = "from demo import create_app\n\napp = create_app()\n"
FIXTURES: Final[Mapping[str, str]] = {
    "app": _APP,
    "oauth": _APP
    + """from oauth import ApiKeyLogin, OAuthConfig, OAuthServer, open_store

oauth = OAuthServer(
    OAuthConfig(
        issuer="https://mcp.example.com",
        resource="https://mcp.example.com/mcp",
        secret_key=b"a-docs-test-secret-of-32-bytes-at-least",
        scopes=("orders:read", "orders:write"),
    ),
    login=ApiKeyLogin(lambda headers: {"id": 1}),
    store=open_store("oauth.sqlite3"),
)
""",
}
"""The preludes a python block's `fixture=` names."""

_CALL_TESTS: Final = """
for _name, _test in list(globals().items()):
    if _name.startswith("test_") and callable(_test):
        _test()
"""

SHELL_PRELUDE: Final = """
mcp-gateway() { "$DOCS_PYTHON" -m tests.docs.command mcp-gateway "$@"; }
haproxy() { "$DOCS_PYTHON" -m tests.docs.command haproxy "$@"; }
pip() { "$DOCS_PYTHON" -m tests.docs.command pip "$@"; }
make() { command make --dry-run --directory "$DOCS_REPO" "$@" > /dev/null; }
set -e -o pipefail
"""


def make_workdir(where: Path, document: str) -> Path:
    """A working folder for one block (see the module docstring); `document` is openapi.yaml's text."""
    (where / "myapi").mkdir(parents=True)
    (where / "myapi" / "__init__.py").write_text("")
    (where / "myapi" / "main.py").write_text(MYAPI)
    (where / "openapi.yaml").write_text(document)
    (where / "snapshots").mkdir()
    for name in ("deploy", "scripts"):
        (where / name).symlink_to(REPO / name)
    return where


def _environment(block: Block, workdir: Path) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("MCP_GATEWAY_")}
    environment |= {
        "PYTHONPATH": os.pathsep.join([str(REPO), str(workdir)]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), environment.get("PATH", "")]),
        "DOCS_PYTHON": sys.executable,
        "DOCS_REPO": str(REPO),
        # Lexical search only: the semantic extra's vectors would take a core for seconds in every process.
        "MCP_GATEWAY_SEMANTIC_SEARCH": "0",
    }
    for setting in block.options.get("env", ()):
        name, _, value = setting.partition("=")
        environment[name] = value
    return environment


def _run(command: list[str], block: Block, workdir: Path, stdin: str | None = None) -> None:
    try:
        done = subprocess.run(
            command,
            cwd=workdir,
            env=_environment(block, workdir),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        raise BlockFailedError(f"{block.id}: still running after {TIMEOUT:.0f} s") from expired
    if done.returncode != 0:
        raise BlockFailedError(f"{block.id}: exit {done.returncode}\n{done.stdout}{done.stderr}")


def run_python(block: Block, workdir: Path) -> None:
    fixtures = block.option("fixture")
    prelude = "".join(FIXTURES[name] for name in fixtures.split(",")) if fixtures else ""
    script = workdir / "snippet.py"
    script.write_text(prelude + block.text + _CALL_TESTS)
    _run([sys.executable, str(script)], block, workdir)


def _commands(text: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, split as the shell would."""
    joined = re.sub(r"\\\n", " ", text)
    return [words for line in joined.splitlines() if (words := shlex.split(line, comments=True))]


def _check_exists(block: Block, workdir: Path) -> None:
    for words in _commands(block.text):
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            words = words[1:]
        program, *args = words
        if program == "make":
            _run(["make", "--dry-run", "--directory", str(REPO), *args], block, workdir)
            continue
        found = (
            str(REPO / program) if "/" in program else shutil.which(program, path=_environment(block, workdir)["PATH"])
        )
        if found is None or not Path(found).exists():
            raise BlockFailedError(f"{block.id}: {program!r} is not a program here")
        _run([found, "--help"], block, REPO)


def run_shell(block: Block, workdir: Path) -> None:
    if block.option("check") == "exists":
        _check_exists(block, workdir)
        return
    _run(["bash", "-c", SHELL_PRELUDE + block.text], block, workdir)


def parse_json(block: Block, workdir: Path) -> None:
    try:
        json.loads(block.text)
    except json.JSONDecodeError as error:
        raise BlockFailedError(f"{block.id}: not JSON: {error}") from error


def parse_yaml(block: Block, workdir: Path) -> None:
    try:
        yaml.safe_load(block.text)
    except yaml.YAMLError as error:
        raise BlockFailedError(f"{block.id}: not YAML: {error}") from error


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def quote_of_haproxy_cfg(block: Block, workdir: Path) -> None:
    quoted, real = _lines(block.text), _lines((REPO / "deploy" / "haproxy.cfg").read_text())
    starts = [index for index, line in enumerate(real) if line == quoted[0]]
    if not any(real[start : start + len(quoted)] == quoted for start in starts):
        raise BlockFailedError(f"{block.id}: these lines are not, in this order, lines of deploy/haproxy.cfg")


def paths_exist(block: Block, workdir: Path) -> None:
    root = REPO / (block.option("root") or "")
    named = re.findall(r"(?<![\w./-])([\w-]+(?:/[\w-]+)*(?:\.py|/))(?![\w/])", block.text)
    missing = [name for name in named if not (root / name).exists()]
    if not named or missing:
        raise BlockFailedError(f"{block.id}: names no file under {root}, or files it lacks: {missing}")


_CALL_LOG: Final = """
import json
import logging

import anyio

from demo import create_app
from gateway import Gateway, ScriptConfig

lines = []


class Keep(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        lines.append(record.call)


logging.getLogger("gateway.calls").addHandler(Keep())
logging.getLogger("gateway.calls").setLevel(logging.INFO)
gateway = Gateway(app=create_app(), whoami="users.get_current_user", scripts=ScriptConfig())


async def main() -> None:
    headers = {"authorization": "Bearer demo-key-alice"}
    async with gateway.lifespan():
        await gateway.call_tool(headers, "call_function", {"name": "orders.get_order", "args": {"order_id": 1}})
        await gateway.call_tool(headers, "run_script", {"code": "return await api.orders.get_order({order_id: 1})"})


anyio.run(main)
print(json.dumps(lines))
"""


def _fields(line: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in line.split())


def call_log(block: Block, workdir: Path) -> None:
    """Each line has the fields, in order, of a real call-log line of the same event and tool."""
    script = workdir / "call_log.py"
    script.write_text(_CALL_LOG)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=workdir,
        env=_environment(block, workdir),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    real = [{key: str(value) for key, value in line.items()} for line in json.loads(done.stdout)]
    for shown in map(_fields, _lines(block.text)):
        alike = [line for line in real if (line["event"], line["tool"]) == (shown["event"], shown["tool"])]
        if not any(list(line) == list(shown) and line["status"] == shown["status"] for line in alike):
            raise BlockFailedError(f"{block.id}: no real call-log line looks like {shown}; the real ones: {real}")


def _text(block: Block, workdir: Path) -> None:
    checks = {"paths": paths_exist, "call-log": call_log}
    check = checks.get(block.option("check") or "")
    if check is None:
        raise BlockFailedError(f"{block.id}: a text block needs check=paths or check=call-log")
    check(block, workdir)


def docs_test_comments(block: Block, workdir: Path) -> None:
    """A Markdown example of the comments themselves: each must read, and name known options."""
    from tests.docs.blocks import _MARKER, _options

    for line in block.text.splitlines():
        found = _MARKER.match(line)
        if found is None:
            raise BlockFailedError(f"{block.id}: {line!r} is not a docs-test comment")
        unknown = set(_options(found["options"], block.id)) - OPTIONS
        if unknown:
            raise BlockFailedError(f"{block.id}: unknown docs-test options {sorted(unknown)}")


RUNNERS: Final[Mapping[str, Callable[[Block, Path], None]]] = {
    "python": run_python,
    "sh": run_shell,
    "bash": run_shell,
    "shell": run_shell,
    "json": parse_json,
    "yaml": parse_yaml,
    "haproxy": quote_of_haproxy_cfg,
    "text": _text,
    "markdown": docs_test_comments,
}
"""The runner of each block language; a block in any other language has none, and fails the suite."""


def run(block: Block, workdir: Path) -> None:
    """Run `block` in `workdir` with its language's runner; BlockFailedError when it fails."""
    RUNNERS[block.lang](block, workdir)
