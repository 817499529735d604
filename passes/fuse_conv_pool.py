"""`fuse-conv-pool`: a convolution followed by a max pooling becomes `synap.conv2d_pool`.

The NPU's convolution core runs a convolution with its bias, activation and a following
max pooling as one hardware layer (``ConvolutionReluPoolingLayer2`` in the vendor's
profiles), so the full-resolution convolution result never goes to memory. The pass
rewrites ``max_pool2d(conv2d(x))`` into one `synap.conv2d_pool` when the convolution
result feeds only the pool, and only where the result stays identical:

* Float: always. The pool's fused activation is a clamp; a clamp commutes with the
  maximum and two clamps make one, so it is folded into the convolution's when the
  intersection of the two ranges is itself an activation (every pair of the current
  activations); the clamp bounds are exact in float16 too.
* Quantized: only when the pool's output type equals the convolution's output type, so
  that the pool is an exact maximum of stored integers. Under TFLite semantics both
  layers clamp their integers to `activation_range` of that one type, and the range of
  the folded activation is the intersection of the two (the bounds are quantized one by
  one, monotonically). Under ONNX semantics the pool's activation is applied in float
  after dequantizing and rounds half to even, which can differ from the convolution's
  integer clamp at a bound, so only pools without an activation fuse there.

Depthwise and transposed convolutions and average pooling are left alone (the fused op
is a plain, possibly grouped, convolution with a max pooling). The fused op keeps the
convolution's source layer name and index; the pool's layer goes into its
`fused_layers`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from synapc.dialects.synap.attributes import Activation, IntegerSemantics
from synapc.dialects.synap.base import element_of, is_quantized
from synapc.dialects.synap.conv import Conv2DOp
from synapc.dialects.synap.fused import Conv2DPoolOp
from synapc.dialects.synap.pool import MaxPool2DOp
from synapc.passes.common import integer_semantics_of, source_of


def composed_activation(first: Activation, then: Activation) -> Activation | None:
    """The activation equal to clamping by `first`, then by `then` (None if no single
    activation is): the intersection of the two clamp ranges."""
    (low1, high1), (low2, high2) = first.bounds, then.bounds
    low = low1 if low2 is None else low2 if low1 is None else max(low1, low2)
    high = high1 if high2 is None else high2 if high1 is None else min(high1, high2)
    if low is not None and high is not None and low > high:
        return None
    for activation in Activation:
        if activation.bounds == (low, high):
            return activation
    return None


def fused_activation(conv: Conv2DOp, pool: MaxPool2DOp) -> Activation | None:
    """The activation of the fused layer (the conv's, then the pool's), or None when no
    single activation gives the same result: a quantized pool under ONNX semantics must
    have no activation of its own."""
    first: Activation = conv.props()["activation"]
    then: Activation = pool.props()["activation"]
    if then is Activation.NONE:
        return first
    quantized = is_quantized(element_of(conv.output))
    if quantized and integer_semantics_of(pool) is IntegerSemantics.ONNX:
        return None
    return composed_activation(first, then)


class FuseConvMaxPool(RewritePattern):
    """max_pool2d(conv2d(x, w, b)) -> conv2d_pool(x, w, b) when the conv feeds only the
    pool and, for quantized layers, the pool keeps the conv's output type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, pool: MaxPool2DOp, rewriter: PatternRewriter) -> None:
        conv = pool.input.owner
        if not isinstance(conv, Conv2DOp) or not conv.output.has_one_use():
            return
        if element_of(pool.output) != element_of(conv.output):
            return  # a requantizing pool: not an exact maximum of the conv's integers
        activation = fused_activation(conv, pool)
        if activation is None:
            return
        c, p = conv.props(), pool.props()
        fused = Conv2DPoolOp.make(
            conv.input,
            conv.filter,
            conv.bias,
            result_types=[pool.output.type],
            strides=c["strides"],
            dilations=c["dilations"],
            pad=c["pad"],
            groups=c["groups"],
            activation=activation,
            pool_kernel=p["kernel"],
            pool_strides=p["strides"],
            pool_pad=p["pad"],
            **source_of(conv, pool),
        )
        rewriter.replace(pool, fused)
        rewriter.erase(conv)


@dataclass(frozen=True)
class FuseConvPoolPass(ModulePass):
    """Fuse each convolution with the max pooling that alone reads it into
    `synap.conv2d_pool`, where the result stays identical."""

    name = "fuse-conv-pool"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Rewrite every conv2d -> max_pool2d pair of `op` that may fuse."""
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FuseConvMaxPool()], dce_enabled=False),
            apply_recursively=False,
        ).rewrite_module(op)
