"""ONNX Resize along one axis as interpolation taps: the input pixels each output reads.

Resizing is separable: along each resized axis, output pixel ``o`` is a weighted sum of
input pixels (its taps), fixed by the static sizes and the op's parameters. This module
computes them on the host in float64 the way ONNX's operator specification defines them:
the source coordinate of each output index (`source_coordinates`), then the window of
taps around it and their weights for nearest, linear and cubic interpolation, with the
antialiasing stretch, `exclude_outside` and the clamping of taps into the input
(`axis_taps`). The kernel gathers the taps and sums them weighted: only the taps are
read (a dense matrix product would turn an infinite input anywhere in a row into NaN
through its zero weights) and the work is the window size per output, not the input size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from synapc.dialects.synap.attributes import CoordinateMode, NearestRounding, ResizeMode


@dataclass(frozen=True)
class AxisResize:
    """The resize of one axis: sizes, the given coordinate scale (None: the size
    ratio), the region of interest (start, end) for tf_crop_and_resize, and the
    interpolation parameters."""

    size_in: int
    size_out: int
    scale: float | None
    roi: tuple[float, float] | None
    mode: ResizeMode
    coordinate_mode: CoordinateMode
    nearest_rounding: NearestRounding
    cubic_coeff_a: float
    exclude_outside: bool
    antialias: bool

    @property
    def coordinate_scale(self) -> float:
        """The scale coordinates are mapped with: the given one, else out / in."""
        return self.scale if self.scale is not None else self.size_out / self.size_in

    @property
    def is_identity(self) -> bool:
        """Whether the axis keeps its size at scale 1 over the whole input (ONNX then
        leaves it untouched, whatever the interpolation)."""
        full = self.roi is None or (self.roi[0] == 0 and math.isclose(self.roi[1], 1.0))
        return (
            self.size_in == self.size_out
            and math.isclose(self.coordinate_scale, 1.0)
            and full
        )


@dataclass(frozen=True)
class Taps:
    """Per output index: the input indices it reads (clamped into the input), their
    weights, and whether the index lies outside the input (tf_crop_and_resize: the
    output takes the extrapolation value)."""

    indices: np.ndarray  # (size_out, n) int64
    weights: np.ndarray  # (size_out, n) float64
    outside: np.ndarray  # (size_out,) bool


def source_coordinates(axis: AxisResize) -> tuple[np.ndarray, np.ndarray]:
    """The input coordinate (float64) of every output index, and which of them fall
    outside the input (only tf_crop_and_resize marks any)."""
    n_in, n_out = axis.size_in, axis.size_out
    scale = axis.coordinate_scale
    extent = scale * n_in  # the output extent the scale implies, not rounded
    out = np.arange(n_out, dtype=np.float64)
    centres = (out + 0.5) / scale - 0.5
    outside = np.zeros(n_out, dtype=bool)
    mode = axis.coordinate_mode
    if mode == CoordinateMode.ASYMMETRIC:
        coords = out / scale
    elif mode == CoordinateMode.ALIGN_CORNERS:
        coords = np.zeros(n_out) if extent == 1 else out * (n_in - 1) / (extent - 1)
    elif mode == CoordinateMode.HALF_PIXEL:
        coords = centres
    elif mode == CoordinateMode.PYTORCH_HALF_PIXEL:
        coords = np.full(n_out, -0.5) if extent == 1 else centres
    elif mode == CoordinateMode.HALF_PIXEL_SYMMETRIC:
        coords = centres + n_in / 2 * (1 - n_out / extent)
    elif mode == CoordinateMode.TF_CROP_AND_RESIZE:
        if axis.roi is None:
            raise ValueError("tf_crop_and_resize needs a region of interest")
        start, end = axis.roi
        span = (end - start) * (n_in - 1)
        coords = np.full(n_out, span / 2) if extent == 1 else out * span / (extent - 1)
        coords = coords + start * (n_in - 1)
        outside = (coords < 0) | (coords > n_in - 1)
    else:
        raise ValueError(f"unknown coordinate mode {mode}")
    return coords, outside


def _cubic(distance: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with parameter `a` at |distance|."""
    t = np.abs(distance)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def _nearest_weights(ratio: np.ndarray, rounding: NearestRounding) -> np.ndarray:
    """Weights of the taps (floor, floor + 1) around a coordinate `ratio` past the
    lower tap, ratio in (0, 1] (1: the coordinate is the upper tap itself)."""
    if rounding == NearestRounding.ROUND_PREFER_FLOOR:
        upper = ratio > 0.5
    elif rounding == NearestRounding.ROUND_PREFER_CEIL:
        upper = ratio >= 0.5
    elif rounding == NearestRounding.FLOOR:
        upper = ratio == 1
    else:
        upper = np.ones_like(ratio, dtype=bool)
    upper = upper.astype(np.float64)
    return np.stack([1 - upper, upper], axis=1)


def _window(axis: AxisResize) -> tuple[int, float]:
    """(first tap offset, kernel scale): taps sit at lower + i for i from the offset
    to 1 - offset; the kernel is evaluated at scale * distance (antialiasing stretches
    it by 1 / scale when downsampling)."""
    stretch = min(axis.coordinate_scale, 1.0) if axis.antialias else 1.0
    if axis.mode == ResizeMode.NEAREST:
        return 0, 1.0
    support = 2.0 if axis.mode == ResizeMode.CUBIC else 1.0
    return math.floor(-support / stretch) + 1, stretch


def axis_taps(axis: AxisResize) -> Taps:
    """The taps and weights of every output index along one axis."""
    coords, outside = source_coordinates(axis)
    # The lower tap is the input index left of the coordinate, the coordinate itself
    # counting as right of it: ratio is in (0, 1].
    lower = np.ceil(coords) - 1
    ratio = coords - lower
    first, stretch = _window(axis)
    offsets = np.arange(first, 2 - first, dtype=np.float64)
    # Far outside the input every tap lies outside and clamps onto the edge: bound the
    # lower tap (the weights depend on `ratio` alone) so the indices fit int64.
    lower = np.clip(lower, -offsets.size - 1, axis.size_in + offsets.size)
    indices = (lower[:, None] + offsets[None, :]).astype(np.int64)
    distance = offsets[None, :] - ratio[:, None]
    if axis.mode == ResizeMode.NEAREST:
        weights = _nearest_weights(ratio, axis.nearest_rounding)
    elif axis.mode == ResizeMode.CUBIC:
        weights = _cubic(stretch * distance, axis.cubic_coeff_a)
    else:
        weights = np.clip(1 - np.abs(stretch * distance), 0, 1)
    if axis.antialias:
        weights = weights / weights.sum(axis=1, keepdims=True)
    if axis.exclude_outside:
        weights = np.where((indices < 0) | (indices >= axis.size_in), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    indices = np.clip(indices, 0, axis.size_in - 1)
    return Taps(indices, weights, outside)


def tap_count(axis: AxisResize) -> int:
    """How many taps each output index of the axis reads (before computing them)."""
    if axis.is_identity:
        return 1
    first, _ = _window(axis)
    return 2 - 2 * first


def identity_taps(size: int) -> Taps:
    """The taps of an axis ONNX leaves untouched."""
    return Taps(
        np.arange(size, dtype=np.int64)[:, None],
        np.ones((size, 1), dtype=np.float64),
        np.zeros(size, dtype=bool),
    )


def resize_taps(axis: AxisResize) -> Taps:
    """`axis_taps`, or the identity for an axis ONNX leaves untouched."""
    return identity_taps(axis.size_in) if axis.is_identity else axis_taps(axis)
