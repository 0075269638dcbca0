# syntax=docker/dockerfile:1
# The gateway as a container: serves the bundled demo API by default.
#
#   docker build -t mcp-gateway .
#   docker run --rm -p 8000:8000 mcp-gateway                       # demo: http://localhost:8000/mcp
#   docker run --rm -p 8000:8000 -e MCP_GATEWAY_SPEC=https://api.example.com/openapi.json \
#       -e MCP_GATEWAY_UPSTREAM=https://api.example.com -e MCP_GATEWAY_ALLOWED_HOSTS=mcp.example.com mcp-gateway
#   docker run --rm -i -e MCP_GATEWAY_TOKEN=demo-key-alice mcp-gateway stdio   # stdio, for a local client
#
# Every `mcp-gateway serve` option reads an MCP_GATEWAY_* variable (see `mcp-gateway serve --help`):
# MCP_GATEWAY_SPEC, MCP_GATEWAY_APP (module:attr, importable from /home/gateway or site-packages),
# MCP_GATEWAY_UPSTREAM, MCP_GATEWAY_PORT, MCP_GATEWAY_ALLOWED_HOSTS, MCP_GATEWAY_WHOAMI, MCP_GATEWAY_TOOLS, ...
# The MCP endpoint checks the Host header: add the public host name to MCP_GATEWAY_ALLOWED_HOSTS.

ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
WORKDIR /src
# Only what the package is built from (.dockerignore keeps the rest out of the context).
COPY pyproject.toml README.md ./
COPY catalog ./catalog
COPY gateway ./gateway
COPY sandbox ./sandbox
COPY oauth ./oauth
RUN /opt/venv/bin/pip install ".[demo]"

FROM python:${PYTHON_VERSION}-slim
# A fixed numeric user, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
RUN groupadd --system --gid 10001 gateway \
    && useradd --system --uid 10001 --gid gateway --create-home --home-dir /home/gateway gateway
COPY --from=build /opt/venv /opt/venv
# MCP_GATEWAY_HOST too, so `docker run IMAGE serve --port 9000` (a CMD without --host) still listens outside.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MCP_GATEWAY_HOST=0.0.0.0 \
    MCP_GATEWAY_PORT=8000
USER 10001:10001
# The working directory is the user's own: --app imports from it, the OAuth store is written under it.
WORKDIR /home/gateway
EXPOSE 8000
# GET / answers the server's name as JSON; no curl in a slim image, so Python asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('MCP_GATEWAY_PORT', '8000') + '/', timeout=4)"]
ENTRYPOINT ["mcp-gateway"]
CMD ["serve", "--host", "0.0.0.0"]
