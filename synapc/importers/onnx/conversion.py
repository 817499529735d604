"""ONNX Cast and CastLike as a synap cast (an alias when the type does not change),
with ONNX's `saturate` (float8 targets) and `round_mode` (float8e8m0 targets)."""

from __future__ import annotations

from onnx import helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from synapc.dialects.synap.attributes import ExponentRounding
from synapc.dialects.synap.base import shape_of
from synapc.dialects.synap.conversion import CastOp
from synapc.dtypes import element_type_for
from synapc.importers.onnx.reader import Importer, Node, converts


@converts("Cast")
def cast(imp: Importer, node: Node) -> None:
    """Cast input 0 to the ONNX type of the `to` attribute."""
    try:
        dtype = helper.tensor_dtype_to_np_dtype(int(node.attr("to")))
        element = element_type_for(dtype)
    except (KeyError, TypeError, ValueError):
        raise node.fail(f"cast to ONNX type {node.attr('to')} is not supported") from None
    _cast_to(imp, node, element)


@converts("CastLike")
def cast_like(imp: Importer, node: Node) -> None:
    """Cast input 0 to the element type of input 1 (used by ONNX function bodies)."""
    _cast_to(imp, node, imp.element_type(node.inputs[1]))


def _cast_to(imp: Importer, node: Node, element: Attribute) -> None:
    x = node.inputs[0]
    if imp.element_type(x) == element:
        imp.tensors[node.outputs[0]] = imp.tensor(x)
        return
    rounding = node.attr("round_mode", "up")
    if rounding not in set(ExponentRounding):
        raise node.fail(f"round_mode {rounding!r} must be up, down or nearest")
    value = imp.get(x, "any")
    imp.emit(
        node,
        CastOp,
        value,
        perm=imp.perm(x),
        result_types=[TensorType(element, shape_of(value))],
        saturate=bool(node.attr("saturate", 1)),
        exponent_rounding=ExponentRounding(rounding),
    )
