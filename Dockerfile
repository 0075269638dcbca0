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
# The command is plain `serve`, so every variable given with `docker run -e` applies (no flag overrides one),
# and the health check (`mcp-gateway health`) reads the same MCP_GATEWAY_HOST and MCP_GATEWAY_PORT: set the
# address with variables, not with flags after the image name.
# Behind a reverse proxy or load balancer, name it in MCP_GATEWAY_TRUSTED_PROXIES (an address or network, e.g.
# -e MCP_GATEWAY_TRUSTED_PROXIES=172.17.0.1) so that its X-Forwarded-For gives the client's address; empty, as
# set here, forwarded headers are never believed (see docs/deployment.md).
#
# Reproducible: the base image is pinned to a Python patch release, and every dependency to the version in
# constraints.txt (regenerate with `.venv/bin/python scripts/lock`).

ARG PYTHON_VERSION=3.11.13

FROM python:${PYTHON_VERSION}-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CONSTRAINT=/src/constraints.txt
RUN python -m venv /opt/venv
WORKDIR /src
# Only what the package is built from (.dockerignore keeps the rest out of the context).
COPY pyproject.toml README.md constraints.txt ./
COPY catalog ./catalog
COPY gateway ./gateway
COPY sandbox ./sandbox
COPY oauth ./oauth
COPY demo ./demo
RUN /opt/venv/bin/pip install ".[demo]"

FROM python:${PYTHON_VERSION}-slim-bookworm
# A fixed numeric user, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
RUN groupadd --system --gid 10001 gateway \
    && useradd --system --uid 10001 --gid gateway --create-home --home-dir /home/gateway gateway
COPY --from=build /opt/venv /opt/venv
# The address served is the variables' (the CMD names none), so `-e MCP_GATEWAY_PORT=9000` moves it, health
# check included.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MCP_GATEWAY_HOST=0.0.0.0 \
    MCP_GATEWAY_PORT=8000 \
    MCP_GATEWAY_TRUSTED_PROXIES=
USER 10001:10001
# The working directory is the user's own: --app imports from it, the OAuth store is written under it.
WORKDIR /home/gateway
EXPOSE 8000
# GET / at the host and port `serve` reads from the same variables answers the server's name as JSON.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["mcp-gateway", "health"]
ENTRYPOINT ["mcp-gateway"]
CMD ["serve"]
