"""ONNX activations and unary math as synap activation ops; they keep whatever layout
their input has. Softmax-like ops move their axis with the layout."""

from __future__ import annotations

import numpy as np

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
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
    if low is None and high is None:  # no bounds: the identity
        imp.tensors[imp.out_name(node)] = imp.tensor(node.inputs[0])
        return
    if low is not None and high is not None and low > high:
        low = high  # ONNX: min(max(x, low), high) is `high` everywhere
    props = {k: float(v) for k, v in (("min", low), ("max", high)) if v is not None}
    unary(imp, node, act.ClampOp, **props)


@converts("LeakyRelu", quantized=_input)
def leaky_relu(imp: Importer, node: Node) -> None:
    unary(imp, node, act.LeakyReluOp, alpha=float(node.attr("alpha", 0.01)))


@converts("Elu")
def elu(imp: Importer, node: Node) -> None:
    unary(imp, node, act.EluOp, alpha=float(node.attr("alpha", 1.0)))


@converts("Selu")
def selu(imp: Importer, node: Node) -> None:
    """``gamma * elu(x, alpha)``: an ELU scaled by a broadcast constant."""
    x = node.inputs[0]
    alpha = float(node.attr("alpha", 1.67326319217681884765625))
    gamma = float(node.attr("gamma", 1.05070102214813232421875))
    perm = imp.perm(x)
    value = imp.append(act.EluOp.make(imp.get(x, "any"), alpha=alpha, **node.source))
    factor = f"{node.outputs[0]}#gamma"
    imp.bind_const(factor, np.full((1,) * imp.rank(x), gamma, np.float32))
    imp.emit(node, ew.MulOp, value, imp.get(factor), perm=perm)


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
    "Erf": act.ErfOp,
    "HardSwish": act.HardSwishOp,
    "Exp": act.ExpOp,
    "Log": act.LogOp,
    "Sqrt": act.SqrtOp,
    "Abs": act.AbsOp,
    "Neg": act.NegOp,
}


@converts(*_UNARY)
def simple_unary(imp: Importer, node: Node) -> None:
    unary(imp, node, _UNARY[node.op_type])


@converts("Softmax", "LogSoftmax")
def softmax(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    op_class = act.SoftmaxOp if node.op_type == "Softmax" else act.LogSoftmaxOp
    axis = node.axis(node.int_attr("axis", -1 if node.opset >= 13 else 1), rank)
    if node.opset >= 13 or axis == rank - 1:
        unary(imp, node, op_class, axis=axis_of(imp, x, axis))
        return
    # before opset 13 the input is flattened to 2-D at `axis`
    shape = imp.shape(x)
    value = imp.get(x, quantized=node.quantized)
    flat = imp.reshape(value, (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))
    op = imp.emit(node, op_class, flat, output=None, axis=1)
    imp.bind(imp.out_name(node), imp.reshape(op.results[0], shape))
