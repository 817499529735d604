"""Constant folding at import, bounded by `synapc.limits`.

The reader evaluates a node on the host when all its inputs are constants (the shape
arithmetic of exported models, constant reshapes, ...). A hostile or broken model can
ask such a node for a 2**40-element `ConstantOfShape`, a `Range` with a step of 1e-30
or a `Loop` that never ends, so nothing runs before its cost is known:

- `estimate` computes the element count of a node's results from its input shapes,
  input values and attributes (`Range`: ceil((limit - start) / delta);
  `ConstantOfShape`, `Expand`, `Tile`, `Resize`, `Pad`, `Concat`, `Gather`, ...: the
  target shape) and the work it does; only when they are within `max_fold_elements`
  and `max_fold_work_elements` does ONNX's reference implementation run the node;
- `If`, `Loop` and `Scan` are run here, branch by branch and iteration by iteration, each
  inner node checked in the same way, for at most `max_loop_iterations` iterations in
  all (nested loops count every inner iteration), never by the reference
  implementation's own unbounded loops;
- op types without a rule are not folded (the reader converts them, or says the
  operator is not supported).

A node that cannot be folded raises `CannotFold` with a one-line reason; the reader
decides whether the node can run on the target instead or the import stops.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper

from synapc.errors import SynapcError
from synapc.importers.onnx.checks import (
    declared_shape,
    limit_of,
    shown,
    tensor_to_array,
)


class CannotFold(Exception):
    """A node the folder does not evaluate. `kind` says why: `UNKNOWN` (no rule for the
    op type, or not a tensor op), `TOO_LARGE` (a result or the work beyond the limits),
    `INVALID` (inputs or attributes that do not fit the operator) or `FAILED` (ONNX's
    reference implementation rejected the inputs); `reason` is one line for a user."""

    UNKNOWN = "unknown"
    TOO_LARGE = "too large"
    INVALID = "invalid"
    FAILED = "failed"

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


# -- estimates ---------------------------------------------------------------------
#: Results as large as input 0 (per output).
_LIKE_INPUT = {
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BatchNormalization",
    "BitwiseNot", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Cos", "Cosh", "CumSum",
    "DepthToSpace", "DequantizeLinear", "Det", "Dropout", "Elu", "Erf", "Exp",
    "EyeLike", "Flatten", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Hardmax",
    "Identity", "InstanceNormalization", "IsInf", "IsNaN", "LayerNormalization",
    "LeakyRelu", "Log", "LogSoftmax", "LpNormalization", "LRN",
    "MeanVarianceNormalization", "Mish", "Neg", "Not", "QuantizeLinear", "Reciprocal",
    "Relu", "Reshape", "ReverseSequence", "Round", "Scatter", "ScatterElements",
    "ScatterND", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softmax",
    "Softplus", "Softsign", "SpaceToDepth", "Sqrt", "Squeeze", "Swish", "Tan", "Tanh",
    "ThresholdedRelu", "Transpose", "Trilu", "Unsqueeze",
}  # fmt: skip
#: Results at most as large as input 0 (per output).
_NOT_LARGER = {
    "ArgMax", "ArgMin", "Compress", "GlobalAveragePool", "GlobalMaxPool", "ReduceL1",
    "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Slice", "Unique",
}  # fmt: skip
#: Elementwise ops whose result has the broadcast shape of all inputs.
_BROADCAST = {
    "Add", "And", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div", "Equal",
    "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod",
    "Mul", "Or", "Pow", "PRelu", "Sub", "Sum", "Where", "Xor",
}  # fmt: skip

#: Inputs (by position) whose values a node never reads: only their element type and
#: shape matter (CastLike's target, EyeLike's template), so the node folds when its
#: other inputs are constants, whatever these are.
METADATA_INPUTS: dict[str, tuple[int, ...]] = {"CastLike": (1,), "EyeLike": (0,)}


def stand_in(shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """A read-only array of `shape` and `dtype` standing for a run-time tensor whose
    values a node does not read (see `METADATA_INPUTS`); it allocates one element."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape))


#: Ops whose reference implementation loops in Python per index or element, or does
#: more than linear work: their work counts this many times.
_SLOW = {"ScatterND": 64, "ScatterElements": 16, "Scatter": 16, "GatherElements": 16}
_SLOW.update({"Unique": 16, "TopK": 4, "NonZero": 4})
#: The work one node evaluation costs besides its elements (Python overhead, in
#: elements), so that a loop of many small nodes is bounded too.
NODE_OVERHEAD = 4096

Estimate = tuple[int, int]  # (elements of all results, elements of work)


def _size(a: np.ndarray | None) -> int:
    return 0 if a is None else math.prod(int(d) for d in a.shape)


def _invalid(message: str) -> CannotFold:
    return CannotFold(CannotFold.INVALID, message)


def _ints(a: np.ndarray | None, what: str, *, shape_like: bool = False) -> list[int]:
    """The values of integer input `a` as Python ints (`shape_like`: a shape vector,
    so at most `max_tensor_rank` values)."""
    if a is None:
        raise _invalid(f"{what} is missing")
    if a.dtype.kind not in "iu":
        raise _invalid(f"{what} must be integers, got {a.dtype}")
    rank = limit_of("max_tensor_rank")
    if shape_like and (a.ndim > 1 or a.size > rank):
        raise _invalid(
            f"{what} must be a shape (at most {rank} values; "
            "SYNAPC_MAX_TENSOR_RANK raises it)"
        )
    return [int(v) for v in a.reshape(-1).tolist()]


def _numeric(dtype: np.dtype) -> bool:
    """Whether values of `dtype` are numbers: bool, integers, floats and ml_dtypes'
    bfloat16 (whose numpy kind is "V")."""
    return dtype.kind in "biuf" or dtype.name == "bfloat16"


def _number(a: np.ndarray | None, what: str) -> float | int:
    """The one value of input `a`."""
    if a is None or a.size != 1:
        raise _invalid(f"{what} must hold one value")
    value = a.reshape(-1)[0]
    if a.dtype.kind in "iub":
        return int(value)
    if not _numeric(a.dtype):
        raise _invalid(f"{what} must be a number, got {a.dtype}")
    number = float(value)
    if not math.isfinite(number):
        raise _invalid(f"{what} is {number}")
    return number


def broadcast_shapes(shapes: Sequence[Sequence[int]]) -> list[int]:
    """numpy's broadcast of `shapes`, in Python integers (no overflow, no allocation);
    raises `CannotFold` (INVALID) when they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        for k, d in enumerate(shape):
            axis = rank - len(shape) + k
            if d < 0:
                raise _invalid(f"shape {list(shape)} has a negative dimension")
            if d != result[axis] and result[axis] != 1 and d != 1:
                raise _invalid(
                    f"shapes {[list(s) for s in shapes]} do not broadcast together"
                )
            if result[axis] == 1:
                result[axis] = d
    return result


def _axis(value: Any, rank: int, what: str = "axis") -> int:
    axis = int(value)
    if not -rank <= axis < max(rank, 1):
        raise _invalid(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def estimate(
    op_type: str,
    inputs: Sequence[np.ndarray | None],
    attrs: Mapping[str, Any],
    opset: int,
    outputs: int = 1,
) -> Estimate:
    """Elements of all the results (`outputs` of them) of an `op_type` node on constant
    `inputs` (None for an absent optional input) and the elements of work evaluating it
    takes, computed in Python integers before anything is evaluated. Raises
    `CannotFold` for op types without a rule (UNKNOWN) and for inputs that do not fit
    the operator (INVALID)."""
    rule = _RULES.get(op_type)
    x = inputs[0] if inputs else None
    present = [a for a in inputs if a is not None]
    if op_type in ("QuantizeLinear", "DequantizeLinear") and attrs.get("block_size"):
        raise CannotFold(CannotFold.UNKNOWN, f"blocked {op_type} is not folded")
    if op_type == "Split":
        out, work = _split(inputs, attrs, opset, outputs)
    elif op_type == "TopK":
        out, work = _top_k(inputs, attrs, opset, outputs)
    elif rule is not None:
        out, work = rule(inputs, attrs, opset)
    elif op_type in _LIKE_INPUT or op_type in _NOT_LARGER:
        out = _size(x) * max(1, outputs)
        work = out + sum(_size(a) for a in present)
    elif op_type in _BROADCAST:
        out = math.prod(broadcast_shapes([a.shape for a in present]))
        work = out + sum(_size(a) for a in present)
    else:
        raise CannotFold(CannotFold.UNKNOWN, f"{op_type} is not folded at import")
    if op_type == "Det" and x is not None and x.ndim >= 2:
        work = _size(x) * int(x.shape[-1])  # an LU decomposition per matrix
    return out, work * _SLOW.get(op_type, 1) + NODE_OVERHEAD


def _split(inputs, attrs, opset, outputs: int) -> Estimate:
    """Split makes one result per output: `num_outputs` and the split sizes must say
    as many (the reference implementation would make as many as they say)."""
    count = attrs.get("num_outputs")
    if count is not None and int(count) != outputs:
        raise _invalid(f"num_outputs {count} does not fit {outputs} outputs")
    sizes = inputs[1] if len(inputs) > 1 else None
    if sizes is None and "split" in attrs:
        sizes = np.asarray(attrs["split"], np.int64)
    if sizes is not None and _size(sizes) != outputs:
        raise _invalid(f"{_size(sizes):,} split sizes for {outputs} outputs")
    out = _size(inputs[0])
    return out, 2 * out


def _top_k(inputs, attrs, opset, outputs: int) -> Estimate:
    """TopK: k (input 1, or an attribute before opset 10) within the axis."""
    x = inputs[0]
    if opset < 10:
        k = int(attrs.get("k", -1))
    else:
        k = int(_number(inputs[1] if len(inputs) > 1 else None, "k (input 1)"))
    axis = _axis(attrs.get("axis", -1), x.ndim)
    dim = int(x.shape[axis]) if x.ndim else 1
    if not 0 <= k <= dim:
        raise _invalid(f"k {k} is not within the {dim} values of axis {axis}")
    out = _size(x) // max(dim, 1) * k * max(outputs, 1)
    return out, _size(x) + out


def _shape_only(inputs, attrs, opset) -> Estimate:
    return limit_of("max_tensor_rank"), 1


def _nonzero(inputs, attrs, opset) -> Estimate:
    x = inputs[0]
    return _size(x) * max(x.ndim, 1), 2 * _size(x) * max(x.ndim, 1)


def _constant_of_shape(inputs, attrs, opset) -> Estimate:
    dims = _ints(inputs[0], "the shape (input 0)", shape_like=True)
    if any(d < 0 for d in dims):
        raise _invalid(f"the shape {dims} has a negative dimension")
    value = attrs.get("value")
    if isinstance(value, onnx.TensorProto):
        shape, _ = declared_shape(value, "its value attribute")
        if math.prod(shape) != 1:
            raise _invalid(f"its value attribute has {math.prod(shape):,} elements, not 1")
    out = math.prod(dims)
    return out, out


def _expand(inputs, attrs, opset) -> Estimate:
    dims = _ints(
        inputs[1] if len(inputs) > 1 else None, "the shape (input 1)", shape_like=True
    )
    out = math.prod(broadcast_shapes([inputs[0].shape, dims]))
    return out, out + _size(inputs[0])


def _tile(inputs, attrs, opset) -> Estimate:
    x = inputs[0]
    repeats = _ints(inputs[1] if len(inputs) > 1 else None, "repeats (input 1)")
    if len(repeats) != x.ndim or any(r < 0 for r in repeats):
        raise _invalid(f"repeats {repeats} must be {x.ndim} non-negative values")
    out = math.prod(int(d) * r for d, r in zip(x.shape, repeats, strict=True))
    return out, out + _size(x)


def _range(inputs, attrs, opset) -> Estimate:
    if len(inputs) != 3:
        raise _invalid("Range takes start, limit and delta")
    start, limit, delta = (
        _number(a, what)
        for a, what in zip(inputs, ("start", "limit", "delta"), strict=True)
    )
    if delta == 0:
        raise _invalid("delta is 0: the range never ends")
    if all(isinstance(v, int) for v in (start, limit, delta)):
        count = -((start - limit) // delta)  # ceil((limit - start) / delta), exactly
    else:
        ratio = (limit - start) / delta
        if not math.isfinite(ratio) or abs(ratio) > 2.0**62:
            return 1 << 62, 1 << 62  # beyond any limit
        count = math.ceil(ratio)
    out = max(count, 0)
    return out, out


def _one_hot(inputs, attrs, opset) -> Estimate:
    depth = _number(inputs[1] if len(inputs) > 1 else None, "depth (input 1)")
    if depth < 0:
        raise _invalid(f"depth {depth} is negative")
    out = _size(inputs[0]) * int(depth)
    return out, out


def _pad(inputs, attrs, opset) -> Estimate:
    x = inputs[0]
    rank = x.ndim
    if opset < 11:
        pads = [int(p) for p in attrs.get("pads", attrs.get("paddings", []))]
    else:
        pads = _ints(inputs[1] if len(inputs) > 1 else None, "pads (input 1)")
    axes = list(range(rank))
    if len(inputs) > 3 and inputs[3] is not None:
        axes = [_axis(a, rank, "pad axis") for a in _ints(inputs[3], "axes (input 3)")]
    if len(pads) != 2 * len(axes):
        raise _invalid(f"{len(pads)} pads for {len(axes)} axes")
    dims = [int(d) for d in x.shape]
    for k, axis in enumerate(axes):
        dims[axis] += pads[k] + pads[k + len(axes)]
    if any(d < 0 for d in dims):
        raise _invalid(f"pads {pads} make the negative shape {dims}")
    out = math.prod(dims)
    return out, out + _size(x)


def _resize(inputs, attrs, opset) -> Estimate:
    x = inputs[0]
    rank = x.ndim
    dims = [int(d) for d in x.shape]
    axes = [_axis(a, rank) for a in attrs.get("axes", range(rank))]
    if opset < 10 and "scales" in attrs:  # Upsample-7
        scales, sizes = [float(s) for s in attrs["scales"]], None
    else:
        scales_at = 1 if opset < 11 or len(inputs) < 3 else 2
        sizes = None
        if opset >= 11 and len(inputs) > 3 and inputs[3] is not None and inputs[3].size:
            sizes = _ints(inputs[3], "sizes (input 3)")
        given = inputs[scales_at] if len(inputs) > scales_at else None
        scales = None if given is None or not given.size else given.reshape(-1).tolist()
    if sizes is not None:
        if len(sizes) != len(axes) or any(s < 0 for s in sizes):
            raise _invalid(f"sizes {sizes} must be {len(axes)} non-negative values")
        policy = attrs.get("keep_aspect_ratio_policy", b"stretch")
        factor = 1.0
        if policy not in (b"stretch", "stretch"):  # not_smaller may exceed the sizes
            ratios = [s / max(dims[a], 1) for a, s in zip(axes, sizes, strict=True)]
            factor = max(ratios) / max(min(ratios), 1e-30) + 1.0
        out_dims = list(dims)
        for a, s in zip(axes, sizes, strict=True):
            out_dims[a] = math.ceil(s * factor)
    else:
        if scales is None or len(scales) != len(axes):
            raise _invalid(f"scales {scales} must be {len(axes)} values")
        out_dims = list(dims)
        for a, s in zip(axes, scales, strict=True):
            s = float(s)
            if not math.isfinite(s) or s <= 0:
                raise _invalid(f"scale {s} must be a positive number")
            value = dims[a] * s
            if value > 2.0**62:
                return 1 << 62, 1 << 62
            out_dims[a] = math.floor(value) + 1
    out = math.prod(out_dims)
    return out, out + _size(x)


def _concat(inputs, attrs, opset) -> Estimate:
    out = sum(_size(a) for a in inputs if a is not None)
    return out, 2 * out


def _gather(inputs, attrs, opset) -> Estimate:
    data, indices = inputs[0], inputs[1] if len(inputs) > 1 else None
    if indices is None:
        raise _invalid("indices (input 1) are missing")
    axis = _axis(attrs.get("axis", 0), data.ndim)
    dims = [int(d) for d in data.shape]
    out = math.prod(dims[:axis]) * _size(indices) * math.prod(dims[axis + 1 :])
    return out, out + _size(indices)


def _gather_elements(inputs, attrs, opset) -> Estimate:
    out = _size(inputs[1] if len(inputs) > 1 else None)
    return out, 2 * out


def _gather_nd(inputs, attrs, opset) -> Estimate:
    data, indices = inputs[0], inputs[1] if len(inputs) > 1 else None
    if indices is None or indices.ndim < 1:
        raise _invalid("indices (input 1) must have rank 1 or more")
    batch = int(attrs.get("batch_dims", 0))
    depth = int(indices.shape[-1])
    if batch < 0 or batch + depth > data.ndim:
        raise _invalid(
            f"batch_dims {batch} and index depth {depth} exceed rank {data.ndim}"
        )
    tail = math.prod(int(d) for d in data.shape[batch + depth :])
    out = math.prod(int(d) for d in indices.shape[:-1]) * tail
    return out, out + _size(indices)


def _matmul(inputs, attrs, opset) -> Estimate:
    a, b = inputs[0], inputs[1] if len(inputs) > 1 else None
    if b is None or a.ndim == 0 or b.ndim == 0:
        raise _invalid("MatMul needs two operands of rank 1 or more")
    a_shape = [1, *a.shape] if a.ndim == 1 else list(a.shape)
    b_shape = [*b.shape, 1] if b.ndim == 1 else list(b.shape)
    if a_shape[-1] != b_shape[-2]:
        raise _invalid(f"shapes {list(a.shape)} and {list(b.shape)} do not multiply")
    batch = broadcast_shapes([a_shape[:-2], b_shape[:-2]])
    out = math.prod(batch) * a_shape[-2] * b_shape[-1]
    return out, out * max(a_shape[-1], 1) + _size(a) + _size(b)


def _gemm(inputs, attrs, opset) -> Estimate:
    a, b = inputs[0], inputs[1] if len(inputs) > 1 else None
    if b is None or a.ndim != 2 or b.ndim != 2:
        raise _invalid("Gemm needs two operands of rank 2")
    m, k = (a.shape[1], a.shape[0]) if attrs.get("transA", 0) else a.shape
    n = b.shape[0] if attrs.get("transB", 0) else b.shape[1]
    out = int(m) * int(n)
    return out, out * max(int(k), 1) + _size(a) + _size(b)


def _center_crop_pad(inputs, attrs, opset) -> Estimate:
    x = inputs[0]
    shape = _ints(inputs[1] if len(inputs) > 1 else None, "shape (input 1)")
    axes = [_axis(a, x.ndim) for a in attrs.get("axes", range(x.ndim))]
    if len(shape) != len(axes) or any(s < 0 for s in shape):
        raise _invalid(f"shape {shape} must be {len(axes)} non-negative values")
    dims = [int(d) for d in x.shape]
    for a, s in zip(axes, shape, strict=True):
        dims[a] = s
    out = math.prod(dims)
    return out, out + _size(x)


def _window(inputs, attrs, opset) -> Estimate:
    size = _number(inputs[0] if inputs else None, "size (input 0)")
    if size < 0:
        raise _invalid(f"size {size} is negative")
    return int(size), int(size)


_RULES: dict[str, Callable[[Sequence[np.ndarray | None], Mapping[str, Any], int], Estimate]]
_RULES = {
    "Shape": _shape_only,
    "Size": _shape_only,
    "NonZero": _nonzero,
    "ConstantOfShape": _constant_of_shape,
    "Expand": _expand,
    "Tile": _tile,
    "Range": _range,
    "OneHot": _one_hot,
    "Pad": _pad,
    "Resize": _resize,
    "Upsample": _resize,
    "Concat": _concat,
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "MatMul": _matmul,
    "Gemm": _gemm,
    "CenterCropPad": _center_crop_pad,
    "BlackmanWindow": _window,
    "HannWindow": _window,
    "HammingWindow": _window,
}


def subgraph_reads(node: onnx.NodeProto) -> list[str]:
    """The outer-scope names the subgraphs (If / Loop / Scan bodies) of `node` read: what
    they use and do not define themselves."""
    names: list[str] = []
    for attribute in node.attribute:
        graphs = list(attribute.graphs)
        if attribute.HasField("g"):
            graphs.append(attribute.g)
        for graph in graphs:
            names.extend(_free_names(graph))
    return list(dict.fromkeys(names))


def _free_names(graph: onnx.GraphProto) -> list[str]:
    defined = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    free: list[str] = []
    for node in graph.node:
        for name in [*node.input, *subgraph_reads(node)]:
            if name and name not in defined:
                free.append(name)
        defined.update(node.output)
    return free


# -- evaluation --------------------------------------------------------------------
class Folder:
    """Evaluates constant nodes of one model on the host within the limits; `path`
    names the model in errors."""

    def __init__(self, path: Path, opset_imports: Sequence[onnx.OperatorSetIdProto]):
        self.path = path
        self.opset_imports = [
            helper.make_opsetid(o.domain, o.version) for o in opset_imports
        ]
        self.opset = next(
            (o.version for o in opset_imports if o.domain in ("", "ai.onnx")), 1
        )
        self._evaluators: dict[tuple[Any, ...], tuple[onnx.NodeProto, Any]] = {}
        self._iterations = 0
        self._work = 0

    def fold(
        self,
        proto: onnx.NodeProto,
        values: Mapping[str, np.ndarray],
        attrs: Mapping[str, Any],
    ) -> list[np.ndarray | None]:
        """The results of node `proto` (None for an unnamed output) when its inputs and
        the outer-scope names its subgraphs read have the constant `values`; `attrs`
        are its decoded attributes. Raises `CannotFold`."""
        self._evaluators.clear()
        self._iterations = 0
        self._work = 0
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self._node(proto, dict(values), dict(attrs), 0, "")

    # -- one node -------------------------------------------------------------------
    def _node(
        self,
        proto: onnx.NodeProto,
        env: dict[str, np.ndarray],
        attrs: dict[str, Any] | None,
        depth: int,
        label: str,
    ) -> list[np.ndarray | None]:
        prefix = f"{label}: " if label else ""
        if proto.domain not in ("", "ai.onnx"):
            raise CannotFold(
                CannotFold.UNKNOWN, f"{prefix}domain '{shown(proto.domain)}' is not folded"
            )
        if attrs is None:
            attrs = self._attributes(proto, prefix)
        inputs = []
        for name in proto.input:
            if name and name not in env:
                raise _invalid(
                    f"{prefix}reads '{shown(name)}', which is not computed before"
                )
            inputs.append(env[name] if name else None)
        op_type = proto.op_type
        if op_type in ("Constant", "If", "Loop", "Scan"):
            self._spend(NODE_OVERHEAD, prefix)
        if op_type == "Constant":
            value = self._constant(attrs, prefix)
            self._check_elements(value.size, prefix)
            self._spend(value.size, prefix)
            return [value]
        if op_type == "If":
            return self._if(proto, inputs, attrs, env, depth, label)
        if op_type == "Loop":
            return self._loop(proto, inputs, attrs, env, depth, label)
        if op_type == "Scan":
            return self._scan(proto, inputs, attrs, env, depth, label)
        if any(a.HasField("g") or len(a.graphs) for a in proto.attribute):
            raise CannotFold(CannotFold.UNKNOWN, f"{prefix}{op_type} is not folded")
        if not inputs or inputs[0] is None:
            raise CannotFold(CannotFold.UNKNOWN, f"{prefix}{op_type} is not folded")
        try:
            out, work = estimate(op_type, inputs, attrs, self.opset, len(proto.output))
        except CannotFold as error:
            raise CannotFold(error.kind, prefix + error.reason) from None
        except SynapcError as error:  # an attribute tensor beyond the limits
            raise _invalid(f"{prefix}{error}") from None
        except (ValueError, TypeError, OverflowError, IndexError, KeyError):
            raise _invalid(
                f"{prefix}its inputs or attributes do not fit {op_type}"
            ) from None
        self._check_elements(out, prefix)
        self._spend(work, prefix)
        results = self._reference(proto, inputs, prefix)
        for result in results:
            if result is not None:
                self._check_elements(_size(result), prefix)
        return results

    def _attributes(self, proto: onnx.NodeProto, prefix: str) -> dict[str, Any]:
        attrs = {}
        for attribute in proto.attribute:
            try:
                attrs[attribute.name] = helper.get_attribute_value(attribute)
            except Exception:  # an attribute without a value of a known type
                raise _invalid(
                    f"{prefix}attribute '{shown(attribute.name)}' has no valid value"
                ) from None
        return attrs

    def _check_elements(self, count: int, prefix: str) -> None:
        limit = limit_of("max_fold_elements")
        if count > limit:
            raise CannotFold(
                CannotFold.TOO_LARGE,
                f"{prefix}folding it would make a tensor of {count:,} elements, more "
                f"than the limit of {limit:,} (SYNAPC_MAX_FOLD_ELEMENTS raises it)",
            )

    def _spend(self, work: int, prefix: str) -> None:
        """Add `work` elements to this fold's work, within `max_fold_work_elements`
        (read now, so `use_limits` and the environment apply)."""
        self._work += work
        budget = limit_of("max_fold_work_elements")
        if self._work > budget:
            raise CannotFold(
                CannotFold.TOO_LARGE,
                f"{prefix}folding it would compute more than {budget:,} elements in "
                "all, the limit of one fold's work (SYNAPC_MAX_FOLD_WORK_ELEMENTS "
                "raises it)",
            )

    def _constant(self, attrs: Mapping[str, Any], prefix: str) -> np.ndarray:
        """A Constant node inside a subgraph."""
        what = f"{self.path}: {prefix}the constant's value"
        if isinstance(attrs.get("value"), onnx.TensorProto):
            return tensor_to_array(attrs["value"], what)
        for key, dtype in (
            ("value_float", np.float32),
            ("value_floats", np.float32),
            ("value_int", np.int64),
            ("value_ints", np.int64),
        ):
            if key in attrs:
                try:
                    return np.array(attrs[key], dtype)
                except (OverflowError, ValueError, TypeError):
                    raise _invalid(
                        f"{prefix}{key} does not fit {np.dtype(dtype)}"
                    ) from None
        raise CannotFold(CannotFold.UNKNOWN, f"{prefix}this kind of Constant is not folded")

    def _reference(
        self, proto: onnx.NodeProto, inputs: list[np.ndarray | None], prefix: str
    ) -> list[np.ndarray | None]:
        """Run `proto` by ONNX's reference implementation (its cost is checked)."""
        from onnx.reference import ReferenceEvaluator

        names = list(dict.fromkeys(n for n in proto.input if n))
        feeds = {n: a for n, a in zip(proto.input, inputs, strict=True) if n}
        key = (id(proto), tuple((n, feeds[n].dtype.str) for n in names))
        cached = self._evaluators.get(key)
        outputs = [o for o in proto.output if o]
        try:
            if cached is None:
                graph = helper.make_graph(
                    [proto],
                    "fold",
                    [
                        helper.make_tensor_value_info(
                            n, helper.np_dtype_to_tensor_dtype(feeds[n].dtype), None
                        )
                        for n in names
                    ],
                    [
                        helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None)
                        for o in outputs
                    ],
                )
                model = helper.make_model(graph, opset_imports=self.opset_imports)
                model.ir_version = onnx.IR_VERSION
                cached = (proto, ReferenceEvaluator(model))
                self._evaluators[key] = cached
            results = cached[1].run(None, feeds)
        except (MemoryError, RecursionError):
            raise
        except Exception:  # the reference implementation rejects the inputs
            shapes = ", ".join(f"{list(a.shape)} {a.dtype}" for a in feeds.values())
            raise CannotFold(
                CannotFold.FAILED,
                f"{prefix}ONNX's reference implementation cannot evaluate "
                f"{proto.op_type} on its constant inputs ({shapes})",
            ) from None
        arrays = iter(results)
        values: list[np.ndarray | None] = []
        for name in proto.output:
            if not name:
                values.append(None)
                continue
            value = next(arrays, None)
            if not isinstance(value, np.ndarray | np.generic) or not _numeric(
                np.asarray(value).dtype
            ):
                raise CannotFold(
                    CannotFold.UNKNOWN, f"{prefix}{proto.op_type} gives no numeric tensor"
                )
            values.append(np.asarray(value))
        return values

    # -- subgraphs ----------------------------------------------------------------
    def _prepare(
        self, graph: onnx.GraphProto, depth: int, where: str
    ) -> tuple[dict[str, np.ndarray], list[onnx.NodeProto]]:
        """The initializers (checked) and nodes of subgraph `graph`."""
        limit = limit_of("max_graph_nesting")
        if depth > limit:
            raise _invalid(
                f"{where}: subgraphs are nested more than {limit} levels deep "
                "(SYNAPC_MAX_GRAPH_NESTING raises it)"
            )
        constants = {}
        for init in graph.initializer:
            array = tensor_to_array(
                init, f"{self.path}: {where}: initializer '{shown(init.name)}'"
            )
            self._spend(array.size, f"{where}: ")
            constants[init.name] = array
        return constants, list(graph.node)

    def _run_graph(
        self,
        graph: onnx.GraphProto,
        prepared: tuple[dict[str, np.ndarray], list[onnx.NodeProto]],
        env: dict[str, np.ndarray],
        depth: int,
        where: str,
    ) -> list[np.ndarray]:
        """The outputs of subgraph `graph` evaluated node by node on `env`."""
        constants, nodes = prepared
        local = {**env, **constants}
        for k, inner in enumerate(nodes):
            name = inner.name or (inner.output[0] if inner.output else "")
            label = f"{where} node {k} '{shown(name)}' ({shown(inner.op_type)})"
            try:
                results = self._node(inner, local, None, depth, label)
            except CannotFold as error:
                if error.kind != CannotFold.UNKNOWN:
                    raise
                # the graph cannot be folded, which the user must hear about: a
                # control-flow node has no converter to fall back on
                raise CannotFold(CannotFold.FAILED, error.reason) from None
            for out, value in zip(inner.output, results, strict=False):
                if out and value is not None:
                    local[out] = value
        values = []
        for info in graph.output:
            if info.name not in local:
                raise _invalid(f"{where}: output '{shown(info.name)}' is never computed")
            values.append(local[info.name])
        return values

    def _branch(self, attrs: Mapping[str, Any], key: str, prefix: str) -> onnx.GraphProto:
        graph = attrs.get(key)
        if not isinstance(graph, onnx.GraphProto):
            raise _invalid(f"{prefix}attribute '{key}' must be a graph")
        return graph

    def _if(self, proto, inputs, attrs, env, depth, label) -> list[np.ndarray | None]:
        prefix = f"{label}: " if label else ""
        cond = inputs[0] if inputs else None
        if cond is None or cond.size != 1:
            raise _invalid(f"{prefix}the condition must hold one value")
        key = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
        graph = self._branch(attrs, key, prefix)
        where = f"{label} {key}" if label else f"its {key}"
        values = self._run_graph(
            graph, self._prepare(graph, depth + 1, where), env, depth + 1, where
        )
        if len(values) != len(proto.output):
            raise _invalid(
                f"{prefix}{key} gives {len(values)} outputs for {len(proto.output)}"
            )
        return list(values)

    def _iteration(self, prefix: str) -> None:
        self._iterations += 1
        limit = limit_of("max_loop_iterations")
        if self._iterations > limit:
            raise CannotFold(
                CannotFold.TOO_LARGE,
                f"{prefix}folding it runs more than {limit:,} loop iterations "
                "(SYNAPC_MAX_LOOP_ITERATIONS raises it)",
            )

    def _loop(self, proto, inputs, attrs, env, depth, label) -> list[np.ndarray | None]:
        prefix = f"{label}: " if label else ""
        body = self._branch(attrs, "body", prefix)
        where = f"{label} body" if label else "its body"
        trip = inputs[0] if inputs else None
        cond_in = inputs[1] if len(inputs) > 1 else None
        carried = list(inputs[2:])
        n, k_scans = len(carried), len(body.output) - 1 - len(carried)
        if any(v is None for v in carried):
            raise _invalid(f"{prefix}a loop-carried initial value is missing")
        if len(body.input) != 2 + n or k_scans < 0 or len(proto.output) != n + k_scans:
            raise _invalid(
                f"{prefix}the body's {len(body.input)} inputs and {len(body.output)} "
                f"outputs do not fit {n} loop-carried values and {len(proto.output)} "
                "outputs"
            )
        most = None if trip is None else _number(trip, "the trip count M (input 0)")
        cond = True if cond_in is None else bool(_number(cond_in, "cond (input 1)"))
        prepared = self._prepare(body, depth + 1, where)
        names = [i.name for i in body.input]
        scans: list[list[np.ndarray]] = [[] for _ in range(k_scans)]
        scanned = 0
        it = 0
        while cond and (most is None or it < most):
            self._iteration(prefix)
            local = dict(env)
            local[names[0]] = np.array(it, np.int64)
            local[names[1]] = np.array(cond, np.bool_)
            local.update(zip(names[2:], carried, strict=True))
            outs = self._run_graph(body, prepared, local, depth + 1, where)
            cond = bool(_number(outs[0], f"{where}: the condition output"))
            carried = outs[1 : 1 + n]
            for k, value in enumerate(outs[1 + n :]):
                scans[k].append(value)
                scanned += _size(value)
            self._check_elements(scanned, prefix)
            it += 1
        return carried + [self._stack(s, 0, False, prefix) for s in scans]

    def _stack(
        self, values: list[np.ndarray], axis: int, reverse: bool, prefix: str
    ) -> np.ndarray:
        if not values:
            raise _invalid(
                f"{prefix}it runs no iteration, so its scan outputs have no known shape"
            )
        shapes = {v.shape for v in values}
        if len(shapes) != 1:
            raise _invalid(f"{prefix}a scan output changes shape between iterations")
        if reverse:
            values = values[::-1]
        return np.stack(values, axis=_axis(axis, values[0].ndim + 1, "scan output axis"))

    def _scan(self, proto, inputs, attrs, env, depth, label) -> list[np.ndarray | None]:
        prefix = f"{label}: " if label else ""
        if self.opset < 9:
            raise CannotFold(
                CannotFold.UNKNOWN, f"{prefix}Scan before opset 9 is not folded"
            )
        body = self._branch(attrs, "body", prefix)
        where = f"{label} body" if label else "its body"
        m = int(attrs.get("num_scan_inputs", -1))
        n = len(inputs) - m
        if m < 1 or n < 0 or any(v is None for v in inputs):
            raise _invalid(f"{prefix}num_scan_inputs {m} does not fit {len(inputs)} inputs")
        k_scans = len(body.output) - n
        if len(body.input) != n + m or k_scans < 0 or len(proto.output) != n + k_scans:
            raise _invalid(f"{prefix}the body's inputs and outputs do not fit the Scan")
        state, sequences = list(inputs[:n]), list(inputs[n:])
        in_axes = list(attrs.get("scan_input_axes", [0] * m))
        in_dirs = list(attrs.get("scan_input_directions", [0] * m))
        out_axes = list(attrs.get("scan_output_axes", [0] * k_scans))
        out_dirs = list(attrs.get("scan_output_directions", [0] * k_scans))
        if (len(in_axes), len(in_dirs), len(out_axes), len(out_dirs)) != (
            m,
            m,
            k_scans,
            k_scans,
        ):
            raise _invalid(f"{prefix}the scan axes and directions do not fit its inputs")
        in_axes = [
            _axis(a, s.ndim, "scan input axis")
            for a, s in zip(in_axes, sequences, strict=True)
        ]
        lengths = {int(s.shape[a]) for a, s in zip(in_axes, sequences, strict=True)}
        if len(lengths) != 1:
            raise _invalid(
                f"{prefix}the scan inputs have different lengths {sorted(lengths)}"
            )
        steps = lengths.pop()
        limit = limit_of("max_loop_iterations")
        if self._iterations + steps > limit:
            raise CannotFold(
                CannotFold.TOO_LARGE,
                f"{prefix}folding it runs {steps:,} scan iterations, more than the "
                f"limit of {limit:,} (SYNAPC_MAX_LOOP_ITERATIONS raises it)",
            )
        prepared = self._prepare(body, depth + 1, where)
        names = [i.name for i in body.input]
        scans: list[list[np.ndarray]] = [[] for _ in range(k_scans)]
        scanned = 0
        for t in range(steps):
            self._iteration(prefix)
            local = dict(env)
            local.update(zip(names[:n], state, strict=True))
            for name, seq, axis, direction in zip(
                names[n:], sequences, in_axes, in_dirs, strict=True
            ):
                local[name] = np.take(seq, steps - 1 - t if direction else t, axis=axis)
            outs = self._run_graph(body, prepared, local, depth + 1, where)
            state = outs[:n]
            for k, value in enumerate(outs[n:]):
                scans[k].append(value)
                scanned += _size(value)
            self._check_elements(scanned, prefix)
        return state + [
            self._stack(s, int(a), bool(d), prefix)
            for s, a, d in zip(scans, out_axes, out_dirs, strict=True)
        ]
