"""ONNX transformer-block operators: `SwiGLU` and `FlexAttention` (ai.onnx.preview).

`SwiGLU` is ``Swish_alpha(A) * B`` (a `synap.swish` and a `synap.mul`), computed in the
layout its inputs have. `FlexAttention` without modifier subgraphs is one
`synap.attention` (the fused layer; it shares key / value heads for grouped-query
attention itself). With a `score_mod` or `prob_mod` subgraph the attention is composed so
that the subgraph can be converted in place between its stages: ``Q K^T`` (`synap.matmul`)
times the scale, `score_mod`, `synap.softmax` over the keys, `prob_mod`, then the product
with V. The stages run in the softmax precision (float32 for float16 / bfloat16 inputs,
as ONNX asks), and the result is cast back to V's type.
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.attention import AttentionOp
from synapc.dialects.synap.base import element_of, is_float, shape_of
from synapc.dialects.synap.conv import MatMulOp
from synapc.dialects.synap.data_movement import GatherOp
from synapc.dtypes import element_type_for
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.control_flow import check_nesting, convert_subgraph
from synapc.importers.onnx.helpers import broadcast_operands, cast_to, compute_element
from synapc.importers.onnx.reader import Importer, Node, Tensor, converts
from synapc.importers.onnx.reduce import combine, scalar

#: `softmax_precision` values ONNX allows, as numpy types.
_PRECISIONS: dict[int, Any] = {
    TensorProto.FLOAT: np.float32,
    TensorProto.FLOAT16: np.float16,
    TensorProto.DOUBLE: np.float64,
    TensorProto.BFLOAT16: ml_dtypes.bfloat16,
}


def _float_inputs(imp: Importer, node: Node, count: int) -> Attribute:
    """The common float element type of the node's first `count` inputs (all required)."""
    names = [node.input(i) for i in range(count)]
    if None in names or len(node.inputs) > count:
        raise node.fail(f"{node.op_type} takes exactly {count} inputs, got {node.inputs}")
    element = imp.element_type(names[0])
    for name in names:
        if not is_float(imp.element_type(name)):
            raise node.fail(
                f"input '{shown(name)}' is {imp.element_type(name)}; "
                f"{node.op_type} takes float tensors only"
            )
        if imp.element_type(name) != element:
            raise node.fail(
                f"input '{shown(name)}' is {imp.element_type(name)}; input "
                f"'{shown(names[0])}' is {element}: the types must be equal"
            )
    return element


# -- SwiGLU ----------------------------------------------------------------------------
@converts("SwiGLU")
def swiglu(imp: Importer, node: Node) -> None:
    """``Swish_alpha(A) * B`` for A and B of one shape (no broadcasting)."""
    _float_inputs(imp, node, 2)
    gate_name, value_name = node.inputs
    if imp.shape(gate_name) != imp.shape(value_name):
        raise node.fail(
            f"A '{shown(gate_name)}' {list(imp.shape(gate_name))} and B "
            f"'{shown(value_name)}' {list(imp.shape(value_name))} must have one shape"
        )
    alpha = node.attr("alpha", 1.0)
    if not isinstance(alpha, float) or not math.isfinite(alpha):
        raise node.fail(f"attribute 'alpha' must be a finite float, got {alpha!r}")
    (gate, value), perm = broadcast_operands(imp, node, [gate_name, value_name])
    swished = imp.append(act.SwishOp.make(gate, beta=float(alpha), **node.source))
    imp.emit(node, ew.MulOp, swished, value, perm=perm)


# -- FlexAttention ---------------------------------------------------------------------
def _flex_operands(imp: Importer, node: Node) -> list[SSAValue]:
    """Q, K and V (logical layout), checked to be rank 4 with matching dimensions."""
    _float_inputs(imp, node, 3)
    shapes = [imp.shape(n) for n in node.inputs]
    if any(len(s) != 4 for s in shapes):
        raise node.fail(f"Q, K and V must be rank 4, got {[list(s) for s in shapes]}")
    (batch, q_heads, _, size), (kb, kv_heads, kv_len, k_size), v = shapes
    if kb != batch or v[0] != batch:
        raise node.fail(f"Q, K and V have different batches: {[s[0] for s in shapes]}")
    if k_size != size:
        raise node.fail(f"K's head size {k_size} differs from Q's {size}")
    if v[1] != kv_heads or v[2] != kv_len:
        raise node.fail(f"K {list(shapes[1])} and V {list(v)} differ in heads or length")
    if kv_heads < 1 or q_heads % kv_heads:
        raise node.fail(f"{kv_heads} key/value heads do not divide {q_heads} query heads")
    return [imp.get(n) for n in node.inputs]


def _flex_scale(node: Node, size: int) -> float:
    """Attribute `scale` (default ``1 / sqrt(head_size)``)."""
    scale = node.attr("scale")
    if scale is None:
        return 1 / math.sqrt(size)
    if not isinstance(scale, float) or not math.isfinite(scale):
        raise node.fail(f"attribute 'scale' must be a finite float, got {scale!r}")
    return float(scale)


def _softmax_element(node: Node, element: Attribute) -> Attribute:
    """The softmax precision: attribute `softmax_precision`, else float32 (float64 for
    double inputs)."""
    code = node.attrs.get("softmax_precision")
    if code is None:
        return compute_element(element)
    if code not in _PRECISIONS:
        raise node.fail(
            f"attribute 'softmax_precision' {code!r} is not float, float16, double or "
            "bfloat16"
        )
    return element_type_for(np.dtype(_PRECISIONS[code]))


def _shared_heads(
    imp: Importer, node: Node, value: SSAValue, q_heads: int, role: str
) -> SSAValue:
    """K or V (`role` "k" or "v") with each of its heads repeated for its group of query
    heads. The gather's indices are named by role, so an import is reproducible."""
    kv_heads = shape_of(value)[1]
    if kv_heads == q_heads:
        return value
    name = f"{node.outputs[0]}#heads_{role}"
    imp.bind_const(name, np.arange(q_heads, dtype=np.int32) // (q_heads // kv_heads))
    return imp.append(GatherOp.make(value, imp.get(name), axis=1, **node.source))


def _modifier(imp: Importer, node: Node, key: str, value: SSAValue) -> SSAValue:
    """`value` through modifier subgraph `key` (itself when the node has none): one
    input, one output of the same shape and element type."""
    graph = node.attrs.get(key)
    if graph is None:
        return value
    if not isinstance(graph, onnx.GraphProto):
        raise node.fail(f"attribute '{key}' must be a graph")
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise node.fail(
            f"{key}: a modifier takes one input and gives one output, it has "
            f"{len(graph.input)} and {len(graph.output)}"
        )
    check_nesting(imp, node)
    bindings = {graph.input[0].name: Tensor(value=value)}
    (out,) = convert_subgraph(imp, node, key, graph, bindings, as_values=True)
    rank = len(shape_of(out.value))
    result = imp.transpose(out.value, layout.between(out.perm, None, rank))
    if shape_of(result) != shape_of(value) or element_of(result) != element_of(value):
        raise node.fail(
            f"{key} gives {list(shape_of(result))} {element_of(result)}; it must keep "
            f"its input's {list(shape_of(value))} {element_of(value)}"
        )
    return result


def _composed_attention(
    imp: Importer, node: Node, operands: list[SSAValue], scale: float
) -> SSAValue:
    """``prob_mod(softmax(score_mod(scale Q K^T))) V`` in the softmax precision."""
    element = _softmax_element(node, element_of(operands[0]))
    q, k, v = (cast_to(imp, node, x, element) for x in operands)
    q_heads = shape_of(q)[1]
    k, v = (_shared_heads(imp, node, x, q_heads, role) for x, role in ((k, "k"), (v, "v")))
    scores = imp.append(MatMulOp.make(q, k, transpose_rhs=True, **node.source))
    scores = combine(imp, node, ew.MulOp, scores, scalar(imp, node, scores, scale, "scale"))
    scores = _modifier(imp, node, "score_mod", scores)
    probs = imp.append(act.SoftmaxOp.make(scores, axis=3, **node.source))
    probs = _modifier(imp, node, "prob_mod", probs)
    return imp.append(MatMulOp.make(probs, v, **node.source))


#: FlexAttention's domain. The converter is registered under the bare op type too (the
#: conformance tables name operators by op type) and refuses the node in other domains.
_PREVIEW = "ai.onnx.preview"


@converts("FlexAttention", f"{_PREVIEW}.FlexAttention")
def flex_attention(imp: Importer, node: Node) -> None:
    """FlexAttention: one `synap.attention` without modifiers, composed around the
    `score_mod` / `prob_mod` subgraphs otherwise."""
    if node.proto.domain != _PREVIEW:
        raise node.fail(
            f"FlexAttention is an operator of domain '{_PREVIEW}', not of domain "
            f"'{shown(node.proto.domain or 'ai.onnx')}'"
        )
    operands = _flex_operands(imp, node)
    q, k, v = operands
    scale = _flex_scale(node, shape_of(q)[3])
    element = element_of(v)
    if "score_mod" not in node.attrs and "prob_mod" not in node.attrs:
        _softmax_element(node, element)  # checks softmax_precision
        shapes = AttentionOp.result_shapes(shape_of(q), shape_of(k), shape_of(v), 0)
        imp.emit(
            node,
            AttentionOp,
            q,
            k,
            v,
            None,
            None,
            None,
            None,
            result_types=[TensorType(element, s) for s in shapes],
            scale=scale,
        )
        return
    result = _composed_attention(imp, node, operands, scale)
    imp.bind_output(node, cast_to(imp, node, result, element))
