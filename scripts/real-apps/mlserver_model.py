"""The model the MLServer trial serves (apps.py): doubles the numbers of its first input.

A module of its own because MLServer reloads the module of a model's implementation on every load.
"""

from __future__ import annotations

from mlserver import MLModel
from mlserver.types import InferenceRequest, InferenceResponse, ResponseOutput


class Doubler(MLModel):
    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        values = [2 * float(value) for value in payload.inputs[0].data.root]
        return InferenceResponse(
            model_name=self.name,
            outputs=[ResponseOutput(name="doubled", shape=[len(values)], datatype="FP64", data=values)],
        )
