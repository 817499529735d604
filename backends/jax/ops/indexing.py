"""Kernels of `dialects/synap/indexing.py`.

Indices arrive as the device's int32. A negative index wraps once (``-1`` is the last
position); an index still outside its dimension after that (possible only for indices
computed at run time: importers refuse such constants) is clamped to the nearest
position by the gathers and dropped by the scatters, so no kernel reads or writes
outside its tensor.

The ops that only move values (gathers, scatters that replace, maxima and minima,
top-k, one-hot, sequence reversal, triangles) run on stored integers when every
quantized operand and result shares one per-tensor quantization; scatters that add or
multiply and einsum are float or plain integer only.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation

from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    takes_booleans,
)
from synapc.backends.jax.ops.common import widen
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import indexing as ix
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.indexing import ScatterReduction

Intermediates = list[tuple[str, tuple[int, ...]]]


def _quantized_types(op: Operation) -> set[UniformQuantizedType]:
    """The quantized element types among the operands and results of `op`."""
    elements = [element_of(v) for v in (*op.operands, *op.results)]
    return {e for e in elements if isinstance(e, UniformQuantizedType)}


def _moves_stored_values(op: Operation) -> None:
    """Moving stored integers is exact only when every quantized operand and result
    shares one per-tensor quantization (the op defines no requantization)."""
    types = _quantized_types(op)
    if len(types) > 1:
        raise UnsupportedOpError(
            f"{op.name} moves stored integers: its quantized operands and results must "
            "share one quantization"
        )
    if any(q.is_per_axis for q in types):
        raise UnsupportedOpError(f"per-axis quantized {op.name} is not supported")


def _not_quantized(op: Operation, why: str) -> None:
    """Refuse a quantized instance of a kernel that computes on real values."""
    if _quantized_types(op):
        raise UnsupportedOpError(f"quantized {op.name} is not supported: {why}")


def _is_boolean(op: Operation) -> bool:
    element = element_of(op.operands[0])
    return isinstance(element, IntegerType) and element.width.data == 1


def _int32(indices: jax.Array, limit: int) -> jax.Array:
    """Integer indices as int32; unsigned ones are first lowered to `limit` (>= 0), as
    a cast would wrap those above 2**31 to negative values."""
    if jnp.issubdtype(indices.dtype, jnp.unsignedinteger):
        indices = jnp.minimum(indices.astype(jnp.uint32), limit)
    return indices.astype(jnp.int32)


def _positions(indices: jax.Array, size: int) -> jax.Array:
    """Indices wrapped once and clamped into ``[0, size)`` (for gathers)."""
    indices = _int32(indices, size)
    wrapped = jnp.where(indices < 0, indices + size, indices)
    return jnp.clip(wrapped, 0, max(size - 1, 0))


def _targets(indices: jax.Array, size: int) -> jax.Array:
    """Indices wrapped once; those still outside ``[0, size)`` become `size`, which a
    scatter with ``mode="drop"`` skips (JAX would wrap a negative index again)."""
    indices = _int32(indices, size)
    wrapped = jnp.where(indices < 0, indices + size, indices)
    return jnp.where((wrapped < 0) | (wrapped >= size), size, wrapped)


def _element_grid(indices: jax.Array, axis: int, along: jax.Array) -> tuple[jax.Array, ...]:
    """Full index arrays of the shape of `indices`: each position's own coordinates,
    except `along` on `axis`."""
    return tuple(
        along if d == axis else lax.broadcasted_iota(jnp.int32, indices.shape, d)
        for d in range(indices.ndim)
    )


# -- checks ------------------------------------------------------------------------------
@op_check(ix.GatherElementsOp, ix.GatherNDOp, ix.ReverseSequenceOp, ix.TriluOp)
def _check_moves(op: Operation) -> Intermediates:
    """Gathers, sequence reversal and triangles move stored values."""
    _moves_stored_values(op)
    if isinstance(op, ix.GatherElementsOp | ix.GatherNDOp):
        data = shape_of(op.data)
        if 0 in data and 0 not in shape_of(op.output):
            raise UnsupportedOpError(f"cannot gather from the empty data {list(data)}")
    return []


@op_check(ix.ScatterElementsOp, ix.ScatterNDOp)
def _check_scatter(op: ix.ScatterElementsOp | ix.ScatterNDOp) -> Intermediates:
    """Replacing, maximum and minimum move stored values; adding and multiplying
    compute on real values, and none of the reductions is defined on booleans."""
    reduction = op.props()["reduction"]
    if reduction in (ScatterReduction.ADD, ScatterReduction.MUL):
        _not_quantized(op, f"reduction '{reduction}' computes on real values")
    else:
        _moves_stored_values(op)
    if reduction != ScatterReduction.NONE and _is_boolean(op):
        raise UnsupportedOpError(f"reduction '{reduction}' of booleans is not supported")
    return []


@op_check(ix.OneHotOp, ix.TopKOp)
def _check_selection(op: Operation) -> Intermediates:
    """One-hot writes its values, top-k its input's values: stored values move."""
    _moves_stored_values(op)
    return []


@op_check(ix.EinsumOp)
def _check_einsum(op: ix.EinsumOp) -> Intermediates:
    """Einsum multiplies and sums real values; its operands broadcast to the sizes of
    their letters first."""
    _not_quantized(op, "it multiplies and sums real values")
    terms, _ = ix.parse_einsum(op.props()["equation"])
    sizes = _letter_sizes(terms, [shape_of(v) for v in op.inputs])
    return [
        (f"operand #{k} broadcast", tuple(sizes[c] for c in term))
        for k, term in enumerate(terms)
    ]


takes_booleans(
    ix.GatherElementsOp, ix.GatherNDOp, ix.ScatterElementsOp, ix.ScatterNDOp,
    ix.OneHotOp, ix.TriluOp, ix.ReverseSequenceOp,
)  # fmt: skip


# -- gathers and scatters ----------------------------------------------------------------
@kernel(ix.GatherElementsOp)
def gather_elements(
    op: ix.GatherElementsOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """``data`` at each index along the axis, at the index's own position elsewhere."""
    data, indices = args
    axis = op.props()["axis"] % data.ndim
    along = _positions(indices, data.shape[axis])
    return [data[_element_grid(indices, axis, along)]]


@kernel(ix.GatherNDOp)
def gather_nd(
    op: ix.GatherNDOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """The data slices the index tuples name, batch by batch."""
    data, indices = args
    batch = op.props()["batch_dims"]
    lead = indices.shape[:-1]
    grid = [lax.broadcasted_iota(jnp.int32, lead, d) for d in range(batch)]
    grid += [
        _positions(indices[..., j], data.shape[batch + j]) for j in range(indices.shape[-1])
    ]
    return [data[tuple(grid)]]


def _scatter(ref: jax.Array, updates: jax.Array, reduction: ScatterReduction) -> jax.Array:
    """`updates` written into the `.at[...]` reference `ref` with `reduction`; targets
    outside the data are dropped."""
    if reduction == ScatterReduction.ADD:
        return ref.add(updates, mode="drop")
    if reduction == ScatterReduction.MUL:
        return ref.multiply(updates, mode="drop")
    if reduction == ScatterReduction.MAX:
        return ref.max(updates, mode="drop")
    if reduction == ScatterReduction.MIN:
        return ref.min(updates, mode="drop")
    return ref.set(updates, mode="drop")


@kernel(ix.ScatterElementsOp)
def scatter_elements(
    op: ix.ScatterElementsOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Each update written at its index along the axis (its own position elsewhere)."""
    data, indices, updates = args
    p = op.props()
    axis = p["axis"] % data.ndim
    along = _targets(indices, data.shape[axis])
    return [_scatter(data.at[_element_grid(indices, axis, along)], updates, p["reduction"])]


@kernel(ix.ScatterNDOp)
def scatter_nd(
    op: ix.ScatterNDOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Each update slice written to the data slice its index tuple names."""
    data, indices, updates = args
    grid = tuple(_targets(indices[..., j], data.shape[j]) for j in range(indices.shape[-1]))
    return [_scatter(data.at[grid], updates, op.props()["reduction"])]


# -- encodings and selections ------------------------------------------------------------
@kernel(ix.OneHotOp)
def one_hot(
    op: ix.OneHotOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """`on` where the position along the new axis equals the (wrapped) index."""
    indices, values = args
    p = op.props()
    depth = p["depth"]
    axis = p["axis"] % (indices.ndim + 1)
    if jnp.issubdtype(indices.dtype, jnp.floating):
        # bounded before the conversion (toward zero), so huge values stay outside
        index = jnp.clip(indices, -depth - 1, depth).astype(jnp.int32)
    else:
        index = _int32(indices, depth)
    index = jnp.where(index < 0, index + depth, index)
    shape = shape_of(op.output)
    position = lax.broadcasted_iota(jnp.int32, shape, axis)
    hit = jnp.expand_dims(index, axis) == position
    return [jnp.where(hit, values[1], values[0])]


@kernel(ix.TriluOp)
def trilu(op: ix.TriluOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """The triangle of each matrix kept, zeros (a quantized zero point) elsewhere."""
    x = args[0]
    p = op.props()
    shape = x.shape[-2:]
    diagonal = lax.broadcasted_iota(jnp.int32, shape, 1) - lax.broadcasted_iota(
        jnp.int32, shape, 0
    )
    keep = diagonal >= p["k"] if p["upper"] else diagonal <= p["k"]
    element = element_of(op.input)
    zero = element.zero_point if isinstance(element, UniformQuantizedType) else 0
    return [jnp.where(keep, x, jnp.asarray(zero, x.dtype))]


@kernel(ix.TopKOp)
def top_k(op: ix.TopKOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """The k extreme values along the axis, most extreme first, equal values in their
    input order (`lax.top_k` puts the lower index first). The smallest values are the
    largest of the order-reversing key ``-x`` (floats) or ``~x`` (integers, without
    overflow)."""
    p = op.props()
    x = args[0]
    axis = p["axis"] % x.ndim
    moved = jnp.moveaxis(x, axis, -1)
    key = moved
    if not p["largest"]:
        key = -moved if jnp.issubdtype(moved.dtype, jnp.floating) else ~moved
    _, index = lax.top_k(key, p["k"])
    values = jnp.take_along_axis(moved, index, axis=-1)
    index = index.astype(ctx.dtype_of(op.indices))
    return [jnp.moveaxis(values, -1, axis), jnp.moveaxis(index, -1, axis)]


@kernel(ix.ReverseSequenceOp)
def reverse_sequence(
    op: ix.ReverseSequenceOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Position t of batch entry b reads ``L - 1 - t`` below the entry's length L (clamped
    into ``[0, time size]``), itself from L on."""
    x, lengths = args
    p = op.props()
    batch, time = p["batch_axis"] % x.ndim, p["time_axis"] % x.ndim
    steps = x.shape[time]
    shape = [1] * x.ndim
    shape[batch] = x.shape[batch]
    length = jnp.clip(_int32(lengths, steps), 0, steps).reshape(shape)
    t = lax.broadcasted_iota(jnp.int32, x.shape, time)
    source = jnp.where(t < length, length - 1 - t, t)
    return [jnp.take_along_axis(x, source, axis=time)]


# -- einsum ------------------------------------------------------------------------------
def _letter_sizes(
    terms: list[str], operand_shapes: list[tuple[int, ...]]
) -> dict[str, int]:
    """Each letter's size: the largest of its dimensions (the others are equal or 1)."""
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, operand_shapes, strict=True):
        for letter, size in zip(term, shape, strict=True):
            sizes[letter] = max(sizes.get(letter, size), size)
    return sizes


@kernel(ix.EinsumOp)
def einsum(op: ix.EinsumOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """`jnp.einsum` of the operands broadcast to their letters' sizes, accumulating
    floats in float32 (or wider) and integers in int32."""
    equation = op.props()["equation"]
    terms, _ = ix.parse_einsum(equation)
    sizes = _letter_sizes(terms, [tuple(a.shape) for a in args])
    operands = [
        jnp.broadcast_to(a, tuple(sizes[c] for c in term))
        for a, term in zip(args, terms, strict=True)
    ]
    out_dtype = args[0].dtype
    if jnp.issubdtype(out_dtype, jnp.floating):
        acc = widen(operands[0]).dtype
        operands = [a.astype(acc) for a in operands]
    else:
        acc = jnp.int32
        operands = [a.astype(acc) for a in operands]
    result = jnp.einsum(
        equation, *operands, preferred_element_type=acc, precision=lax.Precision.HIGHEST
    )
    return [result.astype(out_dtype)]
