"""ONNX broadcasting arithmetic as synap elementwise ops, computed in the layout of
their first non-logical operand (constants follow on the host)."""

from __future__ import annotations

from synapc.dialects.synap import elementwise as ew
from synapc.importers.onnx.helpers import binary, broadcast_operands
from synapc.importers.onnx.reader import Importer, Node, converts

_BINARY = {
    "Add": ew.AddOp,
    "Sub": ew.SubOp,
    "Mul": ew.MulOp,
    "Div": ew.DivOp,
    "Pow": ew.PowOp,
}
_VARIADIC = {"Sum": ew.AddOp, "Max": ew.MaximumOp, "Min": ew.MinimumOp}


def _binary_inputs(node: Node) -> list[str | None] | None:
    return node.inputs[:2] if node.op_type in ("Add", "Sub", "Mul") else None


@converts(*_BINARY, quantized=_binary_inputs)
def arithmetic(imp: Importer, node: Node) -> None:
    props = {"pot_scale_int16": False} if node.op_type in ("Add", "Sub") else {}
    binary(imp, node, _BINARY[node.op_type], **props)


@converts(*_VARIADIC)
def variadic(imp: Importer, node: Node) -> None:
    op_class = _VARIADIC[node.op_type]
    names = [n for n in node.inputs if n]
    if len(names) == 1:
        imp.tensors[imp.out_name(node)] = imp.tensor(names[0])
        return
    values, perm = broadcast_operands(imp, node, names)
    result = values[0]
    for k, value in enumerate(values[1:]):
        last = k == len(values) - 2
        op = imp.emit(node, op_class, result, value, perm=perm, output=0 if last else None)
        result = op.results[0]


@converts("PRelu")
def prelu(imp: Importer, node: Node) -> None:
    x, slope = node.inputs[0], node.inputs[1]
    rank = imp.rank(x)
    perm = imp.perm(x)
    value = imp.get(x, "any")
    slope_value = imp.get(slope, perm, rank=rank)
    imp.emit(node, ew.PReluOp, value, slope_value, perm=perm)
