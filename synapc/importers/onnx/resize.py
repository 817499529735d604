"""ONNX Resize and Upsample of the spatial axes as a synap NHWC resize.

Every ONNX parameter maps onto `synap.resize`: the interpolation (nearest, linear,
cubic with its coefficient, antialias, exclude_outside), the coordinate transformation
(with tf_crop_and_resize's region of interest and extrapolation value), and the scale
coordinates are mapped with when it is not the output / input size ratio (a given scale,
or keep_aspect_ratio_policy's, that does not give a whole output size). Only H and W may
change: batch and channels must keep their size at scale 1 (and their whole range of
interest)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType

from synapc.dialects.synap.attributes import CoordinateMode, NearestRounding, ResizeMode
from synapc.dialects.synap.base import element_of
from synapc.dialects.synap.resize import ResizeOp, f32_values
from synapc.importers.onnx import layout
from synapc.importers.onnx.reader import Importer, Node, converts

_MODES = {
    "nearest": ResizeMode.NEAREST,
    "linear": ResizeMode.BILINEAR,
    "bilinear": ResizeMode.BILINEAR,
    "cubic": ResizeMode.CUBIC,
}
_COORDINATES = {mode.value: mode for mode in CoordinateMode}
#: How close a scale times its input size must come to a whole number for the output
#: / input size ratio to stand in for it.
_WHOLE = 1e-6


def _input(node: Node) -> list[str | None]:
    return node.inputs[:1]


def _place(values: list[float], axes: list[int], fill: list[float]) -> list[float]:
    """`fill` (one value per axis of the tensor) with `values` put at `axes`."""
    full = list(fill)
    for a, value in zip(axes, values, strict=True):
        full[a] = value
    return full


def _policy_sizes(
    node: Node, shape: tuple[int, ...], axes: list[int], given: list[int]
) -> tuple[list[int], list[float] | None]:
    """The output shape from `sizes` of the `axes` with `keep_aspect_ratio_policy`
    applied, and the scale of every axis when the policy scale is not the output /
    input ratio (None when it is, or under "stretch")."""
    if len(given) != len(axes):
        raise node.fail(f"{len(given)} sizes for {len(axes)} axes")
    if any(s < 1 for s in given):
        raise node.fail(f"sizes {given} must be positive")
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if policy == "stretch":
        return [int(s) for s in _place(given, axes, list(shape))], None
    if policy not in ("not_larger", "not_smaller"):
        raise node.fail(f"keep_aspect_ratio_policy '{policy}' is not supported")
    ratios = [size / shape[a] for a, size in zip(axes, given, strict=True)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    sizes = [int(scale * d + 0.5) if a in axes else d for a, d in enumerate(shape)]
    scales = [scale if a in axes else 1.0 for a in range(len(shape))]
    whole = all(abs(scale * shape[a] - sizes[a]) <= _WHOLE for a in axes)
    return sizes, None if whole else scales


def _given_scales(imp: Importer, node: Node, index: int, axes: list[int]) -> list[float]:
    """The `scales` of the `axes` (input `index`, or the attribute of Upsample-7)."""
    if node.op_type == "Upsample" and node.opset < 9:
        given = [float(s) for s in node.attr("scales", [])]
    else:
        values = imp.const(node.input(index))
        if values is None:
            raise node.fail(f"scales (input {index}) must be a constant")
        given = [float(s) for s in np.asarray(values).reshape(-1)]
    if len(given) != len(axes):
        raise node.fail(f"{len(given)} scales for {len(axes)} axes")
    if not all(np.isfinite(s) and s > 0 for s in given):
        raise node.fail(f"scales {given} must be positive numbers")
    return given


def _output_shape(
    imp: Importer,
    node: Node,
    shape: tuple[int, ...],
    axes: list[int],
    legacy: bool,
    crop: bool,
) -> tuple[list[int], list[float] | None]:
    """The output shape (from `sizes` or `scales`) and the scale of every axis when
    coordinates must be mapped with it rather than the output / input size ratio."""
    if not legacy and node.input(3):
        return _policy_sizes(node, shape, axes, imp.const_ints(node, 3, "sizes"))
    given = _given_scales(imp, node, 1 if legacy else 2, axes)
    scales = _place(given, axes, [1.0] * len(shape))
    sizes = [int(np.floor(d * s)) for d, s in zip(shape, scales, strict=True)]
    whole = all(
        abs(d * s - o) <= _WHOLE for d, s, o in zip(shape, scales, sizes, strict=True)
    )
    # tf_crop_and_resize tests the extent the scale gives for exactly 1: keep it.
    return sizes, None if whole and not crop else scales


def _region(
    imp: Importer, node: Node, rank: int, axes: list[int]
) -> tuple[list[float], list[float]]:
    """tf_crop_and_resize's region of interest (input 1) as (starts, ends) per axis."""
    values = imp.const(node.input(1))
    if values is None:
        raise node.fail("roi (input 1) must be a constant for tf_crop_and_resize")
    roi = [float(v) for v in np.asarray(values).reshape(-1)]
    if len(roi) != 2 * len(axes):
        raise node.fail(
            f"roi has {len(roi)} values, tf_crop_and_resize of {len(axes)} axes"
        )
    if not all(math.isfinite(v) for v in roi):
        raise node.fail(f"roi {roi} must be finite")
    starts = _place(roi[: len(axes)], axes, [0.0] * rank)
    ends = _place(roi[len(axes) :], axes, [1.0] * rank)
    return starts, ends


def _refuse_batch_or_channel_resize(
    node: Node,
    shape: tuple[int, ...],
    sizes: list[int],
    scales: list[float] | None,
    region: tuple[list[float], list[float]],
) -> None:
    """Refuse a resize of N or C: each must keep its size, at scale 1 (or size 1,
    which any scale keeps), over its whole range."""
    starts, ends = region
    for a in (0, 1):
        kept = sizes[a] == shape[a] and (
            shape[a] == 1 or scales is None or math.isclose(scales[a], 1.0)
        )
        whole_range = (starts[a], ends[a]) == (0.0, 1.0)
        if not kept or not whole_range:
            raise node.fail(
                f"only the spatial (H, W) axes can be resized: axis {a} of {list(shape)} "
                f"goes to size {sizes[a]}"
                + (f" at scale {scales[a]:g}" if scales is not None else "")
                + (f" over roi [{starts[a]:g}, {ends[a]:g}]" if not whole_range else "")
            )


def _interpolation(node: Node) -> dict[str, object]:
    """The interpolation properties: mode, cubic_coeff_a, exclude_outside, antialias."""
    mode = node.attr("mode", "nearest")
    if mode not in _MODES:
        raise node.fail(f"mode '{mode}' is not supported")
    antialias = bool(node.attr("antialias", 0))
    if antialias and mode == "nearest":
        raise node.fail("antialias applies to linear and cubic modes, not nearest")
    a = float(node.attr("cubic_coeff_a", -0.75))
    extrapolation = float(node.attr("extrapolation_value", 0.0))
    if not (math.isfinite(a) and math.isfinite(extrapolation)):
        raise node.fail(
            f"cubic_coeff_a {a} and extrapolation_value {extrapolation} must be finite"
        )
    return {
        "mode": _MODES[mode],
        "cubic_coeff_a": a,
        "exclude_outside": bool(node.attr("exclude_outside", 0)),
        "antialias": antialias,
        "extrapolation_value": extrapolation,
    }


@converts("Resize", "Upsample", quantized=_input)
def resize(imp: Importer, node: Node) -> None:
    """Resize / Upsample of the H and W of an NCHW tensor as `synap.resize`."""
    x = node.inputs[0]
    shape = imp.shape(x)
    if len(shape) != 4:
        raise node.fail(f"only 4-D (NCHW) resizing is supported, input rank {len(shape)}")
    props = _interpolation(node)
    rank = len(shape)
    axes = [node.axis(a, rank) for a in node.ints_attr("axes", range(rank))]
    if len(set(axes)) != len(axes):
        raise node.fail(f"axes {axes} repeat an axis")
    legacy = node.op_type == "Upsample" or node.opset < 11
    coordinates = "asymmetric" if legacy else node.attr("coordinate_transformation_mode")
    coordinates = coordinates or "half_pixel"
    if coordinates not in _COORDINATES:
        raise node.fail(f"coordinate_transformation_mode '{coordinates}' is not supported")
    crop = coordinates == "tf_crop_and_resize"
    starts, ends = _region(imp, node, rank, axes) if crop else ([0.0] * rank, [1.0] * rank)
    sizes, scales = _output_shape(imp, node, shape, axes, legacy, crop)
    _refuse_batch_or_channel_resize(node, shape, sizes, scales, (starts, ends))
    nearest = node.attr("nearest_mode", "round_prefer_floor")
    if legacy:
        nearest = "floor"
    if nearest not in {r.value for r in NearestRounding}:
        raise node.fail(f"nearest_mode '{nearest}' is not supported")
    if scales is not None:
        props["scales"] = f32_values(scales[2:])
    if crop:
        props["roi"] = f32_values([starts[2], starts[3], ends[2], ends[3]])
    cl = layout.channels_last(4)
    value = imp.get(x, cl, quantized=node.quantized)
    physical = layout.physical_shape(sizes, cl)
    imp.emit(
        node,
        ResizeOp,
        value,
        perm=cl,
        result_types=[TensorType(element_of(value), physical)],
        coordinate_mode=_COORDINATES[coordinates],
        nearest_rounding=NearestRounding(nearest),
        **props,
    )
