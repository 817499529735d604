"""`fuse-activation`: fold a standalone clamp into the fused activation of its producer.

Importers emit ReLU, ReLU6, ReLU_N1_TO_1 and clip(0, 1) as separate `synap.clamp` ops
(and ReLU sometimes as `synap.maximum(x, 0)`). The NPU applies such an activation for free
when the layer that produces the tensor writes its result, so the pass rewrites

    %y = synap.conv2d ...                    %y = synap.conv2d ... {activation = relu6}
    %z = synap.clamp %y {min 0, max 6}   ->  (uses of %z read %y)

for producers with an `activation` property (conv2d, depthwise_conv2d, transpose_conv2d,
fully_connected, add, sub, mul, div, max_pool2d, avg_pool2d) whose result has no other
use. The clamp's bounds must be those of an `Activation`; a producer that already has an
activation takes the intersection of both ranges, which is always an `Activation` again
(relu then relu6 is relu6, relu_n1_to_1 then relu is relu_0_to_1). The clamp's source
layer goes into the producer's `fused_layers`.

Float graphs: clamping is exact in any float type, so the rewrite always holds. Quantized
graphs (clamp input, clamp output and producer output of one per-tensor type with 8- or
16-bit storage) follow the module's integer semantics:

* TFLite: the clamp kernel rescales by ``s_in / s_out = 1`` (an identity) and clamps to
  its bounds quantized with the output's parameters (round half away), exactly the range
  the producer's fused activation clamps to, so the rewrite always holds.
* ONNX: the clamp is dequantize -> float32 clamp -> quantize (ties to even). A conv-like
  layer (conv2d, depthwise, transpose, fully_connected) clamps its integer result to the
  activation's bounds rounded half away, so it fuses only when, checked on every stored
  integer of the type, the clamp equals clamping the integers to that range (a bound
  exactly halfway between two steps fails). Every other producer runs in float32 and
  clamps before quantizing: as quantizing is monotone, that equals clamping afterwards
  whenever dequantize -> quantize gives back every stored integer, which is checked
  too. Quantized div is left alone: a 0/0 gives NaN there, which the fused clamp keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from synapc.context import weights_of
from synapc.dialects.quant import UniformQuantizedType, activation_range
from synapc.dialects.synap.activation import ClampOp
from synapc.dialects.synap.attributes import Activation, ActivationAttr, IntegerSemantics
from synapc.dialects.synap.base import element_of, is_float
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conv import (
    Conv2DOp,
    DepthwiseConv2DOp,
    FullyConnectedOp,
    TransposeConv2DOp,
)
from synapc.dialects.synap.elementwise import AddOp, DivOp, MaximumOp, MulOp, SubOp
from synapc.dialects.synap.pool import AvgPool2DOp, MaxPool2DOp
from synapc.passes.common import attributes_of, constant_array, integer_semantics_of
from synapc.weights import WeightStore

Bounds = tuple[float | None, float | None]

PRODUCERS: tuple[type[Operation], ...] = (
    Conv2DOp,
    DepthwiseConv2DOp,
    TransposeConv2DOp,
    FullyConnectedOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaxPool2DOp,
    AvgPool2DOp,
)
"""Ops whose `activation` property can take over a following clamp."""

_STORAGES = ("i8", "u8", "i16")
"""Storage types of the quantized clamp kernel (TFLite's RELU family)."""


def activation_for(bounds: Bounds) -> Activation | None:
    """The activation whose clamp range is exactly `bounds` (None if there is none)."""
    for activation in Activation:
        if activation.bounds == bounds:
            return activation
    return None


def compose(first: Activation, then: Activation) -> Activation | None:
    """The activation equal to applying `first` and then `then` (None if none is): the
    intersection of both ranges, when it is not empty."""
    (low1, high1), (low2, high2) = first.bounds, then.bounds
    lows = [b for b in (low1, low2) if b is not None]
    highs = [b for b in (high1, high2) if b is not None]
    low = max(lows) if lows else None
    high = min(highs) if highs else None
    if low is not None and high is not None and low > high:
        return None
    return activation_for((low, high))


INTEGER_KERNELS: tuple[type[Operation], ...] = (
    Conv2DOp,
    DepthwiseConv2DOp,
    TransposeConv2DOp,
    FullyConnectedOp,
)
"""Producers that clamp integers (rounded half away) under ONNX semantics; the others
run on dequantized float32 values and clamp those."""


@lru_cache(maxsize=256)
def onnx_fusion_is_exact(
    q: UniformQuantizedType, bounds: Bounds, integer_kernel: bool
) -> bool:
    """Whether a clamp to `bounds` of a value of per-tensor type `q` can fuse into its
    producer under ONNX semantics, checked on every stored integer of `q` with the
    arithmetic of `backends/jax/float_emulation.py`: dequantize -> quantize (ties to
    even) must give back each integer, and for an `integer_kernel` producer the clamp
    (dequantize, float32 clamp, quantize) must equal clamping the integers to the fused
    activation's range."""
    scale = np.float32(q.scale)
    if not np.isfinite(scale) or scale < np.float32(2.0**-100):
        return False  # far from any real scale; the float emulation flushes subnormals
    stored = np.arange(q.storage_min, q.storage_max + 1, dtype=np.int64)
    scale64 = np.float64(scale)

    def quantize(x: np.ndarray) -> np.ndarray:
        quotient = (x.astype(np.float64) / scale64).astype(np.float32)
        y = np.round(quotient.astype(np.float64)) + q.zero_point
        return np.clip(y, q.storage_min, q.storage_max).astype(np.int64)

    real = ((stored - q.zero_point).astype(np.float64) * scale64).astype(np.float32)
    if not np.array_equal(quantize(real), stored):
        return False
    if not integer_kernel:
        return True
    low, high = bounds
    clamped = np.clip(
        real,
        np.float32(-np.inf if low is None else low),
        np.float32(np.inf if high is None else high),
    )
    activation = activation_for(bounds)
    exact = (None, None) if activation is None else activation.bounds
    fused = np.clip(stored, *activation_range(exact, q))
    return bool(np.array_equal(quantize(clamped), fused))


def _exact(producer: Operation, value: SSAValue, bounds: Bounds) -> bool:
    """Whether clamping `value` (a producer's result) to `bounds` gives the same values as
    the producer fusing that clamp, under the module's semantics."""
    element = element_of(value)
    if is_float(element):
        return True
    if not isinstance(element, UniformQuantizedType) or element.is_per_axis:
        return False
    if element.storage.data not in _STORAGES:
        return False
    if integer_semantics_of(producer) is IntegerSemantics.TFLITE:
        return True
    if isinstance(producer, DivOp):
        return False
    return onnx_fusion_is_exact(element, bounds, isinstance(producer, INTEGER_KERNELS))


def fuse_into_producer(
    op: Operation, value: SSAValue, bounds: Bounds, rewriter: PatternRewriter
) -> bool:
    """Replace `op` (a clamp of `value` to `bounds` with `value`'s type) by `value`'s
    producer with the clamp fused into its activation, when that is exact; return whether
    it was done."""
    producer = value.owner
    if not isinstance(producer, PRODUCERS) or not value.has_one_use():
        return False
    if len(op.results) != 1 or op.results[0].type != value.type:
        return False
    clamp = activation_for(bounds)
    if clamp is None or clamp is Activation.NONE:
        return False
    current: Activation = producer.props()["activation"]
    fused = compose(current, clamp)
    if fused is None or not _exact(producer, value, bounds):
        return False
    properties = dict(producer.properties)
    properties["activation"] = ActivationAttr(fused)
    new = type(producer).create(
        operands=list(producer.operands),
        result_types=[r.type for r in producer.results],
        properties=properties,
        attributes=attributes_of(producer, op),
    )
    rewriter.replace(producer, new)
    rewriter.replace(op, [], [new.results[0]])
    return True


class FuseClamp(RewritePattern):
    """producer(activation a) -> clamp(bounds of b) => producer(activation a then b)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ClampOp, rewriter: PatternRewriter) -> None:
        low = None if op.min is None else op.min.value.data
        high = None if op.max is None else op.max.value.data
        fuse_into_producer(op, op.input, (low, high), rewriter)


@dataclass
class FuseMaximumZero(RewritePattern):
    """producer -> maximum(x, 0 constant) => producer(activation relu), when the constant
    holds real zeros of `x`'s type (float 0, or stored zero points of the same quantized
    type) and does not broadcast `x` to a larger shape."""

    weights: WeightStore

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MaximumOp, rewriter: PatternRewriter) -> None:
        for value, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if not self._is_zero(other, value):
                continue
            constant = other.owner
            if fuse_into_producer(op, value, (0.0, None), rewriter):
                if isinstance(constant, ConstantOp) and not constant.result.uses:
                    rewriter.erase(constant)
                return

    def _is_zero(self, other: SSAValue, value: SSAValue) -> bool:
        """Whether `other` is a constant of real zeros of `value`'s element type."""
        if element_of(other) != element_of(value):
            return False
        array = constant_array(other, self.weights)
        if array is None:
            return False
        element = element_of(value)
        if isinstance(element, UniformQuantizedType):
            return not element.is_per_axis and bool(np.all(array == element.zero_point))
        return is_float(element) and bool(np.all(array == 0))


@dataclass(frozen=True)
class FuseActivationPass(ModulePass):
    """Fold clamps (and maximum with zero) into the fused activation of the layer that
    produces their input, where the result is unchanged."""

    name = "fuse-activation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [FuseClamp(), FuseMaximumZero(weights_of(ctx))], ctx=ctx, dce_enabled=False
        )
        PatternRewriteWalker(patterns).rewrite_module(op)
