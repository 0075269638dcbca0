"""Instructions one call costs, in-process, counted by callgrind: the direct REST call through the app, and the MCP
`tools/call` of `call_function` for it, on the demo's `GET /orders/3` and on a trivial `GET /ping`; with
`--compare REV`, the same for the gateway of git revision REV, so one run says what a change did to the call path.

    .venv/bin/python bench/call_instructions.py                       # this checkout
    .venv/bin/python bench/call_instructions.py --compare 0a029c3     # and another revision, side by side

Instruction counts, unlike times, do not move with the machine's other load: each kind of call runs in a fresh
process under `valgrind --tool=callgrind`, once with `--calls` calls and once with `--warmup` calls, and the
difference divided by the calls between them is one call's count (start-up and warm-up cancel out). The garbage
collector is frozen after the first call and off during the counted ones, so no collection falls among them.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KINDS = {
    "rest": "REST GET /orders/3 through the app",
    "call": "POST /mcp tools/call call_function orders.get_order",
    "ping": "REST GET /ping (trivial) through the app",
    "ping_call": "POST /mcp tools/call call_function health.ping",
}

#: Run in the measured process: `KIND CALLS`; makes the app, the gateway and the calls, all in-process.
WORKLOAD = r"""
import asyncio, gc, json, sys
try:
    from demo import ADMIN_KEY, create_app
except ImportError:
    from gateway.demo import ADMIN_KEY, create_app
from gateway import Gateway

kind, calls = sys.argv[1], int(sys.argv[2])
app = create_app()

@app.get("/ping", tags=["health"], operation_id="ping")
async def ping():
    return {"pong": True}

Gateway(app=app, whoami="users.get_current_user").mount(app, "/mcp")
name = {"call": "orders.get_order", "ping_call": "health.ping"}.get(kind)
args = {"order_id": 3} if kind == "call" else {}
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "call_function", "arguments": {"name": name, "args": args}}}).encode()
path = {"rest": "/orders/3", "ping": "/ping"}.get(kind, "/mcp")
method = b"GET" if kind in ("rest", "ping") else b"POST"
headers = [(b"host", b"localhost"), (b"authorization", f"Bearer {ADMIN_KEY}".encode()),
           (b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
           (b"mcp-protocol-version", b"2025-11-25")]

async def one():
    sent = []
    async def receive():
        return {"type": "http.request", "body": body if method == b"POST" else b"", "more_body": False}
    async def send(message):
        sent.append(message)
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method.decode(),
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "headers": headers,
             "client": ("127.0.0.1", 5000), "server": ("localhost", 80), "root_path": ""}
    await app(scope, receive, send)
    assert sent[0]["status"] == 200, sent
    answer = b"".join(m.get("body", b"") for m in sent[1:])
    assert b"pong" in answer or b"customer_id" in answer, answer[:300]

async def main():
    async with app.router.lifespan_context(app):
        await one()
        # What start-up made is out of the collector's way, as `serve` does, and no collection lands inside the
        # counted calls: the difference of two runs is then the calls alone.
        gc.collect()
        gc.freeze()
        gc.disable()
        for _ in range(calls):
            await one()

asyncio.run(main())
"""


def instructions(root: Path, kind: str, calls: int) -> int:
    """The instructions a process serving `calls` calls of `kind` from the checkout at `root` executes."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-c",
                WORKLOAD,
                kind,
                str(calls),
            ],
            cwd=root,
            # Lexical search: the `semantic` extra's embedding threads start with the gateway, and under valgrind
            # they are slow to count and have ended the process (SIGABRT); no call made here searches.
            env={
                "PYTHONPATH": str(root),
                "PATH": "/usr/bin:/bin",
                "PYTHONHASHSEED": "0",
                "MCP_GATEWAY_SEMANTIC_SEARCH": "0",
            },
            check=True,
            capture_output=True,
        )
        found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(errors="replace"), re.M)
        if found is None:
            raise RuntimeError(f"callgrind wrote no total for {kind}")
        return int(found[1])


def per_call(root: Path, kind: str, calls: int, warmup: int) -> float:
    return (instructions(root, kind, calls) - instructions(root, kind, warmup)) / (calls - warmup)


@contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """A checkout of `revision` in a temporary folder (a git worktree), its bytecode compiled, removed afterwards.

    Compiled first: a fresh checkout's first counted process would otherwise also count the compiling of every
    module it imports (about 1 G instructions, some 5 M per call of the first kind counted)."""
    folder = Path(tempfile.mkdtemp(prefix="call-instructions-")) / "checkout"
    git = ["git", "-C", str(REPO), "worktree"]
    subprocess.run([*git, "add", "--detach", str(folder), revision], check=True, capture_output=True)
    try:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], check=False, capture_output=True)
        yield folder
    finally:
        subprocess.run([*git, "remove", "--force", str(folder)], check=False, capture_output=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=250, help="calls of the longer run (default 250)")
    parser.add_argument("--warmup", type=int, default=50, help="calls of the shorter run (default 50)")
    parser.add_argument("--compare", metavar="REV", default=None, help="also count the gateway of git revision REV")
    args = parser.parse_args(argv)
    checkouts = {"this checkout": REPO}
    with ExitStack() as stack:
        if args.compare is not None:
            checkouts[args.compare] = stack.enter_context(worktree(args.compare))
        counts = {
            (label, kind): per_call(root, kind, args.calls, args.warmup)
            for label, root in checkouts.items()
            for kind in KINDS
        }
    labels = list(checkouts)
    print(f"instructions per call, in-process ({args.calls} minus {args.warmup} calls of each kind)\n")
    print("| call | " + " | ".join(labels) + (" | now / before |" if len(labels) > 1 else " |"))
    print("|---|" + "---:|" * (len(labels) + (1 if len(labels) > 1 else 0)))
    for kind, what in KINDS.items():
        cells = [f"{counts[(label, kind)]:,.0f}" for label in labels]
        ratio = [f"{counts[(labels[0], kind)] / counts[(labels[1], kind)]:.3f}x"] if len(labels) > 1 else []
        print(f"| {what} | " + " | ".join([*cells, *ratio]) + " |")
    print()
    for label in labels:
        for rest, call in (("rest", "call"), ("ping", "ping_call")):
            added = counts[(label, call)] - counts[(label, rest)]
            print(f"{label}: the gateway adds {added:,.0f} instructions to the REST call ({KINDS[rest]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
