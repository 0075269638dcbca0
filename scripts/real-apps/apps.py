"""The real FastAPI applications the trial runs, each as a user would configure it on one machine, offline.

Each `AppSpec` says how to configure the app (environment, a data directory of its own), how to build it in
process, what `--app` reference a user would pass to `mcp-gateway`, how its API authenticates, and the
realistic tasks the trial asks of it: searches with the function expected in the top 5, reads, a write with
its read-back and delete, bad arguments. Each `Call` is made twice, through the gateway's `call_function` and
as the same REST request straight to the app, and the two answers are compared.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

from narrow import Narrow  # noqa: E402 - beside this module, on the trial's path

#: A closed port on loopback: any provider base URL points here, so nothing ever leaves the machine.
NOWHERE = "http://127.0.0.1:9"


@dataclass(frozen=True, kw_only=True)
class Call:
    """One function call through the gateway, and the same request made directly to the app."""

    label: str
    function: str
    args: Mapping[str, Any]
    method: str
    path: str
    json: Any = None
    params: Mapping[str, str] | None = None


@dataclass(frozen=True, kw_only=True)
class BadArgs:
    """A call with wrong arguments, and the words the argument error must contain."""

    label: str
    function: str
    args: Mapping[str, Any]
    expect: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class AppSpec:
    key: str
    title: str
    #: The app's top-level module: `run` without app names tries the apps whose module this virtualenv has.
    module: str
    #: The environment the app reads its configuration from, with its data under `data`.
    env: Callable[[Path], dict[str, str]]
    #: Builds the ASGI app in process, the way its own server entry point does (after `env` is applied).
    build: Callable[[], Any]
    #: What a user would pass to `mcp-gateway serve --app` first: the app's own object or factory.
    cli_ref: str
    #: A one-line module of ours (in this folder) that makes the app object, when `cli_ref` is refused.
    cli_fallback: str | None = None
    #: Headers the REST API authenticates with, and the bearer token an MCP client sends for them.
    rest_headers: Mapping[str, str] = field(default_factory=dict)
    bearer: str | None = None
    #: The app's "who am I" function, and what its answer must (identity) and must not (secrets) contain.
    whoami: str | None = None
    identity: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    searches: tuple[tuple[str, str], ...] = ()
    reads: tuple[Call, ...] = ()
    #: Create, read back, delete: made through REST first, then through the gateway with the same names.
    writes: tuple[Call, ...] = ()
    bad: tuple[BadArgs, ...] = ()
    #: POST operations that only read, and POST operations that delete: how the catalog should mark them.
    post_reads: tuple[str, ...] = ()
    post_deletes: tuple[str, ...] = ()
    #: What the operator tells the gateway about effects, after `catalog check` listed the candidates:
    #: Gateway keyword arguments (`read_only`, `destructive`), given to serve and stdio as --read-only etc.
    effects: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: How the caller policy trial narrows a caller (scripts/real-apps/narrow.py); None: not tried on this app.
    narrow: Narrow | None = None
    #: Where the gateway is mounted: /mcp as in the README, unless the app serves that path itself.
    mcp_path: str = "/mcp"
    #: A call the app itself fails on with an unhandled exception (REST: HTTP 500 from its error handler).
    failing: Call | None = None
    #: Extra checks that need an app of their own (e.g. with its auth switched on); run by the trial by name.
    extra: tuple[str, ...] = ()


# Prefect: the orchestration server on SQLite, as `prefect server start` builds it.


def _prefect_env(data: Path) -> dict[str, str]:
    return {
        "PREFECT_HOME": str(data),
        "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{data}/prefect.db",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
    }


def _prefect_build() -> Any:
    from prefect.server.api.server import create_app

    return create_app(final=True)


PREFECT_AUTH = "admin:trial-pass"
PREFECT_BASIC = base64.b64encode(PREFECT_AUTH.encode()).decode()

_NO_BLOCK_TYPE = {
    "name": "trial-block",
    "data": {},
    "block_schema_id": "00000000-0000-4000-8000-000000000001",
    "block_type_id": "00000000-0000-4000-8000-000000000002",
}

PREFECT = AppSpec(
    key="prefect",
    module="prefect",
    title="Prefect server (orchestration, SQLite)",
    narrow=Narrow(
        hide=("variables.*", "block_documents.*"),
        hidden="variables.read_variables",
        visible="root.health_check",
        scopes={"read": ("flows.read_*", "flow_runs.read_*", "root.*"), "admin": ("*",)},
        granted=("read",),
    ),
    env=_prefect_env,
    build=_prefect_build,
    cli_ref="prefect.server.api.server:create_app",
    cli_fallback="prefect_asgi:app",
    searches=(
        ("create a flow run", "flow_runs.create_flow_run"),
        ("list deployments", "deployments.read_deployments"),
        ("read the logs of a flow run", "logs.read_logs"),
        ("set a concurrency limit", "concurrency_limits_v2.create_concurrency_limit_v2"),
        ("cancel a flow run", "flow_runs.set_flow_run_state"),
        ("create a work pool", "work_pools.create_work_pool"),
        ("list flows", "flows.read_flows"),
        ("create a variable", "variables.create_variable"),
        ("count flow runs", "flow_runs.count_flow_runs"),
        ("pause a deployment schedule", "deployments.pause_deployment"),
    ),
    reads=(
        Call(label="health", function="root.health_check", args={}, method="GET", path="/api/health"),
        Call(
            label="list flows (POST filter)",
            function="flows.read_flows",
            args={},
            method="POST",
            path="/api/flows/filter",
            json={},
        ),
        Call(
            label="count flow runs (POST count)",
            function="flow_runs.count_flow_runs",
            args={},
            method="POST",
            path="/api/flow_runs/count",
            json={},
        ),
    ),
    writes=(
        Call(
            label="create a work pool",
            function="work_pools.create_work_pool",
            args={"name": "trial-pool", "type": "process"},
            method="POST",
            path="/api/work_pools/",
            json={"name": "trial-pool", "type": "process"},
        ),
        Call(
            label="read it back",
            function="work_pools.read_work_pool",
            args={"name": "trial-pool"},
            method="GET",
            path="/api/work_pools/trial-pool",
        ),
        Call(
            label="delete it",
            function="work_pools.delete_work_pool",
            args={"name": "trial-pool"},
            method="DELETE",
            path="/api/work_pools/trial-pool",
        ),
    ),
    bad=(
        BadArgs(
            label="missing required",
            function="variables.create_variable",
            args={"value": "x"},
            expect=("missing required argument", "name"),
        ),
        BadArgs(label="wrong type", function="flows.read_flows", args={"limit": "ten"}, expect=("limit", "integer")),
        BadArgs(
            label="unknown argument",
            function="variables.read_variable_by_name",
            args={"name": "x", "nmae": "y"},
            expect=("unknown argument", "nmae"),
        ),
    ),
    post_reads=("flows.read_flows", "flow_runs.count_flow_runs", "deployments.read_deployments"),
    # As an operator would write them from `catalog check`'s list of POST functions that read like reads.
    effects={
        "read_only": ("*.read_*", "*.count_*", "*.paginate_*", "*.filter_*", "*.validate_*"),
        "destructive": ("*.bulk_delete_*",),
    },
    post_deletes=(),
    failing=Call(
        label="a block document for a block type that does not exist (the app raises)",
        function="block_documents.create_block_document",
        args=_NO_BLOCK_TYPE,
        method="POST",
        path="/api/block_documents/",
        json=_NO_BLOCK_TYPE,
    ),
    extra=("prefect_api_at_root", "prefect_basic_auth"),
)


# LiteLLM proxy: an OpenAI-compatible LLM gateway; a mock model, a master key, no database (it needs Postgres).


def _litellm_env(data: Path) -> dict[str, str]:
    config = data / "litellm.yaml"
    data.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "model_list:\n"
        "  - model_name: fake-gpt\n"
        "    litellm_params:\n"
        "      model: openai/fake-gpt\n"
        "      api_key: sk-fake\n"
        f"      api_base: {NOWHERE}/v1\n"
        "      mock_response: Hello from the mock model\n"
        "general_settings:\n"
        "  master_key: sk-master-trial\n"
        "litellm_settings:\n"
        "  telemetry: false\n"
    )
    return {
        "CONFIG_FILE_PATH": str(config),
        "LITELLM_MASTER_KEY": "sk-master-trial",
        "LITELLM_TELEMETRY": "False",
        "LITELLM_LOG": "ERROR",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "sk-fake",
        "OPENAI_BASE_URL": f"{NOWHERE}/v1",
        "OPENAI_API_BASE": f"{NOWHERE}/v1",
    }


def _litellm_build() -> Any:
    from litellm.proxy.proxy_server import app

    return app


_CHAT = {"model": "fake-gpt", "messages": [{"role": "user", "content": "Say hello"}]}

LITELLM = AppSpec(
    key="litellm",
    module="litellm",
    title="LiteLLM proxy (LLM gateway, mock model, no DB)",
    narrow=Narrow(
        hide=("team_management.*", "scim.*", "budget_spend_tracking.*"),
        hidden="team_management.block_team",
        visible="health.readiness",
        scopes={"models": ("model_management.model_list", "health.*"), "admin": ("*",)},
        granted=("models",),
    ),
    env=_litellm_env,
    build=_litellm_build,
    cli_ref="litellm.proxy.proxy_server:app",
    rest_headers={"authorization": "Bearer sk-master-trial"},
    bearer="sk-master-trial",
    searches=(
        ("add a new model", "model_management.add_new_model"),
        ("generate an api key", "key_management.generate_key_fn"),
        ("list models", "model_management.model_list"),
        ("chat completion", "chat_completions.chat_completion"),
        ("count tokens in a prompt", "llm_utils.token_counter"),
        ("list batches", "batch.list_batches"),
        ("create an embedding", "embeddings.embeddings"),
        ("delete a virtual key", "key_management.delete_key_fn"),
        ("create a team", "team_management.new_team"),
        ("show spend logs", "budget_spend_tracking.view_spend_logs"),
    ),
    reads=(
        Call(label="list models", function="model_management.model_list", args={}, method="GET", path="/models"),
        Call(
            label="count tokens (POST read)",
            function="llm_utils.token_counter",
            args={"model": "fake-gpt", "messages": _CHAT["messages"]},
            method="POST",
            path="/utils/token_counter",
            json={"model": "fake-gpt", "messages": _CHAT["messages"]},
        ),
        Call(label="readiness", function="health.readiness", args={}, method="GET", path="/health/readiness"),
    ),
    writes=(
        Call(
            label="chat completion (mock model)",
            function="chat_completions.chat_completion",
            args=_CHAT,
            method="POST",
            path="/chat/completions",
            json=_CHAT,
        ),
        Call(
            label="add a model (no DB: the API's 500)",
            function="model_management.add_new_model",
            args={"model_name": "trial-model", "litellm_params": {"model": "openai/x"}, "model_info": {"id": "m1"}},
            method="POST",
            path="/model/new",
            json={"model_name": "trial-model", "litellm_params": {"model": "openai/x"}, "model_info": {"id": "m1"}},
        ),
        Call(
            label="delete a key (no DB: the API's 500)",
            function="key_management.delete_key_fn",
            args={"keys": ["sk-trial"]},
            method="POST",
            path="/key/delete",
            json={"keys": ["sk-trial"]},
        ),
    ),
    bad=(
        BadArgs(
            label="missing required",
            function="llm_utils.token_counter",
            args={"prompt": "hi"},
            expect=("missing required argument", "model"),
        ),
        BadArgs(label="wrong type", function="llm_utils.token_counter", args={"model": 42}, expect=("model", "string")),
        BadArgs(
            label="unknown argument",
            function="model_management.model_list",
            args={"tem_id": "x"},
            expect=("unknown argument", "tem_id"),
        ),
    ),
    post_reads=("llm_utils.token_counter",),
    effects={
        "read_only": (
            "*.token_counter",
            "*.count_tokens",
            "*.estimate_*",
            "*.calculate_*",
            "*.check_*",
            "*.validate_*",
            "*.preview_*",
            "search.*",
            "rag.query*",
            "*.vector_store_search*",
        ),
        "destructive": ("*.delete_*", "*_delete"),
    },
    # LiteLLM serves /mcp itself (its MCP gateway), so the gateway goes where the refusal suggests.
    mcp_path="/gateway/mcp",
    post_deletes=("key_management.delete_key_fn", "model_management.delete_model"),
    extra=("litellm_admission_limit",),
)


# dstack server: development environments and GPU fleets; SQLite, an admin token, no background processing.


def _dstack_env(data: Path) -> dict[str, str]:
    return {
        "DSTACK_SERVER_DIR": str(data),
        "DSTACK_SERVER_ADMIN_TOKEN": "dstack-admin-trial-token",
        "DSTACK_DO_NOT_UPDATE_DEFAULT_PROJECT": "1",
        "DSTACK_SERVER_BACKGROUND_PROCESSING_DISABLED": "1",
        "DSTACK_SERVER_LOG_LEVEL": "ERROR",
        "DSTACK_SERVER_URL": "http://127.0.0.1:3000",
    }


def _dstack_build() -> Any:
    from dstack._internal.server.main import app

    return app


DSTACK = AppSpec(
    key="dstack",
    module="dstack",
    title="dstack server (dev environments, SQLite)",
    narrow=Narrow(
        hide=("secrets.*", "users.*_user", "backends.*"),
        hidden="secrets.get_secret",
        visible="projects.list_projects",
        scopes={
            "read": ("projects.list_*", "projects.get_*", "runs.list_*", "server.*", "users.get_my_user"),
            "admin": ("*",),
        },
        granted=("read",),
    ),
    env=_dstack_env,
    build=_dstack_build,
    cli_ref="dstack._internal.server.main:app",
    rest_headers={"authorization": "Bearer dstack-admin-trial-token"},
    bearer="dstack-admin-trial-token",
    whoami="users.get_my_user",
    identity=("admin",),
    secrets=("dstack-admin-trial-token", "PRIVATE KEY"),
    searches=(
        ("create a project", "projects.create_project"),
        ("list projects", "projects.list_projects"),
        ("add a secret to a project", "secrets.create_or_update_secret"),
        ("delete secrets", "secrets.delete_secrets"),
        ("list users", "users.list_users"),
        ("create a user", "users.create_user"),
        ("who am i", "users.get_my_user"),
        ("list fleets", "fleets.list_fleets"),
        ("stop a run", "runs.stop_runs"),
        ("rotate my api token", "users.refresh_token"),
    ),
    reads=(
        Call(
            label="list projects (POST)",
            function="projects.list_projects",
            args={},
            method="POST",
            path="/api/projects/list",
            json={},
        ),
        Call(
            label="server info (POST)",
            function="server.get_server_info",
            args={},
            method="POST",
            path="/api/server/get_info",
            json={},
        ),
        Call(
            label="list runs (POST)", function="runs.list_runs", args={}, method="POST", path="/api/runs/list", json={}
        ),
    ),
    writes=(
        Call(
            label="create a secret",
            function="secrets.create_or_update_secret",
            args={"project_name": "main", "name": "trial_secret", "value": "v1"},
            method="POST",
            path="/api/project/main/secrets/create_or_update",
            json={"name": "trial_secret", "value": "v1"},
        ),
        Call(
            label="read it back",
            function="secrets.get_secret",
            args={"project_name": "main", "name": "trial_secret"},
            method="POST",
            path="/api/project/main/secrets/get",
            json={"name": "trial_secret"},
        ),
        Call(
            label="delete it",
            function="secrets.delete_secrets",
            args={"project_name": "main", "secrets_names": ["trial_secret"]},
            method="POST",
            path="/api/project/main/secrets/delete",
            json={"secrets_names": ["trial_secret"]},
        ),
    ),
    bad=(
        BadArgs(
            label="missing required",
            function="users.create_user",
            args={"username": "bob"},
            expect=("missing required argument", "global_role"),
        ),
        BadArgs(
            label="wrong type",
            function="secrets.delete_secrets",
            args={"project_name": "main", "secrets_names": "trial_secret"},
            expect=("secrets_names", "array"),
        ),
        BadArgs(
            label="unknown argument",
            function="projects.get_project",
            args={"project_name": "main", "projct": "x"},
            expect=("unknown argument", "projct"),
        ),
    ),
    post_reads=("projects.list_projects", "users.get_my_user", "secrets.list_secrets"),
    effects={"read_only": ("*.list_*", "*.get_*"), "destructive": ("*.delete_*", "*.remove_*")},
    post_deletes=("secrets.delete_secrets", "projects.delete_projects", "users.delete_users"),
)

# MLServer: Seldon's inference server (the Open Inference Protocol), which pins FastAPI below 0.116, so it has a
# virtualenv of its own (`install old-fastapi`). One model of ours (mlserver_model.Doubler) in its repository.


def _mlserver_env(data: Path) -> dict[str, str]:
    return {"MLSERVER_MODEL_REPOSITORY_ROOT": str(data / "models"), "MLSERVER_LOGGING_LEVEL": "WARNING"}


def _mlserver_build() -> Any:
    from mlserver_asgi import app

    return app


_DOUBLE = {"inputs": [{"name": "x", "shape": [3], "datatype": "FP64", "data": [1, 2, 3.5]}]}

MLSERVER = AppSpec(
    key="mlserver",
    module="mlserver",
    title="MLServer 1.7.1 (inference server, FastAPI 0.115, Starlette 0.46)",
    env=_mlserver_env,
    build=_mlserver_build,
    cli_ref="mlserver_asgi:app",
    searches=(
        ("run inference on a model", "models.infer"),
        ("load a model", "repository.load"),
        ("unload a model", "repository.unload"),
        ("is the server live", "health.live"),
        ("is the server ready", "health.ready"),
        ("list the models in the repository", "repository.index"),
        ("metadata of a model", "models.model_metadata"),
        ("server metadata", "root.metadata"),
        ("is a model ready", "models.model_ready"),
        ("stream inference results", "models.infer_stream"),
    ),
    reads=(
        Call(label="live", function="health.live", args={}, method="GET", path="/v2/health/live"),
        Call(
            label="repository index (POST read)",
            function="repository.index",
            args={},
            method="POST",
            path="/v2/repository/index",
            json={},
        ),
        Call(label="server metadata", function="root.metadata", args={}, method="GET", path="/v2"),
    ),
    writes=(
        Call(
            label="load the model",
            function="repository.load",
            args={"model_name": "doubler"},
            method="POST",
            path="/v2/repository/models/doubler/load",
        ),
        Call(
            label="infer with it",
            function="models.infer",
            args={"model_name": "doubler", **_DOUBLE},
            method="POST",
            path="/v2/models/doubler/infer",
            json=_DOUBLE,
        ),
        Call(
            label="unload it",
            function="repository.unload",
            args={"model_name": "doubler"},
            method="POST",
            path="/v2/repository/models/doubler/unload",
        ),
    ),
    bad=(
        BadArgs(
            label="missing required",
            function="models.infer",
            args={"model_name": "doubler"},
            expect=("missing required argument", "inputs"),
        ),
        BadArgs(label="wrong type", function="repository.index", args={"ready": "yes"}, expect=("ready", "boolean")),
        BadArgs(
            label="unknown argument",
            function="models.model_ready",
            args={"model_name": "doubler", "modle": "x"},
            expect=("unknown argument", "modle"),
        ),
    ),
    post_reads=("repository.index",),
    # From `catalog check`: the index is a POST that reads; unloading is not said in the document to destroy.
    effects={"read_only": ("repository.index",)},
)

APPS: dict[str, AppSpec] = {spec.key: spec for spec in (PREFECT, LITELLM, DSTACK, MLSERVER)}


def child_env(spec: AppSpec, data: Path) -> dict[str, str]:
    """The environment for a process that builds `spec`'s app with its data under `data`."""
    data.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(spec.env(data))
    env["HOME"] = str(data / "home")  # apps that write to ~ (dstack's config, caches) write there
    (data / "home").mkdir(exist_ok=True)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH", "")]))
    return env
