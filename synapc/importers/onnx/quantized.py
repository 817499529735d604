"""Quantized ONNX: QuantizeLinear / DequantizeLinear (QDQ models) and the QLinear*
operators of QOperator models.

A QuantizeLinear result is a tensor of `!quant.uniform` type; a DequantizeLinear result
is a *view* of such a tensor (the reader dequantizes it only for consumers that compute
in float), so `DQ -> op -> Q` folds into one quantized op. A QLinear operator is the same
thing spelled as one node: it is converted by building the DQ views of its inputs and
running the float operator's converter in quantized mode. Operators whose integer form
would follow other arithmetic than ONNX Runtime's (softmax, sigmoid: TFLite's fixed output
scale) run as dequantize -> float op -> quantize.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import TensorType, f32

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.conversion import CastOp, QuantizeOp
from synapc.dialects.synap.elementwise import MulOp, SubOp
from synapc.importers.onnx import layout, quantize_arith
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import (
    CONVERTERS,
    Importer,
    Node,
    Tensor,
    converts,
)


@converts("QuantizeLinear")
def quantize_linear(imp: Importer, node: Node) -> None:
    if not quantize_arith.holds_quantized_type(imp, node):
        quantize_arith.quantize(imp, node)
        return
    x = node.inputs[0]
    qtype = imp.quantize_type(node)
    t = imp.tensor(x)
    if t.array is not None:
        real = imp.const(x)
        imp.tensors[node.outputs[0]] = Tensor(
            array=_quantize_array(real, qtype), qtype=qtype
        )
        return
    if t.qtype is not None and t.dequantized and t.qtype == qtype:
        imp.tensors[node.outputs[0]] = Tensor(value=t.value, perm=t.perm, qtype=qtype)
        return
    perm = t.perm
    value = imp.get(x, "any", quantized=t.dequantized)
    physical = _physical_qtype(qtype, perm, imp.rank(x))
    op = QuantizeOp.make(
        value, result_types=[TensorType(physical, shape_of(value))], **node.source
    )
    imp.ops.append(op)
    imp.tensors[node.outputs[0]] = Tensor(value=op.results[0], perm=perm, qtype=physical)


@converts("DequantizeLinear")
def dequantize_linear(imp: Importer, node: Node) -> None:
    if not quantize_arith.holds_quantized_type(imp, node):
        quantize_arith.dequantize(imp, node)
        return
    x = node.inputs[0]
    qtype = imp.quantize_type(node)
    t = imp.tensor(x)
    if t.array is not None:
        ints = t.array
        if ints.dtype != qtype.storage_dtype:
            raise node.fail(f"input type {ints.dtype} does not match zero point type")
        imp.tensors[node.outputs[0]] = Tensor(array=ints, qtype=qtype, dequantized=True)
        return
    element = element_of(t.value)
    if not isinstance(element, UniformQuantizedType):
        imp.tensors[node.outputs[0]] = _dequantize_plain(imp, node, x, qtype, t.perm)
        return
    if element != _physical_qtype(qtype, t.perm, imp.rank(x)):
        raise node.fail(f"input '{x}' is quantized as {element}, not as {qtype}")
    imp.tensors[node.outputs[0]] = Tensor(
        value=t.value, perm=t.perm, qtype=element, dequantized=True
    )


def _dequantize_plain(
    imp: Importer, node: Node, x: str, qtype: UniformQuantizedType, perm: layout.Perm
) -> Tensor:
    """``(x - zero_point) * scale`` of a plain integer tensor (a graph input that holds
    quantized values without a quantized type), computed in float."""
    rank = imp.rank(x)
    value = imp.get(x, "any")
    shape = shape_of(value)
    real = imp.append(
        CastOp.make(value, result_types=[TensorType(f32, shape)], **node.source)
    )
    params = [qtype.zero_points.astype(np.float32), qtype.scales.astype(np.float32)]
    if qtype.is_per_axis:
        axis = layout.physical_axis(perm, qtype.quantized_dimension, rank)
        broadcast = [1] * rank
        broadcast[axis] = -1
        params = [p.reshape(broadcast) for p in params]
    else:
        params = [p.reshape((1,) * rank) for p in params]
    for op_class, param, label in zip((SubOp, MulOp), params, ("zp", "scale"), strict=True):
        const = imp.weights.constant(np.ascontiguousarray(param), f"{node.name}.{label}")
        imp.ops.append(const)
        real = imp.append(op_class.make(real, const.results[0], **node.source))
    return Tensor(value=real, perm=perm)


def _physical_qtype(
    qtype: UniformQuantizedType, perm: layout.Perm, rank: int
) -> UniformQuantizedType:
    """`qtype` with its quantized axis moved to where `perm` stores it."""
    if not qtype.is_per_axis or perm is None:
        return qtype
    axis = layout.physical_axis(perm, qtype.quantized_dimension, rank)
    return UniformQuantizedType.per_axis(
        qtype.storage.data, axis, qtype.scales, qtype.zero_points
    )


def _quantize_array(real: np.ndarray, qtype: UniformQuantizedType) -> np.ndarray:
    """ONNX QuantizeLinear of a constant: round half to even, saturate."""
    scales, zero_points = qtype.scales, qtype.zero_points
    if qtype.is_per_axis:
        shape = [1] * real.ndim
        shape[qtype.quantized_dimension] = -1
        scales, zero_points = scales.reshape(shape), zero_points.reshape(shape)
    q = np.rint(real.astype(np.float32) / scales.astype(np.float32)) + zero_points
    return np.clip(q, qtype.storage_min, qtype.storage_max).astype(qtype.storage_dtype)


# -- QOperator ---------------------------------------------------------------------
def _view(imp: Importer, node: Node, k: int, x: str, scale: str, zp: str | None, axis: int):
    """Name of a dequantized view of quantized input `x` with `scale` / `zp`."""
    name = f"{x}#dq{node.index}.{k}"
    t = imp.tensor(x)
    qtype = imp.qtype(node, scale, zp, axis, imp.rank(x))
    if t.array is not None:
        if t.array.dtype != qtype.storage_dtype:
            raise node.fail(
                f"input {k} ('{shown(x)}') holds {t.array.dtype} values, not the "
                f"{qtype.storage_dtype} of its zero point"
            )
        imp.tensors[name] = Tensor(array=t.array, qtype=qtype, dequantized=True)
    elif not isinstance(element_of(t.value), UniformQuantizedType):
        imp.tensors[name] = _dequantize_plain(imp, node, x, qtype, t.perm)
    else:
        imp.tensors[name] = Tensor(
            value=t.value,
            perm=t.perm,
            qtype=_physical_qtype(qtype, t.perm, imp.rank(x)),
            dequantized=True,
        )
    return name


def _bias_view(imp: Importer, node: Node, bias: str | None, x_scale: str, w_scale: str):
    """A view of an int32 bias quantized with ``x_scale * w_scale`` (per output channel
    when the weights are)."""
    if bias is None:
        return ""
    scale = np.asarray(imp.const(x_scale), np.float64) * np.asarray(
        imp.const(w_scale), np.float64
    ).reshape(-1)
    name = f"{bias}#dq{node.index}"
    scales = scale.reshape(-1)
    zeros = np.zeros(scales.shape, np.int64)
    qtype = (
        UniformQuantizedType.per_tensor("i32", float(scales[0]), 0)
        if scales.size == 1
        else UniformQuantizedType.per_axis("i32", 0, scales, zeros)
    )
    array = imp.const(bias)
    if array is None:
        raise node.fail(f"the bias '{bias}' must be a constant")
    imp.tensors[name] = Tensor(array=array.astype(np.int32), qtype=qtype, dequantized=True)
    return name


def _run(
    imp: Importer,
    node: Node,
    op_type: str,
    inputs: list[str],
    out_scale: str | None,
    out_zp: str | None,
    **attrs: onnx.AttributeProto,
) -> None:
    """Convert `node` as float `op_type` of the dequantized views `inputs`, quantized to
    `out_scale` / `out_zp` (float output when there is no output scale)."""
    if any(imp.tensor(name).qtype is None for name in inputs if name):
        # a plain integer input was dequantized in float: finish the op in float too
        _run_in_float(imp, node, op_type, inputs, out_scale, out_zp, **attrs)
        return
    proto = helper.make_node(op_type, inputs, node.outputs[:1], name=node.name)
    proto.attribute.extend(attrs.values())
    inner = Node(imp, node.index, proto)
    if out_scale is not None:
        inner.out_qtype = imp.qtype(node, out_scale, out_zp, 1, 0)
    CONVERTERS[op_type](imp, inner)


def _run_in_float(
    imp: Importer,
    node: Node,
    op_type: str,
    inputs: list[str],
    out_scale: str | None,
    out_zp: str | None,
    **attrs: onnx.AttributeProto,
) -> None:
    """Convert `node` as dequantize -> float `op_type` -> quantize (no quantize without
    `out_scale`)."""
    real = f"{node.outputs[0]}#real"
    proto = helper.make_node(op_type, inputs, [real], name=node.name)
    proto.attribute.extend(attrs.values())
    CONVERTERS[op_type](imp, Node(imp, node.index, proto))
    if out_scale is None:  # a float result (QGemm without an output scale)
        imp.tensors[node.outputs[0]] = imp.tensor(real)
        return
    qtype = imp.qtype(node, out_scale, out_zp, 1, 0)
    t = imp.tensor(real)
    value = imp.get(real, "any")
    op = QuantizeOp.make(
        value, result_types=[TensorType(qtype, shape_of(value))], **node.source
    )
    imp.ops.append(op)
    imp.tensors[node.outputs[0]] = Tensor(value=op.results[0], perm=t.perm, qtype=qtype)


def _attrs(node: Node, *drop: str) -> dict[str, onnx.AttributeProto]:
    """The node's attributes but `drop`, as they are in the file (types included)."""
    return {a.name: a for a in node.proto.attribute if a.name not in drop}


@converts("QLinearConv")
def qlinear_conv(imp: Importer, node: Node) -> None:
    i = node.inputs
    x = _view(imp, node, 0, i[0], i[1], i[2], 1)
    w = _view(imp, node, 1, i[3], i[4], i[5], 0)
    b = _bias_view(imp, node, node.input(8), i[1], i[4])
    _run(imp, node, "Conv", [x, w, b] if b else [x, w], i[6], i[7], **_attrs(node))


@converts("QLinearMatMul")
def qlinear_matmul(imp: Importer, node: Node) -> None:
    i = node.inputs
    a = _view(imp, node, 0, i[0], i[1], i[2], 1)
    b = _view(imp, node, 1, i[3], i[4], i[5], -1)
    _run(imp, node, "MatMul", [a, b], i[6], i[7])


@converts("com.microsoft.QGemm")
def qgemm(imp: Importer, node: Node) -> None:
    i = node.inputs
    a = _view(imp, node, 0, i[0], i[1], i[2], 1)
    b = _view(imp, node, 1, i[3], i[4], i[5], 0 if node.attr("transB", 0) else 1)
    c = _bias_view(imp, node, node.input(6), i[1], i[4])
    out_scale = node.input(7)
    _run(
        imp,
        node,
        "Gemm",
        [a, b, c] if c else [a, b],
        out_scale,
        node.input(8),
        **_attrs(node),
    )


@converts("com.microsoft.QLinearAdd", "com.microsoft.QLinearMul")
def qlinear_binary(imp: Importer, node: Node) -> None:
    i = node.inputs
    a = _view(imp, node, 0, i[0], i[1], node.input(2), 1)
    b = _view(imp, node, 1, i[3], i[4], node.input(5), 1)
    _run(imp, node, node.op_type.removeprefix("QLinear"), [a, b], i[6], node.input(7))


def _unary_views(imp: Importer, node: Node) -> tuple[str, str, str | None]:
    i = node.inputs
    return _view(imp, node, 0, i[0], i[1], node.input(2), 1), i[3], node.input(4)


@converts("com.microsoft.QLinearGlobalAveragePool")
def qlinear_global_average_pool(imp: Importer, node: Node) -> None:
    if node.attr("channels_last", 0):
        raise node.fail("channels_last=1 is not supported")
    x, scale, zp = _unary_views(imp, node)
    _run(imp, node, "GlobalAveragePool", [x], scale, zp)


@converts("com.microsoft.QLinearAveragePool")
def qlinear_average_pool(imp: Importer, node: Node) -> None:
    if node.attr("channels_last", 0):
        raise node.fail("channels_last=1 is not supported")
    x, scale, zp = _unary_views(imp, node)
    attrs = _attrs(node, "channels_last")
    if node.attr("count_include_pad", 0):
        _run_in_float(imp, node, "AveragePool", [x], scale, zp, **attrs)
    else:
        _run(imp, node, "AveragePool", [x], scale, zp, **attrs)


@converts("com.microsoft.QLinearLeakyRelu")
def qlinear_leaky_relu(imp: Importer, node: Node) -> None:
    x, scale, zp = _unary_views(imp, node)
    _run(imp, node, "LeakyRelu", [x], scale, zp, **_attrs(node))


@converts("com.microsoft.QLinearSigmoid", "com.microsoft.QLinearSoftmax")
def qlinear_in_float(imp: Importer, node: Node) -> None:
    x, scale, zp = _unary_views(imp, node)
    attrs = _attrs(node, "opset")
    op_type = node.op_type.removeprefix("QLinear")
    if op_type == "Softmax" and node.int_attr("opset", 13) < 13:
        # the pre-13 coerced-2D softmax equals the last-axis one only for the last axis
        axis = node.int_attr("axis", 1)
        if axis not in (-1, imp.rank(node.inputs[0]) - 1):
            raise node.fail("a QLinearSoftmax of opset < 13 not over the last axis")
    _run_in_float(imp, node, op_type, [x], scale, zp, **attrs)


@converts("com.microsoft.QLinearConcat")
def qlinear_concat(imp: Importer, node: Node) -> None:
    i = node.inputs
    if len(i) < 5 or (len(i) - 2) % 3:
        raise node.fail(f"{len(i)} inputs are not 2 plus (x, scale, zero point) triples")
    views = [
        _view(imp, node, k, i[j], i[j + 1], node.input(j + 2), 1)
        for k, j in enumerate(range(2, len(i), 3))
    ]
    _run(imp, node, "Concat", views, i[0], node.input(1), **_attrs(node))
