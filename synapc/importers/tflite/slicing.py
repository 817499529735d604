"""STRIDED_SLICE's begin / end / strides and masks turned into plain bounds, as LiteRT's
strided_slice kernel reads them: shared by its converter, its shape rule and the folding
of constant shape arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import tflite

if TYPE_CHECKING:
    from synapc.importers.tflite.reader import Importer, TfliteOp


@dataclass(frozen=True)
class Bounds:
    """Per input dimension: the first index, the end (exclusive; -1 with a negative
    stride means past the front), the stride, and whether the dimension is dropped
    (shrink_axis_mask)."""

    begin: list[int]
    end: list[int]
    strides: list[int]
    shrink: list[bool]

    def result_shape(self) -> tuple[int, ...]:
        """The output shape: the sliced sizes without the shrunk dimensions."""
        sizes = [
            max(0, -(-(e - b) // s)) if s > 0 else max(0, -(-(b - e) // -s))
            for b, e, s in zip(self.begin, self.end, self.strides, strict=True)
        ]
        return tuple(n for n, gone in zip(sizes, self.shrink, strict=True) if not gone)

    def apply(self, array: np.ndarray) -> np.ndarray:
        """The slice of `array` (a numpy array of the input's shape)."""
        index = tuple(
            slice(b, None if e < 0 else e, s)
            for b, e, s in zip(self.begin, self.end, self.strides, strict=True)
        )
        return array[index].reshape(self.result_shape())


def strided_slice_bounds(imp: Importer, op: TfliteOp, shape: tuple[int, ...]) -> Bounds:
    """The bounds of STRIDED_SLICE `op` on an input of `shape` (its begin, end and
    strides inputs must be constants)."""
    o = op.options(tflite.StridedSliceOptions)
    begin = imp.const_ints(op, 1, "begin")
    end = imp.const_ints(op, 2, "end")
    strides = imp.const_ints(op, 3, "strides")
    if not len(begin) == len(end) == len(strides) or len(begin) > len(shape):
        raise op.fail(
            f"begin, end and strides must have one value per dimension of the input "
            f"(at most {len(shape)}), got {len(begin)}, {len(end)} and {len(strides)}"
        )
    if 0 in strides:
        raise op.fail(f"strides must not be 0, got {strides}")
    if o is not None and (o.EllipsisMask() or o.NewAxisMask()):
        raise op.fail("ellipsis_mask and new_axis_mask are not supported")
    begin_mask = o.BeginMask() if o else 0
    end_mask = o.EndMask() if o else 0
    shrink_mask = o.ShrinkAxisMask() if o else 0
    offset = bool(o and o.Offset())
    out = Bounds([], [], [], [])
    for d, size in enumerate(shape):
        if d >= len(begin):
            _add(out, 0, size, 1, False)
            continue
        s = strides[d]
        b, e = begin[d], end[d] + (begin[d] if offset else 0)
        if shrink_mask >> d & 1:
            b = b + size if b < 0 else b
            if not 0 <= b < size:
                raise op.fail(
                    f"begin {begin[d]} of dimension {d} (shrunk) is outside its size {size}"
                )
            _add(out, b, b + 1, 1, True)
            continue
        if begin_mask >> d & 1:
            b = 0 if s > 0 else size - 1
        else:
            b = b + size if b < 0 else b
            b = min(max(b, 0), size) if s > 0 else min(max(b, -1), size - 1)
        if end_mask >> d & 1:
            e = size if s > 0 else -1
        else:
            e = e + size if e < 0 else e
            e = min(max(e, 0), size) if s > 0 else min(max(e, -1), size - 1)
        if s < 0 and b < 0:  # begin clamped before the front: nothing to take
            b, e = 0, 0
        _add(out, b, e, s, False)
    return out


def _add(out: Bounds, begin: int, end: int, stride: int, shrink: bool) -> None:
    out.begin.append(begin)
    out.end.append(end)
    out.strides.append(stride)
    out.shrink.append(shrink)
