"""`fold-pad`: fold a constant `synap.pad` of the spatial axes into the `pad` property of
the convolution or pooling layer that reads it.

Importers turn explicit framework padding (TFLite PAD before a VALID convolution, ONNX Pad,
PyTorch's ZeroPad2d) into a separate `synap.pad`. The layers pad their input themselves
(``pad = [top, bottom, left, right]``), so the NPU can skip writing and reading the padded
copy: the pad's H/W widths are added to the layer's own and the layer reads the pad's input.

The fold fires only where the layer computes exactly what it computed before, under the
integer semantics of the module (see `backends/jax/ops/conv.py` and `pool.py`):

* `synap.conv2d` / `synap.depthwise_conv2d` pad with real zero: float layers with 0.0,
  quantized ones (TFLite and ONNX kernels alike) with the input zero point, since they
  subtract it before padding. The pad must fill exactly that.
* `synap.max_pool2d` pads with cells that never win (-inf, or the storage minimum of
  quantized values). A pad folds when its fill is that value too, or when its fill is 0
  (the zero point) and its input is provably >= 0 (made by an op with a fused RELU / RELU6
  / RELU_0_TO_1 or by `synap.clamp` with ``min >= 0``), provided every window still covers
  at least one input cell, so that no window sees padding alone.
* `synap.avg_pool2d` (float only) with a 0.0 fill: the layer then counts the padding in
  its divisor, as it counted the padded tensor's cells, so it becomes
  ``count_include_pad = true``; this is exact when the layer already counted its own
  padding or had none. Quantized average pooling never folds: TFLite's integer kernel
  has no `count_include_pad` (the JAX backend refuses it) and the importers keep such
  pools out of the quantized form.

Reflect, symmetric and edge pads, pads of the batch or channel axes, pads whose input and
result types differ and pads whose fill is not exactly the layer's own never fold. A pad
with several uses folds when every use is the data input of a foldable layer (the pad
then disappears; folding into some uses only would keep the padded copy anyway).

The pad's source layer goes into the `fused_layers` of the layer it folds into (of the
first one in the block when it folds into several, so that it is listed once).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

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

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import shapes
from synapc.dialects.synap.activation import ClampOp
from synapc.dialects.synap.attributes import Activation, IntegerSemantics, PadMode
from synapc.dialects.synap.base import SynapOp, element_of, is_float, shape_of
from synapc.dialects.synap.conv import Conv2DOp, DepthwiseConv2DOp
from synapc.dialects.synap.data_movement import PadOp
from synapc.dialects.synap.pool import AvgPool2DOp, MaxPool2DOp
from synapc.passes.common import in_block_order, integer_semantics_of, source_of

Consumer = Conv2DOp | DepthwiseConv2DOp | MaxPool2DOp | AvgPool2DOp

_NONNEGATIVE_ACTIVATIONS = frozenset(
    {Activation.RELU, Activation.RELU6, Activation.RELU_0_TO_1}
)

# Under ONNX semantics a quantized pad runs as dequantize -> pad -> quantize; dropping it
# keeps the integers only if that round trip is the identity, which holds for storage of
# at most 16 bits (float32 keeps |x - zp| <= 65535 within 0.01) and scales far from
# float32's overflow and subnormal ranges.
_ONNX_ROUND_TRIP_BITS = 16
_ONNX_SCALE_RANGE = (1e-30, 1e30)


def spatial_pads(pad: PadOp) -> tuple[int, int, int, int] | None:
    """``[top, bottom, left, right]`` of a constant NHWC pad that leaves the batch and
    channel axes alone, else None."""
    props = pad.props()
    widths = props["pads"]
    if props["mode"] != PadMode.CONSTANT or len(widths) != 8:
        return None
    if any(widths[0:2]) or any(widths[6:8]):
        return None
    return (widths[2], widths[3], widths[4], widths[5])


def stored_fill(
    value: float, q: UniformQuantizedType, semantics: IntegerSemantics
) -> int | None:
    """The stored integer a quantized constant pad of real `value` writes, as the JAX
    backend computes it: TFLite's ``zp + round_half_away(f32(value) / f32(scale))``
    clamped to the storage range, or under ONNX semantics the float fill quantized with
    ``round_half_even(f32(f64(value) / f64(scale))) + zp``, saturated. None when the
    backend would not run the pad, or when the ONNX round trip of the pad's other cells
    might not be exact."""
    if q.is_per_axis or math.isnan(value):
        return None
    scale = np.float32(q.scale)
    if semantics is IntegerSemantics.ONNX:
        if q.bitwidth > _ONNX_ROUND_TRIP_BITS:
            return None
        if not _ONNX_SCALE_RANGE[0] <= float(scale) <= _ONNX_SCALE_RANGE[1]:
            return None
        with np.errstate(over="ignore"):
            quotient = np.float32(np.float64(np.float32(value)) / np.float64(scale))
        level = float(np.rint(quotient)) + q.zero_point
    else:
        with np.errstate(over="ignore"):
            ratio = np.float32(value) / scale
        if not np.isfinite(ratio):
            return None  # TFLite's int(round(ratio)) has no value: the pad does not run
        whole = np.trunc(ratio)
        away = np.sign(ratio) if abs(ratio - whole) >= 0.5 else 0.0
        level = float(whole + away) + q.zero_point
    return int(min(max(level, q.storage_min), q.storage_max))


@dataclass(frozen=True)
class Fill:
    """What a pad writes into its border, relative to the layers' own padding."""

    zero: bool
    """The real value 0 (0.0, or the zero point)."""
    at_most_zero: bool
    """A real value <= 0."""
    lowest: bool
    """The smallest value of the type (-inf, or the storage minimum)."""


def fill_of(pad: PadOp, semantics: IntegerSemantics) -> Fill | None:
    """The fill of a constant pad on float or per-tensor quantized values whose input and
    result element types agree, else None."""
    element = element_of(pad.output)
    if element_of(pad.input) != element:
        return None
    value = pad.props()["value"]
    if isinstance(element, UniformQuantizedType):
        stored = stored_fill(value, element, semantics)
        if stored is None:
            return None
        zp = element.zero_point
        return Fill(stored == zp, stored <= zp, stored == element.storage_min)
    if not is_float(element) or math.isnan(value):
        return None
    return Fill(value == 0.0, value <= 0.0, value == -math.inf)


def is_nonnegative(value: SSAValue) -> bool:
    """Whether every element of `value` is provably >= 0 (its real value): it comes from
    an op with a fused RELU / RELU6 / RELU_0_TO_1, or from `synap.clamp` with min >= 0."""
    owner = value.owner
    if isinstance(owner, ClampOp):
        return owner.min is not None and owner.min.value.data >= 0.0
    if isinstance(owner, SynapOp):
        return owner.props().get("activation") in _NONNEGATIVE_ACTIVATIONS
    return False


def windows_overlap_input(
    size: int, kernel: int, stride: int, before: int, after: int
) -> bool:
    """Whether every pooling window along one axis covers at least one input cell."""
    count = (size + before + after - kernel) // stride + 1
    return kernel - 1 >= before and (count - 1) * stride <= before + size - 1


def _pads_like_max_pool(layer: MaxPool2DOp, semantics: IntegerSemantics) -> bool:
    """Whether a window of nothing but the lowest fill gives the same result as one of
    the layer's own padding: float pools and TFLite's integer kernel (which clamps the
    stored minimum like its own fill) do; under ONNX semantics the dequantized minimum
    is requantized with the output's parameters, which only keeps it when the input and
    output types agree."""
    element = element_of(layer.input)
    if not isinstance(element, UniformQuantizedType):
        return True
    return semantics is IntegerSemantics.TFLITE or element == element_of(layer.output)


def folded_properties(
    layer: Consumer,
    fill: Fill,
    widths: tuple[int, int, int, int],
    source: SSAValue,
    semantics: IntegerSemantics,
) -> dict | None:
    """The layer's properties with the pad folded in, or None when the fold would change
    what the layer computes or the new padding does not give the layer's result shape."""
    props = layer.props()
    total = tuple(a + b for a, b in zip(props["pad"], widths, strict=True))
    if isinstance(layer, Conv2DOp | DepthwiseConv2DOp):
        if not fill.zero:
            return None
    elif isinstance(layer, MaxPool2DOp):
        if not (fill.lowest or (fill.at_most_zero and is_nonnegative(source))):
            return None
        if not (fill.lowest and _pads_like_max_pool(layer, semantics)):
            _, height, width, _ = shape_of(source)
            (kh, kw), (sh, sw) = props["kernel"], props["strides"]
            if not (
                windows_overlap_input(height, kh, sh, total[0], total[1])
                and windows_overlap_input(width, kw, sw, total[2], total[3])
            ):
                return None
    else:
        if isinstance(element_of(source), UniformQuantizedType) or not fill.zero:
            return None
        if not props["count_include_pad"] and any(props["pad"]):
            return None
        props["count_include_pad"] = True
    props["pad"] = total
    operand_shapes = [shape_of(source), *(shape_of(v) for v in layer.operands[1:])]
    try:
        expected = layer.infer_shapes(operand_shapes, props)
    except shapes.ShapeError:
        return None
    if tuple(expected[0]) != shape_of(layer.output):
        return None
    return props


def _rebuilt(
    layer: Consumer, source: SSAValue, props: dict, absorbed: Sequence[Operation] = ()
) -> Operation:
    """`layer` reading `source`, with `props` (set in the op's definition order, so the
    printed form does not depend on how the layer was written), its result type and its
    source layers, plus those of the `absorbed` ops (the folded pad)."""
    operands: list[SSAValue | None] = [source]
    if isinstance(layer, Conv2DOp | DepthwiseConv2DOp):
        operands += [layer.filter, layer.bias]
    order = type(layer).get_irdl_definition().properties
    ordered = {name: props[name] for name in order if name in props}
    return type(layer).make(
        *operands,
        result_types=[layer.output.type],
        **ordered,
        **source_of(layer, *absorbed),
    )


class FoldPadIntoLayer(RewritePattern):
    """pad(x) -> conv / depthwise / max pool / avg pool  =>  layer(x) with a wider pad."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> None:
        widths = spatial_pads(op)
        if widths is None or not op.output.uses:
            return
        semantics = integer_semantics_of(op)
        fill = fill_of(op, semantics)
        if fill is None:
            return
        rewrites: list[tuple[Consumer, dict]] = []
        for use in op.output.uses:
            layer = use.operation
            if use.index != 0 or not isinstance(
                layer, Conv2DOp | DepthwiseConv2DOp | MaxPool2DOp | AvgPool2DOp
            ):
                return
            props = folded_properties(layer, fill, widths, op.input, semantics)
            if props is None:
                return
            rewrites.append((layer, props))
        first = in_block_order([layer for layer, _ in rewrites])[0]
        for layer, props in rewrites:
            absorbed = [op] if layer is first else []
            rewriter.replace(layer, _rebuilt(layer, op.input, props, absorbed))
        rewriter.erase(op)


@dataclass(frozen=True)
class FoldPadPass(ModulePass):
    """Fold constant spatial `synap.pad` ops into the padding of the convolution and
    pooling layers that read them, where the layer's result stays exactly the same."""

    name = "fold-pad"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FoldPadIntoLayer()], ctx=ctx)
        ).rewrite_module(op)
