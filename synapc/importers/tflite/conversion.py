"""Converters of TFLite type conversions: CAST, QUANTIZE, DEQUANTIZE, and DENSIFY
(sparse constant weights made dense)."""

from __future__ import annotations

import numpy as np

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import conversion
from synapc.importers.tflite.helpers import (
    emit,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts
from synapc.importers.tflite.shape_rules import rule
from synapc.importers.tflite.sparsity import densify_tensor


@converts("CAST", "QUANTIZE", inputs=(1, 1))
def _cast_or_quantize(imp: Importer, op: TfliteOp) -> None:
    """Conversions fully described by the output tensor's type."""
    if op.name == "CAST" and any(
        isinstance(imp.element_type(t), UniformQuantizedType)
        for t in op.inputs + op.outputs
    ):
        raise op.fail(
            "CAST of a quantized tensor is not supported (LiteRT casts the stored "
            "integers and ignores the quantization; use QUANTIZE or DEQUANTIZE)"
        )
    op_class = conversion.CastOp if op.name == "CAST" else conversion.QuantizeOp
    emit(imp, op, op_class, imp.value(op.inputs[0]))


@converts("DEQUANTIZE", inputs=(1, 1))
def _dequantize(imp: Importer, op: TfliteOp) -> None:
    x = op.inputs[0]
    array = imp.constant_array(x)
    if array is not None and array.dtype == np.float16:
        # float16 weights (mediapipe style): fold into float32 weights once, at import.
        t = op.outputs[0]
        if imp.numpy_dtype(t) != np.float32 or imp.shape(t) != array.shape:
            raise op.fail(
                f"output {imp.label(t)} must be float32 of the input's shape "
                f"{list(array.shape)}, got {imp.numpy_dtype(t)} {list(imp.shape(t))}"
            )
        folded = imp.weights.constant(
            array.astype(np.float32), imp.tensor_name(t), imp.tensor_type(t)
        )
        imp.ops.append(folded)
        imp.values[t] = folded.results[0]
        return
    op_class = (
        conversion.DequantizeOp
        if isinstance(imp.element_type(x), UniformQuantizedType)
        else conversion.CastOp
    )  # float16 activations are a cast
    emit(imp, op, op_class, imp.value(x))


@converts("DENSIFY", inputs=(1, 1))
def _densify(imp: Importer, op: TfliteOp) -> None:
    """DENSIFY of sparse constant weights: densified at import (`sparsity`); the
    consumers see a dense constant."""
    x, y = op.inputs[0], op.outputs[0]
    tensor = imp.tensor(x)
    if tensor.sparsity is None:
        raise op.fail(f"input {imp.label(x)} has no sparsity table; DENSIFY takes one")
    if tensor.buffer == 0:
        raise op.fail(f"input {imp.label(x)} must be a constant (sparse weights)")
    if imp.tensor_type(y) != imp.tensor_type(x):
        raise op.fail(
            f"output {imp.label(y)} must have the input's type {imp.tensor_type(x)}, "
            f"got {imp.tensor_type(y)}"
        )
    imp.folded[y] = densify_tensor(imp, x)


@rule("DENSIFY")
def _densify_shape(imp: Importer, op: TfliteOp) -> list[tuple[int, ...]]:
    """DENSIFY's output has its (constant) input's dense shape."""
    return [imp.shape(op.inputs[0])]
