"""Assorted ONNX operators: Swish, the signal windows (HannWindow, HammingWindow,
BlackmanWindow), CenterCropPad, BitCast and DynamicQuantizeLinear.

Windows are constants of their (constant) size. CenterCropPad is a slice and a zero pad
of the logical tensor. DynamicQuantizeLinear is composed from reductions and elementwise
ops exactly as its ONNX function body computes it."""

from __future__ import annotations

import numpy as np
from onnx import helper
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import SSAValue

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap import reduce as red
from synapc.dialects.synap.base import is_float, shape_of
from synapc.dialects.synap.bitcast import BitcastOp
from synapc.dialects.synap.conversion import CastOp
from synapc.dialects.synap.data_movement import PadOp, SliceOp
from synapc.dialects.synap.logical import EqualOp, SelectOp
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.errors import SynapcError
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.helpers import output_datatype, unary
from synapc.importers.onnx.reader import Importer, Node, converts
from synapc.limits import check_count


def _is_bool(element: object) -> bool:
    return isinstance(element, IntegerType) and element.width.data == 1


def _float_input(imp: Importer, node: Node) -> None:
    """Refuse a non-float input 0 of an operator defined on float tensors only."""
    element = imp.element_type(node.inputs[0])
    if not is_float(element):
        raise node.fail(
            f"input 0 ('{shown(node.inputs[0])}') is {element}; {node.op_type} takes "
            "float tensors only"
        )


@converts("Swish")
def swish(imp: Importer, node: Node) -> None:
    """``x * sigmoid(alpha * x)``."""
    _float_input(imp, node)
    unary(imp, node, act.SwishOp, beta=float(node.attr("alpha", 1.0)))


# -- windows ---------------------------------------------------------------------------
#: Cosine-sum window coefficients ``a0 - a1 cos(2 pi n / M) + a2 cos(4 pi n / M)``.
_WINDOWS: dict[str, tuple[float, float, float]] = {
    "HannWindow": (0.5, 0.5, 0.0),
    "HammingWindow": (25.0 / 46.0, 21.0 / 46.0, 0.0),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}


@converts(*_WINDOWS)
def window(imp: Importer, node: Node) -> None:
    """A cosine-sum window of the constant length input 0 as a constant, ``M = size``
    (`periodic`, the default) or ``size - 1``, in `output_datatype` (default float)."""
    sizes = imp.const_ints(node, 0, "size")
    if len(sizes) != 1:
        raise node.fail(f"size (input 0) must be one value, got {len(sizes)}")
    size = sizes[0]
    if size < 0:
        raise node.fail(f"size (input 0) must not be negative, got {size}")
    try:  # the window is a constant, computed here
        check_count(size, "max_fold_elements", "size (input 0)")
    except SynapcError as error:
        raise node.fail(str(error)) from None
    dtype = output_datatype(node)
    code = node.int_attr("output_datatype", 1)
    if dtype.kind not in "fiu":
        raise node.fail(f"attribute 'output_datatype' {code} ({dtype}) is not a number")
    periodic = node.int_attr("periodic", 1)
    a0, a1, a2 = _WINDOWS[node.op_type]
    length = size if periodic else size - 1
    phase = 2.0 * np.pi * np.arange(size, dtype=np.float64)
    with np.errstate(all="ignore"):  # a length of 0 gives NaN, as ONNX's definition
        values = a0 - a1 * np.cos(phase / length) + a2 * np.cos(2.0 * phase / length)
    imp.bind_const(imp.out_name(node), values.astype(dtype))


# -- CenterCropPad ---------------------------------------------------------------------
@converts("CenterCropPad")
def center_crop_pad(imp: Importer, node: Node) -> None:
    """Crop or zero-pad the `axes` to the constant shape (input 1), centred: a crop
    drops ``(dim - size) // 2`` in front, a pad adds ``(size - dim) // 2`` in front."""
    x = node.inputs[0]
    shape = imp.shape(x)
    rank = len(shape)
    sizes = imp.const_ints(node, 1, "shape")
    given = node.ints_attr("axes")
    axes = list(range(rank)) if given is None else [node.axis(a, rank) for a in given]
    if len(set(axes)) != len(axes):
        raise node.fail(f"attribute 'axes' {given} repeats an axis")
    if len(sizes) != len(axes):
        raise node.fail(f"shape (input 1) has {len(sizes)} values for {len(axes)} axes")
    if any(s < 0 for s in sizes):
        raise node.fail(f"shape (input 1) {sizes} must not be negative")
    starts, kept = [0] * rank, list(shape)
    pads = [0] * (2 * rank)
    for axis, size in zip(axes, sizes, strict=True):
        dim = shape[axis]
        if size < dim:
            starts[axis], kept[axis] = (dim - size) // 2, size
        elif size > dim:
            before = (size - dim) // 2
            pads[2 * axis], pads[2 * axis + 1] = before, size - dim - before
    value = imp.get(x)
    if tuple(kept) != shape:
        element = imp.element_type(x)
        value = imp.append(
            SliceOp.make(
                value,
                result_types=[TensorType(element, kept)],
                start=starts,
                **node.source,
            )
        )
    if any(pads):
        value = imp.append(PadOp.make(value, pads=pads, **node.source))
    imp.bind(imp.out_name(node), value)


# -- BitCast ---------------------------------------------------------------------------
@converts("BitCast")
def bitcast(imp: Importer, node: Node) -> None:
    """The input's bits read as attribute `to`'s type of the same width (`synap.bitcast`;
    booleans are one byte, 0 or 1)."""
    x = node.inputs[0]
    code = node.int_attr("to", 0)
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(code))
        target = element_type_for(dtype)
    except (KeyError, TypeError, ValueError):
        raise node.fail(f"attribute 'to' {code} is not a type synapc supports") from None
    source = imp.element_type(x)
    try:
        width = numpy_dtype(source).itemsize
    except TypeError:
        raise node.fail(f"input 0 ('{shown(x)}') is {source}, which has no bits") from None
    if width != dtype.itemsize:
        raise node.fail(
            f"input 0 is {source} ({8 * width} bits) and 'to' is {dtype} "
            f"({8 * dtype.itemsize} bits): BitCast needs equal widths"
        )
    if width == 8:
        raise node.fail(
            f"{source} -> {dtype}: 64-bit values run as 32-bit ones on the target, so "
            "their bits cannot be reinterpreted"
        )
    value = imp.get(x, "any")
    imp.emit(
        node,
        BitcastOp,
        value,
        perm=imp.perm(x),
        result_types=[TensorType(target, shape_of(value))],
    )


# -- DynamicQuantizeLinear -------------------------------------------------------------
def _scalar(imp: Importer, node: Node, tag: str, value: float) -> SSAValue:
    """A float32 scalar constant made for `node`."""
    name = f"{node.outputs[0]}#{tag}"
    imp.bind_const(name, np.array(value, np.float32))
    return imp.get(name)


@converts("DynamicQuantizeLinear")
def dynamic_quantize_linear(imp: Importer, node: Node) -> None:
    """uint8 quantization with run-time parameters, as ONNX's function body: ``scale =
    (max(x, 0) - min(x, 0)) / 255`` (1/255 when that range is 0), ``zero_point =
    round(clip(-min(x, 0) / scale, 0, 255))``, ``y = clip(round(x / scale) +
    zero_point, 0, 255)``, rounding halves to even."""
    x = node.inputs[0]
    if imp.element_type(x) != element_type_for(np.float32):  # ONNX: float32 only
        raise node.fail(
            f"input 0 ('{shown(x)}') must be float32, got {imp.element_type(x)}"
        )
    src = node.source
    f32 = element_type_for(np.float32)
    value = imp.get(x, "any")
    axes = tuple(range(len(shape_of(value))))
    zero = _scalar(imp, node, "zero", 0.0)

    def reduced(op_class: type, bound: type) -> SSAValue:
        extreme = imp.append(op_class.make(value, axes=axes, keep_dims=False, **src))
        return imp.append(bound.make(extreme, zero, **src))

    high = reduced(red.ReduceMaxOp, ew.MaximumOp)
    low = reduced(red.ReduceMinOp, ew.MinimumOp)
    span = imp.append(ew.SubOp.make(high, low, **src))
    empty = imp.append(EqualOp.make(high, low, **src))
    one = _scalar(imp, node, "one", 1.0)
    span = imp.append(SelectOp.make(empty, one, span, element_type=f32, **src))
    scale = imp.append(ew.DivOp.make(span, _scalar(imp, node, "qrange", 255.0), **src))
    negated = imp.append(act.NegOp.make(low, **src))
    shifted = imp.append(ew.DivOp.make(negated, scale, **src))
    clipped = imp.append(act.ClampOp.make(shifted, min=0.0, max=255.0, **src))
    zero_point = imp.append(act.RoundOp.make(clipped, **src))
    ratio = imp.append(ew.DivOp.make(value, scale, **src))
    steps = imp.append(act.RoundOp.make(ratio, **src))
    levels = imp.append(ew.AddOp.make(steps, zero_point, **src))
    levels = imp.append(act.ClampOp.make(levels, min=0.0, max=255.0, **src))
    u8 = element_type_for(np.uint8)
    outputs = [
        (levels, imp.perm(x)),
        (scale, None),
        (zero_point, None),
    ]
    for k, (result, perm) in enumerate(outputs):
        if k >= len(node.outputs) or not node.outputs[k]:
            continue
        if k != 1:
            result = imp.append(
                CastOp.make(result, result_types=[TensorType(u8, shape_of(result))], **src)
            )
        imp.bind(imp.out_name(node, k), result, perm)
