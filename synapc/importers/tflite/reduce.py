"""Converters of TFLite reductions and arg-max / arg-min."""

from __future__ import annotations

import tflite

from synapc.dialects.synap import reduce
from synapc.importers.tflite.helpers import (
    emit,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts

_REDUCTIONS = {
    "MEAN": reduce.ReduceMeanOp,
    "SUM": reduce.ReduceSumOp,
    "REDUCE_MAX": reduce.ReduceMaxOp,
    "REDUCE_MIN": reduce.ReduceMinOp,
}


@converts(*_REDUCTIONS, inputs=(2, 2))
def _reduce(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.ReducerOptions)
    rank = len(imp.shape(op.inputs[0]))
    axes = sorted({op.axis(a, rank) for a in imp.const_ints(op, 1, "axes")})
    emit(
        imp,
        op,
        _REDUCTIONS[op.name],
        imp.value(op.inputs[0]),
        axes=axes,
        keep_dims=bool(o and o.KeepDims()),
    )


@converts("ARG_MAX", "ARG_MIN", inputs=(2, 2))
def _arg_reduce(imp: Importer, op: TfliteOp) -> None:
    axis = op.axis(imp.const_int(op, 1, "axis"), len(imp.shape(op.inputs[0])))
    op_class = reduce.ArgMaxOp if op.name == "ARG_MAX" else reduce.ArgMinOp
    emit(imp, op, op_class, imp.value(op.inputs[0]), axis=axis)
