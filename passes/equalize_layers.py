"""`equalize-layers`: cross-layer equalization of consecutive weighted layers (Nagel et
al. 2019, "Data-Free Quantization Through Weight Equalization and Bias Correction").

For a layer ``L1`` (conv2d, conv2d_pool, depthwise_conv2d, fully_connected) whose
result only feeds the input of another such layer ``L2``, with a positive-homogeneous
activation between them (none or ReLU: ``relu(x / s) = relu(x) / s`` for ``s > 0``;
a max pool fused into ``L1`` commutes too), output channel ``c`` of ``L1`` may be divided
by ``s_c > 0`` (its weights and bias) and input channel ``c`` of ``L2`` multiplied by
``s_c`` without changing what the pair computes. With ``r1_c`` the largest magnitude of
``L1``'s weights of output channel ``c`` and ``r2_c`` that of ``L2``'s weights reading
input channel ``c``, ``s_c = sqrt(r1_c * r2_c) / r2_c`` makes both ranges
``sqrt(r1_c * r2_c)``: per-tensor weight quantization then wastes fewer levels on
channels with small weights. Chains (``L1 -> L2 -> L3``) are swept pair by pair until the
scales settle.

Only float layers with constant weights are touched; a grouped convolution may be an
``L1`` (its output channels are independent) but not an ``L2``; ReLU6 and other bounded
activations stop a pair (their bounds are not scale-invariant). New weights are new
WeightStore constants; the old ones are erased once nothing reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from synapc.context import weights_of
from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.base import element_of, is_float, shape_of
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conv import Conv2DOp, DepthwiseConv2DOp, FullyConnectedOp
from synapc.dialects.synap.fused import Conv2DPoolOp
from synapc.dtypes import numpy_dtype
from synapc.passes.common import constant_array, new_constant
from synapc.weights import WeightStore

__all__ = ["EqualizeLayersPass", "equalization_scales", "equalize_function"]

Layer = Conv2DOp | Conv2DPoolOp | DepthwiseConv2DOp | FullyConnectedOp
_LAYERS = (Conv2DOp, Conv2DPoolOp, DepthwiseConv2DOp, FullyConnectedOp)
#: Activations between the pair that commute with a positive per-channel scale.
_HOMOGENEOUS = (Activation.NONE, Activation.RELU)
#: Sweeps over the pairs at most, and the scale change (|log s|) that ends them.
_MAX_SWEEPS = 20
_SETTLED = 1e-4


def _out_axis(layer: Layer) -> int:
    """The filter axis of the output channels."""
    return 3 if isinstance(layer, DepthwiseConv2DOp) else 0


def output_ranges(layer: Layer, w: np.ndarray) -> np.ndarray:
    """Largest weight magnitude per output channel of `layer`."""
    moved = np.moveaxis(np.abs(w), _out_axis(layer), 0)
    return moved.reshape(moved.shape[0], -1).max(axis=1)


def input_ranges(layer: Layer, w: np.ndarray, channels: int) -> np.ndarray:
    """Largest weight magnitude per input channel of `layer` (of `channels`)."""
    a = np.abs(w)
    if isinstance(layer, DepthwiseConv2DOp):  # output k reads input k // multiplier
        return a.reshape(-1, channels, a.shape[-1] // channels).max(axis=(0, 2))
    if isinstance(layer, FullyConnectedOp):  # [N, K]
        return a.max(axis=0)
    return a.reshape(-1, a.shape[-1]).max(axis=0)  # OHWI


def _scale_inputs(layer: Layer, w: np.ndarray, s: np.ndarray) -> np.ndarray:
    """`w` with the weights reading input channel ``c`` multiplied by ``s[c]``."""
    if isinstance(layer, DepthwiseConv2DOp):
        return w * np.repeat(s, w.shape[-1] // s.shape[0])
    if isinstance(layer, FullyConnectedOp):
        return w * s[None, :]
    return w * s


def _scale_outputs(layer: Layer, w: np.ndarray, s: np.ndarray) -> np.ndarray:
    """`w` with output channel ``c`` divided by ``s[c]``."""
    shape = [1] * w.ndim
    shape[_out_axis(layer)] = -1
    return w / s.reshape(shape)


def equalization_scales(r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """``s = sqrt(r1 * r2) / r2`` per channel (1 where either range is zero)."""
    ok = (r1 > 0) & (r2 > 0)
    safe1, safe2 = np.where(ok, r1, 1.0), np.where(ok, r2, 1.0)
    return np.where(ok, np.sqrt(safe1 * safe2) / safe2, 1.0)


def _is_float_layer(layer: Layer, weights: WeightStore) -> bool:
    values = [*layer.operands, layer.output]
    if not all(is_float(element_of(v)) for v in values):
        return False
    if constant_array(layer.filter, weights) is None:
        return False
    return layer.bias is None or constant_array(layer.bias, weights) is not None


def equalizable_pairs(func: FuncOp, weights: WeightStore) -> list[tuple[Layer, Layer]]:
    """The (L1, L2) pairs of `func` the module docstring allows, in block order."""
    pairs: list[tuple[Layer, Layer]] = []
    for second in func.body.block.ops:
        if not isinstance(second, _LAYERS) or not _is_float_layer(second, weights):
            continue
        if isinstance(second, Conv2DOp | Conv2DPoolOp) and second.props()["groups"] != 1:
            continue
        first = second.input.owner
        if not isinstance(first, _LAYERS) or not _is_float_layer(first, weights):
            continue
        if not first.output.has_one_use():
            continue
        if first.props()["activation"] not in _HOMOGENEOUS:
            continue
        channels = shape_of(first.output)[-1]
        if shape_of(second.input)[-1] != channels:
            continue
        pairs.append((first, second))
    return pairs


def equalize_function(func: FuncOp, weights: WeightStore) -> int:
    """Equalize the pairs of `func` in place (new constants for the changed weights
    and biases); the number of pairs equalized."""
    pairs = equalizable_pairs(func, weights)
    if not pairs:
        return 0
    layers = list(dict.fromkeys(layer for pair in pairs for layer in pair))
    w = {
        layer: constant_array(layer.filter, weights).astype(np.float64)  # type: ignore[union-attr]
        for layer in layers
    }
    b = {
        layer: constant_array(layer.bias, weights).astype(np.float64)  # type: ignore[union-attr]
        for layer in layers
        if layer.bias is not None
    }
    for _ in range(_MAX_SWEEPS):
        change = 0.0
        for first, second in pairs:
            channels = shape_of(first.output)[-1]
            s = equalization_scales(
                output_ranges(first, w[first]), input_ranges(second, w[second], channels)
            )
            w[first] = _scale_outputs(first, w[first], s)
            if first in b:
                b[first] = b[first] / s
            w[second] = _scale_inputs(second, w[second], s)
            change = max(change, float(np.max(np.abs(np.log(s)))))
        if change < _SETTLED:
            break
    for layer in layers:
        _replace_operand(layer, 1, w[layer], weights)
        if layer in b:
            _replace_operand(layer, 2, b[layer], weights)
    return len(pairs)


def _replace_operand(
    layer: Operation, index: int, array: np.ndarray, weights: WeightStore
) -> None:
    """Read `array` as operand `index` of `layer` through a new constant (before it);
    the old constant goes once nothing reads it."""
    old: SSAValue = layer.operands[index]
    old_type = old.type
    assert isinstance(old_type, TensorType)
    owner = old.owner
    hint = owner.handle if isinstance(owner, ConstantOp) else "w"
    const = new_constant(
        weights, array.astype(numpy_dtype(element_of(old))), old_type, f"{hint}_eq"
    )
    block = layer.parent_block()
    assert block is not None
    block.insert_op_before(const, layer)
    layer.operands[index] = const.result
    if isinstance(owner, ConstantOp) and not owner.result.uses:
        owner.detach()
        owner.erase()


@dataclass(frozen=True)
class EqualizeLayersPass(ModulePass):
    """Cross-layer equalization of float conv / depthwise / fully connected pairs
    (see the module docstring); exact in float up to rounding."""

    name = "equalize-layers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        weights = weights_of(ctx)
        for func in op.walk():
            if isinstance(func, FuncOp) and func.body.blocks:
                equalize_function(func, weights)
