"""ONNX normalizations. BatchNormalization after a convolution is folded into its
weights and bias; elsewhere it is a per-channel multiply-add. Instance, layer, group,
RMS and mean-variance normalization, L1 normalization and LRN become short chains of
synap reductions and arithmetic (the layers an NPU runs, as ONNX's function bodies
define them); L2 normalization is `synap.l2_normalize`."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap import reduce
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conv import Conv2DOp, DepthwiseConv2DOp, TransposeConv2DOp
from synapc.dialects.synap.conversion import CastOp
from synapc.dialects.synap.shapes import ShapeError, broadcast
from synapc.dtypes import numpy_dtype
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import brief, shown
from synapc.importers.onnx.reader import Importer, Node, converts
from synapc.importers.onnx.reduce import (
    apply,
    combine,
    float_limits,
    reduced,
    require_float,
    scalar,
)
from synapc.limits import check_tensor

#: The filter axis that holds output channels, per convolution op.
_OUT_AXIS = {Conv2DOp: 0, DepthwiseConv2DOp: 3, TransposeConv2DOp: 0}


def _check_channel_params(imp: Importer, node: Node, names: list[str]) -> None:
    """Input 0 has a channel axis (rank 2 or more) and each of `names` holds one value
    per channel."""
    shape = imp.shape(node.inputs[0])
    if len(shape) < 2:
        raise node.fail(f"the input must have a channel axis, got shape {list(shape)}")
    for name in names:
        if imp.shape(name) != (shape[1],):
            raise node.fail(
                f"'{shown(name)}' of shape {list(imp.shape(name))} must hold one value for "
                "each "
                f"of {shape[1]} channels"
            )


def _channel_param(imp: Importer, node: Node, name: str, rank: int) -> str:
    """Tensor `name` (one value per channel, logical axis 1) reshaped to broadcast
    against a rank-`rank` channels-first tensor; returns the reshaped tensor's name."""
    shaped = f"{name}#channel{rank}"
    if shaped in imp.tensors:
        return shaped
    shape = (-1,) + (1,) * (rank - 2)
    array = imp.const(name)
    if array is not None:
        imp.bind_const(shaped, np.asarray(array, np.float32).reshape(shape))
    else:
        count = imp.shape(name)[0]
        imp.bind(shaped, imp.reshape(imp.get(name), (count,) + (1,) * (rank - 2)))
    return shaped


@converts("BatchNormalization")
def batch_norm(imp: Importer, node: Node) -> None:
    """Inference: ``(x - mean) / sqrt(var + eps) * scale + bias`` with the given
    statistics; `training_mode` (opset 14 on): with the batch's (see
    `_batch_norm_training`)."""
    training = node.int_attr("training_mode", 0)
    if training not in (0, 1):
        raise node.fail(f"attribute 'training_mode' {training} must be 0 or 1")
    if training:
        _batch_norm_training(imp, node)
        return
    if len([o for o in node.outputs if o]) > 1:
        raise node.fail(
            "running statistics outputs (outputs 1 and up) need training_mode 1 (or, "
            "before opset 14, are not supported)"
        )
    x = node.inputs[0]
    rank = imp.rank(x)
    _check_channel_params(imp, node, node.inputs[1:5])
    params = [imp.const(n) for n in node.inputs[1:5]]
    eps = np.float32(node.attr("epsilon", 1e-5))
    if all(p is not None for p in params):
        gamma, beta, mean, var = (np.asarray(p, np.float32) for p in params)
        scale = gamma / np.sqrt(var + eps)
        shift = beta - mean * scale
        if _fold_into_conv(imp, node, x, scale, shift):
            return
        scale_name, shift_name = f"{node.outputs[0]}#scale", f"{node.outputs[0]}#shift"
        imp.bind_const(scale_name, scale.reshape((-1,) + (1,) * (rank - 2)))
        imp.bind_const(shift_name, shift.reshape((-1,) + (1,) * (rank - 2)))
        perm = imp.perm(x)
        value = imp.get(x, perm)
        scaled = imp.append(
            ew.MulOp.make(value, imp.get(scale_name, perm, rank), **node.source)
        )
        imp.emit(node, ew.AddOp, scaled, imp.get(shift_name, perm, rank), perm=perm)
        return
    # statistics computed at run time: (x - mean) / sqrt(var + eps) * gamma + beta
    perm = imp.perm(x)
    gamma, beta, mean, var = (
        imp.get(_channel_param(imp, node, n, rank), perm, rank) for n in node.inputs[1:5]
    )
    value = imp.get(x, perm)
    centered = imp.append(ew.SubOp.make(value, mean, **node.source))
    _normalize(imp, node, centered, var, eps, gamma, beta, perm)


def _batch_norm_training(imp: Importer, node: Node) -> None:
    """Training-mode BatchNormalization (deterministic): `x` is normalized with the
    mean and (population) variance of the batch over every axis but the channel
    axis 1; outputs 1 and 2 are the running statistics ``input_mean * momentum +
    batch_mean * (1 - momentum)`` (likewise the variance), as ONNX's reference."""
    x = node.inputs[0]
    require_float(imp, node, x)
    rank = imp.rank(x)
    _check_channel_params(imp, node, node.inputs[1:5])
    perm = imp.perm(x) or layout.channels_last(rank)
    value = imp.get(x, perm)
    axes = sorted(layout.physical_axis(perm, a, rank) for a in range(rank) if a != 1)
    scale, bias = (
        imp.get(_channel_param(imp, node, n, rank), perm, rank) for n in node.inputs[1:3]
    )
    mean, centered, variance = _moments(imp, node, value, axes)
    _normalize(imp, node, centered, variance, node.attr("epsilon", 1e-5), scale, bias, perm)
    momentum = float(node.attr("momentum", 0.9))
    channels = imp.shape(x)[1]
    for k, batch, running in ((1, mean, node.inputs[3]), (2, variance, node.inputs[4])):
        if k >= len(node.outputs) or not node.outputs[k]:
            continue
        batch = imp.reshape(batch, (channels,))
        kept = combine(
            imp, node, ew.MulOp, imp.get(running), scalar(imp, node, batch, momentum, "m")
        )
        new = combine(
            imp, node, ew.MulOp, batch, scalar(imp, node, batch, 1 - momentum, "1-m")
        )
        imp.bind(node.outputs[k], combine(imp, node, ew.AddOp, kept, new))


def _normalize(
    imp: Importer,
    node: Node,
    centered: SSAValue,
    variance: SSAValue,
    eps: float,
    scale: SSAValue | None,
    bias: SSAValue | None,
    perm: layout.Perm,
) -> SSAValue:
    """Bind `node`'s output to ``centered / sqrt(variance + eps) * scale + bias``;
    returns ``1 / sqrt(variance + eps)``."""
    result, inv = _standardized(imp, node, centered, variance, eps)
    imp.bind_output(node, _affine(imp, node, result, scale, bias), perm)
    return inv


def _standardized(
    imp: Importer, node: Node, centered: SSAValue, variance: SSAValue, eps: float
) -> tuple[SSAValue, SSAValue]:
    """``centered / sqrt(variance + eps)`` and ``1 / sqrt(variance + eps)``."""
    shifted = combine(
        imp, node, ew.AddOp, variance, scalar(imp, node, variance, eps, "eps")
    )
    inv = apply(imp, node, act.RsqrtOp, shifted)
    return combine(imp, node, ew.MulOp, centered, inv), inv


def _affine(
    imp: Importer,
    node: Node,
    value: SSAValue,
    scale: SSAValue | None,
    bias: SSAValue | None,
) -> SSAValue:
    """``value * scale + bias``, either term optional."""
    if scale is not None:
        value = combine(imp, node, ew.MulOp, value, scale)
    if bias is not None:
        value = combine(imp, node, ew.AddOp, value, bias)
    return value


def _fold_into_conv(
    imp: Importer, node: Node, x: str, scale: np.ndarray, shift: np.ndarray
) -> bool:
    """Fold ``y = x * scale + shift`` into the float convolution producing `x`."""
    t = imp.tensor(x)
    op = None if t.value is None else t.value.owner
    if type(op) not in _OUT_AXIS or len(imp.readers.get(x, [])) != 1 or t.value.uses:
        return False
    constants = [o.owner for o in op.operands[1:]]
    if not all(isinstance(c, ConstantOp) for c in constants):
        return False
    weights = imp.weights[constants[0].handle]
    if weights.dtype != np.float32:
        return False
    axis = _OUT_AXIS[type(op)]
    shape = [1] * weights.ndim
    shape[axis] = -1
    new_weights = (weights * scale.reshape(shape)).astype(np.float32)
    bias = imp.weights[constants[1].handle] if len(constants) > 1 else np.zeros_like(shift)
    new_bias = (bias * scale + shift).astype(np.float32)
    index = imp.ops.index(op)
    new_constants = [
        imp.weights.constant(new_weights, f"{node.name}.weight"),
        imp.weights.constant(new_bias, f"{node.name}.bias"),
    ]
    # the convolution keeps its name; the batch norm is a layer it now also computes
    fused = [a.data for a in op.fused_layers.data] if op.fused_layers is not None else []
    new_op = type(op).make(
        op.operands[0],
        *(c.results[0] for c in new_constants),
        result_types=[op.results[0].type],
        layer_name=op.layer_name.data if op.layer_name is not None else node.name,
        layer_index=op.layer_index.value.data if op.layer_index is not None else node.index,
        fused_layers=[*fused, node.name],
        **op.props(),
    )
    imp.ops[index : index + 1] = [*new_constants, new_op]
    op.drop_all_references()
    imp.bind_output(node, new_op.results[0], t.perm)
    return True


@converts("InstanceNormalization")
def instance_norm(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    _check_channel_params(imp, node, node.inputs[1:3])
    perm = imp.perm(x) or layout.channels_last(rank)
    value = imp.get(x, perm)
    axes = sorted(layout.physical_axis(perm, a, rank) for a in range(2, rank))
    scale, bias = (
        imp.get(_channel_param(imp, node, n, rank), perm, rank) for n in node.inputs[1:3]
    )
    _, centered, variance = _moments(imp, node, value, axes)
    _normalize(imp, node, centered, variance, node.attr("epsilon", 1e-5), scale, bias, perm)


@converts("LayerNormalization")
def layer_norm(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    axis = node.axis(node.int_attr("axis", -1), rank)
    perm = imp.perm(x)
    value = imp.get(x, perm)
    axes = sorted(layout.physical_axis(perm, a, rank) for a in range(axis, rank))
    scale = imp.get(node.inputs[1], perm, rank)
    bias = None if node.input(2) is None else imp.get(node.inputs[2], perm, rank)
    mean, centered, variance = _moments(imp, node, value, axes)
    inv = _normalize(
        imp, node, centered, variance, node.attr("epsilon", 1e-5), scale, bias, perm
    )
    # the optional Mean and InvStdDev outputs keep the normalized axes as unit dims
    for k, extra in ((1, mean), (2, inv)):
        if k < len(node.outputs) and node.outputs[k]:
            imp.bind(node.outputs[k], extra, perm)


def _moments(
    imp: Importer, node: Node, value: SSAValue, axes: list[int]
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """``mean(x)``, ``x - mean(x)`` and the variance over `axes` (kept as unit
    dimensions)."""
    mean = imp.append(
        reduce.ReduceMeanOp.make(value, axes=axes, keep_dims=True, **node.source)
    )
    centered = imp.append(ew.SubOp.make(value, mean, **node.source))
    squared = imp.append(act.SquareOp.make(centered, **node.source))
    variance = imp.append(
        reduce.ReduceMeanOp.make(squared, axes=axes, keep_dims=True, **node.source)
    )
    return mean, centered, variance


@converts("LRN")
def lrn(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    if imp.rank(x) != 4:
        raise node.fail("only 4-D (NCHW) LRN is supported")
    size = node.int_attr("size", 0)
    alpha = float(node.attr("alpha", 1e-4))
    beta = float(node.attr("beta", 0.75))
    bias = float(node.attr("bias", 1.0))
    channels = imp.shape(x)[1]
    if size < 1:
        raise node.fail(f"size {size} must be at least 1")
    # the band matrix has channels x channels elements
    check_tensor([channels, channels], 4, f"{imp.path}: LRN band of node '{node.name}'")
    # channel c sums the squares of channels [c - (size-1)//2, c + ceil((size-1)/2)]
    c = np.arange(channels)
    low, high = c - (size - 1) // 2, c + -(-(size - 1) // 2)
    band = ((c[None, :] >= low[:, None]) & (c[None, :] <= high[:, None])).astype(np.float32)
    cl = layout.channels_last(4)
    value = imp.get(x, cl)
    squared = imp.append(act.SquareOp.make(value, **node.source))
    band_op = imp.weights.constant(
        band.reshape(channels, 1, 1, channels), f"{node.name}.band"
    )
    imp.ops.append(band_op)
    sums = imp.append(Conv2DOp.make(squared, band_op.results[0], None, **node.source))
    terms = []
    for label, number in (("alpha", alpha / size), ("bias", bias), ("beta", beta)):
        name = f"{node.outputs[0]}#{label}"
        imp.bind_const(name, np.full((1, 1, 1, 1), number, np.float32))
        terms.append(imp.get(name))
    scaled = imp.append(ew.MulOp.make(sums, terms[0], **node.source))
    shifted = imp.append(ew.AddOp.make(scaled, terms[1], **node.source))
    powered = imp.append(ew.PowOp.make(shifted, terms[2], **node.source))
    imp.emit(node, ew.DivOp, value, powered, perm=cl)


# -- normalizations composed of reductions and arithmetic -------------------------------
def _typed(imp: Importer, node: Node, name: str, element: Attribute) -> str:
    """Tensor `name`, or when it is a constant of another type than `element` the name
    of a copy converted to `element` on the host."""
    array = imp.const(name)
    dtype = numpy_dtype(element)
    if array is None or array.dtype == dtype:
        return name
    typed = f"{name}#{dtype.name}"
    if typed not in imp.tensors:
        imp.bind_const(typed, np.asarray(array).astype(dtype))
    return typed


def _converted(imp: Importer, node: Node, value: SSAValue, element: Attribute) -> SSAValue:
    """`value` cast to `element` when it is of another type (a run-time parameter)."""
    if element_of(value) == element:
        return value
    result_type = TensorType(element, shape_of(value))
    return imp.append(CastOp.make(value, result_types=[result_type], **node.source))


def _parameter(
    imp: Importer, node: Node, name: str, element: Attribute, shape: tuple[int, ...]
) -> SSAValue:
    """Parameter tensor `name` (scale or bias) reshaped to `shape`, of type `element`."""
    typed = _typed(imp, node, name, element)
    array = imp.const(typed)
    if array is not None:
        shaped = f"{typed}#{'x'.join(str(d) for d in shape)}"
        if shaped not in imp.tensors:
            imp.bind_const(shaped, np.asarray(array).reshape(shape))
        return imp.get(shaped)
    value = imp.reshape(imp.get(typed), shape, **node.source)
    return _converted(imp, node, value, element)


def _check_stash_type(node: Node) -> None:
    """Only stash_type 1: the statistics in float32, as the backend computes them."""
    stash = node.int_attr("stash_type", 1)
    if stash != 1:
        raise node.fail(
            f"stash_type {stash} is not supported: synapc computes the statistics in "
            "float32 (stash_type 1)"
        )


def _epsilon(node: Node, default: float) -> float:
    """Attribute `epsilon`, checked to be a number >= 0."""
    eps = node.attr("epsilon", default)
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not eps >= 0:
        raise node.fail(f"attribute 'epsilon' {brief(eps)} must be a number >= 0")
    return float(eps)


@converts("LpNormalization")
def lp_normalization(imp: Importer, node: Node) -> None:
    """``x / ||x||_p`` along `axis`, 0 where the norm is 0: `synap.l2_normalize` for
    p = 2, ``x / max(sum |x|, tiny)`` for p = 1, tiny being the smallest normal float
    (only a zero sum is below it, whose x is 0)."""
    x = node.inputs[0]
    rank = imp.rank(x)
    require_float(imp, node, x)
    p = node.int_attr("p", 2)
    if p not in (1, 2):
        raise node.fail(f"attribute 'p' {p} is not supported: ONNX defines p = 1 and 2")
    axis = node.axis(node.int_attr("axis", -1), rank)
    perm = imp.perm(x)
    value = imp.get(x, "any")
    physical = layout.physical_axis(perm, axis, rank)
    if p == 2:
        # the kernel computes the sum of squares in float32, whatever the input type
        tiny = float(np.finfo(np.float32).tiny)
        imp.emit(node, act.L2NormalizeOp, value, perm=perm, axis=physical, epsilon=tiny)
        return
    magnitude = apply(imp, node, act.AbsOp, value)
    norm = reduced(imp, node, reduce.ReduceSumOp, magnitude, [physical], True)
    tiny = float(float_limits(element_of(value)).tiny)
    guarded = combine(imp, node, ew.MaximumOp, norm, scalar(imp, node, norm, tiny, "tiny"))
    imp.emit(node, ew.DivOp, value, guarded, perm=perm)


@converts("MeanVarianceNormalization")
def mean_variance_normalization(imp: Importer, node: Node) -> None:
    """``(x - mean) / (sqrt(variance) + 1e-9)`` over `axes` (default [0, 2, 3]; none
    means all), the epsilon of ONNX's function body. The variance is the mean of the
    squared deviations: ONNX's body subtracts the squared mean from the mean of the
    squares, the same value, but that difference can round below zero."""
    x = node.inputs[0]
    rank = imp.rank(x)
    require_float(imp, node, x)
    given = node.ints_attr("axes", [0, 2, 3]) or list(range(rank))
    axes = {node.axis(a, rank, "axis") for a in given}
    perm = imp.perm(x)
    value = imp.get(x, "any")
    physical = sorted(layout.physical_axis(perm, a, rank) for a in axes)
    _, centered, variance = _moments(imp, node, value, physical)
    deviation = apply(imp, node, act.SqrtOp, variance)
    eps = scalar(imp, node, deviation, 1e-9, "eps")
    imp.emit(
        node, ew.DivOp, centered, combine(imp, node, ew.AddOp, deviation, eps), perm=perm
    )


@converts("GroupNormalization")
def group_normalization(imp: Importer, node: Node) -> None:
    """Normalization over each group of channels (with the spatial axes) of each
    instance, then a scale and bias per channel (per group before opset 21). Computed
    channels-last as [N, spatial, groups, channels per group], whose axes 1 and 3 hold
    a group's values, so that no transpose is needed."""
    x = node.inputs[0]
    shape = imp.shape(x)
    rank = len(shape)
    require_float(imp, node, x)
    if rank < 2:
        raise node.fail(f"the input must have a channel axis, got shape {list(shape)}")
    channels = shape[1]
    groups = node.int_attr("num_groups", 0)
    if groups < 1 or channels % groups:
        raise node.fail(
            f"num_groups {groups} must be a positive divisor of the {channels} channels"
        )
    _check_stash_type(node)
    eps = _epsilon(node, 1e-5)
    count, what = (groups, "group") if node.opset < 21 else (channels, "channel")
    for name in node.inputs[1:3]:
        if imp.shape(name) != (count,):
            raise node.fail(
                f"'{shown(name)}' of shape {list(imp.shape(name))} must hold one value "
                f"for each {what} ({count})"
            )
    perm = layout.channels_last(rank)
    value = imp.get(x, perm)
    size = channels // groups
    grouped = imp.reshape(
        value, (shape[0], math.prod(shape[2:]), groups, size), **node.source
    )
    _, centered, variance = _moments(imp, node, grouped, [1, 3])
    normalized, _ = _standardized(imp, node, centered, variance, eps)
    param_shape = (1, 1, groups, 1 if what == "group" else size)
    scale, bias = (
        _parameter(imp, node, name, element_of(value), param_shape)
        for name in node.inputs[1:3]
    )
    result = _affine(imp, node, normalized, scale, bias)
    imp.bind_output(node, imp.reshape(result, shape_of(value), **node.source), perm)


@converts("RMSNormalization")
def rms_normalization(imp: Importer, node: Node) -> None:
    """``x / sqrt(mean(x * x) + epsilon) * scale``, the mean over the axes from `axis`
    on (ONNX's function body, with x times the reciprocal square root); `scale`
    broadcasts to x."""
    x, scale_name = node.inputs[0], node.inputs[1]
    shape = imp.shape(x)
    rank = len(shape)
    require_float(imp, node, x)
    axis = node.axis(node.int_attr("axis", -1), rank)
    _check_stash_type(node)
    eps = _epsilon(node, 1e-5)
    scale_shape = imp.shape(scale_name)
    try:
        fits = broadcast(scale_shape, shape) == tuple(shape)
    except ShapeError:
        fits = False
    if not fits:
        raise node.fail(
            f"scale '{shown(scale_name)}' of shape {list(scale_shape)} does not "
            f"broadcast to the input shape {list(shape)}"
        )
    perm = imp.perm(x)
    value = imp.get(x, "any")
    axes = sorted(layout.physical_axis(perm, a, rank) for a in range(axis, rank))
    squares = apply(imp, node, act.SquareOp, value)
    mean_square = reduced(imp, node, reduce.ReduceMeanOp, squares, axes, True)
    normalized, _ = _standardized(imp, node, value, mean_square, eps)
    element = element_of(value)
    scale = imp.get(_typed(imp, node, scale_name, element), perm, rank)
    scaled = combine(imp, node, ew.MulOp, normalized, _converted(imp, node, scale, element))
    imp.bind_output(node, scaled, perm)
