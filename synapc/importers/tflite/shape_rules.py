"""Output shapes of TFLite operators worked out from their inputs, as LiteRT's Prepare
does once an input has been resized.

A model with unknown (-1) dimensions stores only placeholders in the `shape` of every
tensor that depends on them, so after its inputs are resolved the importer asks these
rules for each operator's output shapes before converting it (`infer_output_shapes`);
the converters then see the true shapes through `Importer.shape` / `tensor_type`, and
each synap op's verifier checks them once more against its own shape rule. A size that
comes from a tensor (RESHAPE's shape, RESIZE's size, TRANSPOSE_CONV's output shape, ...)
must be a constant at import: a constant of the file or shape arithmetic that
`folding` computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import tflite

from synapc.dialects.synap import shapes
from synapc.importers.tflite.detection import custom_options
from synapc.importers.tflite.slicing import strided_slice_bounds
from synapc.limits import check_tensor

if TYPE_CHECKING:
    from synapc.importers.tflite.reader import Importer, TfliteOp

Shape = tuple[int, ...]
Rule = Callable[["Importer", "TfliteOp"], list[Shape]]
#: operator name -> the rule giving its output shapes
RULES: dict[str, Rule] = {}


class NotConstant(Exception):
    """A size input (`what`, input `index`) that is computed at run time."""

    def __init__(self, what: str, index: int):
        super().__init__(what)
        self.what = what
        self.index = index


def rule(*names: str) -> Callable[[Rule], Rule]:
    """Register the shape rule of the TFLite operators `names`."""

    def register(function: Rule) -> Rule:
        for name in names:
            RULES[name] = function
        return function

    return register


def infer_output_shapes(imp: Importer, op: TfliteOp) -> None:
    """Work out and record the shapes of `op`'s outputs (see `record_shape`).

    A size input computed at run time is refused, unless every output's
    shape_signature is fully known, in which case those shapes are taken."""
    found = RULES.get(op.name)
    if found is None:
        raise op.fail("synapc cannot work out its output shapes once inputs are resized")
    try:
        results = found(imp, op)
    except NotConstant as missing:
        signatures = [imp.tensor(t).shape_signature for t in op.outputs]
        if not all(s and -1 not in s for s in signatures):
            raise op.fail(
                f"{missing.what} (input {missing.index}) is computed at run time; with "
                "unknown (-1) dimensions in the model synapc needs it at import, as a "
                "constant or as shape arithmetic on constants and tensor shapes"
            ) from None
        results = [tuple(s) for s in signatures]
    if len(results) != len(op.outputs):
        raise op.fail(f"has {len(op.outputs)} outputs, but computes {len(results)}")
    for t, shape in zip(op.outputs, results, strict=True):
        record_shape(imp, op, t, shape)


def record_shape(imp: Importer, op: TfliteOp, t: int, shape: Sequence[int]) -> None:
    """Record `shape` as output tensor `t`'s shape after checking it against the limits
    and against the dimensions its shape_signature fixes."""
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise op.fail(f"output {imp.label(t)} works out as {list(shape)}, not a shape")
    check_tensor(shape, imp.numpy_dtype(t).itemsize, f"{imp.path}: {op.label}")
    signature = imp.tensor(t).shape_signature
    if signature and (
        len(signature) != len(shape)
        or any(s >= 0 and s != d for s, d in zip(signature, shape, strict=True))
    ):
        raise op.fail(
            f"output {imp.label(t)} works out as {list(shape)} for these input shapes, "
            f"but its shape_signature is {list(signature)}"
        )
    imp.shapes[t] = shape


# -- helpers ---------------------------------------------------------------------------
def _in(imp: Importer, op: TfliteOp, i: int = 0) -> Shape:
    t = op.input(i)
    if t is None:
        raise op.fail(f"input {i} is required")
    return imp.shape(t)


def const_ints(imp: Importer, op: TfliteOp, i: int, what: str) -> list[int]:
    """`Importer.const_ints`, raising `NotConstant` for a tensor computed at run time."""
    t = op.input(i)
    if t is not None and imp.constant_array(t) is None and 0 not in imp.shape(t):
        raise NotConstant(what, i)
    return imp.const_ints(op, i, what)


def _count(shape: Shape) -> int:
    return math.prod(shape)


# -- elementwise -----------------------------------------------------------------------
_SAME_AS_INPUT = (
    "LOGISTIC", "TANH", "HARD_SWISH", "ELU", "EXP", "LOG", "SQRT", "RSQRT", "ABS", "NEG",
    "SQUARE", "LOG_SOFTMAX", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LEAKY_RELU",
    "GELU", "SOFTMAX", "L2_NORMALIZATION", "CAST", "QUANTIZE", "DEQUANTIZE", "LOGICAL_NOT",
)  # fmt: skip
_BROADCAST = (
    "ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "POW",
    "PRELU", "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL",
    "LOGICAL_AND", "LOGICAL_OR", "SELECT_V2", "FLOOR_DIV", "FLOOR_MOD",
)  # fmt: skip


@rule(*_SAME_AS_INPUT)
def _same(imp: Importer, op: TfliteOp) -> list[Shape]:
    return [_in(imp, op)]


@rule(*_BROADCAST)
def _broadcast(imp: Importer, op: TfliteOp) -> list[Shape]:
    return [shapes.broadcast(*(_in(imp, op, i) for i in range(len(op.inputs))))]


# -- convolutions and pooling ------------------------------------------------------------
def _out_size(
    op: TfliteOp, padding: int, size: int, kernel: int, stride: int, dil: int
) -> int:
    """TFLite's ComputeOutSize: SAME ceil(size / stride), VALID ceil((size - effective
    kernel + 1) / stride)."""
    if stride < 1 or dil < 1:
        raise op.fail(f"strides and dilations must be positive, got {stride} and {dil}")
    effective = (kernel - 1) * dil + 1
    if padding == tflite.Padding.SAME:
        return -(-size // stride)
    if padding == tflite.Padding.VALID:
        return max(0, -(-(size - effective + 1) // stride))
    raise op.fail(f"padding {padding} is not supported")


def _windowed(
    op: TfliteOp, x: Shape, kernel: Sequence[int], o: Any, channels: int, dilated: bool
) -> list[Shape]:
    """[N, H', W', channels] of a window op with options `o` on NHWC input `x`."""
    if len(x) != 4:
        raise op.fail(f"input must have rank 4, got shape {list(x)}")
    strides = (o.StrideH(), o.StrideW())
    dilations = (o.DilationHFactor(), o.DilationWFactor()) if dilated else (1, 1)
    hw = [
        _out_size(op, o.Padding(), x[1 + a], kernel[a], strides[a], dilations[a])
        for a in range(2)
    ]
    return [(x[0], hw[0], hw[1], channels)]


@rule("CONV_2D")
def _conv(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.Conv2DOptions, required=True)
    w = op.rank(op.inputs[1], 4, "weights")
    return _windowed(op, _in(imp, op), w[1:3], o, w[0], True)


@rule("DEPTHWISE_CONV_2D")
def _depthwise(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.DepthwiseConv2DOptions, required=True)
    w = op.rank(op.inputs[1], 4, "weights")
    return _windowed(op, _in(imp, op), w[1:3], o, w[3], True)


@rule("AVERAGE_POOL_2D", "MAX_POOL_2D")
def _pool(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.Pool2DOptions, required=True)
    x = _in(imp, op)
    kernel = (o.FilterHeight(), o.FilterWidth())
    return _windowed(op, x, kernel, o, x[3] if len(x) == 4 else 0, False)


@rule("TRANSPOSE_CONV")
def _transpose_conv(imp: Importer, op: TfliteOp) -> list[Shape]:
    return [tuple(const_ints(imp, op, 0, "output_shape"))]


@rule("Convolution2DTransposeBias")
def _mediapipe_transpose_conv(imp: Importer, op: TfliteOp) -> list[Shape]:
    """MediaPipe's transposed convolution: SAME gives size * stride, VALID
    (size - 1) * stride + kernel (custom options: padding, stride_w, stride_h)."""
    raw = op.custom_options
    if raw is None or len(raw) < 12:
        raise op.fail("custom options must hold padding, stride_width, stride_height")
    padding, stride_w, stride_h = (int(v) for v in np.frombuffer(raw, "<i4", 3))
    x, w = _in(imp, op), op.rank(op.inputs[1], 4, "weights")
    if len(x) != 4:
        raise op.fail(f"input must have rank 4, got shape {list(x)}")
    strides = (stride_h, stride_w)
    if padding == 1:
        hw = [x[1 + a] * strides[a] for a in range(2)]
    else:
        hw = [(x[1 + a] - 1) * strides[a] + w[1 + a] for a in range(2)]
    return [(x[0], hw[0], hw[1], w[0])]


@rule("FULLY_CONNECTED")
def _fully_connected(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.FullyConnectedOptions)
    x, w = _in(imp, op), op.rank(op.inputs[1], 2, "weights")
    if o is not None and o.KeepNumDims():
        return [(*x[:-1], w[0])]
    if w[1] < 1 or _count(x) % w[1]:
        raise op.fail(
            f"input of shape {list(x)} cannot be flattened into rows of {w[1]} features"
        )
    return [(_count(x) // w[1], w[0])]


@rule("BATCH_MATMUL")
def _batch_matmul(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.BatchMatMulOptions)
    adj_x, adj_y = bool(o and o.AdjX()), bool(o and o.AdjY())
    return [shapes.matmul(_in(imp, op, 0), _in(imp, op, 1), adj_x, adj_y)]


# -- data movement ---------------------------------------------------------------------
@rule("CONCATENATION")
def _concat(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.ConcatenationOptions, required=True)
    return [shapes.concat([imp.shape(t) for t in op.inputs], o.Axis())]


@rule("SPLIT")
def _split(imp: Importer, op: TfliteOp) -> list[Shape]:
    x = _in(imp, op, 1)
    axis = op.axis(imp.const_int(op, 0, "axis"), len(x))
    parts = len(op.outputs)
    if x[axis] % parts:
        raise op.fail(f"dimension {axis} of size {x[axis]} cannot be split in {parts}")
    return shapes.split(x, axis, [x[axis] // parts] * parts)


@rule("SPLIT_V")
def _split_v(imp: Importer, op: TfliteOp) -> list[Shape]:
    x = _in(imp, op)
    axis = op.axis(imp.const_int(op, 2, "axis"), len(x))
    sizes = imp.const_ints(op, 1, "size_splits")
    if sizes.count(-1) > 1:
        raise op.fail(f"size_splits {sizes} has more than one -1")
    if -1 in sizes:
        sizes[sizes.index(-1)] = x[axis] - (sum(sizes) + 1)
    return [(*x[:axis], s, *x[axis + 1 :]) for s in sizes]


@rule("SLICE")
def _slice(imp: Importer, op: TfliteOp) -> list[Shape]:
    x = _in(imp, op)
    begin = const_ints(imp, op, 1, "begin")
    size = const_ints(imp, op, 2, "size")
    if not len(begin) == len(size) == len(x):
        raise op.fail(f"begin {begin} and size {size} must have {len(x)} values")
    return [tuple(d - b if n == -1 else n for d, b, n in zip(x, begin, size, strict=True))]


@rule("STRIDED_SLICE")
def _strided_slice(imp: Importer, op: TfliteOp) -> list[Shape]:
    x = _in(imp, op)
    for i, what in ((1, "begin"), (2, "end"), (3, "strides")):
        const_ints(imp, op, i, what)
    return [strided_slice_bounds(imp, op, x).result_shape()]


@rule("RESHAPE")
def _reshape(imp: Importer, op: TfliteOp) -> list[Shape]:
    return [reshape_target(imp, op, _in(imp, op))]


def reshape_target(imp: Importer, op: TfliteOp, x: Shape) -> Shape:
    """RESHAPE's output shape as LiteRT's reshape kernel takes it: the shape input when
    it is an int32 vector, else the options' new_shape; one -1 stands for the rest."""
    t = op.input(1)
    if t is not None and len(imp.shape(t)) == 1 and imp.numpy_dtype(t) == np.int32:
        target = const_ints(imp, op, 1, "shape")
    else:  # LiteRT reads new_shape; absent, it has no dimensions (a scalar)
        o = op.options(tflite.ReshapeOptions)
        target = []
        if o is not None and not o.NewShapeIsNone():
            target = [int(v) for v in o.NewShapeAsNumpy().tolist()]
        if target == [0]:
            target = []  # the legacy spelling of a scalar
    if target.count(-1) > 1 or any(d < -1 for d in target):
        raise op.fail(f"new shape {target} is not a shape (at most one -1)")
    known = _count(tuple(d for d in target if d != -1))
    if -1 in target:
        if known == 0 or _count(x) % known:
            raise op.fail(f"input of shape {list(x)} cannot be reshaped to {target}")
        target[target.index(-1)] = _count(x) // known
    if _count(tuple(target)) != _count(x):
        raise op.fail(f"input of shape {list(x)} cannot be reshaped to {target}")
    return tuple(target)


@rule("SQUEEZE")
def _squeeze(imp: Importer, op: TfliteOp) -> list[Shape]:
    x = _in(imp, op)
    o = op.options(tflite.SqueezeOptions)
    axes = [] if o is None or o.SqueezeDimsIsNone() else o.SqueezeDimsAsNumpy().tolist()
    if not axes:
        return [tuple(d for d in x if d != 1)]
    dropped = {op.axis(int(a), len(x), "squeeze_dims value") for a in axes}
    for a in sorted(dropped):
        if x[a] != 1:
            raise op.fail(f"squeeze_dims names dimension {a} of size {x[a]}, not 1")
    return [tuple(d for i, d in enumerate(x) if i not in dropped)]


@rule("EXPAND_DIMS")
def _expand_dims(imp: Importer, op: TfliteOp) -> list[Shape]:
    x = _in(imp, op)
    axis = op.axis(imp.const_int(op, 1, "axis"), len(x) + 1)
    return [(*x[:axis], 1, *x[axis:])]


@rule("BROADCAST_TO")
def _broadcast_to(imp: Importer, op: TfliteOp) -> list[Shape]:
    target = tuple(const_ints(imp, op, 1, "shape"))
    return [shapes.broadcast_to(_in(imp, op), target)]


@rule("TRANSPOSE")
def _transpose(imp: Importer, op: TfliteOp) -> list[Shape]:
    return [shapes.transpose(_in(imp, op), const_ints(imp, op, 1, "perm"))]


@rule("TILE")
def _tile(imp: Importer, op: TfliteOp) -> list[Shape]:
    return [shapes.tile(_in(imp, op), const_ints(imp, op, 1, "multiples"))]


@rule("PAD", "PADV2", "MIRROR_PAD")
def _pad(imp: Importer, op: TfliteOp) -> list[Shape]:
    return [shapes.pad(_in(imp, op), const_ints(imp, op, 1, "paddings"))]


@rule("DEPTH_TO_SPACE")
def _depth_to_space(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.DepthToSpaceOptions, required=True)
    return [shapes.depth_to_space(_in(imp, op), o.BlockSize())]


@rule("SPACE_TO_DEPTH")
def _space_to_depth(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.SpaceToDepthOptions, required=True)
    return [shapes.space_to_depth(_in(imp, op), o.BlockSize())]


@rule("GATHER")
def _gather(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.GatherOptions)
    x = _in(imp, op)
    axis = op.axis(o.Axis() if o else 0, len(x))
    return [shapes.gather(x, _in(imp, op, 1), axis)]


@rule("PACK")
def _pack(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.PackOptions, required=True)
    pieces = {imp.shape(t) for t in op.inputs}
    if len(pieces) != 1:
        raise op.fail(f"inputs of shapes {sorted(map(list, pieces))} cannot be packed")
    (x,) = pieces
    axis = op.axis(o.Axis(), len(x) + 1)
    return [(*x[:axis], len(op.inputs), *x[axis:])]


@rule("UNPACK")
def _unpack(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.UnpackOptions, required=True)
    x = _in(imp, op)
    axis = op.axis(o.Axis(), len(x))
    if x[axis] != len(op.outputs):
        raise op.fail(
            f"dimension {axis} of size {x[axis]} cannot be unpacked into "
            f"{len(op.outputs)} outputs"
        )
    return [(*x[:axis], *x[axis + 1 :])] * len(op.outputs)


# -- reductions, resizing, detection -----------------------------------------------------
@rule("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD")
def _reduce(imp: Importer, op: TfliteOp) -> list[Shape]:
    o = op.options(tflite.ReducerOptions)
    x = _in(imp, op)
    axes = sorted({op.axis(a, len(x)) for a in const_ints(imp, op, 1, "axes")})
    return [shapes.reduce(x, axes, bool(o and o.KeepDims()))]


@rule("ARG_MAX", "ARG_MIN")
def _arg_reduce(imp: Importer, op: TfliteOp) -> list[Shape]:
    x = _in(imp, op)
    axis = op.axis(imp.const_int(op, 1, "axis"), len(x))
    return [shapes.arg_reduce(x, axis, False)]


@rule("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
def _resize(imp: Importer, op: TfliteOp) -> list[Shape]:
    x = _in(imp, op)
    size = const_ints(imp, op, 1, "size")
    if len(x) != 4 or len(size) != 2:
        raise op.fail(f"input {list(x)} must have rank 4 and size {size} two values")
    return [(x[0], size[0], size[1], x[3])]


@rule("TFLite_Detection_PostProcess")
def _detection(imp: Importer, op: TfliteOp) -> list[Shape]:
    options = custom_options(op)
    return shapes.detection_postprocess(
        _in(imp, op, 0),
        _in(imp, op, 1),
        _in(imp, op, 2),
        options["max_detections"],
        options["max_classes_per_detection"],
        options["num_classes"],
    )
