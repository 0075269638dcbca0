# The README's quick start and .ci/run call these targets, so a newcomer and CI run the same thing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

TOOLS_STAMP := .tools/.installed

.PHONY: serve test test-oldest lint typecheck unit docs docs-serve docs-reference mutation clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# quickjs 1.x ships the same `_quickjs` module as quickjs-ng and would shadow it in an older venv.
	$(BIN)/python -m pip uninstall --quiet --yes quickjs
	# The dev tools and every extra (`all`: OAuth, Redis, run_script, strict checks, speed-ups, metrics, semantic
	# search, ...), which the suite tests, at the versions scripts/lock wrote to constraints.txt, and the `docs`
	# extra, which builds the documentation site (make docs).
	$(BIN)/python -m pip install --quiet -e '.[dev,all,docs]' -c constraints.txt
	touch $(STAMP)

# Node 22, MCP's conformance suite and Inspector, and oidc-provider, for the protocol and identity-provider tests
# (scripts/install-node-tools).
$(TOOLS_STAMP): scripts/install-node-tools
	scripts/install-node-tools

# Debian's Chromium and playwright-core, for the page tests (scripts/install-browser).
BROWSER_STAMP := .tools/browser/.installed
$(BROWSER_STAMP): scripts/install-browser
	scripts/install-browser

# The MCP Apps test host's npm packages (the official AppBridge and TypeScript client, esbuild), for the views'
# browser tests (scripts/install-apps-host).
APPS_HOST_STAMP := .tools/apps-host/.installed
$(APPS_HOST_STAMP): scripts/install-apps-host
	scripts/install-apps-host

# redis-server for the OAuth token-store tests (they start their own on a free port; no service runs).
REDIS_STAMP := .tools/.redis-installed
$(REDIS_STAMP): scripts/install-redis
	scripts/install-redis
	mkdir -p .tools && touch $(REDIS_STAMP)

# Debian's HAProxy for the load-balanced deployment test (scripts/install-haproxy; tests/deploy start their own).
HAPROXY_STAMP := .tools/.haproxy-installed
$(HAPROXY_STAMP): scripts/install-haproxy
	scripts/install-haproxy
	mkdir -p .tools && touch $(HAPROXY_STAMP)

serve: $(STAMP)
	$(BIN)/mcp-gateway serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Two workers (pytest-xdist): the suite takes about 60% of the time it takes in one process, on two cores as on
# more. Every test starts its own servers on free ports, so none depends on another's order or process.
unit: $(STAMP) $(TOOLS_STAMP) $(REDIS_STAMP) $(HAPROXY_STAMP) $(BROWSER_STAMP) $(APPS_HOST_STAMP)
	$(BIN)/pytest -n 2 --cov --cov-report=term:skip-covered

# The documentation site (properdocs.yml), built in strict mode: a broken link, anchor or navigation entry fails,
# as does a generated reference page that no longer matches the code (make docs-reference rewrites them).
docs: $(STAMP)
	$(BIN)/python -m tests.docs.reference_pages --check
	$(BIN)/properdocs build --strict

docs-serve: $(STAMP)
	$(BIN)/properdocs serve

docs-reference: $(STAMP)
	$(BIN)/python -m tests.docs.reference_pages

test: lint typecheck docs unit

# The oldest FastAPI, Starlette, pydantic, anyio and uvicorn the gateway supports (constraints-oldest.txt,
# docs/versions.md), in a virtualenv of their own: the tests of mounting into FastAPI and Starlette apps, calls
# made in-process, the MCP HTTP endpoint and the real-app shapes (about a minute). `test` runs the newest.
OLDEST_VENV ?= .venv-oldest
OLDEST_STAMP := $(OLDEST_VENV)/.installed
OLDEST_TESTS := tests/gateway/test_gateway.py tests/gateway/test_demo_app.py tests/gateway/test_real_shapes.py \
	tests/gateway/test_transport.py tests/gateway/test_streamable_http.py tests/gateway/test_serving.py \
	tests/gateway/test_stdio.py tests/gateway/test_dispatch.py tests/gateway/test_dispatcher.py \
	tests/gateway/test_rest_transports.py tests/gateway/test_request_bodies.py tests/gateway/test_uploads.py \
	tests/gateway/test_readiness.py tests/gateway/test_admission.py tests/gateway/test_identity.py \
	tests/oauth/test_flow.py

$(OLDEST_STAMP): pyproject.toml constraints-oldest.txt
	test -x $(OLDEST_VENV)/bin/python || $(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	# httpx: the old Starlette's TestClient is built on it (today's on httpx2).
	$(OLDEST_VENV)/bin/python -m pip install --quiet -e '.[dev,demo,oauth,redis,scripts,strict,speed,metrics]' httpx \
		-c constraints-oldest.txt
	touch $(OLDEST_STAMP)

# The old Starlette imports python-multipart as `multipart`, names anyio.abc.BlockingPortal and leaves the
# TestClient's lifespan streams open, which today's releases of those warn about: not failures of ours.
test-oldest: $(OLDEST_STAMP)
	$(OLDEST_VENV)/bin/pytest -p no:cacheprovider -p no:unraisableexception \
		-W "ignore:Please use \`import python_multipart\` instead.:PendingDeprecationWarning" \
		-W "ignore:The anyio.abc.BlockingPortal alias is deprecated:DeprecationWarning" \
		$(OLDEST_TESTS)

# Mutation testing (mutmut, [tool.mutmut] in pyproject.toml), one module at a time; a score per module. Not part
# of `test`: it takes tens of minutes. MODULES=gateway.rest picks some; JOBS=2 tests two mutants at once.
mutation: $(STAMP) $(REDIS_STAMP)
	scripts/mutation/run --jobs $(or $(JOBS),1) $(MODULES)

clean:
	rm -rf $(VENV) $(OLDEST_VENV) .site .tools .pytest_cache .mypy_cache .ruff_cache .coverage mutants
