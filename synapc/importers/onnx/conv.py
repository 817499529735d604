"""ONNX Conv, ConvTranspose, Gemm and MatMul as synap convolutions, fully connected
layers and matrix products. Weights are brought into the dialect's layouts once, on the
host when constant (OIHW -> OHWI, depthwise -> 1HWC, IOHW -> OHWI for transposed). 3-D
convolutions and grouped transposed ones are the channels-last N-D ops."""

from __future__ import annotations

import numpy as np

from synapc.dialects.synap.conv import (
    Conv2DOp,
    DepthwiseConv2DOp,
    FullyConnectedOp,
    MatMulOp,
    TransposeConv2DOp,
)
from synapc.dialects.synap.elementwise import AddOp, MulOp
from synapc.dialects.synap.window_nd import ConvNDOp, TransposeConvNDOp
from synapc.importers.onnx import layout
from synapc.importers.onnx.helpers import (
    bind_channels_last,
    broadcast_operands,
    channels_last_2d,
    interleave_pads,
    to_2d,
    window_attrs,
)
from synapc.importers.onnx.reader import Importer, Node, converts


def _linear_inputs(node: Node) -> list[str | None]:
    return node.inputs[:3] if len(node.inputs) >= 3 else [*node.inputs, None]


def _filter_2d(imp: Importer, node: Node, perm: tuple[int, ...], rank: int):
    """The weight (input 1) in the dialect layout `perm` of its 4-D form (1-D kernels
    gain a unit height)."""
    w = node.inputs[1]
    if rank == 4:
        return imp.get(w, perm, quantized=node.quantized)
    value = imp.get(w, None, quantized=node.quantized)
    o, i, k = imp.shape(w)
    value = imp.reshape(value, (o, i, 1, k))
    return imp.transpose(value, perm)


@converts("Conv", quantized=lambda n: _linear_inputs(n))
def conv(imp: Importer, node: Node) -> None:
    """Conv: 1-D and 2-D as `synap.conv2d` (depthwise as `synap.depthwise_conv2d`),
    1-D with a unit height; 3-D as the channels-last N-D convolution."""
    x, w = node.inputs[0], node.inputs[1]
    rank = imp.rank(x)
    if rank not in (3, 4, 5):
        raise node.fail(
            f"only 1-D, 2-D and 3-D convolutions are supported, input rank {rank}"
        )
    x_shape, w_shape = imp.shape(x), imp.shape(w)
    _check_weights(node, x_shape, w_shape)
    spatial, kernel = x_shape[2:], w_shape[2:]
    strides, dilations, pads = window_attrs(node, spatial, kernel)
    group = node.int_attr("group", 1)
    if group < 1 or x_shape[1] % group or w_shape[1] * group != x_shape[1]:
        raise node.fail(
            f"attribute 'group' {group} does not fit {x_shape[1]} input channels and "
            f"weights of shape {list(w_shape)}"
        )
    if rank == 5:
        n = len(spatial)
        pairs = interleave_pads(pads[:n], pads[n:])
        window = {"strides": strides, "dilations": dilations, "pad": pairs}
        _conv_nd(imp, node, ConvNDOp, layout.channels_last(rank), window, group)
        return
    if rank == 3:
        strides, dilations = [1, *strides], [1, *dilations]
        pads = [0, pads[0], 0, pads[1]]
    value = channels_last_2d(imp, node, x, quantized=node.quantized)
    bias = node.input(2)
    b = None if bias is None else imp.get(bias, quantized=node.quantized)
    common = {"strides": strides, "dilations": dilations, "pad": to_2d(pads)}
    if group > 1 and group == x_shape[1] and w_shape[1] == 1:
        filt = _filter_2d(imp, node, (1, 2, 3, 0), rank)
        op = imp.emit(node, DepthwiseConv2DOp, value, filt, b, output=None, **common)
    else:
        filt = _filter_2d(imp, node, (0, 2, 3, 1), rank)
        op = imp.emit(node, Conv2DOp, value, filt, b, output=None, groups=group, **common)
    bind_channels_last(imp, node, op, rank)


@converts("ConvTranspose", quantized=lambda n: _linear_inputs(n))
def conv_transpose(imp: Importer, node: Node) -> None:
    """ConvTranspose: `output_shape` / `auto_pad` / `pads` resolved into begin and end
    crops (less `output_padding`); 1-D and 2-D ungrouped as `synap.transpose_conv2d`,
    3-D or grouped as the channels-last N-D transposed convolution."""
    x, w = node.inputs[0], node.inputs[1]
    rank = imp.rank(x)
    if rank not in (3, 4, 5):
        raise node.fail(
            f"only 1-D, 2-D and 3-D transposed convolutions are supported, rank {rank}"
        )
    x_shape, w_shape = imp.shape(x), imp.shape(w)
    _check_weights(node, x_shape, w_shape, transposed=True)
    group = node.int_attr("group", 1)
    if group < 1 or x_shape[1] % group:
        raise node.fail(
            f"attribute 'group' {group} does not fit {x_shape[1]} input channels"
        )
    spatial, kernel = list(x_shape[2:]), list(w_shape[2:])
    n = len(spatial)
    strides, dilations, _ = window_attrs(node, spatial, kernel)
    out_pad = node.ints_attr("output_padding", [0] * n)
    if len(out_pad) != n:
        raise node.fail(f"attribute 'output_padding' {out_pad} must have {n} values")
    full = [
        (size - 1) * s + (k - 1) * d + 1 + p
        for size, s, k, d, p in zip(
            spatial, strides, kernel, dilations, out_pad, strict=True
        )
    ]
    output_shape = node.ints_attr("output_shape")
    if output_shape is not None and len(output_shape) < n:
        raise node.fail(f"attribute 'output_shape' {output_shape} needs {n} values")
    auto_pad = node.attr("auto_pad", "NOTSET")
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = (
            list(output_shape)[-n:]
            if output_shape is not None
            else [size * s for size, s in zip(spatial, strides, strict=True)]
        )
        totals = [f - t for f, t in zip(full, target, strict=True)]
        if auto_pad == "SAME_UPPER":
            begins = [t // 2 for t in totals]
        else:
            begins = [t - t // 2 for t in totals]
        ends = [t - b for t, b in zip(totals, begins, strict=True)]
    elif auto_pad == "VALID":
        begins, ends = [0] * n, [0] * n
    else:
        pads = node.ints_attr("pads", [0] * 2 * n)
        if len(pads) != 2 * n:
            raise node.fail(f"attribute 'pads' {pads} must have {2 * n} values")
        begins, ends = pads[:n], pads[n:]
    ends = [e - p for e, p in zip(ends, out_pad, strict=True)]
    if rank == 5 or group > 1:
        window = {
            "strides": strides,
            "dilations": dilations,
            "pad": interleave_pads(begins, ends),
        }
        _conv_nd(imp, node, TransposeConvNDOp, None, window, group)
        return
    if n == 1:
        strides, dilations = [1, *strides], [1, *dilations]
        begins, ends = [0, *begins], [0, *ends]
    value = channels_last_2d(imp, node, x, quantized=node.quantized)
    filt = _filter_2d(imp, node, (1, 2, 3, 0), rank)
    bias = node.input(2)
    b = None if bias is None else imp.get(bias, quantized=node.quantized)
    op = imp.emit(
        node,
        TransposeConv2DOp,
        value,
        filt,
        b,
        output=None,
        strides=strides,
        dilations=dilations,
        pad=(begins[0], ends[0], begins[1], ends[1]),
    )
    bind_channels_last(imp, node, op, rank)


def _conv_nd(
    imp: Importer,
    node: Node,
    op_class: type[ConvNDOp] | type[TransposeConvNDOp],
    filter_perm: tuple[int, ...] | None,
    window: dict[str, list[int]],
    group: int,
) -> None:
    """A convolution as the channels-last N-D `op_class`. A Conv weight ``[O, I/g,
    K...]`` is brought to ``[O, K..., I/g]`` by `filter_perm`; a ConvTranspose weight
    (`filter_perm` None) ``[I, O/g, K...]`` to ``[O, K..., I/g]`` group by group."""
    x, w = node.inputs[0], node.inputs[1]
    rank = imp.rank(x)
    perm = layout.channels_last(rank)
    value = imp.get(x, perm, quantized=node.quantized)
    if filter_perm is not None:
        filt = imp.get(w, filter_perm, quantized=node.quantized)
    elif group == 1:
        filt = imp.get(w, (*range(1, rank), 0), quantized=node.quantized)
    else:
        cin, cout_g, *kernel = imp.shape(w)
        filt = imp.reshape(
            imp.get(w, None, quantized=node.quantized),
            (group, cin // group, cout_g, *kernel),
        )
        filt = imp.transpose(filt, (0, 2, *range(3, rank + 1), 1))
        filt = imp.reshape(filt, (group * cout_g, *kernel, cin // group))
    bias = node.input(2)
    b = None if bias is None else imp.get(bias, quantized=node.quantized)
    imp.emit(node, op_class, value, filt, b, perm=perm, groups=group, **window)


def _check_weights(
    node: Node, x_shape: tuple[int, ...], w_shape: tuple[int, ...], transposed: bool = False
) -> None:
    """The weights of a convolution: the input's rank, as many (transposed: output)
    channels as the input has when not grouped."""
    if len(w_shape) != len(x_shape):
        raise node.fail(
            f"weights of shape {list(w_shape)} do not fit the input's shape {list(x_shape)}"
        )
    if transposed and w_shape[0] != x_shape[1]:
        raise node.fail(
            f"weights of shape {list(w_shape)} do not fit {x_shape[1]} input channels"
        )


def _gemm_quantized(node: Node) -> list[str | None] | None:
    plain = node.attr("alpha", 1.0) == 1.0 and node.attr("beta", 1.0) == 1.0
    return _linear_inputs(node) if plain and not node.attr("transA", 0) else None


@converts("Gemm", quantized=_gemm_quantized)
def gemm(imp: Importer, node: Node) -> None:
    a, b = node.inputs[0], node.inputs[1]
    if imp.rank(a) != 2 or imp.rank(b) != 2:
        raise node.fail(
            f"A and B must have rank 2, got shapes {list(imp.shape(a))} and "
            f"{list(imp.shape(b))}"
        )
    alpha = float(node.attr("alpha", 1.0))
    beta = float(node.attr("beta", 1.0))
    lhs = imp.get(a, quantized=node.quantized)
    if node.attr("transA", 0):
        lhs = imp.transpose(lhs, (1, 0))
    weight_perm = None if node.attr("transB", 0) else (1, 0)
    n_out = imp.shape(b)[0 if node.attr("transB", 0) else 1]
    c = node.input(2)
    bias_array = imp.const(c)
    bias_is_vector = c is not None and (
        imp.shape(c) in ((n_out,), (1, n_out))
        and (bias_array is not None or node.quantized)
    )
    w_array = imp.const(b)
    if alpha != 1.0 and not node.quantized and w_array is not None:
        w_array = (w_array * np.float32(alpha)).astype(w_array.dtype)
        if weight_perm is not None:
            w_array = w_array.T
        imp.bind_const(f"{b}#alpha", np.ascontiguousarray(w_array))
        weight = imp.get(f"{b}#alpha")
        alpha = 1.0
    else:
        weight = imp.get(b, weight_perm, quantized=node.quantized)
    bias = None
    if bias_is_vector and node.quantized:
        bias = imp.reshape(imp.get(c, quantized=True), (n_out,))
    elif bias_is_vector and beta != 0.0:
        imp.bind_const(
            f"{c}#bias", (bias_array.reshape(-1) * np.float32(beta)).astype(np.float32)
        )
        bias = imp.get(f"{c}#bias")
    op = imp.emit(node, FullyConnectedOp, lhs, weight, bias, output=None)
    result = op.results[0]
    if alpha != 1.0:
        scale = f"{node.outputs[0]}#alpha"
        imp.bind_const(scale, np.full((1, 1), alpha, np.float32))
        result = imp.append(MulOp.make(result, imp.get(scale), **node.source))
    if c is not None and not bias_is_vector and beta != 0.0:
        addend = c
        if beta != 1.0 and bias_array is not None:
            addend = f"{c}#beta"
            imp.bind_const(addend, bias_array * np.float32(beta))
        elif beta != 1.0:  # a run-time C: scale it by a broadcast constant
            addend = f"{c}#beta"
            factor = f"{node.outputs[0]}#beta"
            imp.bind_const(factor, np.full((1,) * imp.rank(c), beta, np.float32))
            scaled = imp.append(MulOp.make(imp.get(c), imp.get(factor), **node.source))
            imp.bind(addend, scaled)
        product = f"{node.outputs[0]}#product"
        imp.bind(product, result)
        values, _ = broadcast_operands(imp, node, [product, addend])
        result = imp.append(AddOp.make(*values, **node.source))
    imp.bind(imp.out_name(node), result)


@converts("MatMul", quantized=lambda n: n.inputs[:2])
def matmul(imp: Importer, node: Node) -> None:
    a, b = node.inputs[0], node.inputs[1]
    a_shape, b_shape = imp.shape(a), imp.shape(b)
    lhs = imp.get(a, quantized=node.quantized)
    if len(a_shape) == 1:
        lhs = imp.reshape(lhs, (1, a_shape[0]))
    if not a_shape or not b_shape:
        raise node.fail("MatMul operands must have rank 1 or more")
    try:
        out_shape = _matmul_shape(a_shape, b_shape)
    except ValueError:
        raise node.fail(
            f"shapes {list(a_shape)} and {list(b_shape)} cannot be multiplied"
        ) from None
    if len(b_shape) == 2 and imp.tensor(b).array is not None:
        weight = imp.get(b, (1, 0), quantized=node.quantized)
        op = imp.emit(node, FullyConnectedOp, lhs, weight, None, output=None)
    else:
        rhs = imp.get(b, quantized=node.quantized)
        if len(b_shape) == 1:
            rhs = imp.reshape(rhs, (b_shape[0], 1))
        op = imp.emit(node, MatMulOp, lhs, rhs, output=None)
    imp.bind(imp.out_name(node), imp.reshape(op.results[0], out_shape))


def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy.matmul's result shape."""
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    shape = [*batch, a2[-2], b2[-1]]
    if len(a) == 1:
        shape.pop(-2)
    if len(b) == 1:
        shape.pop(-1)
    return tuple(shape)
