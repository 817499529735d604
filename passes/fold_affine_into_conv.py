"""`fold-affine-into-conv` (alias `fold-batchnorm`): fold a per-channel affine op that
follows a convolution or fully connected layer into the layer's weights and bias.

Importers leave an inference batch-norm (and other per-channel scales and offsets) as a
constant `synap.mul` / `synap.add` / `synap.sub` / `synap.div` after `synap.conv2d`,
`synap.depthwise_conv2d`, `synap.transpose_conv2d` or `synap.fully_connected`. Since
``conv(x, w) + b`` is linear in `w` and `b`, ``(conv(x, w) + b) * s + t`` equals
``conv(x, w * s[c]) + (b * s + t)`` with `s` applied along the filter's output-channel
axis, so the elementwise op disappears and the NPU runs one layer instead of two. Chains
(mul then add, add then mul) fold one op at a time.

The fold fires only when it cannot change what the graph computes beyond float rounding:
float layers with float weights (a quantized layer's integers would change), a layer result
read by the affine op alone, no fused activation on the layer (it would sit between the
conv and the affine op), a finite constant that varies along the channel axis (the last
one, NHWC) at most, a nonzero divisor, and an affine result of exactly the layer's type.
The affine op's own fused activation moves onto the folded layer, and its source layer
into the folded layer's `fused_layers`. New weights and biases are new WeightStore
constants; the arrays of the old ones, which other ops may share, are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from synapc.context import weights_of
from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.base import element_of, is_float, shape_of
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conv import (
    Conv2DOp,
    DepthwiseConv2DOp,
    FullyConnectedOp,
    TransposeConv2DOp,
)
from synapc.dialects.synap.elementwise import AddOp, DivOp, MulOp, SubOp
from synapc.dtypes import numpy_dtype
from synapc.passes.common import constant_array, new_constant, source_of
from synapc.weights import WeightStore

Layer = Conv2DOp | DepthwiseConv2DOp | FullyConnectedOp | TransposeConv2DOp
"""The layers an affine op folds into (weights, optional bias, fused activation)."""

_LAYERS = (Conv2DOp, DepthwiseConv2DOp, FullyConnectedOp, TransposeConv2DOp)
_AFFINE = (AddOp, SubOp, MulOp, DivOp)


def output_channel_axis(layer: Layer) -> int:
    """The filter axis of a layer's output channels: 3 for depthwise ``[1, KH, KW, C*M]``
    filters, 0 for OHWI convolution / transposed convolution and ``[N, K]`` fully
    connected weights."""
    return 3 if isinstance(layer, DepthwiseConv2DOp) else 0


def channel_vector(constant: np.ndarray, channels: int) -> np.ndarray | None:
    """`constant` as one float64 value per output channel, or None when it varies along
    another axis than the last one (shapes ``[]``, ``[1]``, ``[C]``, ``[1, 1, 1, C]``
    fold; ``[1, H, 1, C]`` with H > 1 does not)."""
    shape = constant.shape
    if any(d != 1 for d in shape[:-1]):
        return None
    last = shape[-1] if shape else 1
    if last not in (1, channels):
        return None
    vector = constant.reshape(-1).astype(np.float64)
    return np.broadcast_to(vector, (channels,))


@dataclass(frozen=True)
class Affine:
    """``op(layer(x)) = layer(x) * scale + shift`` per output channel, with the layer it
    reads and the fused activation it applies."""

    layer: Layer
    scale: np.ndarray
    shift: np.ndarray
    activation: Activation


def _layer_and_constant(
    op: Operation, weights: WeightStore
) -> tuple[Layer, np.ndarray, bool] | None:
    """The foldable layer `op` reads, the constant on its other operand and whether the
    layer is the left operand; None if no operand pair fits."""
    lhs, rhs = op.operands
    for value, other, on_left in ((lhs, rhs, True), (rhs, lhs, False)):
        layer = value.owner
        # SSAValue.has_one_use: common.has_one_use calls len() on IRUses, which has none
        if not isinstance(layer, _LAYERS) or not value.has_one_use():
            continue
        constant = constant_array(other, weights)
        if constant is not None and is_float(element_of(other)):
            return layer, constant, on_left
    return None


def match_affine(op: Operation, weights: WeightStore) -> Affine | None:
    """The per-channel affine form of `op` over a foldable float layer, or None."""
    if not isinstance(op, _AFFINE):
        return None
    found = _layer_and_constant(op, weights)
    if found is None:
        return None
    layer, constant, on_left = found
    if op.output.type != layer.output.type:
        return None  # the constant broadcasts the result to another shape
    if layer.props()["activation"] != Activation.NONE:
        return None  # an activation between the layer and the affine op
    if not all(is_float(element_of(v)) for v in (*layer.operands, layer.output)):
        return None  # quantized (or integer) layer or weights: integers would change
    if constant_array(layer.filter, weights) is None:
        return None
    if layer.bias is not None and constant_array(layer.bias, weights) is None:
        return None
    channels = shape_of(layer.output)[-1]
    vector = channel_vector(constant, channels)
    if vector is None or not np.all(np.isfinite(vector)):
        return None
    ones, zeros = np.ones(channels), np.zeros(channels)
    if isinstance(op, MulOp):
        scale, shift = vector, zeros
    elif isinstance(op, AddOp):
        scale, shift = ones, vector
    elif isinstance(op, SubOp):
        scale, shift = (ones, -vector) if on_left else (-ones, vector)
    else:  # DivOp: only layer / constant is affine
        if not on_left or not np.all(vector != 0):
            return None
        scale, shift = 1.0 / vector, zeros
    return Affine(layer, scale, shift, op.props()["activation"])


def folded_operands(
    affine: Affine, weights: WeightStore
) -> tuple[list[ConstantOp], SSAValue, SSAValue]:
    """The new constants and the filter and bias of the folded layer, computed in float64
    and stored in the layer's element types. A scale of all ones (add, sub) keeps the
    filter as it is; the bias is always new (created when the layer has none)."""
    layer = affine.layer
    channels = affine.scale.shape[0]
    created: list[ConstantOp] = []
    filt: SSAValue = layer.filter
    if not np.all(affine.scale == 1):
        w_type = layer.filter.type
        assert isinstance(w_type, TensorType)
        array = constant_array(layer.filter, weights)
        assert array is not None
        axis_shape = [1] * array.ndim
        axis_shape[output_channel_axis(layer)] = channels
        new_w = array.astype(np.float64) * affine.scale.reshape(axis_shape)
        dtype = numpy_dtype(element_of(layer.filter))
        created.append(
            new_constant(weights, new_w.astype(dtype), w_type, _hint(layer.filter))
        )
        filt = created[-1].result
    if layer.bias is not None:
        bias = constant_array(layer.bias, weights)
        assert bias is not None
        bias_element, bias_hint = element_of(layer.bias), _hint(layer.bias)
    else:
        bias = np.zeros(channels)
        bias_element, bias_hint = element_of(layer.input), f"{_hint(layer.filter)}_bias"
    new_b = bias.astype(np.float64) * affine.scale + affine.shift
    b_type = TensorType(bias_element, [channels])
    created.append(
        new_constant(weights, new_b.astype(numpy_dtype(bias_element)), b_type, bias_hint)
    )
    return created, filt, created[-1].result


def _hint(value: SSAValue) -> str:
    """A handle hint for an array derived from a constant value: its handle without the
    ``_<n>`` suffix an earlier fold added (so a chain gives w_0, w_1, not w_0_0)."""
    owner = value.owner
    if not isinstance(owner, ConstantOp):
        return "w"
    return re.sub(r"_[0-9]+$", "", owner.handle) or "w"


class FoldAffineIntoLayer(RewritePattern):
    """``layer(x, w, b) (*|/|+|-) const`` -> ``layer(x, w', b')`` for a per-channel
    constant (see the module docstring for when it applies)."""

    def __init__(self, weights: WeightStore) -> None:
        self.weights = weights

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        affine = match_affine(op, self.weights)
        if affine is None:
            return
        layer = affine.layer
        created, filt, bias = folded_operands(affine, self.weights)
        props = layer.props()
        props["activation"] = affine.activation
        new_layer = type(layer).make(
            layer.input,
            filt,
            bias,
            result_types=[layer.output.type],
            **props,
            **source_of(layer, op),
        )
        old = [op.operands[0].owner, op.operands[1].owner, layer.filter.owner]
        if layer.bias is not None:
            old.append(layer.bias.owner)
        rewriter.replace(op, [*created, new_layer])
        rewriter.erase(layer)
        for const in dict.fromkeys(old):  # constants only this fold read
            if isinstance(const, ConstantOp) and not const.result.uses:
                rewriter.erase(const)


@dataclass(frozen=True)
class FoldAffineIntoConvPass(ModulePass):
    """Fold constant per-channel mul/add/sub/div after a float conv, depthwise conv,
    transposed conv or fully connected layer into its weights and bias (batch-norm
    folding). The constants the folded ops read are removed once nothing else reads
    them; other dead code is left to `dce`."""

    name = "fold-affine-into-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [FoldAffineIntoLayer(weights_of(ctx))], dce_enabled=False
        )
        PatternRewriteWalker(patterns).rewrite_module(op)
