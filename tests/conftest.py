"""The suite ranks search lexically unless a test asks for semantic ranking outright (`Ranking(semantic=True)`):
whether the `semantic` extra is installed must not change what the other tests see, and its vectors are made in
the background, so a default ranking would change while a test runs. Here too: a private redis-server for the
session, for every store that can live in Redis (tokens, tasks, approval handles)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

os.environ["MCP_GATEWAY_SEMANTIC_SEARCH"] = "0"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A private redis-server on a free 127.0.0.1 port, without persistence, for the whole session."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is missing: run scripts/install-redis")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert process.stdout is not None
        # Wait for the server's own "Ready to accept connections" line rather than polling with sleeps.
        deadline = time.monotonic() + 10
        for line in process.stdout:
            if b"Ready to accept connections" in line or time.monotonic() > deadline:
                break
        ping = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, check=False, timeout=5)
        assert ping.stdout.strip() == b"PONG", f"redis-server did not start on port {port}"
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
