"""Sparse constant tensors of a `.tflite` file, made dense at import.

TFLite stores a sparse tensor as the values of a tree walk over its dimensions
(schema.fbs `SparsityParameters`). A dense tensor of shape `shape` (rank n) may first be
cut into blocks: `block_map[b]` is the original dimension that block dimension `b`
splits, so the walk runs over n + k *expanded* dimensions, the n original ones (a blocked
one counts blocks, `shape[d] // block_size`) followed by the k block dimensions.
`traversal_order[level]` names the expanded dimension walked at each level, and
`dim_metadata[level]` says how: DENSE visits every coordinate (`dense_size` of them),
SPARSE_CSR visits, for the position `p` its parent level reached, the coordinates
`array_indices[array_segments[p]:array_segments[p + 1]]`. The position a DENSE level
reaches is `parent * dense_size + i`, a SPARSE_CSR level's is the index into its
`array_indices`; each leaf of the walk takes the next stored value, in walk order.

This is what LiteRT's DENSIFY kernel computes (and what it does by itself for the
constant sparse weights of FULLY_CONNECTED): a constant, so synapc computes it once here,
level by level with numpy, and everything the file states is checked first: LiteRT reads
the first n levels as the original dimensions and the last k as the (dense) block
dimensions, segments must be a monotone cover of their level's indices, indices must lie
inside their dimension, and the walk must visit exactly as many leaves as the buffer
holds values. A malformed table is refused with a message naming the tensor and the
field.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from synapc.errors import SynapcError
from synapc.importers.tflite.flatbuffer import (
    DENSE,
    SPARSE_CSR,
    DimensionMetadata,
    Sparsity,
)

if TYPE_CHECKING:
    from synapc.importers.tflite.reader import Importer

#: builds the error for a malformed sparsity field: (field, problem) -> error
Fail = Callable[[str, str], SynapcError]


def densify_tensor(imp: Importer, t: int) -> np.ndarray:
    """The dense values of the sparse constant tensor `t` (computed once: the result is
    kept among the importer's computed constants)."""
    if t in imp.folded:
        return imp.folded[t]
    tensor = imp.tensor(t)
    label = imp.label(t)

    def fail(field: str, problem: str) -> SynapcError:
        return imp.fail(f"{label} is sparse; sparsity field {field}: {problem}")

    if tensor.sparsity is None or tensor.buffer == 0:
        raise imp.fail(f"{label} is not a sparse constant")
    dtype = imp.numpy_dtype(t)
    buffer = imp.file.buffers[tensor.buffer]
    if buffer.size % dtype.itemsize:
        raise imp.fail(
            f"{label}: buffer {buffer.index} has {buffer.size:,} bytes, not a whole "
            f"number of {dtype} values"
        )
    values = np.frombuffer(imp.data, dtype, buffer.size // dtype.itemsize, buffer.start)
    dense = densify(values, tensor.shape, tensor.sparsity, fail)
    imp.folded[t] = dense
    return dense


def densify(
    values: np.ndarray, shape: tuple[int, ...], sparsity: Sparsity, fail: Fail
) -> np.ndarray:
    """The dense tensor of shape `shape` whose non-stored elements are zero and whose
    stored `values` (in walk order) sit where `sparsity` places them."""
    block_sizes = _block_sizes(shape, sparsity, fail)
    expanded, strides = _expanded_dims(shape, sparsity.block_map, block_sizes, fail)
    flat = np.zeros(1, np.int64)  # dense offset of each position of the current level
    for level, meta in enumerate(sparsity.dim_metadata):
        dim = sparsity.traversal_order[level]
        size, stride = expanded[dim], strides[dim]
        where = f"dim_metadata {level}"
        if meta.format == DENSE:
            if meta.dense_size != size:
                raise fail(
                    f"{where} dense_size",
                    f"{meta.dense_size} != {size}, the size of expanded dimension {dim}",
                )
            steps = np.arange(size, dtype=np.int64) * stride
            flat = (flat[:, None] + steps[None, :]).reshape(-1)
        elif meta.format == SPARSE_CSR:
            flat = _sparse_level(flat, meta, size, stride, where, fail)
        else:
            raise fail(
                f"{where} format", f"{meta.format} is neither DENSE (0) nor SPARSE_CSR (1)"
            )
    if flat.size != values.size:
        raise fail(
            "dim_metadata",
            f"the walk visits {flat.size:,} elements, but the buffer holds "
            f"{values.size:,} values",
        )
    dense = np.zeros(math.prod(shape), values.dtype)
    dense[flat] = values
    return dense.reshape(shape)


def _block_sizes(shape: tuple[int, ...], sparsity: Sparsity, fail: Fail) -> list[int]:
    """The size of each block dimension, after checking the table's structure: the
    traversal order is a permutation with the original dimensions first, block_map
    names increasing original dimensions, block levels are dense."""
    rank, block_map = len(shape), sparsity.block_map
    order, levels = sparsity.traversal_order, sparsity.dim_metadata
    total = rank + len(block_map)
    if sorted(order) != list(range(total)):
        raise fail(
            "traversal_order",
            f"{list(order)} is not a permutation of the {total} expanded dimensions "
            f"(rank {rank} + {len(block_map)} block dimensions)",
        )
    if sorted(order[:rank]) != list(range(rank)):
        raise fail(
            "traversal_order",
            f"{list(order)} must walk the {rank} original dimensions before the block "
            "dimensions",
        )
    if len(levels) != total:
        raise fail(
            "dim_metadata",
            f"has {len(levels)} entries; the traversal has {total} levels",
        )
    if any(not 0 <= d < rank for d in block_map) or any(
        a >= b for a, b in itertools.pairwise(block_map)
    ):
        raise fail(
            "block_map",
            f"{list(block_map)} must name increasing dimensions of the rank-{rank} tensor",
        )
    sizes = []
    for b in range(len(block_map)):
        level = order.index(rank + b)
        meta = levels[level]
        if meta.format != DENSE:
            raise fail(f"dim_metadata {level} format", "block dimensions must be DENSE (0)")
        # LiteRT takes block b's size from dim_metadata[traversal_order[rank + b]]: the
        # same entry unless the block levels are permuted
        litert = levels[order[rank + b]]
        if meta.dense_size != litert.dense_size:
            raise fail(
                f"dim_metadata {level} dense_size",
                f"block dimension {b} has size {meta.dense_size}, but LiteRT reads "
                f"{litert.dense_size} for it",
            )
        size, dim = meta.dense_size, block_map[b]
        if size < 1 or shape[dim] % size:
            raise fail(
                f"dim_metadata {level} dense_size",
                f"block size {size} does not divide dimension {dim} of shape {list(shape)}",
            )
        sizes.append(size)
    return sizes


def _expanded_dims(
    shape: tuple[int, ...], block_map: tuple[int, ...], block_sizes: list[int], fail: Fail
) -> tuple[list[int], list[int]]:
    """Size and dense (row-major) stride of each expanded dimension."""
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    sizes, steps = list(shape), list(strides)
    for dim, block in zip(block_map, block_sizes, strict=True):
        sizes[dim] //= block
        steps[dim] *= block
    return sizes + block_sizes, steps + [strides[d] for d in block_map]


def _sparse_level(
    flat: np.ndarray,
    meta: DimensionMetadata,
    size: int,
    stride: int,
    where: str,
    fail: Fail,
) -> np.ndarray:
    """The positions a SPARSE_CSR level reaches from its parents' `flat` offsets."""
    parents = flat.size
    segments = meta.array_segments.astype(np.int64)
    indices = meta.array_indices.astype(np.int64)
    if segments.size != parents + 1:
        raise fail(
            f"{where} array_segments",
            f"has {segments.size:,} entries; the level has {parents:,} parent positions, "
            f"so it needs {parents + 1:,}",
        )
    counts = np.diff(segments)
    if segments[0] != 0 or (counts < 0).any() or segments[-1] != indices.size:
        raise fail(
            f"{where} array_segments",
            f"must rise from 0 to {indices.size:,} (the number of array_indices) "
            "without decreasing",
        )
    if indices.size > parents * size:
        raise fail(
            f"{where} array_indices",
            f"has {indices.size:,} entries, more than the {parents * size:,} positions "
            "of the level",
        )
    outside = (indices < 0) | (indices >= size)
    if outside.any():
        value = int(indices[int(np.argmax(outside))])
        raise fail(
            f"{where} array_indices",
            f"index {value} is outside expanded dimension of size {size}",
        )
    parent = np.repeat(np.arange(parents, dtype=np.int64), counts)
    seen = np.zeros(parents * size, np.bool_)
    seen[parent * size + indices] = True
    if np.count_nonzero(seen) != indices.size:
        raise fail(f"{where} array_indices", "a segment names the same index twice")
    return flat[parent] + indices * stride
