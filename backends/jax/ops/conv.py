"""Kernels of `dialects/synap/conv.py`: convolutions, fully connected, matmul."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from synapc.backends.jax.lowering import LoweringContext, kernel
from synapc.backends.jax.ops.common import activate, float_only, widen
from synapc.dialects.synap import conv
from synapc.dialects.synap.base import shape_of

_NHWC = ("NHWC", "HWIO", "NHWC")


def _finish(op: conv._BiasedLayer, y: jax.Array, args: list[jax.Array]) -> list[jax.Array]:
    """Add the bias to the (float32) accumulator, activate, and return in input dtype."""
    if len(args) > 2:
        y = y + args[2].astype(y.dtype)
    return [activate(y, op.props()["activation"]).astype(args[0].dtype)]


def _pads(pad: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(pad[0], pad[1]), (pad[2], pad[3])]


def _convolve(
    x: jax.Array,
    w_hwio: jax.Array,
    strides: tuple[int, ...],
    padding: list[tuple[int, int]],
    dilations: tuple[int, ...],
    input_dilation: tuple[int, ...] = (1, 1),
    groups: int = 1,
) -> jax.Array:
    """NHWC x HWIO convolution accumulating in float32 for narrower floats."""
    return lax.conv_general_dilated(
        x,
        w_hwio,
        strides,
        padding,
        lhs_dilation=input_dilation,
        rhs_dilation=dilations,
        dimension_numbers=_NHWC,
        feature_group_count=groups,
        preferred_element_type=widen(x).dtype,
    )


@kernel(conv.Conv2DOp)
def conv2d(
    op: conv.Conv2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float convolution; filter OHWI -> HWIO for XLA."""
    float_only(op)
    p = op.props()
    y = _convolve(
        args[0],
        jnp.transpose(args[1], (1, 2, 3, 0)),
        p["strides"],
        _pads(p["pad"]),
        p["dilations"],
        groups=p["groups"],
    )
    return _finish(op, y, args)


@kernel(conv.DepthwiseConv2DOp)
def depthwise_conv2d(
    op: conv.DepthwiseConv2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float depthwise convolution as a sum of KH x KW shifted, scaled inputs.

    Written out tap by tap rather than as XLA's grouped convolution: jaxlib 0.10.2's CPU
    grouped convolution gave wrong results inside larger programs (mediapipe face
    detection: errors of 50 against LiteRT, correct when run alone). Tap sums are also
    what depthwise layers cost: KH x KW multiply-adds per output.
    """
    float_only(op)
    p = op.props()
    x, w = args[0], args[1]
    multiplier = w.shape[3] // x.shape[3]
    if multiplier > 1:  # output channel c reads input channel c // multiplier
        x = jnp.repeat(x, multiplier, axis=3)
    (top, bottom, left, right), (sh, sw), (dh, dw) = p["pad"], p["strides"], p["dilations"]
    x = jnp.pad(x, [(0, 0), (top, bottom), (left, right), (0, 0)])
    _, height, width, _ = shape_of(op.output)
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
            term = widen(window) * widen(w[0, i, j])
            total = term if total is None else total + term
    return _finish(op, total, args)


@kernel(conv.TransposeConv2DOp)
def transpose_conv2d(
    op: conv.TransposeConv2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float transposed convolution: a stride-1 convolution of the zero-dilated input with
    the spatially flipped filter, then the crop (negative crop = extension)."""
    float_only(op)
    p = op.props()
    w = args[1]
    kh, kw = w.shape[1], w.shape[2]
    (dh, dw), pad = p["dilations"], p["pad"]
    padding = [
        (dh * (kh - 1) - pad[0], dh * (kh - 1) - pad[1]),
        (dw * (kw - 1) - pad[2], dw * (kw - 1) - pad[3]),
    ]
    y = _convolve(
        args[0],
        jnp.transpose(w[:, ::-1, ::-1, :], (1, 2, 3, 0)),
        (1, 1),
        padding,
        p["dilations"],
        input_dilation=p["strides"],
    )
    return _finish(op, y, args)


@kernel(conv.FullyConnectedOp)
def fully_connected(
    op: conv.FullyConnectedOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float ``x @ w.T + b``."""
    float_only(op)
    return _finish(
        op,
        jnp.matmul(args[0], args[1].T, preferred_element_type=widen(args[0]).dtype),
        args,
    )


@kernel(conv.MatMulOp)
def matmul(
    op: conv.MatMulOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float batched matmul with optional transposes of the last two dimensions."""
    float_only(op)
    p = op.props()
    lhs, rhs = args
    if p["transpose_lhs"]:
        lhs = jnp.swapaxes(lhs, -1, -2)
    if p["transpose_rhs"]:
        rhs = jnp.swapaxes(rhs, -1, -2)
    return [jnp.matmul(lhs, rhs, preferred_element_type=widen(lhs).dtype).astype(lhs.dtype)]
