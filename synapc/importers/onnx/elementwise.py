"""ONNX broadcasting arithmetic as synap elementwise ops, computed in the layout of
their first non-logical operand (constants follow on the host)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import AnyFloat, IntegerType, TensorType
from xdsl.ir import Attribute

from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.base import shape_of
from synapc.dialects.synap.conversion import CastOp
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.importers.onnx.helpers import binary, broadcast_operands, cast_to
from synapc.importers.onnx.reader import Importer, Node, converts

_BINARY = {
    "Add": ew.AddOp,
    "Sub": ew.SubOp,
    "Mul": ew.MulOp,
    "Div": ew.DivOp,
}
_VARIADIC = {"Sum": ew.AddOp, "Max": ew.MaximumOp, "Min": ew.MinimumOp}


def _binary_inputs(node: Node) -> list[str | None] | None:
    return node.inputs[:2] if node.op_type in ("Add", "Sub", "Mul") else None


@converts(*_BINARY, quantized=_binary_inputs)
def arithmetic(imp: Importer, node: Node) -> None:
    props = {"pot_scale_int16": False} if node.op_type in ("Add", "Sub") else {}
    binary(imp, node, _BINARY[node.op_type], **props)


@converts("Pow")
def power(imp: Importer, node: Node) -> None:
    """``x ** y`` in the base's type (ONNX allows mixed types).

    A float base takes the exponent cast to its type. An integer base with an integer
    exponent of any integer type is exact integer power (synap.pow keeps the exponent's
    own type; see it for negative exponents). An integer base with a float exponent is
    computed in float and truncated back to the base's type. ONNX's reference computes
    in numpy's promoted type of the two (float64 for 32- and 64-bit bases); the IR uses
    that type, float32 in place of float64, which the target does not have, and the
    target runs it in its float arithmetic (float32 on GENERIC, float16 on the NPU).
    In float32 the result is exact while ``|x| < 2**24``; larger integer bases lose
    precision on the target (int32 ``16777217 ** 1.0`` gives 16777216), as every
    float64 computation there does: this is not exact for them."""
    x, y = node.inputs[0], node.inputs[1]
    element, exponent = imp.element_type(x), imp.element_type(y)
    if isinstance(element, AnyFloat):
        y = _converted(imp, node, y, element)
    elif not _is_integer(element):
        raise node.fail(f"Pow of a {element} base (input 0) is not supported")
    elif isinstance(exponent, AnyFloat):
        real = _float_power_type(node, element, exponent)
        x, y = _converted(imp, node, x, real), _converted(imp, node, y, real)
        values, perm = broadcast_operands(imp, node, [x, y])
        power_value = imp.emit(node, ew.PowOp, *values, output=None).results[0]
        result_type = TensorType(element, shape_of(power_value))
        imp.emit(node, CastOp, power_value, perm=perm, result_types=[result_type])
        return
    elif not _is_integer(exponent):
        raise node.fail(f"Pow with a {exponent} exponent (input 1) is not supported")
    values, perm = broadcast_operands(imp, node, [x, y])
    imp.emit(node, ew.PowOp, *values, perm=perm)


def _float_power_type(node: Node, base: Attribute, exponent: Attribute) -> Attribute:
    """The float type an integer `base` ** float `exponent` is computed in: numpy's
    promoted type (ONNX's reference), float32 where that is float64 (no float64 on the
    target) or where numpy has none (bfloat16)."""
    try:
        promoted = np.result_type(numpy_dtype(base), numpy_dtype(exponent))
    except TypeError:
        promoted = np.dtype(np.float32)
    if promoted.itemsize > 4 or promoted.kind != "f":
        promoted = np.dtype(np.float32)
    return element_type_for(promoted)


def _is_integer(element: Attribute) -> bool:
    """Whether `element` is an integer type Pow computes in (not bool)."""
    return isinstance(element, IntegerType) and element.width.data > 1


def _converted(imp: Importer, node: Node, name: str, element: Attribute) -> str:
    """Tensor `name` as `element` values: itself when it has that type, else a host
    conversion of a constant or a synap.cast (bound under a derived name)."""
    if imp.element_type(name) == element:
        return name
    converted = f"{name}#{element}"
    array = imp.const(name)
    if array is not None:
        imp.bind_const(converted, np.asarray(array).astype(numpy_dtype(element)))
        return converted
    cast = cast_to(imp, node, imp.get(name, "any"), element)
    imp.bind(converted, cast, imp.perm(name))
    return converted


@converts("Reciprocal")
def reciprocal(imp: Importer, node: Node) -> None:
    """``1 / x`` as a division by a broadcast constant one."""
    x = node.inputs[0]
    one = f"{node.outputs[0]}#one"
    dtype = numpy_dtype(imp.element_type(x))
    imp.bind_const(one, np.ones((1,) * imp.rank(x), dtype))
    values, perm = broadcast_operands(imp, node, [one, x])
    imp.emit(node, ew.DivOp, *values, perm=perm)


@converts(*_VARIADIC)
def variadic(imp: Importer, node: Node) -> None:
    op_class = _VARIADIC[node.op_type]
    names = [n for n in node.inputs if n]
    if not names:
        raise node.fail("has no inputs")
    if len(names) == 1:
        imp.tensors[imp.out_name(node)] = imp.tensor(names[0])
        return
    values, perm = broadcast_operands(imp, node, names)
    result = values[0]
    for k, value in enumerate(values[1:]):
        last = k == len(values) - 2
        op = imp.emit(node, op_class, result, value, perm=perm, output=0 if last else None)
        result = op.results[0]


@converts("Mod")
def mod(imp: Importer, node: Node) -> None:
    """Remainder with a floored (`fmod` 0: the sign of the divisor) or truncated (`fmod`
    1: the sign of the dividend) quotient."""
    fmod = node.int_attr("fmod", 0)
    if fmod not in (0, 1):
        raise node.fail(f"attribute 'fmod' {fmod} must be 0 or 1")
    a, b = imp.element_type(node.inputs[0]), imp.element_type(node.inputs[1])
    if a != b:
        raise node.fail(f"input 1 is {b}, input 0 {a}: Mod takes one element type")
    binary(imp, node, ew.ModOp, fmod=bool(fmod))


@converts("Mean")
def mean(imp: Importer, node: Node) -> None:
    """The broadcast sum of the inputs (as Sum) divided by their count."""
    names = [n for n in node.inputs if n]
    if not names:
        raise node.fail("has no inputs")
    element = imp.element_type(names[0])
    if not isinstance(element, AnyFloat):
        raise node.fail(f"input 0 ('{names[0]}') is {element}; Mean takes float tensors")
    if len(names) == 1:
        imp.tensors[imp.out_name(node)] = imp.tensor(names[0])
        return
    values, perm = broadcast_operands(imp, node, names)
    total = values[0]
    for value in values[1:]:
        total = imp.emit(node, ew.AddOp, total, value, output=None).results[0]
    count = f"{node.outputs[0]}#count"
    rank = len(shape_of(total))
    imp.bind_const(count, np.full((1,) * rank, len(names), numpy_dtype(element)))
    imp.emit(node, ew.DivOp, total, imp.get(count, perm), perm=perm)


@converts("PRelu")
def prelu(imp: Importer, node: Node) -> None:
    x, slope = node.inputs[0], node.inputs[1]
    rank = imp.rank(x)
    perm = imp.perm(x)
    value = imp.get(x, "any")
    channels = imp.shape(x)[1] if rank > 1 else None
    if node.opset < 7 and imp.shape(slope) == (channels,) and rank > 2:
        # before opset 7 a slope of C values is per channel (axis 1), not numpy-aligned
        shaped = f"{slope}#channel{rank}"
        array = imp.const(slope)
        if array is not None:
            imp.bind_const(shaped, array.reshape((channels,) + (1,) * (rank - 2)))
        else:
            target = (channels,) + (1,) * (rank - 2)
            imp.bind(shaped, imp.reshape(imp.get(slope), target))
        slope = shaped
    slope_value = imp.get(slope, perm, rank=rank)
    imp.emit(node, ew.PReluOp, value, slope_value, perm=perm)
