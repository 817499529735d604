"""Converters of TFLite comparisons, boolean logic and SELECT_V2.

Comparisons of quantized tensors are refused: LiteRT compares them after rescaling both
sides to a common fixed-point scale, which the synap comparisons (exact stored integers,
or float32 real values) do not reproduce at ties. SELECT_V2 copies the chosen stored
values, so its quantized values must share the output's quantization.
"""

from __future__ import annotations

import numpy as np

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import logical
from synapc.importers.tflite.data_movement import require_same_quantization
from synapc.importers.tflite.helpers import emit
from synapc.importers.tflite.reader import Importer, TfliteOp, converts

_COMPARISONS = {
    "EQUAL": logical.EqualOp,
    "NOT_EQUAL": logical.EqualOp,
    "LESS": logical.LessOp,
    "LESS_EQUAL": logical.LessEqualOp,
    "GREATER": logical.GreaterOp,
    "GREATER_EQUAL": logical.GreaterEqualOp,
}


@converts(*_COMPARISONS, inputs=(2, 2))
def _comparison(imp: Importer, op: TfliteOp) -> None:
    """A comparison; NOT_EQUAL is EQUAL then LOGICAL_NOT."""
    for t in op.inputs:
        if isinstance(imp.element_type(t), UniformQuantizedType):
            raise op.fail(
                f"input {imp.label(t)} is quantized; quantized comparisons are not "
                "supported (LiteRT rescales both sides to a common fixed-point scale)"
            )
    if imp.numpy_dtype(op.outputs[0]) != np.bool_:
        raise op.fail(f"output {imp.label(op.outputs[0])} must be bool")
    op_class = _COMPARISONS[op.name]
    if op.name != "NOT_EQUAL":
        emit(imp, op, op_class)
        return
    equal = imp.emit(
        op_class.make(
            *(imp.value(t) for t in op.inputs),
            result_types=[imp.tensor_type(op.outputs[0])],
            **op.source,
        )
    )
    emit(imp, op, logical.LogicalNotOp, equal.results[0])


_LOGICAL = {
    "LOGICAL_AND": logical.LogicalAndOp,
    "LOGICAL_OR": logical.LogicalOrOp,
    "LOGICAL_NOT": logical.LogicalNotOp,
}


@converts("LOGICAL_AND", "LOGICAL_OR", inputs=(2, 2))
@converts("LOGICAL_NOT", inputs=(1, 1))
def _logical(imp: Importer, op: TfliteOp) -> None:
    for t in (*op.inputs, *op.outputs):
        if imp.numpy_dtype(t) != np.bool_:
            raise op.fail(f"{imp.label(t)} must be bool, got {imp.numpy_dtype(t)}")
    emit(imp, op, _LOGICAL[op.name])


@converts("SELECT_V2", inputs=(3, 3))
def _select(imp: Importer, op: TfliteOp) -> None:
    """``condition ? x : y`` with the three inputs broadcast against each other."""
    if imp.numpy_dtype(op.inputs[0]) != np.bool_:
        raise op.fail(f"condition {imp.label(op.inputs[0])} must be bool")
    require_same_quantization(imp, op, op.inputs[1:], op.outputs)
    emit(imp, op, logical.SelectOp)
