"""The suite ranks search lexically unless a test asks for semantic ranking outright (`Ranking(semantic=True)`):
whether the `semantic` extra is installed must not change what the other tests see, and its vectors are made in
the background, so a default ranking would change while a test runs."""

from __future__ import annotations

import os

os.environ["MCP_GATEWAY_SEMANTIC_SEARCH"] = "0"
