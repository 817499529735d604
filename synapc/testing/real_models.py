"""Every real model of the test set, ready to run: imported with the input shapes the tests
give it, with inputs (`load_real_model`), for benchmarks and tests that go over all of
them (`benchmarks/memory_plan.py`)."""

from __future__ import annotations

import numpy as np

import synapc
from synapc.model import Model
from synapc.testing.models import (
    ONNX_MODELS,
    ONNX_SIGNAL_MODELS,
    TFLITE_DYNAMIC_MODELS,
    TFLITE_MODELS,
    model_path,
)
from synapc.testing.signal_models import make_feeds

#: Every real model of the test set, by name.
REAL_MODELS: tuple[str, ...] = (
    *TFLITE_MODELS,
    *TFLITE_DYNAMIC_MODELS,
    *ONNX_MODELS,
    *ONNX_SIGNAL_MODELS,
)


def load_real_model(name: str, seed: int = 0) -> tuple[Model, list[np.ndarray]]:
    """Real model `name` imported with the input shapes the tests give it, and inputs
    for it in model order: the signal models' feeds (`signal_models.make_feeds`),
    uniform values in [0, 1) for the image models."""
    path = model_path(name)
    if name in TFLITE_DYNAMIC_MODELS:
        model = synapc.import_model(
            str(path), input_shapes=list(TFLITE_DYNAMIC_MODELS[name][2])
        )
    elif name in ONNX_MODELS:
        model = synapc.import_model(str(path), input_shapes=[ONNX_MODELS[name][2]])
    elif name in ONNX_SIGNAL_MODELS:
        specs = ONNX_SIGNAL_MODELS[name][2]
        model = synapc.import_model(
            str(path), input_shapes=[s for s, _, _ in specs.values()]
        )
        feeds = make_feeds(specs, seed)
        return model, [feeds[i.name] for i in model.inputs]
    else:
        model = synapc.import_model(str(path))
    rng = np.random.default_rng(seed)
    return model, [rng.uniform(0, 1, i.shape).astype(i.dtype) for i in model.inputs]
