"""QuantizeLinear / DequantizeLinear as explicit arithmetic of synap ops.

The `!quant.uniform` path (quantized.py) holds 8-, 16- and 32-bit integers with
constant per-tensor or per-axis parameters: what QDQ models use. What it cannot hold
(float8 / float4 / 4- and 2-bit storage, blocked quantization, a scale or zero point
computed at run time, `output_dtype` / `precision`) is converted here, following ONNX's
reference implementation exactly:

- DequantizeLinear: ``y = (float32(x) - float32(zero_point)) * scale``, computed in
  float32 and cast to `output_dtype` (default: the scale's type). float8 / float4
  inputs take no zero point (it must be 0).
- QuantizeLinear to integers: ``q = x / scale`` (in `precision`, default numpy's
  promoted type of x and the scale; float64 computes as float32 on the target), rounded
  half to even, plus the zero point (float32), clamped to the storage range and cast to
  it (exact: the value is integral and in range). NaN becomes what the reference gives
  (the storage minimum, or the maximum for a negative zero point).
- QuantizeLinear to float8: ``x / scale`` cast with the node's `saturate` (the zero point
  must be 0); to float4 e2m1: ``x / scale + zero_point`` cast (saturating).

Scales and zero points are expanded to the input's shape: repeated along `axis` in
blocks of `block_size` (a constant at import with numpy; a run-time one with a gather of
constant indices), or reshaped to broadcast (per tensor, per axis). Everything is
computed in the logical (ONNX) layout.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap import logical as lg
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.conversion import DequantizeOp
from synapc.dialects.synap.data_movement import GatherOp
from synapc.dialects.synap.logical import SelectOp
from synapc.dtypes import element_type_for
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.helpers import cast_to
from synapc.importers.onnx.quant_types import dtype_of, holds_quantized_type, onnx_dtype
from synapc.importers.onnx.reader import Importer, Node

__all__ = [
    "dequantize",
    "dtype_of",
    "expanded_param",
    "holds_quantized_type",
    "quantize",
    "stored_integers",
]

#: Integer storage types of QuantizeLinear, with their saturation range.
INTEGER_RANGES: dict[str, tuple[int, int]] = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "uint16": (0, 65535),
    "int16": (-32768, 32767),
    "uint4": (0, 15),
    "int4": (-8, 7),
    "uint2": (0, 3),
    "int2": (-2, 1),
}
#: float8 storage types: the zero point must be 0, `saturate` applies.
FLOAT8 = frozenset({"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"})
#: float4 storage type: saturating, the zero point is added before the cast.
FLOAT4 = "float4_e2m1fn"
_F32 = np.dtype(np.float32)


def _cast(
    imp: Importer, node: Node, value: SSAValue, dtype: np.dtype, **props: bool
) -> SSAValue:
    """`value` cast to numpy `dtype` (itself when it has that type already)."""
    return cast_to(imp, node, value, element_type_for(dtype), **props)


def _constant(imp: Importer, node: Node, array: np.ndarray, label: str) -> SSAValue:
    const = imp.weights.constant(np.ascontiguousarray(array), f"{node.name}.{label}")
    imp.ops.append(const)
    return const.results[0]


def _checked_shape(
    node: Node, param: str, shape: tuple[int, ...], x_shape: tuple[int, ...], axis: int
) -> int:
    """Check `param`'s shape against the input's (ONNX's granularities); returns the block
    size (0: per tensor or per axis)."""
    block = node.int_attr("block_size", 0)
    if block < 0:
        raise node.fail(f"block_size={block} must be positive")
    if block == 0:
        size = int(np.prod(shape))
        if len(shape) > 1 or (size != 1 and size != x_shape[axis]):
            raise node.fail(
                f"the {param} has shape {list(shape)}: per-axis quantization along axis "
                f"{axis} of {list(x_shape)} needs 1 or {x_shape[axis]} values "
                "(blocked quantization needs block_size)"
            )
        return 0
    blocks = -(-x_shape[axis] // block)
    wanted = list(x_shape)
    wanted[axis] = blocks
    if list(shape) != wanted:
        raise node.fail(
            f"the {param} has shape {list(shape)}, but block_size={block} along axis "
            f"{axis} of {list(x_shape)} needs {wanted} (ceil({x_shape[axis]}/{block}) "
            "blocks)"
        )
    return block


def expanded_param(
    imp: Importer, node: Node, k: int, x: str, axis: int, dtype: np.dtype
) -> SSAValue:
    """Input `k` (scale or zero point) of `node` as a `dtype` value that broadcasts to
    input `x` (logical layout): repeated in blocks, reshaped per axis or per tensor."""
    name = node.inputs[k]
    param = "scale" if k == 1 else "zero point"
    x_shape = imp.shape(x)
    rank = len(x_shape)
    shape = imp.shape(name)
    block = _checked_shape(node, f"{param} '{shown(name)}'", shape, x_shape, axis)
    unit = [1] * rank
    per_axis = list(unit)
    per_axis[axis] = x_shape[axis]
    array = imp.const(name)
    if array is not None:
        array = np.asarray(array)
        if block:
            array = np.repeat(array, block, axis=axis).take(range(x_shape[axis]), axis=axis)
        else:
            array = array.reshape(unit if array.size == 1 else per_axis)
        return _constant(imp, node, array.astype(dtype), param.replace(" ", "_"))
    value = imp.get(name)
    if block:
        indices = np.arange(x_shape[axis], dtype=np.int32) // block
        picks = _constant(imp, node, indices, f"{param.replace(' ', '_')}_blocks")
        value = imp.append(GatherOp.make(value, picks, axis=axis, **node.source))
    else:
        size = int(np.prod(shape))
        value = imp.reshape(value, unit if size == 1 else per_axis)
    return _cast(imp, node, value, dtype)


def stored_integers(imp: Importer, node: Node, x: str, dtype: np.dtype = _F32) -> SSAValue:
    """The storage integers of tensor `x` as `dtype` (logical layout), also when `x`
    holds a `!quant.uniform` type (a QuantizeLinear's output): its real values
    ``(q - zero_point) * scale`` are dequantized and the integers recovered as
    ``round(real / scale) + zero_point``, exact while ``|q - zero_point| < 2**22`` (all
    8- and 16-bit storage; int32 storage beyond that is off by float32's rounding, as
    float32(x) itself is beyond 2**24)."""
    t = imp.tensor(x)
    if t.qtype is None or t.dequantized:
        return _cast(imp, node, imp.get(x), dtype)
    if t.array is not None:
        return _constant(imp, node, t.array.astype(dtype), "stored")
    value = imp.get(x)
    qtype = element_of(value)
    f32 = element_type_for(_F32)
    real = imp.append(
        DequantizeOp.make(
            value, result_types=[TensorType(f32, shape_of(value))], **node.source
        )
    )
    rank = imp.rank(x)
    params = [np.asarray(qtype.scales, _F32), np.asarray(qtype.zero_points, _F32)]
    shape = [1] * rank
    if qtype.is_per_axis:
        shape[qtype.quantized_dimension] = -1
    scale, zero = (
        _constant(imp, node, p.reshape(shape), label)
        for p, label in zip(params, ("stored_scale", "stored_zero"), strict=True)
    )
    steps = imp.append(ew.DivOp.make(real, scale, **node.source))
    steps = imp.append(act.RoundOp.make(steps, **node.source))
    stored = imp.append(ew.AddOp.make(steps, zero, **node.source))
    return _cast(imp, node, stored, dtype)


def _zero_point_is_zero(imp: Importer, node: Node, what: str) -> None:
    """Refuse a zero point that is not a constant 0 (float8 / float4 storage)."""
    zp = node.input(2)
    if zp is None:
        return
    array = imp.const(zp)
    if array is None:
        raise node.fail(f"the zero point '{shown(zp)}' of {what} must be a constant 0")
    if np.any(np.asarray(array).astype(np.float32) != 0):
        raise node.fail(f"the zero point '{shown(zp)}' of {what} must be 0")


def _axis(imp: Importer, node: Node, x: str) -> int:
    """The quantization axis (checked only when the scale is not one value: a
    per-tensor node may carry any axis)."""
    rank = imp.rank(x)
    per_tensor = int(np.prod(imp.shape(node.inputs[1]))) == 1
    if rank == 0 or (per_tensor and not node.int_attr("block_size", 0)):
        return 0
    return node.axis(node.attr("axis", 1), rank)


def dequantize(imp: Importer, node: Node) -> None:
    """DequantizeLinear of `node` as ``(x - zero_point) * scale`` (see the module)."""
    x = node.inputs[0]
    x_dtype = dtype_of(imp, x)
    scale_dtype = dtype_of(imp, node.inputs[1])
    if scale_dtype.kind != "f" and scale_dtype.name != "bfloat16":
        raise node.fail(
            f"the scale '{shown(node.inputs[1])}' must be float, got {scale_dtype}"
        )
    out_dtype = onnx_dtype(node, "output_dtype") or scale_dtype
    axis = _axis(imp, node, x)
    value = stored_integers(imp, node, x)
    zp = node.input(2)
    if x_dtype.name in FLOAT8 or x_dtype.name == FLOAT4:
        _zero_point_is_zero(imp, node, f"{x_dtype.name} input")
    elif zp is not None:
        zp_dtype = dtype_of(imp, zp)
        if zp_dtype != x_dtype:
            raise node.fail(
                f"the zero point '{shown(zp)}' is {zp_dtype}, the input '{shown(x)}' "
                f"{x_dtype}: they must have one type"
            )
        zero = expanded_param(imp, node, 2, x, axis, _F32)
        value = imp.append(ew.SubOp.make(value, zero, **node.source))
    scale = expanded_param(imp, node, 1, x, axis, _F32)
    value = imp.append(ew.MulOp.make(value, scale, **node.source))
    imp.bind(node.outputs[0], _cast(imp, node, value, out_dtype))


def _target(imp: Importer, node: Node) -> np.dtype:
    """QuantizeLinear's storage type: the zero point's, else `output_dtype`, else uint8."""
    output_dtype = onnx_dtype(node, "output_dtype")
    zp = node.input(2)
    if zp is None:
        return output_dtype or np.dtype(np.uint8)
    zp_dtype = dtype_of(imp, zp)
    if output_dtype is not None and output_dtype != zp_dtype:
        raise node.fail(
            f"output_dtype {output_dtype} differs from the zero point's type {zp_dtype}"
        )
    return zp_dtype


def _precision(
    imp: Importer, node: Node, x_dtype: np.dtype, scale_dtype: np.dtype
) -> np.dtype:
    """The type `x / scale` is computed in: `precision`, else numpy's promoted type of
    x and the scale (as ONNX's reference computes ``x / scale``; float32 for bfloat16
    with float16, which numpy does not promote). float64 is computed as float32 on the
    target (the JAX backend has no float64), so float64 inputs round as float32 does."""
    precision = onnx_dtype(node, "precision")
    if precision is not None:
        if precision.kind != "f" and precision.name != "bfloat16":
            raise node.fail(f"precision {precision} is not a float type")
        return precision
    try:
        return np.result_type(x_dtype, scale_dtype)
    except TypeError:  # bfloat16 with float16: numpy has no common type
        return _F32


def _nan_as_reference(
    imp: Importer, node: Node, value: SSAValue, zero: SSAValue | None, low: int, high: int
) -> SSAValue:
    """`value` (float32 ``round(x / scale) + zero_point``) with NaN replaced by what ONNX's
    reference gives: it casts NaN to int32's minimum (numpy on x86), adds the zero point
    in int32 (wrapping for a negative one) and clamps, so NaN becomes the storage minimum
    when the zero point is >= 0 and the storage maximum when it is negative."""
    src = node.source
    unit = [1] * len(shape_of(value))
    lowest = _constant(imp, node, np.full(unit, low, _F32), "nan_low")
    fill = lowest
    if zero is not None:
        highest = _constant(imp, node, np.full(unit, high, _F32), "nan_high")
        zeros = _constant(imp, node, np.zeros(unit, _F32), "nan_zero")
        negative = imp.append(lg.LessOp.make(zero, zeros, **src))
        fill = imp.append(
            SelectOp.make(negative, highest, lowest, element_type=element_of(value), **src)
        )
    nan = imp.append(lg.IsNaNOp.make(value, **src))
    return imp.append(
        SelectOp.make(nan, fill, value, element_type=element_of(value), **src)
    )


def quantize(imp: Importer, node: Node) -> None:
    """QuantizeLinear of `node` as explicit arithmetic (see the module)."""
    x = node.inputs[0]
    target = _target(imp, node)
    x_dtype = dtype_of(imp, x)
    scale_dtype = dtype_of(imp, node.inputs[1])
    if scale_dtype.kind != "f" and scale_dtype.name != "bfloat16":
        raise node.fail(
            f"the scale '{shown(node.inputs[1])}' must be float, got {scale_dtype}"
        )
    if x_dtype.kind != "f" and x_dtype.name != "bfloat16":
        raise node.fail(f"input 0 ('{shown(x)}') must be float, got {x_dtype}")
    if target.name not in INTEGER_RANGES and target.name not in FLOAT8 | {FLOAT4}:
        raise node.fail(f"quantization to {target} is not supported")
    compute = _precision(imp, node, x_dtype, scale_dtype)
    axis = _axis(imp, node, x)
    src = node.source
    value = _cast(imp, node, imp.get(x), compute)
    scale = expanded_param(imp, node, 1, x, axis, compute)
    value = imp.append(ew.DivOp.make(value, scale, **src))
    if target.name in FLOAT8:
        _zero_point_is_zero(imp, node, f"{target.name} output")
        saturate = bool(node.int_attr("saturate", 1))
        imp.bind(node.outputs[0], _cast(imp, node, value, target, saturate=saturate))
        return
    if target.name in INTEGER_RANGES:
        value = _cast(imp, node, imp.append(act.RoundOp.make(value, **src)), _F32)
    else:
        value = _cast(imp, node, value, _F32)
    zero = None
    if node.input(2) is not None:
        zero = expanded_param(imp, node, 2, x, axis, _F32)
        value = imp.append(ew.AddOp.make(value, zero, **src))
    if target.name in INTEGER_RANGES:
        low, high = INTEGER_RANGES[target.name]
        value = _nan_as_reference(imp, node, value, zero, low, high)
        value = imp.append(act.ClampOp.make(value, min=float(low), max=float(high), **src))
    imp.bind(node.outputs[0], _cast(imp, node, value, target))
