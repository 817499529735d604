"""ONNX Resize and Upsample of the spatial axes as a synap NHWC resize."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType

from synapc.dialects.synap.attributes import CoordinateMode, NearestRounding, ResizeMode
from synapc.dialects.synap.base import element_of
from synapc.dialects.synap.resize import ResizeOp
from synapc.importers.onnx import layout
from synapc.importers.onnx.reader import Importer, Node, converts

_MODES = {
    "nearest": ResizeMode.NEAREST,
    "linear": ResizeMode.BILINEAR,
    "bilinear": ResizeMode.BILINEAR,
}
_COORDINATES = {
    "half_pixel": CoordinateMode.HALF_PIXEL,
    "asymmetric": CoordinateMode.ASYMMETRIC,
    "align_corners": CoordinateMode.ALIGN_CORNERS,
    "pytorch_half_pixel": CoordinateMode.PYTORCH_HALF_PIXEL,
}


def _input(node: Node) -> list[str | None]:
    return node.inputs[:1]


def _full_sizes(
    node: Node, shape: tuple[int, ...], axes: list[int], given: list[int]
) -> list[int]:
    """The output shape from `sizes` of the `axes`, with `keep_aspect_ratio_policy`
    applied; the implied scale of each axis must be its output / input ratio."""
    if len(given) != len(axes):
        raise node.fail(f"{len(given)} sizes for {len(axes)} axes")
    if any(s < 1 for s in given):
        raise node.fail(f"sizes {given} must be positive")
    sizes = list(shape)
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if policy == "stretch":
        for a, size in zip(axes, given, strict=True):
            sizes[a] = size
        return sizes
    if policy not in ("not_larger", "not_smaller"):
        raise node.fail(f"keep_aspect_ratio_policy '{policy}' is not supported")
    ratios = [size / shape[a] for a, size in zip(axes, given, strict=True)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    for a in axes:
        sizes[a] = int(np.floor(scale * shape[a] + 0.5))
        if abs(sizes[a] - scale * shape[a]) > 1e-6:
            raise node.fail(
                f"keep_aspect_ratio_policy '{policy}' gives scale {scale:.6g}, which "
                f"does not give a whole output size for axis {a} of {list(shape)}"
            )
    return sizes


@converts("Resize", "Upsample", quantized=_input)
def resize(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    shape = imp.shape(x)
    if len(shape) != 4:
        raise node.fail(f"only 4-D (NCHW) resizing is supported, input rank {len(shape)}")
    mode = node.attr("mode", "nearest")
    if mode not in _MODES:
        raise node.fail(f"mode '{mode}' is not supported")
    if node.attr("antialias", 0):
        raise node.fail("antialias is not supported")
    rank = len(shape)
    axes = [node.axis(a, rank) for a in node.ints_attr("axes", range(rank))]
    if len(set(axes)) != len(axes):
        raise node.fail(f"axes {axes} repeat an axis")
    if node.op_type == "Upsample" or node.opset < 11:
        coordinates = "asymmetric"
        scales_index = 1
        sizes = None
    else:
        coordinates = node.attr("coordinate_transformation_mode", "half_pixel")
        scales_index = 2
        sizes = imp.const_ints(node, 3, "sizes") if node.input(3) else None
    if coordinates not in _COORDINATES:
        raise node.fail(f"coordinate_transformation_mode '{coordinates}' is not supported")
    if sizes is not None:
        sizes = _full_sizes(node, shape, axes, sizes)
    else:
        if node.op_type == "Upsample" and node.opset < 9:
            given = [float(s) for s in node.attr("scales", [])]
        else:
            values = imp.const(node.input(scales_index))
            if values is None:
                raise node.fail(f"scales (input {scales_index}) must be a constant")
            given = [float(s) for s in np.asarray(values).reshape(-1)]
        if len(given) != len(axes):
            raise node.fail(f"{len(given)} scales for {len(axes)} axes")
        if not all(np.isfinite(s) and s > 0 for s in given):
            raise node.fail(f"scales {given} must be positive numbers")
        scales = [1.0] * rank
        for a, scale in zip(axes, given, strict=True):
            scales[a] = scale
        sizes = [int(np.floor(d * s)) for d, s in zip(shape, scales, strict=True)]
        if any(abs(d * s - o) > 1e-6 for d, s, o in zip(shape, scales, sizes, strict=True)):
            raise node.fail(
                f"scales {given} do not give whole output sizes for {list(shape)}"
            )
    if sizes[0] != shape[0] or sizes[1] != shape[1]:
        raise node.fail("only the spatial (H, W) axes can be resized")
    nearest = node.attr("nearest_mode", "round_prefer_floor")
    if node.op_type == "Upsample" or node.opset < 11:
        nearest = "floor"
    cl = layout.channels_last(4)
    value = imp.get(x, cl, quantized=node.quantized)
    physical = layout.physical_shape(sizes, cl)
    imp.emit(
        node,
        ResizeOp,
        value,
        perm=cl,
        result_types=[TensorType(element_of(value), physical)],
        mode=_MODES[mode],
        coordinate_mode=_COORDINATES[coordinates],
        nearest_rounding=NearestRounding(nearest),
    )
