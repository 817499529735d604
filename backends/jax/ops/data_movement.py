"""Kernels of `dialects/synap/data_movement.py`. They move stored values, so they work on
float and quantized tensors alike; only concatenation rescales inputs quantized unlike its
result (TFLite's ConcatenationWithScaling). TFLite defines no requantization for the other
ops (LiteRT either refuses differing parameters or copies the integers unchanged), so they
refuse operands and results quantized differently."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from xdsl.ir import SSAValue

from synapc.backends.jax import fixed_point as fp
from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    takes_booleans,
)
from synapc.backends.jax.ops.quantized import quantize_real
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap.attributes import DepthToSpaceMode, PadMode
from synapc.dialects.synap.base import element_of, shape_of


def _same_quantization(op: dm.SynapOp) -> None:
    """Moving stored integers is only exact when every operand and result share one
    quantization; TFLite defines no requantization for these ops."""
    types = {element_of(v) for v in (*op.operands, *op.results)
             if isinstance(element_of(v), UniformQuantizedType)}  # fmt: skip
    if len(types) > 1:
        raise UnsupportedOpError(
            f"{op.name} moves stored integers: its quantized operands and results must "
            "share one quantization (TFLite defines no requantization for it)"
        )


def _rescale_concat_input(
    x: jax.Array, q: UniformQuantizedType, out: UniformQuantizedType
) -> jax.Array:
    """TFLite's ConcatenationWithScaling for one input: stored integers copied when the
    parameters equal the output's, else, in float32,
    ``clamp(int(round(q * scale + bias)) + zero_point)`` with
    ``scale = s_in * (1 / s_out)`` and ``bias = -z_in * scale``.

    The rescaled values are a lookup table over every stored integer, computed on the
    host: XLA would fuse the device multiply and add into one FMA, which rounds once
    where TFLite rounds twice."""
    if q.is_per_axis or out.is_per_axis:
        if q != out:
            raise UnsupportedOpError(
                "concatenation of per-axis quantized values needs equal quantization"
            )
        return x
    s_in, s_out = np.float32(q.scale), np.float32(out.scale)
    same_storage = q.storage_dtype == out.storage_dtype
    if same_storage and q.zero_point == out.zero_point and s_in == s_out:
        return x
    if q.bitwidth > 16:  # the table below has an entry per stored value
        raise UnsupportedOpError(
            f"concatenation rescales {q.storage.data}-quantized inputs only to equal "
            "quantization (TFLite rescales 8- and 16-bit inputs)"
        )
    scale = s_in * (np.float32(1) / s_out)
    bias = np.float32(-q.zero_point) * scale
    every = np.arange(q.storage_min, q.storage_max + 1)
    value = fp.round_half_away_np(every.astype(np.float32) * scale + bias)
    value = value.astype(np.int64) + out.zero_point
    table = np.clip(value, out.storage_min, out.storage_max).astype(out.storage_dtype)
    return jnp.asarray(table)[x.astype(jnp.int32) - q.storage_min]


takes_booleans(
    dm.ConcatOp, dm.SplitOp, dm.SliceOp, dm.StridedSliceOp, dm.ReshapeOp, dm.TransposeOp,
    dm.PadOp, dm.TileOp, dm.BroadcastToOp, dm.GatherOp, dm.DepthToSpaceOp,
    dm.SpaceToDepthOp,
)  # fmt: skip


@kernel(dm.ConcatOp)
def concat(op: dm.ConcatOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Concatenation; quantized inputs are first rescaled to the result's parameters."""
    out = element_of(op.output)
    if isinstance(out, UniformQuantizedType):
        args = [
            _rescale_concat_input(x, _quantized(v, op), out)
            for x, v in zip(args, op.inputs, strict=True)
        ]
    return [jnp.concatenate(args, axis=op.props()["axis"])]


def _quantized(value: SSAValue, op: dm.SynapOp) -> UniformQuantizedType:
    """The quantized element type of `value`, an operand of `op`."""
    element = element_of(value)
    if not isinstance(element, UniformQuantizedType):
        raise UnsupportedOpError(f"{op.name} mixes quantized and unquantized values")
    return element


@kernel(dm.SplitOp)
def split(op: dm.SplitOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Consecutive pieces along the axis, sized by the result types."""
    _same_quantization(op)
    axis = op.props()["axis"]
    sizes = [shape_of(r)[axis] for r in op.outputs]
    return jnp.split(args[0], np.cumsum(sizes)[:-1].tolist(), axis=axis)


@kernel(dm.SliceOp)
def slice_(op: dm.SliceOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """A static window."""
    _same_quantization(op)
    start = op.props()["start"]
    size = shape_of(op.output)
    return [lax.slice(args[0], start, [b + n for b, n in zip(start, size, strict=True)])]


@kernel(dm.StridedSliceOp)
def strided_slice(
    op: dm.StridedSliceOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Python slicing with resolved begin / end / strides."""
    _same_quantization(op)
    p = op.props()
    index = tuple(
        slice(b, None if e == -1 else e, s)
        for b, e, s in zip(p["begin"], p["end"], p["strides"], strict=True)
    )
    return [args[0][index]]


@kernel(dm.ReshapeOp, dm.BroadcastToOp)
def reshape(
    op: dm.ReshapeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Row-major reshape, or NumPy broadcast, to the result shape."""
    _same_quantization(op)
    shape = shape_of(op.output)
    if isinstance(op, dm.BroadcastToOp):
        return [jnp.broadcast_to(args[0], shape)]
    return [jnp.reshape(args[0], shape)]


@kernel(dm.TransposeOp)
def transpose(
    op: dm.TransposeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Dimension permutation."""
    _same_quantization(op)
    return [jnp.transpose(args[0], op.props()["perm"])]


def pad_indices(mode: PadMode, size: int, before: int, after: int) -> np.ndarray:
    """The source row of each row of an axis of `size` rows padded by `before` / `after`
    in `mode`, as numpy's `np.pad` defines them (reflect and symmetric mirror again and
    again when the pad is wider than the axis, wrap repeats the axis). One gather per
    axis: `jnp.pad` builds these modes from one concatenation per repeat, which XLA
    takes minutes to compile for a pad many times the axis."""
    rows = np.arange(-before, size + after, dtype=np.int64)
    if mode == PadMode.EDGE or size == 1:
        return np.clip(rows, 0, size - 1).astype(np.int32)
    if mode == PadMode.WRAP:
        return np.mod(rows, size).astype(np.int32)
    # mirror with period 2 (size - 1) (reflect: the edge row once) or 2 size (symmetric)
    period = 2 * (size - 1) if mode == PadMode.REFLECT else 2 * size
    folded = np.mod(rows, period)
    last = size - 1 if mode == PadMode.REFLECT else size
    mirrored = np.where(folded <= last, folded, period - folded)
    if mode == PadMode.SYMMETRIC:
        mirrored = np.where(folded < size, folded, period - 1 - folded)
    return mirrored.astype(np.int32)


@kernel(dm.PadOp)
def pad(op: dm.PadOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Constant, reflect, symmetric, edge or wrap padding; a quantized constant pad
    stores the pad value quantized with the result's parameters."""
    _same_quantization(op)
    p = op.props()
    widths = [(p["pads"][2 * i], p["pads"][2 * i + 1]) for i in range(args[0].ndim)]
    if p["mode"] != PadMode.CONSTANT:
        x = args[0]
        for axis, (before, after) in enumerate(widths):
            if before or after:
                rows = pad_indices(p["mode"], x.shape[axis], before, after)
                x = jnp.take(x, jnp.asarray(rows), axis=axis)
        return [x]
    value = p["value"]
    element = element_of(op.output)
    if isinstance(element, UniformQuantizedType):
        q = quantize_real(value, element)
        value = min(max(q, element.storage_min), element.storage_max)
    elif jnp.issubdtype(args[0].dtype, jnp.integer):
        bounds = jnp.iinfo(args[0].dtype)
        if not (math.isfinite(value) and value == int(value)) or not (
            bounds.min <= value <= bounds.max
        ):
            raise UnsupportedOpError(f"pad value {value:g} is not a {element} value")
    return [jnp.pad(args[0], widths, constant_values=jnp.asarray(value, args[0].dtype))]


@kernel(dm.TileOp)
def tile(op: dm.TileOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Repetition along each dimension."""
    _same_quantization(op)
    return [jnp.tile(args[0], op.props()["multiples"])]


@op_check(dm.GatherOp)
def _check_gather(op: dm.GatherOp) -> list[tuple[str, tuple[int, ...]]]:
    """Indices need something to index: no gathering from an empty axis."""
    data = shape_of(op.data)
    axis = op.props()["axis"] % max(len(data), 1)
    if data and data[axis] == 0 and math.prod(shape_of(op.indices)) > 0:
        raise UnsupportedOpError(
            f"cannot gather from axis {axis} of {list(data)}: the axis is empty"
        )
    return []


@kernel(dm.GatherOp)
def gather(op: dm.GatherOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Slices at integer indices; negative indices count from the end."""
    _same_quantization(op)
    axis = op.props()["axis"]
    data, indices = args
    size = data.shape[axis]
    indices = jnp.where(indices < 0, indices + size, indices)
    return [jnp.take(data, indices, axis=axis, mode="clip")]


@kernel(dm.DepthToSpaceOp)
def depth_to_space(
    op: dm.DepthToSpaceOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """NHWC depth to space in DCR (TFLite) or CRD order."""
    _same_quantization(op)
    p = op.props()
    b = p["block_size"]
    n, h, w, c = args[0].shape
    depth = c // (b * b)
    if p["mode"] == DepthToSpaceMode.DCR:
        y = args[0].reshape(n, h, w, b, b, depth).transpose(0, 1, 3, 2, 4, 5)
    else:
        y = args[0].reshape(n, h, w, depth, b, b).transpose(0, 1, 4, 2, 5, 3)
    return [y.reshape(n, h * b, w * b, depth)]


@kernel(dm.SpaceToDepthOp)
def space_to_depth(
    op: dm.SpaceToDepthOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """NHWC space to depth (TFLite order)."""
    _same_quantization(op)
    b = op.props()["block_size"]
    n, h, w, c = args[0].shape
    y = args[0].reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return [y.reshape(n, h // b, w // b, c * b * b)]
