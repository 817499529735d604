"""Kernels of `dialects/synap/conv.py`: convolutions, fully connected, matmul.

Float and quantized layers share the linear part (XLA convolution, the per-tap depthwise
sum, the matrix product) and differ in how operands are prepared and how the accumulator
is finished:

* float: the operands as they are, accumulating in float32 for narrower floats; finish
  with bias and fused activation.
* quantized (TFLite's reference integer kernels): stored integers minus their zero
  points, as int32; the linear part accumulates exactly in int32, or in int64 inside
  ``x64()`` (XLA CPU's integer convolution and dot are exact); finish with the integer
  bias, the per-channel rescale to the output scale, the output zero point and the clamp
  to the fused activation's range. Padding and input dilation insert zeros in the
  zero-point-free domain, which is what TFLite's kernels do by skipping those taps.

What ai-edge-litert 2.3 (``BUILTIN_REF``) computes, found against it
(tests/test_tflite_quant_conv.py):

* CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV: int8 and uint8 accumulate in int32 and
  rescale with the int32 MultiplyByQuantizedMultiplier (double rounding); 16x8 layers
  accumulate in int64 and use the int64 overload (16-bit reduced multiplier, rounded once),
  except with an int32 bias (``quantized_bias_type`` INT32), which takes the int32 path.
  Multipliers are ``double(s_in) * double(s_w[c]) / double(s_out)`` for int8 and int16
  inputs (per-tensor weights too), ``double(float(s_in * s_w)) / double(s_out)`` (float32
  product) for uint8.
* FULLY_CONNECTED with 8-bit weights rescales in float64:
  ``int32(round(double(acc) * m))``, ties away from zero; with int16 weights (16x16) it
  accumulates in int64 and uses the int64 MBQM.
* BATCH_MATMUL (int8, int16): MBQM (int64 overload for int16) by
  ``double(float(s_lhs * s_rhs)) / double(s_out)``, clamped to the storage range.
* The weights' zero point is subtracted in uint8 layers and in per-tensor
  FULLY_CONNECTED only; the int8/int16 convolution kernels and per-channel
  FULLY_CONNECTED ignore it (CONV_2D refuses a nonzero one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from xdsl.ir import SSAValue

from synapc.backends.jax import fixed_point as fp
from synapc.backends.jax.lowering import (
    Derived,
    LoweringContext,
    Transform,
    UnsupportedOpError,
    derived_operands,
    kernel,
    op_check,
    operand_layout,
)
from synapc.backends.jax.ops.common import activate, any_quantized, widen
from synapc.backends.jax.ops.quantized import (
    activation_range,
    per_axis,
    per_tensor,
    qtype,
    rescale_half_even,
    round_half_away,
    saturate,
    scale_f64,
    scales_f64,
    stored,
    x64,
)
from synapc.dialects import quant
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import conv
from synapc.dialects.synap.attributes import Activation, IntegerSemantics
from synapc.dialects.synap.base import element_of, is_quantized, shape_of

_NHWC = ("NHWC", "HWIO", "NHWC")

Linear = Callable[..., jax.Array]
"""The linear part of a layer: ``(input, weights, accumulator dtype, pad_value=0) ->
accumulator``; `pad_value` is what padding inserts (a zero point, for stored integers)."""


@dataclass(frozen=True)
class Reduction:
    """How a layer's linear part sums: each output adds `taps` products per input channel
    over `channels` input channels; `split(x, w, lo, hi)` restricts the laid-out operands
    to input channels [lo, hi) (None: the sum cannot be split by channels)."""

    taps: int
    channels: int
    split: Callable[[jax.Array, jax.Array, int, int], tuple[jax.Array, jax.Array]] | None


# --------------------------------------------------------------------------------------
# Linear parts, shared by float and integer layers
# --------------------------------------------------------------------------------------


def _pads(pad: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(pad[0], pad[1]), (pad[2], pad[3])]


#: The largest kernel (KH * KW taps) `_convolve` runs as gathered patches.
_PATCHES_MAX_TAPS = 49


def _convolve(
    x: jax.Array,
    w_hwio: jax.Array,
    acc: jnp.dtype,
    strides: tuple[int, ...],
    padding: list[tuple[int, int]],
    dilations: tuple[int, ...],
    input_dilation: tuple[int, ...] = (1, 1),
    groups: int = 1,
    pad_value: int = 0,
) -> jax.Array:
    """NHWC x HWIO convolution accumulating in `acc`; padding inserts `pad_value` and
    input dilation zeros. Int8 operands stay int8 (XLA's int8 products, accumulated in
    int32); other integers are widened to `acc`.

    Layers whose filter is 1x1 run as a matrix product too: XLA's CPU dot is 1.2-1.7x its
    convolution there (MobileNetV2's pointwise layers).

    Layers on at most 4 input channels (image inputs) run as one matrix product of
    patches gathered on the planar input (`_planar_patches_convolve`): XLA's CPU
    convolution is 2-5x slower there (128x128x3, 5x5, stride 2, 24 filters: 1,651 us
    against 334 us; patches gathered on the NHWC input: 342 us, 336 against 267 us for
    192x192x3, 3x3). Only for kernels of at most `_PATCHES_MAX_TAPS` taps: each tap is
    one slice for XLA to compile (Basic Pitch's 256-tap audio kernels took minutes to
    compile). A sum of taps was faster alone (113 us for 192x192x3), but XLA fused it
    into a following channel pad where it ran 4-6x slower."""
    x, w_hwio = _integer_operands(x, w_hwio, acc)
    if pad_value:
        x = jnp.pad(x, [(0, 0), *padding, (0, 0)], constant_values=pad_value)
        padding = [(0, 0), (0, 0)]
    kh, kw, cin = w_hwio.shape[:3]
    if groups == 1 and tuple(input_dilation) == (1, 1):
        if (kh, kw) == (1, 1):
            return _pointwise_convolve(x, w_hwio, acc, strides, padding)
        if cin <= 4 and kh * kw <= _PATCHES_MAX_TAPS:
            return _planar_patches_convolve(x, w_hwio, acc, strides, padding, dilations)
    return lax.conv_general_dilated(
        x,
        w_hwio,
        strides,
        padding,
        lhs_dilation=input_dilation,
        rhs_dilation=dilations,
        dimension_numbers=_NHWC,
        feature_group_count=groups,
        preferred_element_type=acc,
    )


def _integer_operands(
    lhs: jax.Array, rhs: jax.Array, acc: jnp.dtype
) -> tuple[jax.Array, jax.Array]:
    """The operands of an integer product accumulating in `acc`: int8 pairs as they are
    (XLA multiplies int8 natively; its int32 convolution is 30-170x slower), other
    integers widened to `acc`."""
    if not jnp.issubdtype(acc, jnp.integer) or lhs.dtype == rhs.dtype == jnp.int8:
        return lhs, rhs
    return lhs.astype(acc), rhs.astype(acc)


def _planar_patches_convolve(
    x: jax.Array,
    w_hwio: jax.Array,
    acc: jnp.dtype,
    strides: tuple[int, ...],
    padding: list[tuple[int, int]],
    dilations: tuple[int, ...],
) -> jax.Array:
    """Convolution as one matrix product of gathered patches, gathered on the planar
    (NCHW) input: each strided window is a copy of whole rows, stacked on a major axis,
    where gathering them on the NHWC input side by side on the channel axis copied
    3-value runs (a slow concatenation for XLA). The product contracts the patches'
    second axis with the (KH*KW*I, O) filter; an NCHW producer's transpose to NHWC
    cancels with the one here."""
    kh, kw, cin, cout = w_hwio.shape
    x = jnp.pad(jnp.transpose(x, (0, 3, 1, 2)), [(0, 0), (0, 0), *padding])
    (sh, sw), (dh, dw) = strides, dilations
    n, _, height, width = x.shape
    out_h = (height - (kh - 1) * dh - 1) // sh + 1
    out_w = (width - (kw - 1) * dw - 1) // sw + 1
    windows = [
        lax.slice(
            x,
            (0, 0, i * dh, j * dw),
            (n, cin, i * dh + sh * (out_h - 1) + 1, j * dw + sw * (out_w - 1) + 1),
            (1, 1, sh, sw),
        )
        for i in range(kh)
        for j in range(kw)
    ]
    patches = jnp.stack(windows, axis=1).reshape(n, kh * kw * cin, out_h * out_w)
    patches, w = _integer_operands(patches, w_hwio.reshape(kh * kw * cin, cout), acc)
    y = lax.dot_general(patches, w, (((1,), (0,)), ((), ())), preferred_element_type=acc)
    return y.reshape(n, out_h, out_w, cout)


def _pointwise_convolve(
    x: jax.Array,
    w_hwio: jax.Array,
    acc: jnp.dtype,
    strides: tuple[int, ...],
    padding: list[tuple[int, int]],
) -> jax.Array:
    """A 1x1 convolution as one matrix product of the padded, strided input and the
    filter as an (I, O) matrix."""
    x = jnp.pad(x, [(0, 0), *padding, (0, 0)])
    if tuple(strides) != (1, 1):
        x = x[:, :: strides[0], :: strides[1], :]
    return _matmul(x, w_hwio[0, 0], acc)


def _matmul(lhs: jax.Array, rhs: jax.Array, acc: jnp.dtype) -> jax.Array:
    """``lhs @ rhs`` (NumPy broadcasting of batch dimensions) accumulating in `acc`."""
    lhs, rhs = _integer_operands(lhs, rhs, acc)
    return jnp.matmul(lhs, rhs, preferred_element_type=acc)


# --------------------------------------------------------------------------------------
# Finishing the accumulator
# --------------------------------------------------------------------------------------


def _float_layer(
    op: conv.BiasedLayer, args: list[jax.Array], linear: Linear
) -> list[jax.Array]:
    """A float layer: the linear part in float32 (or wider), bias, fused activation, back
    to the input's dtype."""
    x = args[0]
    y = linear(x, args[1], widen(x).dtype)
    if op.bias is not None:
        y = y + args[2].astype(y.dtype)
    return [activate(y, op.props()["activation"]).astype(x.dtype)]


def _real_multipliers(
    qx: UniformQuantizedType,
    qw: UniformQuantizedType,
    qo: UniformQuantizedType,
    channels: int,
) -> np.ndarray:
    """TFLite's effective output scales, one per output channel (`channels` of them):
    ``double(s_in) * double(s_w[c]) / double(s_out)`` as
    PopulateConvolutionQuantizationParams computes them for int8 and int16 inputs; uint8
    layers use the legacy per-tensor multiplier of their uint8 kernels, whose product of
    scales is a float32 one: ``double(float(s_in * s_w)) / double(s_out)``. A per-channel
    input (depthwise: input channel ``c // multiplier`` feeds output channel c) or
    result takes its channel's scale in the same formula."""
    s_in = np.repeat(qx.scales, channels // qx.scales.size)
    if qx.storage_dtype == np.uint8:
        product = s_in.astype(np.float32) * qw.scales.astype(np.float32)
        return product.astype(np.float64) / scales_f64(qo)
    return s_in.astype(np.float32).astype(np.float64) * scales_f64(qw) / scales_f64(qo)


def _channel_vector(values: np.ndarray, *types: UniformQuantizedType) -> np.ndarray:
    """Per-channel host values shaped to broadcast along the last (channel) axis; a 0-d
    array when every one of `types` is per tensor (then all values are equal)."""
    per_channel = any(q.is_per_axis for q in types)
    return values.reshape(-1) if per_channel else values.reshape(-1)[:1].reshape(())


def _split64(acc: jax.Array) -> tuple[jax.Array, jax.Array]:
    """An int64 array (inside ``x64()``) as the ``(hi int32, lo uint32)`` pairs of
    `fixed_point`."""
    hi = (acc >> 32).astype(jnp.int32)
    lo = (acc & 0xFFFFFFFF).astype(jnp.uint32)
    return hi, lo


def _requantize_mbqm(
    acc: jax.Array | tuple[jax.Array, jax.Array], real: np.ndarray
) -> jax.Array:
    """TFLite's MultiplyByQuantizedMultiplier of an int32 accumulator, or of an int64 one
    given as a ``(hi, lo)`` pair (the int64 overload), by the real multipliers `real`."""
    multiplier, shift = fp.quantize_multiplier(real)
    if isinstance(acc, tuple):
        return fp.multiply_by_quantized_multiplier_int64(*acc, multiplier, shift)
    return fp.multiply_by_quantized_multiplier(acc, multiplier, shift)


def _rescale_f64(acc: jax.Array, real: np.ndarray) -> jax.Array:
    """``int32(std::round(double(acc) * real))``: the float64 rescale of ai-edge-litert
    2.3's reference FULLY_CONNECTED. `acc` is int32, or int64 inside an ``x64()`` block
    (the caller's); the result is int32."""
    with x64():
        y = round_half_away(acc.astype(jnp.float64) * jnp.asarray(real, jnp.float64))
        return jnp.clip(y, fp.INT32_MIN, fp.INT32_MAX).astype(jnp.int32)


def _check_integer(op: conv.BiasedLayer) -> tuple[UniformQuantizedType, ...]:
    """The quantized types of a quantized layer's input, weights and output.

    A float layer with quantized weights (TFLite's hybrid kernels) is not supported, nor
    are per-channel weights quantized along another axis than the output channels' (0,
    or 3 for depthwise weights), which TFLite refuses too."""
    if not is_quantized(element_of(op.input)):
        raise UnsupportedOpError(
            f"{op.name} with float input and quantized weights (hybrid) is not supported "
            "by the JAX backend"
        )
    qw = qtype(op.filter)
    channel_axis = 3 if isinstance(op, conv.DepthwiseConv2DOp) else 0
    if qw.is_per_axis and qw.quantized_dimension != channel_axis:
        raise UnsupportedOpError(
            f"{op.name} with weights quantized along axis {qw.quantized_dimension} "
            f"(not {channel_axis}, the output channels) is not supported"
        )
    return (
        _channel_type(op, op.input, "its input"),
        qw,
        _channel_type(op, op.output, "its result"),
    )


def _channel_type(op: conv.BiasedLayer, value: SSAValue, what: str) -> UniformQuantizedType:
    """The quantized type of a layer's input or result: per tensor, or per channel along
    the last (channel) axis where the layer keeps channels apart (any result; the input
    of a depthwise layer, whose output channel reads one input channel)."""
    q = qtype(value)
    channel_axis = len(shape_of(value)) - 1
    if (
        q.is_per_axis
        and q.quantized_dimension == channel_axis
        and (value is op.output or isinstance(op, conv.DepthwiseConv2DOp))
    ):
        return q
    return per_tensor(value, what)


def _uses_weight_zero_point(
    op: conv.BiasedLayer, qx: UniformQuantizedType, qw: UniformQuantizedType
) -> bool:
    """Whether TFLite subtracts the weights' zero point: in uint8 layers and in fully
    connected layers with per-tensor weights. The int8 and 16x8 convolution kernels and
    per-channel fully connected ignore it (CONV_2D refuses a nonzero one at Prepare,
    DEPTHWISE_CONV_2D and TRANSPOSE_CONV run as if it were 0)."""
    if qx.storage_dtype == np.uint8:
        return True
    return isinstance(op, conv.FullyConnectedOp) and not qw.is_per_axis


def _accumulates_int64(op: conv.BiasedLayer, qx: UniformQuantizedType) -> bool:
    """Whether a quantized layer accumulates in int64: 16-bit activations, unless the bias
    is int32 (TFLite's 16x8 kernels with ``quantized_bias_type`` INT32 accumulate in int32
    and use the int32 MBQM; the importer gives such layers a zero int32 bias when they
    have none)."""
    if qx.storage_dtype != np.int16:
        return False
    return op.bias is None or qtype(op.bias).storage_dtype != np.int32


def _rescaled(
    accumulate: Callable[[jnp.dtype], jax.Array],
    bias: jax.Array | None,
    real: np.ndarray,
    *,
    acc64: bool,
    float64_rescale: bool,
) -> jax.Array:
    """``rescale(accumulate(dtype) + bias)`` as int32: the accumulator in int32, or in
    int64 for `acc64` (inside ``x64()``); rescaled by the real multipliers `real` with
    MBQM (the int64 overload for `acc64`), or in float64 for `float64_rescale`."""
    if not acc64:
        acc = accumulate(jnp.int32)
        if bias is not None:
            acc = acc + bias.astype(jnp.int32)
        return _rescale_f64(acc, real) if float64_rescale else _requantize_mbqm(acc, real)
    with x64():
        acc = accumulate(jnp.int64)
        if bias is not None:
            acc = acc + bias.astype(jnp.int64)
        if float64_rescale:
            return _rescale_f64(acc, real)
        pair = _split64(acc)
    return _requantize_mbqm(pair, real)


#: Integers up to 2**24 are exact in float32: a float32 sum of integer products is exact
#: while every partial sum stays within it, whatever the order of the additions.
_FLOAT32_EXACT = 1 << 24


def _magnitude(q: UniformQuantizedType, zero_point: bool = True) -> int:
    """The largest magnitude of a stored integer of `q` (minus its zero point)."""
    zp = q.zero_points.astype(np.int64) if zero_point else np.zeros(1, np.int64)
    return int(max(np.abs(q.storage_min - zp).max(), np.abs(q.storage_max - zp).max()))


def _exact_accumulator(
    linear: Linear,
    reduction: Reduction,
    x: jax.Array,
    qx: UniformQuantizedType,
    w: jax.Array,
    qw: UniformQuantizedType,
    weight_zero_point: bool,
    weight_sums: jax.Array | None = None,
) -> jax.Array:
    """``linear(x - zp_x, w - zp_w)`` (the weights' zero point only where
    `weight_zero_point`) exactly, as int32, on the fastest exact path:

    * int8 by int8, where the lowering derived the weights' per-channel `weight_sums`
      (`_weight_sums`) and the weights have no zero point to subtract: XLA's int8
      products on the stored integers, the input padded with its zero point (`linear`'s
      `pad_value`), minus ``zp_x * weight_sums``;
    * else in float32, exact because every partial sum stays below 2**24 (the bound
      comes from the types' ranges): split into chunks of input channels that each
      guarantee it where one sum would not, the chunks added in int32;
    * else (no split keeps the bound) in int32.
    """
    if weight_sums is not None and not (weight_zero_point and qw.zero_points.any()):
        zp = qx.zero_point
        acc = linear(x, w, jnp.int32, zp)
        return acc - zp * weight_sums if zp else acc
    w_zp = _channel_vector(qw.zero_points.astype(np.float32), qw)
    largest = _magnitude(qx) * _magnitude(qw, weight_zero_point)
    chunk = _FLOAT32_EXACT // max(1, largest * reduction.taps)
    if chunk >= reduction.channels or (chunk >= 1 and reduction.split is not None):
        xs = x.astype(jnp.float32) - per_axis(qx, x.ndim, qx.zero_points.astype(np.float32))
        ws = w.astype(jnp.float32) - w_zp if weight_zero_point else w.astype(jnp.float32)
        if chunk >= reduction.channels:
            return linear(xs, ws, jnp.float32).astype(jnp.int32)
        total = None
        for lo in range(0, reduction.channels, chunk):
            part = linear(*reduction.split(xs, ws, lo, lo + chunk), jnp.float32)
            part = part.astype(jnp.int32)
            total = part if total is None else total + part
        return total
    ws = w.astype(jnp.int32)
    if weight_zero_point:
        ws = ws - w_zp.astype(np.int32)
    return linear(stored(x, qx), ws, jnp.int32)


def _integer_layer(
    op: conv.BiasedLayer,
    args: list[jax.Array],
    linear: Linear,
    reduction: Reduction,
    *,
    float64_rescale: bool,
    acc64: bool | None,
) -> list[jax.Array]:
    """A quantized layer as TFLite's reference integer kernels compute it.

    ``acc = linear(x - zp_x, w - zp_w) + bias`` (int32 by `_exact_accumulator`, or int64:
    `acc64`, by default `_accumulates_int64`), rescaled per output channel by
    ``s_in * s_w / s_out`` (MBQM, or float64 for `float64_rescale`), plus the output zero
    point, clamped to the fused activation's range. Weights arrive laid out with their
    output channels last."""
    qx, qw, qo = _check_integer(op)
    channels = shape_of(op.output)[-1]
    weight_zero_point = _uses_weight_zero_point(op, qx, qw)

    def accumulate(dtype: jnp.dtype) -> jax.Array:
        if dtype == jnp.int32:
            sums = _weight_sums_of(op, args)
            return _exact_accumulator(
                linear, reduction, args[0], qx, args[1], qw, weight_zero_point, sums
            )
        w = args[1].astype(dtype)
        if weight_zero_point:
            w = w - _channel_vector(qw.zero_points, qw)
        return linear(stored(args[0], qx), w, dtype)

    y = _rescaled(
        accumulate,
        args[2] if op.bias is not None else None,
        _channel_vector(_real_multipliers(qx, qw, qo, channels), qx, qw, qo),
        acc64=_accumulates_int64(op, qx) if acc64 is None else acc64,
        float64_rescale=float64_rescale,
    )
    activation: Activation = op.props()["activation"]
    if not qo.is_per_axis:
        return [saturate(y + qo.zero_point, qo, *activation_range(activation, qo))]
    bounds = (None, None) if activation is None else activation.bounds
    lo, hi = quant.channel_activation_range(bounds, qo)
    y = y + qo.zero_points.astype(np.int32)
    return [jnp.clip(y, lo.astype(np.int32), hi.astype(np.int32)).astype(qo.storage_dtype)]


def _onnx_integer_layer(
    op: conv.BiasedLayer, args: list[jax.Array], linear: Linear, reduction: Reduction
) -> list[jax.Array]:
    """A quantized layer as ONNX Runtime's QLinearConv / QLinearMatMul / QGemm compute it:
    ``acc = linear(x - zp_x, w - zp_w) + bias`` in int32 (int64 for 16-bit inputs, which
    ONNX Runtime runs in float), times the float32 multiplier ``s_in * s_w / s_out`` (per
    output channel), rounded half to even, plus the output zero point, saturated (and
    clamped to a fused activation's range)."""
    qx, qw, qo = _check_integer(op)
    if qx.is_per_axis or qo.is_per_axis:
        raise UnsupportedOpError(
            f"{op.name} with per-channel activations under ONNX integer semantics is not "
            "supported (QLinearConv takes one input and output scale)"
        )
    multiplier = np.float32(qx.scale) * qw.scales.astype(np.float32) / np.float32(qo.scale)
    multiplier = _channel_vector(multiplier, qw)
    bias = args[2] if op.bias is not None else None
    if qx.storage_dtype == np.int16:
        with x64():
            w = args[1].astype(jnp.int64) - _channel_vector(qw.zero_points, qw)
            acc = linear(stored(args[0], qx).astype(jnp.int64), w, jnp.int64)
            if bias is not None:
                acc = acc + bias.astype(jnp.int64)
            y = rescale_half_even(acc, multiplier)
    else:
        acc = _exact_accumulator(linear, reduction, args[0], qx, args[1], qw, True,
                                 _weight_sums_of(op, args))  # fmt: skip
        if bias is not None:
            acc = acc + bias.astype(jnp.int32)
        y = rescale_half_even(acc, multiplier)
    activation: Activation = op.props()["activation"]
    return [saturate(y + qo.zero_point, qo, *activation_range(activation, qo))]


def _layer(
    op: conv.BiasedLayer,
    args: list[jax.Array],
    ctx: LoweringContext,
    linear: Linear,
    reduction: Reduction,
    *,
    float64_rescale: bool = False,
    acc64: bool | None = None,
) -> list[jax.Array]:
    """Run a biased layer in float or integer arithmetic, by its types and the integer
    semantics; `reduction` says how its linear part sums (`_exact_accumulator`)."""
    if any_quantized(op) and ctx.semantics is IntegerSemantics.ONNX:
        return _onnx_integer_layer(op, args, linear, reduction)
    if any_quantized(op):
        return _integer_layer(
            op, args, linear, reduction, float64_rescale=float64_rescale, acc64=acc64
        )
    return _float_layer(op, args, linear)


# --------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------


def _ohwi_to_hwio(w: jax.Array | np.ndarray) -> jax.Array | np.ndarray:
    return w.transpose(1, 2, 3, 0)


def _flipped_ohwi_to_hwio(w: jax.Array | np.ndarray) -> jax.Array | np.ndarray:
    return w[:, ::-1, ::-1, :].transpose(1, 2, 3, 0)


def padded_input(
    input_shape: tuple[int, ...], pad: tuple[int, ...], channels: int
) -> tuple[int, ...]:
    """The NHWC shape of a windowed layer's input once padded by `pad` ([top, bottom,
    left, right]), with `channels` channels (depthwise layers repeat the input's)."""
    n, h, w, _ = input_shape
    return (n, h + pad[0] + pad[1], w + pad[2] + pad[3], channels)


def check_window(filter_shape: tuple[int, ...]) -> tuple[int, int]:
    """The (KH, KW) window of a filter (OHWI or [1, KH, KW, C]), refused when empty."""
    kh, kw = filter_shape[1:3]
    if min(kh, kw) < 1:
        raise UnsupportedOpError(
            f"its filter {list(filter_shape)} has an empty {kh}x{kw} window"
        )
    return kh, kw


@op_check(conv.Conv2DOp, conv.DepthwiseConv2DOp)
def _check_conv(
    op: conv.Conv2DOp | conv.DepthwiseConv2DOp,
) -> list[tuple[str, tuple[int, ...]]]:
    """The padded input (with its channels repeated for a depthwise multiplier) is an
    intermediate of the kernel."""
    check_window(shape_of(op.filter))
    x = shape_of(op.input)
    channels = shape_of(op.output)[3] if isinstance(op, conv.DepthwiseConv2DOp) else x[3]
    return [("its padded input", padded_input(x, op.props()["pad"], channels))]


@op_check(conv.TransposeConv2DOp)
def _check_transpose_conv(op: conv.TransposeConv2DOp) -> list[tuple[str, tuple[int, ...]]]:
    """The kernel convolves the input dilated by the strides and padded by the filter
    extent less the crop: that tensor is an intermediate."""
    p = op.props()
    n, h, w, c = shape_of(op.input)
    kh, kw = check_window(shape_of(op.filter))
    extents = []
    for size, k, s, d, lo, hi in (
        (h, kh, p["strides"][0], p["dilations"][0], p["pad"][0], p["pad"][1]),
        (w, kw, p["strides"][1], p["dilations"][1], p["pad"][2], p["pad"][3]),
    ):
        border = d * (k - 1)
        extents.append((size - 1) * s + 1 + max(0, border - lo) + max(0, border - hi))
    return [("its dilated, padded input", (n, extents[0], extents[1], c))]


def _sums_int8_products(op: conv.BiasedLayer) -> bool:
    """Whether `_exact_accumulator` may sum the layer's int8 products on stored
    integers: int8 input with one zero point, int8 weights, a layer whose padding can
    take that zero point (convolution, depthwise, fully connected; not a transposed
    convolution, whose input dilation inserts zeros)."""
    if not isinstance(op, conv.Conv2DOp | conv.DepthwiseConv2DOp | conv.FullyConnectedOp):
        return False
    x, w = element_of(op.input), element_of(op.filter)
    if not (is_quantized(x) and is_quantized(w)):
        return False
    qx = qtype(op.input)
    return (
        qx.storage_dtype == np.int8
        and not qx.is_per_axis
        and qtype(op.filter).storage_dtype == np.int8
    )


@derived_operands(conv.Conv2DOp, conv.DepthwiseConv2DOp, conv.FullyConnectedOp)
def _weight_sums(op: conv.BiasedLayer) -> list[Derived]:
    """Int8 layers (`_sums_int8_products`) get their weights' sums per output channel,
    with which `_exact_accumulator` corrects the input's zero point: computed once on
    the host rather than on every run."""
    if not _sums_int8_products(op):
        return []
    channel_axis = 3 if isinstance(op, conv.DepthwiseConv2DOp) else 0

    def sums(w: jax.Array | np.ndarray) -> jax.Array | np.ndarray:
        axes = tuple(i for i in range(w.ndim) if i != channel_axis)
        return w.astype(np.int32).sum(axis=axes, dtype=np.int32)

    return [(1, sums)]


def _weight_sums_of(op: conv.BiasedLayer, args: list[jax.Array]) -> jax.Array | None:
    """The weight sums the lowering derived for `op` (`_weight_sums`): its last
    argument, if any."""
    return args[-1] if _sums_int8_products(op) else None


@operand_layout(conv.Conv2DOp, conv.TransposeConv2DOp)
def _filter_layout(op: conv.Conv2DOp | conv.TransposeConv2DOp) -> dict[int, Transform]:
    """Filters arrive in XLA's HWIO layout (spatially flipped for transposed
    convolutions), constants transposed once on the host: output channels last, where
    the integer kernels take per-channel zero points."""
    if isinstance(op, conv.TransposeConv2DOp):
        return {1: _flipped_ohwi_to_hwio}
    return {1: _ohwi_to_hwio}


def _channel_split(
    x: jax.Array, w: jax.Array, lo: int, hi: int
) -> tuple[jax.Array, jax.Array]:
    """An NHWC input and its HWIO filter restricted to input channels [lo, hi)."""
    return x[..., lo:hi], w[:, :, lo:hi, :]


@kernel(conv.Conv2DOp, onnx_integer=True)
def conv2d(
    op: conv.Conv2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Convolution (float or quantized); the filter is HWIO (see `_filter_layout`)."""
    p = op.props()
    _, kh, kw, cin = shape_of(op.filter)

    def linear(x: jax.Array, w: jax.Array, acc: jnp.dtype, pad_value: int = 0) -> jax.Array:
        return _convolve(x, w, acc, p["strides"], _pads(p["pad"]), p["dilations"],
                         groups=p["groups"], pad_value=pad_value)  # fmt: skip

    split = _channel_split if p["groups"] == 1 else None
    return _layer(op, args, ctx, linear, Reduction(kh * kw, cin, split))


@kernel(conv.DepthwiseConv2DOp, onnx_integer=True)
def depthwise_conv2d(
    op: conv.DepthwiseConv2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Depthwise convolution (float or quantized) as a sum of KH x KW shifted, scaled
    inputs.

    Written out tap by tap rather than as XLA's grouped convolution: jaxlib 0.10.2's CPU
    grouped convolution gave wrong results inside larger programs (mediapipe face
    detection: errors of 50 against LiteRT, correct when run alone), and took 25-45x the
    tap sum's time (MobileNetV2's layers). Tap sums are also what depthwise layers cost:
    KH x KW multiply-adds per output.
    """
    p = op.props()
    (top, bottom, left, right), (sh, sw), (dh, dw) = p["pad"], p["strides"], p["dilations"]
    _, height, width, _ = shape_of(op.output)
    _, kh, kw, _ = shape_of(op.filter)

    def linear(x: jax.Array, w: jax.Array, acc: jnp.dtype, pad_value: int = 0) -> jax.Array:
        multiplier = w.shape[3] // x.shape[3]
        if multiplier > 1:  # output channel c reads input channel c // multiplier
            x = jnp.repeat(x, multiplier, axis=3)
        x = jnp.pad(x, [(0, 0), (top, bottom), (left, right), (0, 0)],
                    constant_values=pad_value)  # fmt: skip
        total = None
        for i in range(w.shape[1]):
            for j in range(w.shape[2]):
                window = lax.slice(
                    x,
                    (0, i * dh, j * dw, 0),
                    (
                        x.shape[0],
                        i * dh + sh * (height - 1) + 1,
                        j * dw + sw * (width - 1) + 1,
                        x.shape[3],
                    ),
                    (1, sh, sw, 1),
                )
                if jnp.issubdtype(acc, jnp.integer):
                    term = window.astype(acc) * w[0, i, j].astype(acc)
                else:
                    term = widen(window) * widen(w[0, i, j])
                total = term if total is None else total + term
        return total

    return _layer(op, args, ctx, linear, Reduction(kh * kw, 1, None))


@kernel(conv.TransposeConv2DOp, onnx_integer=True)
def transpose_conv2d(
    op: conv.TransposeConv2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Transposed convolution (float or quantized): a stride-1 convolution of the
    zero-dilated input with the spatially flipped filter, then the crop (negative crop =
    extension). Its integer sum never runs on stored integers with a zero point: input
    dilation inserts zeros, not zero points."""
    p = op.props()
    _, kh, kw, cin = shape_of(op.filter)
    (dh, dw), pad = p["dilations"], p["pad"]
    padding = [
        (dh * (kh - 1) - pad[0], dh * (kh - 1) - pad[1]),
        (dw * (kw - 1) - pad[2], dw * (kw - 1) - pad[3]),
    ]

    def linear(x: jax.Array, w: jax.Array, acc: jnp.dtype) -> jax.Array:
        return _convolve(x, w, acc, (1, 1), padding, p["dilations"],
                         input_dilation=p["strides"])  # fmt: skip

    reduction = Reduction(kh * kw, cin, _channel_split)
    return _layer(op, args, ctx, linear, reduction)


@operand_layout(conv.FullyConnectedOp)
def _weights_layout(op: conv.FullyConnectedOp) -> dict[int, Transform]:
    """Fully connected weights arrive as a (K, N) matrix, output channels last: a
    constant transposed once on the host rather than on every run."""
    return {1: lambda w: w.T}


def _k_split(x: jax.Array, w: jax.Array, lo: int, hi: int) -> tuple[jax.Array, jax.Array]:
    """``x @ w`` operands restricted to the summed indices [lo, hi)."""
    return x[..., lo:hi], w[..., lo:hi, :]


@kernel(conv.FullyConnectedOp, onnx_integer=True)
def fully_connected(
    op: conv.FullyConnectedOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """``x @ w.T + b`` (float or quantized; `w` arrives transposed, see
    `_weights_layout`). Quantized layers with 8-bit weights rescale in float64; int16
    weights (16x16) accumulate in int64 and use the int64 MBQM, whatever the bias type."""

    def linear(x: jax.Array, w: jax.Array, acc: jnp.dtype, pad_value: int = 0) -> jax.Array:
        return _matmul(x, w, acc)

    reduction = Reduction(1, shape_of(op.filter)[-1], _k_split)
    weights = element_of(op.filter)
    if is_quantized(weights) and qtype(op.filter).storage_dtype == np.int16:
        return _layer(op, args, ctx, linear, reduction, acc64=True)
    return _layer(op, args, ctx, linear, reduction, float64_rescale=True)


@kernel(conv.MatMulOp, onnx_integer=True)
def matmul(
    op: conv.MatMulOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Batched matmul (float or quantized) with optional transposes of the last two
    dimensions.

    Quantized operands accumulate ``(lhs - zp) @ (rhs - zp)`` in int32 (int64 for int16;
    int8 exactly in float32, see `_exact_accumulator`) and rescale with MBQM (the int64
    overload for int16) by ``double(float(s_lhs * s_rhs)) / double(s_out)``
    (GetQuantizedConvolutionMultipler's float32 product of scales), to the full storage
    range (no fused activation)."""
    p = op.props()
    lhs, rhs = args
    if p["transpose_lhs"]:
        lhs = jnp.swapaxes(lhs, -1, -2)
    if p["transpose_rhs"]:
        rhs = jnp.swapaxes(rhs, -1, -2)
    if not any_quantized(op):
        return [_matmul(lhs, rhs, widen(lhs).dtype).astype(args[0].dtype)]
    ql, qr = per_tensor(op.lhs, "its lhs"), per_tensor(op.rhs, "its rhs")
    qo = per_tensor(op.output, "its result")
    reduction = Reduction(1, lhs.shape[-1], _k_split)

    def accumulate(dtype: jnp.dtype) -> jax.Array:
        if dtype == jnp.int32:
            return _exact_accumulator(_matmul, reduction, lhs, ql, rhs, qr, True)
        return _matmul(stored(lhs, ql), stored(rhs, qr), dtype)

    if ctx.semantics is IntegerSemantics.ONNX:
        multiplier = np.float32(ql.scale) * np.float32(qr.scale) / np.float32(qo.scale)
        y = rescale_half_even(accumulate(jnp.int32), np.asarray(multiplier))
        return [saturate(y + qo.zero_point, qo, qo.storage_min, qo.storage_max)]
    product = np.float64(np.float32(ql.scale) * np.float32(qr.scale))
    y = _rescaled(
        accumulate,
        None,
        np.asarray(product / scale_f64(qo)),
        acc64=ql.storage_dtype == np.int16,
        float64_rescale=False,
    )
    return [saturate(y + qo.zero_point, qo, qo.storage_min, qo.storage_max)]
