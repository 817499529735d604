"""Helpers shared by the ONNX converters: padding rules, elementwise ops in any layout,
and bringing 1-D (NCW) tensors into the 2-D (NHWC) ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx import helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from synapc.dialects.synap.base import SynapOp, element_of, shape_of
from synapc.dialects.synap.conversion import CastOp
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.importers.onnx import layout
from synapc.importers.onnx.reader import Importer, Node


def cast_to(
    imp: Importer, node: Node, value: SSAValue, element: Attribute, **props: bool
) -> SSAValue:
    """`value` converted to element type `element` by a synap.cast attributed to `node`
    (`value` itself when it has that type already); `props` are CastOp properties such as
    ``saturate``. One helper so every converter casts the same way."""
    if element_of(value) == element:
        return value
    result = TensorType(element, shape_of(value))
    return imp.append(CastOp.make(value, result_types=[result], **props, **node.source))


def compute_element(element: Attribute) -> Attribute:
    """The float type a composed computation on `element` values runs in: float32, or
    float64 for double (a wider type than float32), so narrow inputs do not lose
    precision in the intermediate steps."""
    wide = numpy_dtype(element).itemsize > 4  # type: ignore[arg-type]
    return element_type_for(np.float64 if wide else np.float32)


def interleave_pads(begins: Sequence[int], ends: Sequence[int]) -> list[int]:
    """Begin and end paddings per axis as the N-D ops' ``pad`` property:
    ``[begin_0, end_0, begin_1, end_1, ...]``."""
    return [v for pair in zip(begins, ends, strict=True) for v in pair]


def conv_padding(
    node: Node,
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """ONNX `pads` / `auto_pad` of a window op: ``[begin_0, ..., end_0, ...]``."""
    rank = len(spatial)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = node.ints_attr("pads", [0] * 2 * rank)
        if len(pads) != 2 * rank:
            raise node.fail(f"attribute 'pads' {pads} must have {2 * rank} values")
        return pads
    if auto_pad == "VALID":
        return [0] * 2 * rank
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.fail(f"auto_pad '{auto_pad}' is not supported")
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations, strict=True):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def to_2d(pads: Sequence[int]) -> tuple[int, int, int, int]:
    """ONNX 2-D pads ``[top, left, bottom, right]`` as ``[top, bottom, left, right]``."""
    return (pads[0], pads[2], pads[1], pads[3])


def window_attrs(
    node: Node, spatial: Sequence[int], kernel: Sequence[int]
) -> tuple[list[int], list[int], list[int]]:
    """`strides`, `dilations` and begin/end `pads` of a conv or pool node, each checked to
    have one value per spatial axis (`checks.check_node` has checked their ranges)."""
    rank = len(spatial)
    kernel = list(kernel)
    if len(kernel) != rank:
        raise node.fail(f"kernel shape {kernel} must have {rank} values")
    if any(k < 1 for k in kernel):
        raise node.fail(f"kernel shape {kernel} must be positive")
    given = node.ints_attr("kernel_shape")
    if given is not None and given != kernel:
        raise node.fail(f"attribute 'kernel_shape' {given} does not match {kernel}")
    strides = node.ints_attr("strides", [1] * rank)
    dilations = node.ints_attr("dilations", [1] * rank)
    for name, values in (("strides", strides), ("dilations", dilations)):
        if len(values) != rank:
            raise node.fail(f"attribute '{name}' {values} must have {rank} values")
    pads = conv_padding(node, spatial, kernel, strides, dilations)
    return strides, dilations, pads


def channels_last_2d(
    imp: Importer, node: Node, name: str, quantized: bool = False
) -> SSAValue:
    """Input `name` (rank 3 NCW or rank 4 NCHW) as an NHWC value (NCW as N, 1, W, C)."""
    rank = imp.rank(name)
    if rank not in (3, 4):
        raise node.fail(f"input '{name}' must have rank 3 or 4, got {rank}")
    value = imp.get(name, layout.channels_last(rank), quantized=quantized)
    if rank == 3:
        n, w, c = shape_of(value)
        value = imp.reshape(value, (n, 1, w, c))
    return value


def bind_channels_last(imp: Importer, node: Node, op: SynapOp, rank: int) -> None:
    """Bind `op`'s NHWC result to `node`'s output, dropping the unit H of a 1-D op."""
    value = op.results[0]
    if rank == 3:
        n, _, w, c = shape_of(value)
        value = imp.reshape(value, (n, w, c))
    imp.bind(imp.out_name(node), value, layout.channels_last(rank))


def unary(imp: Importer, node: Node, op_class: type[SynapOp], **props: Any) -> None:
    """An elementwise op of input 0, computed in whatever layout the input has."""
    x = node.inputs[0]
    imp.emit(
        node,
        op_class,
        imp.get(x, "any", quantized=node.quantized),
        perm=imp.perm(x),
        **props,
    )


def common_layout(imp: Importer, names: Sequence[str]) -> tuple[int, layout.Perm]:
    """Rank and layout for an elementwise op of `names`: the full rank, in the layout of
    the first full-rank operand stored in a non-logical layout."""
    rank = max(imp.rank(n) for n in names)
    for n in names:
        t = imp.tensor(n)
        if t.array is None and t.perm is not None and imp.rank(n) == rank:
            return rank, t.perm
    return rank, None


def broadcast_operands(
    imp: Importer, node: Node, names: Sequence[str]
) -> tuple[list[SSAValue], layout.Perm]:
    """`names` brought to one rank and layout for a broadcasting elementwise op."""
    rank, perm = common_layout(imp, names)
    values = [imp.get(n, perm, rank=rank, quantized=node.quantized) for n in names]
    return values, perm


def binary(imp: Importer, node: Node, op_class: type[SynapOp], **props: Any) -> None:
    """A broadcasting elementwise op of inputs 0 and 1."""
    values, perm = broadcast_operands(imp, node, node.inputs[:2])
    imp.emit(node, op_class, *values, perm=perm, **props)


def axis_of(imp: Importer, name: str, axis: int) -> int:
    """Where logical `axis` of tensor `name` is in its IR value."""
    return layout.physical_axis(imp.perm(name), axis, imp.rank(name))


def output_datatype(node: Node) -> np.dtype:
    """The numpy dtype of the node's ``output_datatype`` attribute (an ONNX element
    type code, float32 when absent), refused by name when synapc has no such type."""
    code = node.int_attr("output_datatype", 1)
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(code))
        element_type_for(dtype)
    except (KeyError, TypeError, ValueError):
        raise node.fail(
            f"attribute 'output_datatype' {code} is not a type synapc supports"
        ) from None
    return dtype
