"""Real ONNX models through synapc against ONNX Runtime: the float models on one target,
and their int8 versions (made by ONNX Runtime's `quantize_static`) compared in units of
the output's quantization step with references that are exact on every CPU
(`synapc.testing.onnx_reference`). Shared by tests and `benchmarks/onnx_real_models.py`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

import synapc
from synapc.testing.models import ONNX_MODELS, model_path
from synapc.testing.onnx_quantization import (
    fixed_shape_model,
    image_like,
    output_step,
    quantize,
)
from synapc.testing.onnx_reference import exact_outputs, float64_outputs

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


@dataclass(frozen=True)
class Distance:
    """How far one quantized output is from another, in units of its quantization step."""

    max_steps: float
    beyond_one_step: float  # fraction of the elements more than one step apart

    @staticmethod
    def between(a: np.ndarray, b: np.ndarray, step: float) -> Distance:
        """The distance between outputs `a` and `b` with quantization step `step`."""
        steps = np.abs(a.astype(np.float64) - b.astype(np.float64)) / step
        return Distance(float(steps.max()), float((steps > 1 + 1e-3).mean()))


@dataclass(frozen=True)
class QuantizedResult:
    """synapc's output on a quantized model against two exact references: the unfused
    graph in float32 (ONNX Runtime, optimizations off) and in float64 (onnx's reference
    evaluator). One-step rounding differences grow through a deep network, so the two
    references themselves disagree end to end; synapc is judged by its distance to the
    nearer reference against theirs to each other."""

    synapc: Distance  # to the nearer exact reference
    references: Distance  # between the two exact references
    elements: int

    @property
    def within_noise(self) -> bool:
        """synapc no further from the nearer reference than the references are from each
        other, and never worse than one step on 99.9% of the elements."""
        return self.synapc.max_steps <= max(
            1.0, self.references.max_steps
        ) and self.synapc.beyond_one_step <= max(0.001, self.references.beyond_one_step)


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
    """Run quantized model `path` on synapc `target` and on both exact references."""
    x = image_like(shape, 100)
    out = synapc.compile(synapc.import_model(path), target).run([x])[0]
    feeds = {onnx.load(str(path), load_external_data=False).graph.input[0].name: x}
    float32 = exact_outputs(path, feeds)[0]
    float64 = float64_outputs(path, feeds)[0]
    step = output_step(path)
    nearer = min(
        (Distance.between(out, ref, step) for ref in (float32, float64)),
        key=lambda d: (d.max_steps, d.beyond_one_step),
    )
    return QuantizedResult(
        synapc=nearer,
        references=Distance.between(float32, float64, step),
        elements=int(out.size),
    )
