"""Defence in depth: code that escaped QuickJS inside a worker would still find no network, no root, no files, no
processes, nothing of the gateway's environment or descriptors.

The probes run in a process started exactly as the pool starts a worker (`spawn_worker`), confined by the same
call the worker makes before its first script (`sandbox.worker.prepare`), and then try, as Python code, what
escaped native code would try through the same system calls.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox import Sandbox, ScriptLimits
from sandbox.pool import log_confinement, spawn_worker
from tests.sandbox.conftest import FUNCTIONS, LIMITS, Shop

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
AS_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root (CI runs as root)")
LINUX_PROC = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")

#: The probe's frame: confine as a worker does (or apply one step only), run `body`, print what happened as JSON.
PROBE = """
import sys; sys.path[:0] = sys.argv[1:]
import ctypes, json, os, socket
from sandbox import _confine
from sandbox.worker import prepare
out = {{}}
def attempt(name, action):
    try:
        out[name] = "allowed: " + repr(action())
    except OSError as error:
        out[name] = "refused: " + type(error).__name__ + ": " + str(error)
try:
    {confine}
except _confine.ConfinementUnavailable as error:
    out["unavailable"] = str(error)
else:
{body}
sys.stdout.write(json.dumps(out))
"""
FULL = f"out['report'] = prepare({dataclasses.asdict(ScriptLimits())!r})"


async def probe(body: str, confine: str = FULL) -> dict[str, Any]:
    """Run `body` (indented Python using `attempt`) in a process started and confined like a worker."""
    code = PROBE.format(confine=confine, body="\n".join("    " + line for line in body.strip().splitlines()))
    process = await spawn_worker(code)
    async with process:
        assert process.stdout is not None and process.stderr is not None
        output, errors = b"", b""
        async for chunk in process.stdout:
            output += chunk
        async for chunk in process.stderr:
            errors += chunk
        await process.wait()
    assert process.returncode == 0, errors.decode()
    result: dict[str, Any] = json.loads(output)
    return result


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP listener on 127.0.0.1 that nobody should reach."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.setblocking(False)
        yield server


def assert_nobody_connected(server: socket.socket) -> None:
    """The probe has exited, so any connection it made would be waiting in the backlog."""
    with pytest.raises(BlockingIOError):
        connection, _ = server.accept()
        connection.close()


CONNECT = """
def connect():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
        client.settimeout(2)
        client.connect(("127.0.0.1", {port}))
        return client.getsockname()
attempt("tcp", connect)
def send():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        return client.sendto(b"hello", ("127.0.0.1", {udp_port}))
attempt("udp", send)
def unix():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(2)
        client.connect({unix_path!r})
        return "connected"
if {unix_path!r}:
    attempt("unix", unix)
"""


async def test_code_in_a_worker_cannot_connect_to_a_listener_on_loopback(
    listener: socket.socket, tmp_path: Path
) -> None:
    path = tmp_path / "open.sock"
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as local,
    ):
        udp.bind(("127.0.0.1", 0))
        udp.setblocking(False)
        local.bind(str(path))  # a Unix socket anyone may connect to, which a network namespace does not hide
        local.listen(8)
        local.setblocking(False)
        path.chmod(0o777)
        tmp_path.chmod(0o755)
        out = await probe(
            CONNECT.format(port=listener.getsockname()[1], udp_port=udp.getsockname()[1], unix_path=str(path))
        )
        assert out["tcp"].startswith("refused"), out
        assert out["udp"].startswith("refused"), out
        assert out["unix"].startswith("refused"), out
        assert_nobody_connected(listener)
        assert_nobody_connected(local)
        with pytest.raises(BlockingIOError):
            udp.recv(16)
    assert out["report"]["network"], out["report"]


@pytest.mark.parametrize(
    "step",
    ["_confine.enter_network_namespace()", "_confine.install_seccomp_filter()", "_confine.restrict_with_landlock()"],
)
async def test_each_network_step_alone_keeps_a_worker_off_loopback(listener: socket.socket, step: str) -> None:
    out = await probe(
        CONNECT.format(port=listener.getsockname()[1], udp_port=9, unix_path=""), confine=f"out['step'] = {step}"
    )
    if "unavailable" in out:
        pytest.skip(f"not available on this machine: {out['unavailable']}")
    if "landlock" in step and out["step"] < 4:
        pytest.skip(f"this kernel's Landlock (ABI {out['step']}) predates TCP rules (ABI 4)")
    assert out["tcp"].startswith("refused"), out
    assert_nobody_connected(listener)


@AS_ROOT
@LINUX_PROC
@pytest.mark.parametrize(("uid", "gid"), [(65534, 65534), (54321, 54322)])
async def test_a_root_gateways_worker_runs_unprivileged_under_the_process_limit(uid: int, gid: int) -> None:
    limits = dataclasses.replace(LIMITS, max_concurrent=1, worker_uid=uid, worker_gid=gid)
    async with Sandbox(FUNCTIONS, limits) as single:
        assert (await single.run("[1, 2, 3].map((n) => n * 2)", Shop())).value == [2, 4, 6]
        (pid,) = single.worker_pids
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        assert status["Uid"].split() == [str(uid)] * 4
        assert status["Gid"].split() == [str(gid)] * 4
        assert status["Groups"].split() == []
        processes = next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines() if "processes" in line)
        assert processes.split()[2:4] == ["0", "0"]


@LINUX_PROC
async def test_a_running_worker_is_in_its_own_network_namespace_under_seccomp() -> None:
    async with Sandbox(FUNCTIONS, dataclasses.replace(LIMITS, max_concurrent=1)) as single:
        await single.run("1", Shop())
        (pid,) = single.worker_pids
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        assert status["NoNewPrivs"].strip() == "1"
        if sys.platform == "linux" and os.uname().machine == "x86_64":
            assert status["Seccomp"].strip() == "2"
        if os.geteuid() == 0:
            assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")


async def test_a_worker_can_start_no_process_and_signal_no_other() -> None:
    out = await probe(
        """
def fork():
    child = os.fork()
    if child == 0:
        os._exit(0)
    return os.waitpid(child, 0)
attempt("fork", fork)
attempt("exec", lambda: os.execv("/bin/true", ["true"]))
attempt("signal the host", lambda: os.kill(os.getppid(), 0))
attempt("signal everyone", lambda: os.kill(-1, 0))
attempt("signal itself", lambda: os.kill(os.getpid(), 0))
"""
    )
    assert out["fork"].startswith("refused"), out
    assert out["exec"].startswith("refused"), out
    assert out["signal the host"].startswith("refused"), out
    assert out["signal everyone"].startswith("refused"), out
    assert out["signal itself"] == "allowed: None", out


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64", reason="x86-64 system calls")
async def test_system_calls_that_would_go_around_the_filter_are_refused() -> None:
    out = await probe(
        """
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def raw(number, *args):
    result = libc.syscall(number, *args)
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result
attempt("socket through the x32 ABI", lambda: raw(41 | 0x40000000, socket.AF_INET, socket.SOCK_STREAM, 0))
attempt("io_uring", lambda: raw(425, 8, ctypes.create_string_buffer(120)))
attempt("ptrace the host", lambda: raw(101, 0x4206, os.getppid(), 0, 0))  # PTRACE_SEIZE: no stop
attempt("a new user namespace", lambda: raw(272, 0x10000000))
attempt("root again", lambda: os.setresuid(0, 0, 0))
"""
    )
    for attack in ("socket through the x32 ABI", "io_uring", "ptrace the host", "a new user namespace"):
        assert out[attack].startswith("refused"), (attack, out)
    if os.geteuid() == 0:
        assert out["root again"].startswith("refused"), out


@LINUX_PROC
async def test_a_worker_reads_nothing_of_the_gateway_its_environment_or_descriptors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MCP_GATEWAY_UPSTREAM_TOKEN", "token-that-must-stay-home")
    monkeypatch.setenv("PAYMENTS_SECRET_KEY", "key-that-must-stay-home")
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    extra = os.open(secret, os.O_RDONLY)
    os.set_inheritable(extra, True)
    try:
        out = await probe(
            f"""
out["environment"] = dict(os.environ)
def is_open(fd):
    try:
        return os.fstat(fd) is not None
    except OSError:
        return False
out["descriptors"] = [fd for fd in range(1024) if is_open(fd)]
attempt("host environment", lambda: open(f"/proc/{{os.getppid()}}/environ", "rb").read(64))
attempt("host descriptor", lambda: open(f"/proc/{{os.getppid()}}/fd/{extra}").read())
attempt("host memory", lambda: open(f"/proc/{{os.getppid()}}/mem", "rb").read(1))
attempt("inherited descriptor", lambda: os.read({extra}, 16))
""",
            confine=f"os.closerange(3, os.sysconf('SC_OPEN_MAX')); {FULL}",
        )
        async with Sandbox(FUNCTIONS, dataclasses.replace(LIMITS, max_concurrent=1)) as single:
            await single.run("1", Shop())
            (pid,) = single.worker_pids
            environment = Path(f"/proc/{pid}/environ").read_bytes()
            descriptors = {name: os.readlink(f"/proc/{pid}/fd/{name}") for name in os.listdir(f"/proc/{pid}/fd")}
    finally:
        os.close(extra)
    assert environment == b""
    assert sorted(descriptors) == ["0", "1", "2", "3"]
    assert all(target.startswith("pipe:") for target in descriptors.values()), descriptors
    assert set(out["environment"]) <= {"LC_CTYPE"}  # set by Python itself in the C locale (PEP 538)
    assert out["descriptors"] == [0, 1, 2]
    for attack in ("host environment", "host descriptor", "host memory", "inherited descriptor"):
        assert out[attack].startswith("refused"), (attack, out)


async def test_a_worker_opens_no_file_where_landlock_is_available(tmp_path: Path) -> None:
    readable = tmp_path / "readable.txt"
    readable.write_text("anyone may read this")
    readable.chmod(0o644)
    tmp_path.chmod(0o755)
    out = await probe(f"attempt('read', lambda: open({str(readable)!r}).read())")
    if not out["report"]["landlock"]:
        pytest.skip(f"Landlock is not available here: {out['report']['skipped'].get('landlock')}")
    assert out["read"].startswith("refused"), out


def test_a_report_without_network_confinement_is_a_warning_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    open_report = {
        "network": [],
        "landlock": 0,
        "uid": 1000,
        "skipped": {"namespace": "unshare failed: EPERM (a)", "seccomp": "not x86-64 (a)"},
    }
    with caplog.at_level("INFO", logger="sandbox"):
        log_confinement(open_report)
        log_confinement(dict(open_report))
    (record,) = caplog.records
    assert record.levelname == "WARNING"
    assert "can reach the network" in record.getMessage()
    assert "unshare failed" in record.getMessage()


def test_a_confined_report_is_logged_as_information(caplog: pytest.LogCaptureFixture) -> None:
    report = {"network": ["seccomp"], "landlock": 7, "uid": 1000, "skipped": {"namespace": "no userns (b)"}}
    with caplog.at_level("INFO", logger="sandbox"):
        log_confinement(report)
    (record,) = caplog.records
    assert record.levelname == "INFO"
    assert "network cut off by seccomp" in record.getMessage()


def test_start_up_says_once_how_the_workers_are_confined() -> None:
    code = """
import logging, anyio
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
from sandbox import Sandbox, ScriptLimits
async def main():
    async with Sandbox(["shop.echo"], ScriptLimits(max_concurrent=2, max_runs_per_worker=1)) as sandbox:
        logging.getLogger("probe").info("started")
        for _ in range(3):
            async def caller(name, args): return args
            assert (await sandbox.run("1", caller)).value == 1
anyio.run(main)
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    said = [index for index, line in enumerate(lines) if "script workers" in line]
    assert len(said) == 1, done.stderr
    assert lines[said[0]].startswith(("INFO script workers are confined", "WARNING script workers can reach"))
    assert said[0] < lines.index("INFO started"), done.stderr


async def test_started_workers_serve_scripts_while_confined() -> None:
    async with Sandbox(FUNCTIONS, dataclasses.replace(LIMITS, max_concurrent=1)) as single:
        script = "const items = await api.shop.list_items(); items.map((item) => item.name).join(',')"
        result = await single.run(script, Shop())
        assert result.value == "mug,lamp,kettle"
        dated = await single.run("new Date(0).toISOString()", Shop())
        assert dated.value == "1970-01-01T00:00:00.000Z"
