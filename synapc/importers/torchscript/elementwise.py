"""Elementwise aten ops: identities and casts, arithmetic, unary math, activations,
clamps and softmax."""

from __future__ import annotations

from typing import Any

import numpy as np

from synapc.importers.torchscript.translator import (
    Slot,
    Translator,
    aten,
    normalize_axis,
    np_dtype,
    onnx_dtype,
    rank_of,
)


def _same(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    """The result is the input (or the input cast to the result's dtype)."""
    source, out = args[0], outs[0]
    if source.concrete.dtype == out.dtype:
        return [t.tensor(source)]
    return [t.emit("Cast", [t.tensor(source)], to=onnx_dtype(out))]


aten(
    "contiguous",
    "dropout",
    "feature_dropout",
    "alpha_dropout",
    "feature_alpha_dropout",
    "detach",
    "clone",
    "to",
    "type_as",
    "float",
    "alias",
    "lift_fresh",
)(_same)


def _operand(t: Translator, slot: Slot, out: Any) -> str:
    """Operand `slot` of an elementwise op in the dtype of the result `out`."""
    dtype = np_dtype(out)
    if slot.static:
        return t.constant(slot.concrete, dtype)
    if slot.concrete.dtype != out.dtype:
        return t.emit("Cast", [slot.sym], to=onnx_dtype(out))
    return slot.sym


def _scaled(t: Translator, slot: Slot, alpha: Any, out: Any) -> str:
    """`slot` times the number `alpha` (the `alpha` of aten add / sub)."""
    if alpha is None or alpha == 1:
        return _operand(t, slot, out)
    if slot.static:
        value = slot.concrete
        if isinstance(value, t.torch.Tensor):
            value = value.detach().numpy()
        return t.constant(np.asarray(value) * alpha, np_dtype(out))
    factor = t.constant(alpha, np_dtype(out))
    return t.emit("Mul", [_operand(t, slot, out), factor])


@aten("add", "sub")
def _add_sub(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    alpha = args[2].concrete if len(args) > 2 else 1
    op = "Add" if node.kind().startswith("aten::add") else "Sub"
    return [
        t.emit(op, [_operand(t, args[0], outs[0]), _scaled(t, args[1], alpha, outs[0])])
    ]


@aten("rsub")
def _rsub(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    alpha = args[2].concrete if len(args) > 2 else 1
    return [
        t.emit("Sub", [_operand(t, args[1], outs[0]), _scaled(t, args[0], alpha, outs[0])])
    ]


_BINARY = {"mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max", "minimum": "Min"}


@aten(*_BINARY)
def _binary(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    short = node.kind().removeprefix("aten::").rstrip("_")
    if short == "div" and len(args) > 2 and args[2].concrete is not None:
        raise t.fail(f"rounding_mode '{args[2].concrete}' is not supported")
    a = _operand(t, args[0], outs[0])
    if short == "pow" and args[1].static:
        b = t.constant(args[1].concrete, np_dtype(outs[0]))
    else:
        b = _operand(t, args[1], outs[0])
    return [t.emit(_BINARY[short], [a, b])]


_UNARY = {
    "relu": "Relu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "hardswish": "HardSwish",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "abs": "Abs",
    "neg": "Neg",
}


@aten(*_UNARY)
def _unary(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    short = node.kind().removeprefix("aten::").rstrip("_")
    return [t.emit(_UNARY[short], [t.tensor(args[0])])]


@aten("rsqrt")
def _rsqrt(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    root = t.emit("Sqrt", [t.tensor(args[0])])
    return [t.emit("Div", [t.constant(1.0, np_dtype(outs[0])), root])]


@aten("silu")
def _silu(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x = t.tensor(args[0])
    return [t.emit("Mul", [x, t.emit("Sigmoid", [x])])]


@aten("hardsigmoid")
def _hardsigmoid(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    return [t.emit("HardSigmoid", [t.tensor(args[0])], alpha=1.0 / 6.0, beta=0.5)]


@aten("leaky_relu")
def _leaky_relu(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    slope = float(args[1].concrete) if len(args) > 1 else 0.01
    return [t.emit("LeakyRelu", [t.tensor(args[0])], alpha=slope)]


@aten("elu")
def _elu(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    alpha, scale, input_scale = (float(a.concrete) for a in args[1:4])
    if scale != 1.0 or input_scale != 1.0:
        raise t.fail("elu with scale or input_scale other than 1 is not supported")
    return [t.emit("Elu", [t.tensor(args[0])], alpha=alpha)]


@aten("gelu")
def _gelu(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    approximate = args[1].concrete if len(args) > 1 else "none"
    return [t.emit("Gelu", [t.tensor(args[0])], approximate=approximate)]


def _clip(t: Translator, x: Slot, low: Any, high: Any, out: Any) -> list[Any]:
    dtype = np_dtype(out)
    bounds = ["" if b is None else t.constant(float(b), dtype) for b in (low, high)]
    while bounds and bounds[-1] == "":
        bounds.pop()
    return [t.emit("Clip", [t.tensor(x), *bounds])]


@aten("hardtanh")
def _hardtanh(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    return _clip(t, args[0], args[1].concrete, args[2].concrete, outs[0])


@aten("relu6")
def _relu6(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    return _clip(t, args[0], 0.0, 6.0, outs[0])


@aten("clamp", "clamp_min", "clamp_max")
def _clamp(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    short = node.kind().removeprefix("aten::").rstrip("_")
    if any(not a.static for a in args[1:]):
        raise t.fail("tensor bounds computed from the input data are not supported")
    values = [
        a.concrete.item() if isinstance(a.concrete, t.torch.Tensor) else a.concrete
        for a in args[1:]
    ]
    if short == "clamp_min":
        values = [values[0], None]
    elif short == "clamp_max":
        values = [None, values[0]]
    return _clip(t, args[0], values[0], values[1], outs[0])


@aten("softmax", "log_softmax", "_softmax", "_log_softmax")
def _softmax(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    op = "LogSoftmax" if "log_softmax" in node.kind() else "Softmax"
    axis = normalize_axis(int(args[1].concrete), rank_of(args[0]))
    return [t.emit(op, [t.tensor(args[0])], axis=axis)]
