"""ONNX comparisons, boolean logic, Where, IsInf / IsNaN, bitwise ops and BitShift as
the synap ops of `dialects/synap/logical.py`.

They are elementwise, so like the arithmetic of `elementwise` they compute in the layout
of their first non-logical operand (`helpers.broadcast_operands`). ONNX gives both
operands of a binary op one type; a mismatch, or a type the operator does not take, is
refused naming the node and the input.

Quantized comparisons compare real values: two dequantized views of one per-tensor
quantization compare their stored integers (exact, no dequantization); any other pair is
compared as float32 real values (the views are dequantized as DequantizeLinear does).
A Where between dequantized views whose result feeds a QuantizeLinear selects quantized
values (QDQ folding); its kernel requantizes values of another quantization.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Attribute

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import logical as lg
from synapc.dialects.synap.base import SynapOp, element_of, is_float
from synapc.dialects.synap.logical import is_bool, is_plain_integer
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.helpers import binary, broadcast_operands, common_layout, unary
from synapc.importers.onnx.reader import Importer, Node, converts

_COMPARISONS: dict[str, type[SynapOp]] = {
    "Equal": lg.EqualOp,
    "Greater": lg.GreaterOp,
    "GreaterOrEqual": lg.GreaterEqualOp,
    "Less": lg.LessOp,
    "LessOrEqual": lg.LessEqualOp,
}
_LOGICAL: dict[str, type[SynapOp]] = {
    "And": lg.LogicalAndOp,
    "Or": lg.LogicalOrOp,
    "Xor": lg.LogicalXorOp,
}
_BITWISE: dict[str, type[SynapOp]] = {
    "BitwiseAnd": lg.BitwiseAndOp,
    "BitwiseOr": lg.BitwiseOrOp,
    "BitwiseXor": lg.BitwiseXorOp,
}
_SHIFTS: dict[str, type[SynapOp]] = {"LEFT": lg.ShiftLeftOp, "RIGHT": lg.ShiftRightOp}


def _same_type(imp: Importer, node: Node, names: Sequence[str]) -> Attribute:
    """The one element type of the tensors `names` (ONNX's type parameter T), refused
    when they differ.

    A QuantizeLinear result read directly (not through DequantizeLinear) is its stored
    integers to ONNX; it is held as a quantized value, so the ops here take it only next
    to another of the very same per-tensor quantization, where computing on the stored
    integers is what ONNX computes."""
    first = imp.element_type(names[0])
    for name in names[1:]:
        other = imp.element_type(name)
        if other != first:
            quantized = isinstance(first, UniformQuantizedType) or isinstance(
                other, UniformQuantizedType
            )
            hint = (
                " (the stored integers of a QuantizeLinear result combine only with "
                "those of the same quantization)"
                if quantized
                else ""
            )
            raise node.fail(
                f"inputs '{shown(names[0])}' ({first}) and '{shown(name)}' ({other}) "
                f"have different element types{hint}"
            )
    if isinstance(first, UniformQuantizedType) and first.is_per_axis:
        raise node.fail(
            f"input '{shown(names[0])}' holds the stored integers of a per-axis "
            f"QuantizeLinear result ({first}); {node.op_type} of them is not supported"
        )
    return first


def _require(node: Node, name: str, element: Attribute, ok: bool, wanted: str) -> None:
    """Refuse input `name` of `element` type unless `ok` (the operator takes `wanted`)."""
    if not ok:
        raise node.fail(
            f"input '{shown(name)}' is {element}; {node.op_type} takes {wanted} only"
        )


def _legacy_broadcast(imp: Importer, node: Node, names: Sequence[str]) -> list[str]:
    """Inputs A and B as numpy broadcasting takes them. Before opset 7 B broadcasts to A
    only with attribute `broadcast` = 1, its dimensions aligned with A's from `axis`
    (from the end without it); without `broadcast` the shapes must be equal."""
    a, b = names
    if node.opset >= 7:
        return [a, b]
    shape_a, shape_b = imp.shape(a), imp.shape(b)
    if not node.int_attr("broadcast", 0):
        if shape_a != shape_b:
            raise node.fail(
                f"inputs have shapes {list(shape_a)} and {list(shape_b)}; without "
                "attribute 'broadcast' they must be equal"
            )
        return [a, b]
    if "axis" not in node.attrs:
        return [a, b]
    axis = node.axis(node.attrs["axis"], len(shape_a), "attribute 'axis'")
    trailing = len(shape_a) - axis - len(shape_b)
    if trailing < 0:
        raise node.fail(
            f"input '{shown(b)}' of shape {list(shape_b)} does not fit input "
            f"'{shown(a)}' of shape {list(shape_a)} from axis {axis}"
        )
    aligned = f"{b}#from_axis{axis}_of_rank{len(shape_a)}"
    target = (*shape_b, *(1,) * trailing)
    array = imp.const(b)
    if array is not None:
        imp.bind_const(aligned, np.asarray(array).reshape(target))
    else:
        imp.bind(aligned, imp.reshape(imp.get(b), target))
    return [a, aligned]


def _shared_quantization(imp: Importer, names: Sequence[str]) -> bool:
    """Whether the tensors `names` are dequantized views of one per-tensor quantization,
    whose stored integers then compare exactly as their real values do."""
    tensors = [imp.tensor(n) for n in names]
    first = tensors[0].qtype
    return (
        isinstance(first, UniformQuantizedType)
        and not first.is_per_axis
        and all(t.dequantized and t.qtype == first for t in tensors)
    )


@converts(*_COMPARISONS)
def comparison(imp: Importer, node: Node) -> None:
    """Equal / Greater / GreaterOrEqual / Less / LessOrEqual with broadcasting (the
    legacy form before opset 7 too); a boolean result."""
    element = _same_type(imp, node, node.inputs[:2])
    names = _legacy_broadcast(imp, node, node.inputs[:2])
    ordered = node.op_type != "Equal"
    _require(
        node,
        names[0],
        element,
        not (ordered and is_bool(element)),
        "numbers (booleans have no order)",
    )
    quantized = _shared_quantization(imp, names)
    rank, perm = common_layout(imp, names)
    values = [imp.get(n, perm, rank=rank, quantized=quantized) for n in names]
    imp.emit(node, _COMPARISONS[node.op_type], *values, perm=perm)


@converts("IsInf", "IsNaN")
def float_test(imp: Importer, node: Node) -> None:
    """IsInf (with its `detect_negative` / `detect_positive`) and IsNaN of floats."""
    x = node.inputs[0]
    element = imp.element_type(x)
    _require(node, x, element, is_float(element), "floats")
    if node.op_type == "IsNaN":
        unary(imp, node, lg.IsNaNOp)
        return
    unary(
        imp,
        node,
        lg.IsInfOp,
        detect_negative=bool(node.int_attr("detect_negative", 1)),
        detect_positive=bool(node.int_attr("detect_positive", 1)),
    )


@converts("Not")
def logical_not(imp: Importer, node: Node) -> None:
    """Boolean negation."""
    x = node.inputs[0]
    element = imp.element_type(x)
    _require(node, x, element, is_bool(element), "booleans")
    unary(imp, node, lg.LogicalNotOp)


@converts(*_LOGICAL)
def logical(imp: Importer, node: Node) -> None:
    """And / Or / Xor of booleans with broadcasting (the legacy form before opset 7
    too)."""
    element = _same_type(imp, node, node.inputs[:2])
    _require(node, node.inputs[0], element, is_bool(element), "booleans")
    values, perm = broadcast_operands(
        imp, node, _legacy_broadcast(imp, node, node.inputs[:2])
    )
    imp.emit(node, _LOGICAL[node.op_type], *values, perm=perm)


def _integers(imp: Importer, node: Node, names: Sequence[str]) -> None:
    """Refuse inputs `names` unless they are of one integer type."""
    element = _same_type(imp, node, names)
    if isinstance(element, UniformQuantizedType):
        raise node.fail(
            f"input '{shown(names[0])}' holds the stored integers of a QuantizeLinear "
            f"result ({element}); {node.op_type} of them is not supported"
        )
    _require(node, names[0], element, is_plain_integer(element), "integers")


@converts(*_BITWISE)
def bitwise(imp: Importer, node: Node) -> None:
    """BitwiseAnd / BitwiseOr / BitwiseXor of integers with broadcasting."""
    _integers(imp, node, node.inputs[:2])
    binary(imp, node, _BITWISE[node.op_type])


@converts("BitwiseNot")
def bitwise_not(imp: Importer, node: Node) -> None:
    """Bitwise complement of integers."""
    _integers(imp, node, node.inputs[:1])
    unary(imp, node, lg.BitwiseNotOp)


@converts("BitShift")
def bit_shift(imp: Importer, node: Node) -> None:
    """BitShift: `direction` LEFT or RIGHT, amounts as input 1 (broadcast)."""
    direction = node.attr("direction")
    if direction not in _SHIFTS:
        raise node.fail(
            f"attribute 'direction' is {shown(direction)!r}; it must be 'LEFT' or 'RIGHT'"
        )
    _integers(imp, node, node.inputs[:2])
    binary(imp, node, _SHIFTS[direction])


def _where_values(node: Node) -> list[str | None]:
    """The inputs of Where that must be dequantized views for it to run quantized."""
    return node.inputs[1:3]


@converts("Where", quantized=_where_values)
def where(imp: Importer, node: Node) -> None:
    """``condition ? X : Y`` with the three inputs broadcast against each other."""
    condition, x, y = node.inputs[:3]
    kind = imp.element_type(condition)
    _require(node, condition, kind, is_bool(kind), "a boolean condition")
    _same_type(imp, node, [x, y])
    values, perm = broadcast_operands(imp, node, [condition, x, y])
    imp.emit(node, lg.SelectOp, *values, perm=perm, element_type=element_of(values[1]))
