"""MLServer's REST app as `mlserver start` builds it, for `--app mlserver_asgi:app` (its factory takes arguments).

The model repository is MLSERVER_MODEL_REPOSITORY_ROOT; `doubler` (mlserver_model.Doubler) is in it, unloaded
until `POST /v2/repository/models/doubler/load`. No gRPC, Kafka or metrics server: only the REST app.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlserver.handlers import DataPlane, ModelRepositoryHandlers
from mlserver.registry import MultiModelRegistry
from mlserver.repository.factory import ModelRepositoryFactory
from mlserver.rest.app import create_app
from mlserver.settings import Settings

settings = Settings(load_models_at_startup=False, metrics_endpoint=None)
model = Path(settings.model_repository_root) / "doubler"
model.mkdir(parents=True, exist_ok=True)
(model / "model-settings.json").write_text(json.dumps({"name": "doubler", "implementation": "mlserver_model.Doubler"}))
registry = MultiModelRegistry()
app = create_app(
    settings,
    DataPlane(settings=settings, model_registry=registry),
    ModelRepositoryHandlers(
        repository=ModelRepositoryFactory.resolve_model_repository(settings), model_registry=registry
    ),
)
