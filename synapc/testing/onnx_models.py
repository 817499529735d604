"""Real ONNX models through synapc against ONNX Runtime: the float models on one target,
and their int8 versions (made by ONNX Runtime's `quantize_static`) compared in units of
the output's quantization step. Shared by tests and `benchmarks/onnx_real_models.py`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import synapc
from synapc.testing.models import ONNX_MODELS, model_path
from synapc.testing.onnx_quantization import (
    fixed_shape_model,
    image_like,
    output_step,
    quantize,
)

#: Quantized variants: (ONNX format, per-channel weights).
VARIANTS = [("QDQ", False), ("QDQ", True), ("QOperator", False), ("QOperator", True)]


def onnxruntime_outputs(path: Path, x: np.ndarray) -> list[np.ndarray]:
    """ONNX Runtime's CPU outputs for the single input `x`."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})


def float_error(name: str, target: str = "GENERIC") -> float:
    """max |synapc - onnxruntime| / max(1, max |onnxruntime|) of model `name`."""
    shape = ONNX_MODELS[name][2]
    path = model_path(name)
    x = image_like(shape, 100)
    out = synapc.compile(synapc.import_model(path, input_shapes=[shape]), target).run([x])
    ref = onnxruntime_outputs(path, x)
    return max(
        float(np.abs(o - r).max() / max(1.0, float(np.abs(r).max())))
        for o, r in zip(out, ref, strict=True)
    )


@dataclass
class QuantizedResult:
    """How far synapc's output is from ONNX Runtime's on a quantized model, in steps."""

    step: float
    within_one_step: float  # fraction of output elements
    max_steps: float
    elements: int


def quantized_model(name: str, fmt: str, per_channel: bool, folder: Path) -> Path:
    """The int8 version of model `name` (cached in `folder`)."""
    out = folder / f"{name}_{fmt}_{'pc' if per_channel else 'pt'}.onnx"
    if out.is_file():
        return out
    fixed = folder / f"{name}.fixed.onnx"
    if not fixed.is_file():
        fixed_shape_model(model_path(name), ONNX_MODELS[name][2], fixed)
    return quantize(fixed, out, fmt, per_channel)


def quantized_result(path: Path, shape: tuple[int, ...], target: str) -> QuantizedResult:
    """Run quantized model `path` on synapc `target` and ONNX Runtime; compare."""
    x = image_like(shape, 100)
    out = synapc.compile(synapc.import_model(path), target).run([x])[0]
    ref = onnxruntime_outputs(path, x)[0]
    step = output_step(path)
    steps = np.abs(out.astype(np.float64) - ref) / step
    return QuantizedResult(
        step=step,
        within_one_step=float((steps <= 1 + 1e-3).mean()),
        max_steps=float(steps.max()),
        elements=int(steps.size),
    )
