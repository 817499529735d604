"""Axis permutations between an ONNX tensor's logical layout and its IR layout.

ONNX is channels-first; the synap dialect is channels-last. The importer keeps every
tensor in whichever layout its producer made it and records the permutation: physical
axis ``i`` of the IR value holds logical axis ``perm[i]``. A convolution output of
logical NCHW is physically NHWC, perm ``(0, 2, 3, 1)``. `None` means identical.
"""

from __future__ import annotations

from collections.abc import Sequence

Perm = tuple[int, ...] | None


def channels_last(rank: int) -> tuple[int, ...]:
    """The perm that stores a channels-first tensor of `rank` channels-last."""
    return (0, *range(2, rank), 1)


def normalize(perm: Sequence[int] | None) -> Perm:
    """`perm` as a tuple, or None when it is the identity."""
    if perm is None:
        return None
    perm = tuple(int(p) for p in perm)
    return None if perm == tuple(range(len(perm))) else perm


def inverse(perm: Sequence[int]) -> tuple[int, ...]:
    """The permutation that undoes `perm`."""
    result = [0] * len(perm)
    for i, p in enumerate(perm):
        result[p] = i
    return tuple(result)


def physical_axis(perm: Perm, axis: int, rank: int) -> int:
    """Where logical `axis` (negative counts from the end) lives physically."""
    axis = axis + rank if axis < 0 else axis
    return axis if perm is None else perm.index(axis)


def physical_shape(logical: Sequence[int], perm: Perm) -> tuple[int, ...]:
    """The IR shape of a tensor of `logical` shape stored with `perm`."""
    return tuple(logical) if perm is None else tuple(logical[p] for p in perm)


def logical_shape(physical: Sequence[int], perm: Perm) -> tuple[int, ...]:
    """The ONNX shape of an IR value of `physical` shape stored with `perm`."""
    if perm is None:
        return tuple(physical)
    result = [0] * len(perm)
    for i, p in enumerate(perm):
        result[p] = physical[i]
    return tuple(result)


def between(source: Perm, target: Perm, rank: int) -> Perm:
    """The IR transpose that turns a value stored with `source` into one with `target`."""
    src = source or tuple(range(rank))
    dst = target or tuple(range(rank))
    return normalize(tuple(src.index(d) for d in dst))


def without_axes(perm: Perm, removed: Sequence[int]) -> Perm:
    """The perm left after the logical axes `removed` are dropped (a reduction without
    kept dimensions), renumbering the remaining logical axes."""
    if perm is None:
        return None
    gone = set(removed)
    kept = [p for p in perm if p not in gone]
    order = sorted(kept)
    return normalize(tuple(order.index(p) for p in kept))


def moves_only_unit_axes(shape: Sequence[int], transpose: Sequence[int]) -> bool:
    """Whether transposing `shape` by `transpose` keeps the order of every axis of size
    > 1, so that the data does not move and a reshape does the job."""
    big = [axis for axis in transpose if shape[axis] != 1]
    return big == sorted(big)
