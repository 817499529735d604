"""ONNX operators computed as scatters and gathers of synap ops: Col2Im (a scatter-add
of the column blocks into the padded image, at positions known at import) and
TensorScatter (a KV-cache update at run-time write positions)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import SSAValue

from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.data_movement import BroadcastToOp, SliceOp
from synapc.dialects.synap.indexing import (
    GatherElementsOp,
    ScatterElementsOp,
    ScatterReduction,
    ScatterReductionAttr,
)
from synapc.dialects.synap.logical import GreaterEqualOp, LessOp, LogicalAndOp, SelectOp
from synapc.dtypes import numpy_dtype
from synapc.errors import SynapcError
from synapc.importers.onnx.reader import Importer, Node, converts
from synapc.limits import check_count


def _constant(imp: Importer, node: Node, tag: str, array: np.ndarray) -> SSAValue:
    """A host constant made for `node` (named after its first output and `tag`)."""
    name = f"{node.outputs[0]}#{tag}"
    imp.bind_const(name, array)
    return imp.get(name)


# -- Col2Im ----------------------------------------------------------------------------
def _per_axis(node: Node, name: str, default: int, count: int) -> list[int]:
    """Integer-list attribute `name` with `count` values (all `default` when absent)."""
    values = node.ints_attr(name, [default] * count)
    assert values is not None
    if len(values) != count:
        raise node.fail(f"attribute '{name}' {values} must have {count} values")
    return values


def _block_counts(
    node: Node,
    block: list[int],
    padded: list[int],
    strides: list[int],
    dilations: list[int],
) -> list[int]:
    """How many block positions fit along each axis of the padded image."""
    counts = []
    for size, k, s, d in zip(padded, block, strides, dilations, strict=True):
        count = (size - d * (k - 1) - 1) // s + 1
        if count < 1:
            raise node.fail(
                f"block shape {block} with dilations {dilations} does not fit the padded "
                f"image {padded}"
            )
        counts.append(count)
    return counts


def _block_positions(
    block: list[int],
    counts: list[int],
    padded: list[int],
    strides: list[int],
    dilations: list[int],
) -> np.ndarray:
    """For each (block element, block position) pair, in the input's column order, the
    flat position in the padded image it adds to."""
    rank = len(block)
    offsets = np.indices(block).reshape(rank, -1)  # (rank, K)
    starts = np.indices(counts).reshape(rank, -1)  # (rank, L)
    step = np.asarray(strides)[:, None, None]
    spread = np.asarray(dilations)[:, None, None]
    where = starts[:, None, :] * step + offsets[:, :, None] * spread  # (rank, K, L)
    return np.ravel_multi_index(tuple(where), padded).reshape(-1)


@converts("Col2Im")
def col2im(imp: Importer, node: Node) -> None:
    """Rearrange column blocks ``[N, C * prod(block_shape), L]`` into the image ``[N, C,
    *image_shape]``, summing overlapping values; image and block shapes are constants."""
    x = node.inputs[0]
    shape = imp.shape(x)
    if len(shape) != 3:
        raise node.fail(f"input 0 must be [N, C * prod(block_shape), L], got {list(shape)}")
    image = imp.const_ints(node, 1, "image_shape")
    block = imp.const_ints(node, 2, "block_shape")
    rank = len(image)
    if rank < 1 or len(block) != rank:
        raise node.fail(f"image_shape {image} and block_shape {block} must match in length")
    if any(v < 1 for v in [*image, *block]):
        raise node.fail(f"image_shape {image} and block_shape {block} must be positive")
    strides = _per_axis(node, "strides", 1, rank)
    dilations = _per_axis(node, "dilations", 1, rank)
    pads = _per_axis(node, "pads", 0, 2 * rank)
    if any(v < 1 for v in [*strides, *dilations]) or any(p < 0 for p in pads):
        raise node.fail("strides and dilations must be positive and pads not negative")
    padded = [size + pads[i] + pads[i + rank] for i, size in enumerate(image)]
    counts = _block_counts(node, block, padded, strides, dilations)
    n, columns, length = shape
    kernel = math.prod(block)
    # checked before anything is built: the blocks must be the input's own columns
    if columns % kernel or length != math.prod(counts):
        raise node.fail(
            f"input 0 {list(shape)} does not hold the {kernel}-element blocks at the "
            f"{math.prod(counts)} positions image_shape {image}, block_shape "
            f"{block}, strides, dilations and pads give"
        )
    channels = columns // kernel
    element = imp.element_type(x)
    dtype = numpy_dtype(element)
    try:  # the summed image is a constant of zeros before the scatter adds into it
        check_count(n * channels * math.prod(padded), "max_fold_elements", "padded image")
    except SynapcError as error:
        raise node.fail(str(error)) from None
    positions = _block_positions(block, counts, padded, strides, dilations)
    values = imp.reshape(imp.get(x), (n, channels, kernel * length))
    indices = np.broadcast_to(
        positions.astype(np.int32), (n, channels, positions.size)
    ).copy()
    zeros = np.zeros((n, channels, math.prod(padded)), dtype)
    summed = imp.append(
        ScatterElementsOp.make(
            _constant(imp, node, "zeros", zeros),
            _constant(imp, node, "positions", indices),
            values,
            axis=2,
            reduction=ScatterReductionAttr(ScatterReduction.ADD),
            **node.source,
        )
    )
    result = imp.reshape(summed, (n, channels, *padded))
    if padded != image:
        result = imp.append(
            SliceOp.make(
                result,
                result_types=[TensorType(element, (n, channels, *image))],
                start=[0, 0, *pads[:rank]],
                **node.source,
            )
        )
    imp.bind(imp.out_name(node), result)


# -- TensorScatter ---------------------------------------------------------------------
@converts("TensorScatter")
def tensor_scatter(imp: Importer, node: Node) -> None:
    """``present = past`` with, for each batch ``b``, the update's sequence written at
    ``write_indices[b] + s`` along `axis` (modulo the cache length in `circular` mode):
    the cache positions gather their update entry, chosen where they are written."""
    past, update, written = node.inputs[0], node.input(1), node.input(2)
    if update is None:
        raise node.fail("needs the update (input 1)")
    shape, update_shape = imp.shape(past), imp.shape(update)
    rank = len(shape)
    if rank < 2:
        raise node.fail(f"past_cache (input 0) must have rank 2 or more, got {rank}")
    axis = node.axis(node.int_attr("axis", -2), rank)
    if axis == 0:
        raise node.fail("attribute 'axis' must not be the batch axis 0")
    mode = node.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise node.fail(f"attribute 'mode' '{mode}' must be 'linear' or 'circular'")
    length, count = shape[axis], update_shape[axis] if len(update_shape) == rank else -1
    others = [d for i, d in enumerate(shape) if i != axis]
    if (
        len(update_shape) != rank
        or [d for i, d in enumerate(update_shape) if i != axis] != others
        or count > length
    ):
        raise node.fail(
            f"update (input 1) {list(update_shape)} does not fit past_cache "
            f"{list(shape)} along axis {axis}"
        )
    if imp.element_type(update) != imp.element_type(past):
        raise node.fail("update (input 1) and past_cache (input 0) differ in type")
    src = node.source
    along = [1] * rank
    along[axis] = length
    batch = [shape[0]] + [1] * (rank - 1)
    if written is None:
        starts = _constant(imp, node, "starts", np.zeros(batch, np.int64))
    else:
        element = imp.element_type(written)
        if not isinstance(element, IntegerType) or element.width.data == 1:
            raise node.fail(f"write_indices (input 2) must be integers, got {element}")
        if imp.shape(written) != (shape[0],):
            raise node.fail(
                f"write_indices (input 2) must have shape [{shape[0]}], got "
                f"{list(imp.shape(written))}"
            )
        starts = imp.reshape(imp.get(written), batch)
    index_dtype = numpy_dtype(starts.type.element_type)  # type: ignore[attr-defined]
    cache_positions = np.arange(length, dtype=index_dtype).reshape(along)
    positions = _constant(imp, node, "positions", cache_positions)
    offset = imp.append(ew.SubOp.make(positions, starts, **src))
    if mode == "circular":
        modulus = _constant(imp, node, "length", np.full([1] * rank, length, index_dtype))
        offset = imp.append(ew.ModOp.make(offset, modulus, **src))
    zero = _constant(imp, node, "zero", np.zeros([1] * rank, index_dtype))
    limit = _constant(imp, node, "count", np.full([1] * rank, count, index_dtype))
    chosen = imp.append(LessOp.make(offset, limit, **src))
    if mode == "linear":
        after = imp.append(GreaterEqualOp.make(offset, zero, **src))
        chosen = imp.append(LogicalAndOp.make(chosen, after, **src))
    element = starts.type.element_type  # type: ignore[attr-defined]
    index = imp.append(SelectOp.make(chosen, offset, zero, element_type=element, **src))
    index = imp.append(
        BroadcastToOp.make(index, result_types=[TensorType(element, shape)], **src)
    )
    gathered = imp.append(GatherElementsOp.make(imp.get(update), index, axis=axis, **src))
    imp.emit(
        node,
        SelectOp,
        chosen,
        gathered,
        imp.get(past),
        element_type=imp.element_type(past),
    )
