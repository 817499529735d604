"""ONNX activations and unary math as synap activation ops; they keep whatever layout
their input has. Softmax-like ops move their axis with the layout."""

from __future__ import annotations

import numpy as np

from synapc.dialects.synap import activation as act
from synapc.importers.onnx.helpers import axis_of, unary
from synapc.importers.onnx.reader import Importer, Node, converts


def _input(node: Node) -> list[str | None]:
    return node.inputs[:1]


@converts("Relu", quantized=_input)
def relu(imp: Importer, node: Node) -> None:
    unary(imp, node, act.ClampOp, min=0.0)


@converts("Clip", quantized=_input)
def clip(imp: Importer, node: Node) -> None:
    if node.opset < 11:
        low, high = node.attr("min"), node.attr("max")
    else:
        bounds = []
        for i in (1, 2):
            name = node.input(i)
            value = imp.const(name)
            if name is not None and value is None:
                raise node.fail(f"the bound (input {i}) must be a constant")
            bounds.append(
                None if value is None else float(np.asarray(value).reshape(-1)[0])
            )
        low, high = bounds
    props = {k: float(v) for k, v in (("min", low), ("max", high)) if v is not None}
    unary(imp, node, act.ClampOp, **props)


@converts("LeakyRelu", quantized=_input)
def leaky_relu(imp: Importer, node: Node) -> None:
    unary(imp, node, act.LeakyReluOp, alpha=float(node.attr("alpha", 0.01)))


@converts("Elu")
def elu(imp: Importer, node: Node) -> None:
    unary(imp, node, act.EluOp, alpha=float(node.attr("alpha", 1.0)))


@converts("HardSigmoid")
def hard_sigmoid(imp: Importer, node: Node) -> None:
    unary(
        imp,
        node,
        act.HardSigmoidOp,
        alpha=float(node.attr("alpha", 0.2)),
        beta=float(node.attr("beta", 0.5)),
    )


@converts("Gelu")
def gelu(imp: Importer, node: Node) -> None:
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise node.fail(f"approximate '{approximate}' is not supported")
    unary(imp, node, act.GeluOp, approximate=approximate == "tanh")


_UNARY = {
    "Sigmoid": act.SigmoidOp,
    "Tanh": act.TanhOp,
    "HardSwish": act.HardSwishOp,
    "Exp": act.ExpOp,
    "Log": act.LogOp,
    "Sqrt": act.SqrtOp,
    "Abs": act.AbsOp,
    "Neg": act.NegOp,
}


@converts(*_UNARY, quantized=lambda n: _input(n) if n.op_type == "Sigmoid" else None)
def simple_unary(imp: Importer, node: Node) -> None:
    unary(imp, node, _UNARY[node.op_type])


@converts("Softmax", "LogSoftmax", quantized=_input)
def softmax(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    op_class = act.SoftmaxOp if node.op_type == "Softmax" else act.LogSoftmaxOp
    axis = int(node.attr("axis", -1 if node.opset >= 13 else 1))
    axis = axis + rank if axis < 0 else axis
    if node.opset >= 13 or axis == rank - 1:
        unary(imp, node, op_class, axis=axis_of(imp, x, axis))
        return
    # before opset 13 the input is flattened to 2-D at `axis`
    shape = imp.shape(x)
    value = imp.get(x, quantized=node.quantized)
    flat = imp.reshape(value, (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))
    op = imp.emit(node, op_class, flat, output=None, axis=1)
    imp.bind(imp.out_name(node), imp.reshape(op.results[0], shape))
