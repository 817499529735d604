"""Kernels of `dialects/synap/fused.py`: fused layers run as their parts.

A fused op computes exactly what its unfused layers compute, so its kernel runs the
parts' own kernels in sequence on detached twins of those layers (built from the fused
op's types and properties; the module is not touched). The integer semantics in force
reach every part: the convolution implements TFLite's and ONNX's arithmetic itself, and
the max pooling is an exact integer maximum of values of one quantized type (the fusion
requires the pool's input and output types to be equal), which is also what ONNX's
dequantize -> max -> quantize gives.
"""

from __future__ import annotations

import jax
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block

from synapc.backends.jax.lowering import (
    DERIVED_OPERANDS,
    OPERAND_LAYOUTS,
    Derived,
    LoweringContext,
    Transform,
    derived_operands,
    kernel,
    op_check,
    operand_layout,
)
from synapc.backends.jax.ops.conv import check_window, conv2d, padded_input
from synapc.backends.jax.ops.pool import max_pool2d
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.conv import Conv2DOp
from synapc.dialects.synap.fused import Conv2DPoolOp
from synapc.dialects.synap.pool import MaxPool2DOp


def conv_pool_parts(op: Conv2DPoolOp) -> tuple[Conv2DOp, MaxPool2DOp]:
    """Detached `synap.conv2d` and `synap.max_pool2d` that compute `op`: the convolution
    reads arguments of a block of its own with `op`'s operand types and yields the
    output's element type; the pool reads the convolution."""
    p = op.props()
    block = Block(arg_types=[v.type for v in op.operands])
    conv_type = TensorType(
        element_of(op.output),
        Conv2DPoolOp.conv_shape([shape_of(v) for v in op.operands], p),
    )
    conv = Conv2DOp.make(
        block.args[0],
        block.args[1],
        block.args[2] if op.bias is not None else None,
        result_types=[conv_type],
        strides=p["strides"],
        dilations=p["dilations"],
        pad=p["pad"],
        groups=p["groups"],
        activation=p["activation"],
    )
    pool = MaxPool2DOp.make(
        conv.output,
        result_types=[op.output.type],
        kernel=p["pool_kernel"],
        strides=p["pool_strides"],
        pad=p["pool_pad"],
    )
    return conv, pool


@op_check(Conv2DPoolOp)
def _check_conv_pool(op: Conv2DPoolOp) -> list[tuple[str, tuple[int, ...]]]:
    """The padded input of the convolution and the padded convolution result the pool
    reads are intermediates of the kernel."""
    check_window(shape_of(op.filter))
    p = op.props()
    conv_shape = Conv2DPoolOp.conv_shape([shape_of(v) for v in op.operands], p)
    x = shape_of(op.input)
    return [
        ("its padded input", padded_input(x, p["pad"], x[3])),
        ("its padded convolution result", padded_input(conv_shape, p["pool_pad"],
                                                       conv_shape[3])),
    ]  # fmt: skip


@operand_layout(Conv2DPoolOp)
def _filter_layout(op: Conv2DPoolOp) -> dict[int, Transform]:
    """The filter layout of the convolution part (see conv2d's)."""
    conv, _ = conv_pool_parts(op)
    return OPERAND_LAYOUTS[Conv2DOp](conv)


@derived_operands(Conv2DPoolOp)
def _derived(op: Conv2DPoolOp) -> list[Derived]:
    """The derived operands of the convolution part (see conv2d's)."""
    conv, _ = conv_pool_parts(op)
    return DERIVED_OPERANDS[Conv2DOp](conv)


@kernel(Conv2DPoolOp, onnx_integer=True)
def conv2d_pool(
    op: Conv2DPoolOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Convolution (bias, fused activation) then max pooling, by the conv2d and
    max_pool2d kernels."""
    conv, pool = conv_pool_parts(op)
    return max_pool2d(pool, conv2d(conv, args, ctx), ctx)
