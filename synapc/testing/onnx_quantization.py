"""Int8 ONNX models for tests: a float model with a fixed input shape, quantized by
ONNX Runtime's own post-training quantizer (`quantize_static`), the baseline users
compare synapc against. Calibration and test inputs are image-like (smooth shading with
dark strokes), not white noise, so that calibrated ranges mean what they do in use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx


def image_like(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """A float32 NCHW batch in [-1, 1]: low-frequency shading plus dark bars, like a
    normalized photo of a document."""
    rng = np.random.default_rng(seed)
    n, c, h, w = shape
    y, x = np.meshgrid(np.linspace(0, 1, h), np.linspace(0, 1, w), indexing="ij")
    phase = rng.uniform(0, 2 * np.pi, (n, c, 1, 1))
    shading = 0.6 + 0.3 * np.sin(2 * np.pi * (x + y) * rng.uniform(0.5, 2) + phase)
    image = np.broadcast_to(shading, shape).copy()
    for _ in range(max(4, h * w // 256)):
        top, left = rng.integers(0, h), rng.integers(0, w)
        image[
            :, :, top : top + rng.integers(1, 4), left : left + rng.integers(2, w // 4)
        ] = rng.uniform(0.0, 0.2)
    noise = rng.normal(0, 0.02, shape)
    return (np.clip(image + noise, 0, 1) * 2 - 1).astype(np.float32)


def fixed_shape_model(source: Path, shape: tuple[int, ...], out: Path) -> Path:
    """`source` with its first input fixed to `shape` (`fixed_shapes_model`)."""
    first = onnx.load(str(source), load_external_data=False).graph.input[0].name
    return fixed_shapes_model(source, {first: shape}, out)


def fixed_shapes_model(
    source: Path, shapes: Mapping[str, Sequence[int]], out: Path
) -> Path:
    """`source` with the inputs named in `shapes` fixed to their shapes and ONNX
    Runtime's quantization pre-processing applied (constants become initializers,
    opset raised to 13 so that per-channel quantization is valid)."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model = onnx.load(str(source))
    for graph_input in model.graph.input:
        if graph_input.name in shapes:
            dims = graph_input.type.tensor_type.shape.dim
            for dim, size in zip(dims, shapes[graph_input.name], strict=True):
                dim.Clear()
                dim.dim_value = size
    if model.opset_import[0].version < 13:
        model = onnx.version_converter.convert_version(model, 13)
    raw = out.with_suffix(".raw.onnx")
    onnx.save(model, str(raw))
    quant_pre_process(str(raw), str(out), skip_symbolic_shape=True)
    raw.unlink()
    return out


class _Calibration:
    """`CalibrationDataReader` over a few image-like inputs."""

    def __init__(self, name: str, shape: tuple[int, ...], count: int):
        self._feeds: Iterator[dict[str, np.ndarray]] = iter(
            [{name: image_like(shape, seed)} for seed in range(count)]
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._feeds, None)


def quantize(
    float_model: Path, out: Path, fmt: str, per_channel: bool, calibration_count: int = 4
) -> Path:
    """`float_model` quantized by `quantize_static` to uint8 activations and int8
    weights, in `fmt` ("QDQ" or "QOperator"), per-channel or per-tensor."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    model = onnx.load(str(float_model), load_external_data=False)
    first = model.graph.input[0]
    shape = tuple(d.dim_value for d in first.type.tensor_type.shape.dim)
    quantize_static(
        str(float_model),
        str(out),
        _Calibration(first.name, shape, calibration_count),
        quant_format=getattr(QuantFormat, fmt),
        per_channel=per_channel,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    return out


def output_step(model_path: Path) -> float:
    """The quantization step of the model's first output: the scale of the
    DequantizeLinear that produces it (directly or through shape-only ops)."""
    model = onnx.load(str(model_path), load_external_data=False)
    inits = {i.name: i for i in model.graph.initializer}
    producers = {o: n for n in model.graph.node for o in n.output}
    node = producers[model.graph.output[0].name]
    while node.op_type != "DequantizeLinear":
        node = producers[node.input[0]]
    return float(onnx.numpy_helper.to_array(inits[node.input[1]]))
