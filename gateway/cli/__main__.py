"""`python -m gateway.cli`: the `mcp-gateway` command (Claude Desktop starts stdio servers this way)."""

from __future__ import annotations

import sys

from gateway.cli.commands import main

if __name__ == "__main__":
    sys.exit(main())
