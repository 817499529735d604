"""ONNX normalizations. BatchNormalization after a convolution is folded into its
weights and bias; elsewhere it is a per-channel multiply-add. Instance and layer
normalization and LRN become short chains of synap reductions and arithmetic."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap import reduce
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conv import Conv2DOp, DepthwiseConv2DOp, TransposeConv2DOp
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import Importer, Node, converts
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
    if node.attr("training_mode", 0) or len([o for o in node.outputs if o]) > 1:
        raise node.fail("training-mode batch normalization is not supported")
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
    rank = len(centered.type.get_shape())
    eps_name = f"{node.outputs[0]}#eps"
    imp.bind_const(eps_name, np.full((1,) * rank, eps, np.float32))
    shifted = imp.append(ew.AddOp.make(variance, imp.get(eps_name), **node.source))
    inv = imp.append(act.RsqrtOp.make(shifted, **node.source))
    result = imp.append(ew.MulOp.make(centered, inv, **node.source))
    if scale is not None:
        result = imp.append(ew.MulOp.make(result, scale, **node.source))
    if bias is not None:
        result = imp.append(ew.AddOp.make(result, bias, **node.source))
    imp.bind_output(node, result, perm)
    return inv


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
