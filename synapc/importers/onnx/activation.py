"""ONNX activations and unary math as synap activation ops; they keep whatever layout
their input has. Softmax-like ops move their axis with the layout."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerType

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.base import SynapOp, is_float
from synapc.dtypes import numpy_dtype
from synapc.importers.onnx.helpers import axis_of, broadcast_operands, unary
from synapc.importers.onnx.reader import Importer, Node, converts


def _input(node: Node) -> list[str | None]:
    return node.inputs[:1]


@converts("Relu", quantized=_input)
def relu(imp: Importer, node: Node) -> None:
    unary(imp, node, act.ClampOp, min=0.0)


def _clip_inputs(node: Node) -> list[str | None] | None:
    """A Clip runs quantized (QDQ folding) only with constant bounds, which become
    quantized clamp bounds; run-time bounds are compared in float."""
    bounds = [node.input(i) for i in (1, 2)] if node.opset >= 11 else []
    if any(b is not None and node.importer.const(b) is None for b in bounds):
        return None
    return node.inputs[:1]


@converts("Clip", quantized=_clip_inputs)
def clip(imp: Importer, node: Node) -> None:
    """``min(max(x, low), high)``: `synap.clamp` for constant bounds it can hold, else
    elementwise maximum / minimum with the bound tensors (run-time bounds, integer
    bounds beyond float32's exact range)."""
    if node.opset < 11:
        low, high = node.attr("min"), node.attr("max")
        _clamp(imp, node, low, high)
        return
    names = [node.input(i) for i in (1, 2)]
    for i, name in enumerate(names, start=1):
        if name is not None:
            _check_bound(imp, node, i, name)
    values = [_scalar(imp.const(name)) for name in names]
    if any(n is not None and v is None for n, v in zip(names, values, strict=True)):
        _clip_elementwise(imp, node, *names)
        return
    low, high = values
    element = imp.element_type(node.inputs[0])
    if isinstance(element, IntegerType) and not all(
        v is None or float(np.float32(v)) == v for v in values
    ):  # a clamp property is float32: keep such integer bounds as tensors
        _clip_elementwise(imp, node, *names)
        return
    _clamp(imp, node, low, high)


def _scalar(value: np.ndarray | None) -> float | int | None:
    """The one value of a constant bound (None for an absent or run-time bound)."""
    return None if value is None else np.asarray(value).reshape(-1)[0].item()


def _check_bound(imp: Importer, node: Node, i: int, name: str) -> None:
    """A Clip bound (input `i`) is one value of the input's type."""
    shape = imp.shape(name)
    if int(np.prod(shape)) != 1:
        raise node.fail(f"the bound (input {i}) must be a scalar, got shape {list(shape)}")
    x_element = imp.element_type(node.inputs[0])
    element = imp.element_type(name)
    if element != x_element:
        raise node.fail(
            f"the bound (input {i}) is {element}, the input (input 0) {x_element}"
        )


def _clamp(imp: Importer, node: Node, low: float | None, high: float | None) -> None:
    """Clip by constant bounds as `synap.clamp` (no bounds: the identity)."""
    if low is None and high is None:  # no bounds: the identity
        imp.tensors[imp.out_name(node)] = imp.tensor(node.inputs[0])
        return
    if low is not None and high is not None and low > high:
        low = high  # ONNX: min(max(x, low), high) is `high` everywhere
    props = {k: float(v) for k, v in (("min", low), ("max", high)) if v is not None}
    unary(imp, node, act.ClampOp, **props)


def _clip_elementwise(imp: Importer, node: Node, low: str | None, high: str | None) -> None:
    """``min(max(x, low), high)`` with the bound tensors broadcast to the input (a bound
    above `high` gives `high` everywhere, as ONNX)."""
    current = node.inputs[0]
    steps = [(ew.MaximumOp, low), (ew.MinimumOp, high)]
    steps = [(op_class, name) for op_class, name in steps if name is not None]
    for k, (op_class, name) in enumerate(steps):
        values, perm = broadcast_operands(imp, node, [current, name])
        if k == len(steps) - 1:
            imp.emit(node, op_class, *values, perm=perm)
            return
        op = imp.emit(node, op_class, *values, perm=perm, output=None)
        current = f"{node.outputs[0]}#clip{k}"
        imp.bind(current, op.results[0], perm)


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
    "Sign": act.SignOp,
}


@converts(*_UNARY)
def simple_unary(imp: Importer, node: Node) -> None:
    unary(imp, node, _UNARY[node.op_type])


#: ONNX operators defined on float tensors only, as the synap op of the same function.
_FLOAT_UNARY: dict[str, type[SynapOp]] = {
    "Softplus": act.SoftplusOp,
    "Softsign": act.SoftsignOp,
    "Mish": act.MishOp,
    "Floor": act.FloorOp,
    "Ceil": act.CeilOp,
    "Round": act.RoundOp,
    "Sin": act.SinOp,
    "Cos": act.CosOp,
    "Tan": act.TanOp,
    "Asin": act.AsinOp,
    "Acos": act.AcosOp,
    "Atan": act.AtanOp,
    "Sinh": act.SinhOp,
    "Cosh": act.CoshOp,
    "Asinh": act.AsinhOp,
    "Acosh": act.AcoshOp,
    "Atanh": act.AtanhOp,
}


def _float_input(imp: Importer, node: Node) -> None:
    """Refuse a non-float input of an operator ONNX defines on float tensors only."""
    x = node.inputs[0]
    element = imp.element_type(x)
    if not is_float(element):
        raise node.fail(
            f"input 0 ('{x}') is {element}; {node.op_type} takes float tensors only"
        )


@converts(*_FLOAT_UNARY)
def float_unary(imp: Importer, node: Node) -> None:
    """A float-only ONNX math function or activation as its synap op."""
    _float_input(imp, node)
    unary(imp, node, _FLOAT_UNARY[node.op_type])


@converts("ThresholdedRelu")
def thresholded_relu(imp: Importer, node: Node) -> None:
    """``x if x > alpha else 0`` (float tensors)."""
    _float_input(imp, node)
    unary(imp, node, act.ThresholdedReluOp, alpha=float(node.attr("alpha", 1.0)))


@converts("Shrink")
def shrink(imp: Importer, node: Node) -> None:
    """Soft / hard shrinkage of float or integer tensors."""
    lambd = float(node.attr("lambd", 0.5))
    bias = float(node.attr("bias", 0.0))
    element = imp.element_type(node.inputs[0])
    if isinstance(element, IntegerType) and not (np.isfinite(lambd) and np.isfinite(bias)):
        raise node.fail(
            f"attributes 'lambd' {lambd} and 'bias' {bias} must be finite for an "
            f"integer input ({element})"
        )
    unary(imp, node, act.ShrinkOp, lambd=lambd, bias=bias)


@converts("Celu")
def celu(imp: Importer, node: Node) -> None:
    """``alpha * elu(x / alpha)`` (ONNX's own function body); ELU itself for alpha 1."""
    _float_input(imp, node)
    alpha = float(node.attr("alpha", 1.0))
    if alpha == 0:
        raise node.fail("attribute 'alpha' must not be 0")
    if alpha == 1.0:
        unary(imp, node, act.EluOp)
        return
    x = node.inputs[0]
    perm = imp.perm(x)
    factor = f"{node.outputs[0]}#alpha"
    dtype = numpy_dtype(imp.element_type(x))
    imp.bind_const(factor, np.full((1,) * imp.rank(x), alpha, dtype))
    scaled = imp.append(
        ew.DivOp.make(imp.get(x, "any"), imp.get(factor, perm), **node.source)
    )
    value = imp.append(act.EluOp.make(scaled, **node.source))
    imp.emit(node, ew.MulOp, value, imp.get(factor, perm), perm=perm)


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
