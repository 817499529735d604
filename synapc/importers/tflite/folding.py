"""Integer shape arithmetic computed at import.

Models converted with unknown (-1) dimensions compute the sizes they need at run time:
SHAPE of a tensor, STRIDED_SLICE of that, PACK with constants, then RESHAPE or
TRANSPOSE_CONV take the result. Once every shape is static these are constants, and
synapc computes them here with numpy, as LiteRT's kernels would on int32 / int64
tensors, so that the operators reading them get constant sizes and the arithmetic
leaves no op in the IR.

An operator is folded when it is listed in `FOLDERS`, its outputs are integer or
boolean tensors without quantization, every input it reads is a constant (SHAPE reads
only its input's shape) of at most `MOST_ELEMENTS` elements, and either the model has
unknown dimensions (`Importer.resolving`) or an input is itself folded (SHAPE in a static
model, a loop counter of WHILE, see `control_flow`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import tflite

from synapc.dialects.quant import UniformQuantizedType
from synapc.importers.tflite.shape_rules import RULES, record_shape
from synapc.importers.tflite.slicing import strided_slice_bounds

if TYPE_CHECKING:
    from synapc.importers.tflite.reader import Importer, TfliteOp

#: Largest input folded, in elements (shape arithmetic works on a few values).
MOST_ELEMENTS = 4096

#: computes an operator's outputs from its input arrays (None: leave it to its converter)
Folder = Callable[["Importer", "TfliteOp", list[np.ndarray]], list[np.ndarray] | None]
#: operator name -> (number of inputs, its numpy evaluation)
FOLDERS: dict[str, tuple[int, Folder]] = {}


def folds(*names: str, inputs: int) -> Callable[[Folder], Folder]:
    """Register the numpy evaluation of the TFLite operators `names`, which read
    `inputs` input tensors (0: any number)."""

    def register(function: Folder) -> Folder:
        for name in names:
            FOLDERS[name] = (inputs, function)
        return function

    return register


def fold(imp: Importer, op: TfliteOp) -> bool:
    """Compute `op` at import if it is integer shape arithmetic on constants (see the
    module docstring); its outputs then become constants. Returns whether it did."""
    entry = FOLDERS.get(op.name)
    if entry is None or not op.outputs:
        return False
    count, folder = entry
    if (count and len(op.inputs) != count) or not op.inputs or min(op.inputs) < 0:
        return False
    for t in op.outputs:
        kind = imp.numpy_dtype(t).kind
        if kind not in "iub" or isinstance(imp.element_type(t), UniformQuantizedType):
            return False
    if op.name == "SHAPE":
        arrays = [np.zeros(0)]
    else:
        found = [imp.constant_array(t) for t in op.inputs]
        if any(a is None or a.size > MOST_ELEMENTS for a in found):
            return False
        if any(isinstance(imp.element_type(t), UniformQuantizedType) for t in op.inputs):
            return False
        if not imp.resolving and not any(t in imp.folded for t in op.inputs):
            return False
        arrays = [a for a in found if a is not None]
    results = folder(imp, op, arrays)
    if results is None:
        return False
    for t, result in zip(op.outputs, results, strict=True):
        value = np.array(result, dtype=imp.numpy_dtype(t))  # 0-d stays 0-d
        record_shape(imp, op, t, value.shape)
        imp.folded[t] = value
    return True


def _activated(op: TfliteOp, options_class: type) -> bool:
    """Whether `op` has a fused activation (left to its converter, not folded)."""
    o = op.options(options_class)
    return o is not None and bool(o.FusedActivationFunction())


@folds("SHAPE", inputs=1)
def _shape(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    return [np.array(imp.shape(op.inputs[0]), np.int64)]


@folds("CAST", inputs=1)
def _cast(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray] | None:
    (x,) = arrays
    if x.dtype.kind not in "iub":
        return None  # float to integer: the converter's cast says how it rounds
    return [x.astype(imp.numpy_dtype(op.outputs[0]))]


_ARITHMETIC = {
    "ADD": (np.add, tflite.AddOptions),
    "SUB": (np.subtract, tflite.SubOptions),
    "MUL": (np.multiply, tflite.MulOptions),
}


@folds(*_ARITHMETIC, inputs=2)
def _arithmetic(
    imp: Importer, op: TfliteOp, arrays: list[np.ndarray]
) -> list[np.ndarray] | None:
    function, options_class = _ARITHMETIC[op.name]
    if _activated(op, options_class):
        return None
    a, b = arrays
    return [function(a, b)]


@folds("DIV", "FLOOR_DIV", "FLOOR_MOD", inputs=2)
def _division(
    imp: Importer, op: TfliteOp, arrays: list[np.ndarray]
) -> list[np.ndarray] | None:
    """DIV truncates toward zero (C++ integer division); FLOOR_DIV and FLOOR_MOD round
    toward minus infinity, the remainder taking the divisor's sign (numpy's)."""
    if op.name == "DIV" and _activated(op, tflite.DivOptions):
        return None
    a, b = arrays
    if not b.all():
        raise op.fail("integer division by zero")
    if op.name == "FLOOR_MOD":
        return [np.mod(a, b)]
    quotient = np.floor_divide(a, b)
    if op.name == "DIV":  # toward zero: one more where the signs differ and b ∤ a
        quotient = quotient + ((np.mod(a, b) != 0) & ((a < 0) != (b < 0)))
    return [quotient]


@folds("MAXIMUM", "MINIMUM", inputs=2)
def _extremum(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    a, b = arrays
    return [np.maximum(a, b) if op.name == "MAXIMUM" else np.minimum(a, b)]


_COMPARISONS = {
    "LESS": np.less,
    "LESS_EQUAL": np.less_equal,
    "GREATER": np.greater,
    "GREATER_EQUAL": np.greater_equal,
    "EQUAL": np.equal,
    "NOT_EQUAL": np.not_equal,
    "LOGICAL_AND": np.logical_and,
    "LOGICAL_OR": np.logical_or,
}


@folds(*_COMPARISONS, inputs=2)
def _compare(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Comparisons and boolean logic (a WHILE condition on a loop counter)."""
    a, b = arrays
    return [_COMPARISONS[op.name](a, b)]


@folds("LOGICAL_NOT", inputs=1)
def _logical_not(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    return [np.logical_not(arrays[0])]


@folds("NEG", inputs=1)
def _neg(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    return [np.negative(arrays[0])]


@folds("PACK", inputs=0)
def _pack(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    RULES["PACK"](imp, op)  # checks the shapes
    o = op.options(tflite.PackOptions, required=True)
    return [np.stack(arrays, axis=op.axis(o.Axis(), arrays[0].ndim + 1))]


@folds("UNPACK", inputs=1)
def _unpack(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    RULES["UNPACK"](imp, op)  # checks the axis and the number of outputs
    o = op.options(tflite.UnpackOptions, required=True)
    axis = op.axis(o.Axis(), arrays[0].ndim)
    return list(np.moveaxis(arrays[0], axis, 0))


@folds("CONCATENATION", inputs=0)
def _concat(
    imp: Importer, op: TfliteOp, arrays: list[np.ndarray]
) -> list[np.ndarray] | None:
    if _activated(op, tflite.ConcatenationOptions):
        return None
    RULES["CONCATENATION"](imp, op)  # checks the shapes
    o = op.options(tflite.ConcatenationOptions, required=True)
    return [np.concatenate(arrays, axis=op.axis(o.Axis(), arrays[0].ndim))]


@folds("GATHER", inputs=2)
def _gather(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    o = op.options(tflite.GatherOptions)
    if o is not None and o.BatchDims():
        raise op.fail("batch_dims is not supported")
    params, indices = arrays
    axis = op.axis(o.Axis() if o else 0, params.ndim)
    if indices.dtype.kind not in "iu":
        raise op.fail(f"indices must be integers, got {indices.dtype}")
    if indices.size and (indices.min() < 0 or indices.max() >= params.shape[axis]):
        raise op.fail(f"an index is outside [0, {params.shape[axis]})")
    return [np.take(params, indices, axis=axis)]


@folds("STRIDED_SLICE", inputs=4)
def _strided_slice(
    imp: Importer, op: TfliteOp, arrays: list[np.ndarray]
) -> list[np.ndarray]:
    return [strided_slice_bounds(imp, op, arrays[0].shape).apply(arrays[0])]


@folds("SLICE", inputs=3)
def _slice(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    (size,) = RULES["SLICE"](imp, op)
    begin = imp.const_ints(op, 1, "begin")
    if any(
        b < 0 or b + n > d for b, n, d in zip(begin, size, arrays[0].shape, strict=True)
    ):
        raise op.fail(f"begin {begin} and size {list(size)} exceed {list(arrays[0].shape)}")
    index = tuple(slice(b, b + n) for b, n in zip(begin, size, strict=True))
    return [arrays[0][index]]


@folds("RESHAPE", "SQUEEZE", "EXPAND_DIMS", inputs=0)
def _reshape(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    (shape,) = RULES[op.name](imp, op)
    return [arrays[0].reshape(shape)]


@folds("TRANSPOSE", inputs=2)
def _transpose(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    RULES["TRANSPOSE"](imp, op)  # checks the permutation
    return [np.transpose(arrays[0], imp.const_ints(op, 1, "perm"))]


@folds("REDUCE_PROD", "SUM", inputs=2)
def _reduce(imp: Importer, op: TfliteOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    (shape,) = RULES[op.name](imp, op)
    x = arrays[0]
    axes = tuple(sorted({op.axis(a, x.ndim) for a in imp.const_ints(op, 1, "axes")}))
    function = np.prod if op.name == "REDUCE_PROD" else np.sum
    return [function(x, axis=axes, dtype=x.dtype).reshape(shape)]
