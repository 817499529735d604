"""Converters of TFLite type conversions: CAST, QUANTIZE, DEQUANTIZE."""

from __future__ import annotations

import numpy as np

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import conversion
from synapc.importers.tflite.helpers import (
    emit,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts


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
