"""Weighted and windowed aten ops: convolutions (transposed too), batch and layer
normalization, linear / matmul / addmm, and average, max and adaptive pooling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from synapc.importers.torchscript.translator import (
    Slot,
    Translator,
    aten,
    np_dtype,
    rank_of,
    static_args,
)


def _pads_2x(padding: Sequence[int]) -> list[int]:
    return [int(p) for p in padding] * 2


def _conv(
    t: Translator,
    args: list[Slot],
    stride: Sequence[int],
    padding: Any,
    dilation: Sequence[int],
    groups: int,
) -> str:
    x, w, b = args[0], args[1], args[2]
    kernel = list(w.concrete.shape[2:])
    n = len(kernel)
    stride, dilation = _expand(stride, n), _expand(dilation, n)
    if isinstance(padding, str):
        if padding == "valid":
            pads = [0] * 2 * n
        else:  # "same": torch puts the odd pixel at the end
            totals = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
            pads = [p // 2 for p in totals] + [p - p // 2 for p in totals]
    else:
        pads = _pads_2x(_expand(padding, n))
    inputs = [t.tensor(x), t.tensor(w)]
    if b.concrete is not None:
        inputs.append(t.tensor(b))
    return t.emit(
        "Conv",
        inputs,
        kernel_shape=kernel,
        strides=stride,
        pads=pads,
        dilations=dilation,
        group=int(groups),
    )


def _conv_transpose(
    t: Translator,
    args: list[Slot],
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
    dilation: Sequence[int],
) -> str:
    x, w, b = args[0], args[1], args[2]
    kernel = list(w.concrete.shape[2:])
    n = len(kernel)
    inputs = [t.tensor(x), t.tensor(w)]
    if b.concrete is not None:
        inputs.append(t.tensor(b))
    return t.emit(
        "ConvTranspose",
        inputs,
        kernel_shape=kernel,
        strides=_expand(stride, n),
        pads=_pads_2x(_expand(padding, n)),
        dilations=_expand(dilation, n),
        output_padding=_expand(output_padding, n),
        group=int(groups),
    )


def _expand(values: Any, n: int) -> list[int]:
    """An int or a list of 1 or `n` ints as `n` ints."""
    if isinstance(values, int):
        return [values] * n
    values = [int(v) for v in values]
    return values * n if len(values) == 1 else values


@aten("conv1d", "conv2d", "_convolution_mode")
def _conv_nd(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    stride, padding, dilation, groups = static_args(t, args, 3)
    return [_conv(t, args, stride, padding, dilation, groups)]


@aten("conv_transpose1d", "conv_transpose2d")
def _conv_transpose_nd(
    t: Translator, node: Any, args: list[Slot], outs: list[Any]
) -> list[Any]:
    stride, padding, output_padding, groups, dilation = static_args(t, args, 3)
    return [_conv_transpose(t, args, stride, padding, output_padding, groups, dilation)]


@aten("_convolution", "convolution")
def _convolution(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    stride, padding, dilation, transposed, output_padding, groups = static_args(
        t, args[:9], 3
    )
    if transposed:
        return [_conv_transpose(t, args, stride, padding, output_padding, groups, dilation)]
    return [_conv(t, args, stride, padding, dilation, groups)]


@aten("batch_norm", "_native_batch_norm_legit_no_training")
def _batch_norm(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x, weight, bias, mean, var = args[:5]
    if node.kind() == "aten::batch_norm":
        training, eps = bool(args[5].concrete), float(args[7].concrete)
    else:
        training, eps = False, float(args[6].concrete)
    if training:
        raise t.fail("training-mode batch normalization is not supported")
    channels = x.concrete.shape[1]
    scale = (
        t.tensor(weight)
        if weight.concrete is not None
        else t.constant(np.ones(channels, np.float32))
    )
    shift = (
        t.tensor(bias)
        if bias.concrete is not None
        else t.constant(np.zeros(channels, np.float32))
    )
    result = t.emit(
        "BatchNormalization",
        [t.tensor(x), scale, shift, t.tensor(mean), t.tensor(var)],
        epsilon=eps,
    )
    return [result, *([None] * (len(outs) - 1))]


@aten("layer_norm")
def _layer_norm(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x, shape, weight, bias, eps = args[:5]
    size = list(shape.concrete)
    dtype = np_dtype(outs[0])
    scale = (
        t.tensor(weight)
        if weight.concrete is not None
        else t.constant(np.ones(size, dtype))
    )
    inputs = [t.tensor(x), scale]
    if bias.concrete is not None:
        inputs.append(t.tensor(bias))
    return [
        t.emit("LayerNormalization", inputs, axis=-len(size), epsilon=float(eps.concrete))
    ]


@aten("linear")
def _linear(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x, w, b = args[:3]
    has_bias = b.concrete is not None
    if rank_of(x) == 2:
        inputs = [t.tensor(x), t.tensor(w)]
        if has_bias:
            inputs.append(t.tensor(b))
        return [t.emit("Gemm", inputs, transB=1)]
    if w.static:
        weight = t.constant(w.concrete.detach().t().contiguous())
    else:
        weight = t.emit("Transpose", [t.tensor(w)], perm=[1, 0])
    result = t.emit("MatMul", [t.tensor(x), weight])
    if has_bias:
        result = t.emit("Add", [result, t.tensor(b)])
    return [result]


@aten("matmul", "mm", "bmm")
def _matmul(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    return [t.emit("MatMul", [t.tensor(args[0]), t.tensor(args[1])])]


@aten("addmm")
def _addmm(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    bias, a, b = args[:3]
    beta = float(args[3].concrete) if len(args) > 3 else 1.0
    alpha = float(args[4].concrete) if len(args) > 4 else 1.0
    return [
        t.emit("Gemm", [t.tensor(a), t.tensor(b), t.tensor(bias)], alpha=alpha, beta=beta)
    ]


@aten("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d")
def _adaptive_pool(
    t: Translator, node: Any, args: list[Slot], outs: list[Any]
) -> list[Any]:
    is_max = "max" in node.kind()
    x = args[0]
    spatial = list(x.concrete.shape[2:])
    target = list(outs[0].shape[2:])
    extra = [None] * (len(outs) - 1)
    if is_max and len(list(node.outputs())[1].uses()) > 0:
        raise t.fail("the indices output is not supported")
    if all(o == 1 for o in target):
        op = "GlobalMaxPool" if is_max else "GlobalAveragePool"
        return [t.emit(op, [t.tensor(x)]), *extra]
    if any(s % o for s, o in zip(spatial, target, strict=True)):
        raise t.fail(
            f"adaptive pooling from {spatial} to {target} is supported only when the "
            "output size divides the input size"
        )
    kernel = [s // o for s, o in zip(spatial, target, strict=True)]
    op = "MaxPool" if is_max else "AveragePool"
    return [t.emit(op, [t.tensor(x)], kernel_shape=kernel, strides=kernel), *extra]


@aten("avg_pool1d", "avg_pool2d")
def _avg_pool(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    kernel, stride, padding, ceil_mode, count_include_pad = static_args(t, args, 1)[:5]
    if len(args) > 6 and args[6].concrete is not None:
        raise t.fail("divisor_override is not supported")
    n = len(kernel) if not isinstance(kernel, int) else args[0].concrete.dim() - 2
    kernel = _expand(kernel, n)
    stride = _expand(stride, n) if stride else kernel
    pads = _pads_2x(_expand(padding, n))
    return [
        t.emit(
            "AveragePool",
            [t.tensor(args[0])],
            kernel_shape=kernel,
            strides=stride,
            pads=pads,
            ceil_mode=int(bool(ceil_mode)),
            count_include_pad=int(bool(count_include_pad) and any(pads)),
        )
    ]


@aten("max_pool1d", "max_pool2d")
def _max_pool(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    kernel, stride, padding, dilation, ceil_mode = static_args(t, args, 1)[:5]
    n = args[0].concrete.dim() - 2
    kernel = _expand(kernel, n)
    stride = _expand(stride, n) if stride else kernel
    return [
        t.emit(
            "MaxPool",
            [t.tensor(args[0])],
            kernel_shape=kernel,
            strides=stride,
            pads=_pads_2x(_expand(padding, n)),
            dilations=_expand(dilation, n),
            ceil_mode=int(bool(ceil_mode)),
        )
    ]
