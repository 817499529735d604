"""QuantizeLinear / DequantizeLinear as explicit arithmetic of synap ops.

The `!quant.uniform` path (quantized.py) holds 8-, 16- and 32-bit integers with
constant per-tensor or per-axis parameters: what QDQ models use. What it cannot hold
(float8 / float4 / 4- and 2-bit storage, blocked quantization, a scale or zero point
computed at run time, `output_dtype` / `precision`) is converted here, following ONNX's
reference implementation exactly:

- DequantizeLinear: ``y = (float32(x) - float32(zero_point)) * scale``, computed in
  float32 and cast to `output_dtype` (default: the scale's type). float8 / float4
  inputs take no zero point (it must be 0).
- QuantizeLinear to integers: ``q = x / scale`` (in `precision`, default the common type
  of x and the scale), rounded half to even, plus the zero point (float32), clamped to
  the storage range and cast to it (exact: the value is integral and in range).
- QuantizeLinear to float8: ``x / scale`` cast with the node's `saturate` (the zero point
  must be 0); to float4 e2m1: ``x / scale + zero_point`` cast (saturating).

Scales and zero points are expanded to the input's shape: repeated along `axis` in
blocks of `block_size` (a constant at import with numpy; a run-time one with a gather of
constant indices), or reshaped to broadcast (per tensor, per axis). Everything is
computed in the logical (ONNX) layout.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.conversion import CastOp
from synapc.dialects.synap.data_movement import GatherOp
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import Importer, Node

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


def dtype_of(imp: Importer, name: str) -> np.dtype:
    """The numpy dtype of tensor `name`'s elements (its real values for a view)."""
    t = imp.tensor(name)
    if t.array is not None and t.qtype is None:
        return t.array.dtype
    return numpy_dtype(imp.element_type(name))


def _onnx_dtype(node: Node, attr: str) -> np.dtype | None:
    """The numpy dtype an ONNX data-type attribute names (None when absent or 0)."""
    code = node.attr(attr, 0)
    if not code:
        return None
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(int(code)))
    except (KeyError, ValueError, TypeError):
        raise node.fail(
            f"attribute {attr}={code} is not a data type synapc reads"
        ) from None


def _cast(
    imp: Importer, node: Node, value: SSAValue, dtype: np.dtype, **props: bool
) -> SSAValue:
    """`value` cast to `dtype` (itself when it has that type already)."""
    element = element_type_for(dtype)
    if element_of(value) == element:
        return value
    result = TensorType(element, shape_of(value))
    return imp.append(CastOp.make(value, result_types=[result], **props, **node.source))


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
    out_dtype = _onnx_dtype(node, "output_dtype") or scale_dtype
    axis = _axis(imp, node, x)
    value = _cast(imp, node, imp.get(x), _F32)
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
    output_dtype = _onnx_dtype(node, "output_dtype")
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
    """The type `x / scale` is computed in: `precision`, else the common type."""
    precision = _onnx_dtype(node, "precision")
    if precision is not None:
        if precision.kind != "f" and precision.name != "bfloat16":
            raise node.fail(f"precision {precision} is not a float type")
        return precision
    return x_dtype if x_dtype == scale_dtype else _F32


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
    if node.input(2) is not None:
        zero = expanded_param(imp, node, 2, x, axis, _F32)
        value = imp.append(ew.AddOp.make(value, zero, **src))
    if target.name in INTEGER_RANGES:
        low, high = INTEGER_RANGES[target.name]
        value = imp.append(act.ClampOp.make(value, min=float(low), max=float(high), **src))
    imp.bind(node.outputs[0], _cast(imp, node, value, target))


def holds_quantized_type(imp: Importer, node: Node) -> bool:
    """Whether QuantizeLinear / DequantizeLinear `node` is one the `!quant.uniform` path
    converts: no block_size, constant float32 scale (one or a 1-D list) and zero point of
    8-, 16- or 32-bit integers, no `precision` or `output_dtype` that changes the types."""
    if node.int_attr("block_size", 0):
        return False
    scale = imp.const(node.input(1))
    if scale is None or scale.dtype != _F32 or scale.ndim > 1:
        return False
    zp = node.input(2)
    zp_array = imp.const(zp) if zp is not None else None
    if zp is not None and (zp_array is None or zp_array.dtype.name not in _QUANT_STORAGE):
        return False
    if node.op_type == "QuantizeLinear":
        if node.attr("precision", 0) not in (0, TensorProto.FLOAT):
            return False
        out = _onnx_dtype(node, "output_dtype")
        stored = zp_array.dtype if zp_array is not None else np.dtype(np.uint8)
        return out is None or out == stored
    if _onnx_dtype(node, "output_dtype") not in (None, _F32):
        return False
    return dtype_of(imp, node.inputs[0]).name in _QUANT_STORAGE


#: The zero-point types `!quant.uniform` stores.
_QUANT_STORAGE = frozenset({"int8", "uint8", "int16", "uint16", "int32"})
