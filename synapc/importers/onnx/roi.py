"""ONNX `RoiAlign` as `synap.roi_align` on the NHWC feature map.

The op samples each bin on a fixed grid. With ``sampling_ratio > 0`` the grid is
``sampling_ratio`` squared for every box. With ``sampling_ratio = 0`` ONNX adapts the
grid to each box (``ceil(box extent / bins)`` per axis), which is known only when the
boxes are constants: then the boxes are grouped by grid, one op per group, and the
results are put back in box order; boxes given at run time are refused (a static graph
cannot choose its sample count at run time). A box whose grid is empty (a zero-size or
inverted box with `half_pixel`) samples nothing: ONNX gives zeros for it, so its group
is a constant zero block.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from synapc.dialects.synap.base import is_float
from synapc.dialects.synap.data_movement import ConcatOp, GatherOp
from synapc.dialects.synap.roi import RoiAlignOp
from synapc.dtypes import numpy_dtype
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import Importer, Node, converts

_MODES = ("avg", "max")
_TRANSFORMS = ("half_pixel", "output_half_pixel")


def adaptive_grids(
    rois: np.ndarray, scale: float, half_pixel: bool, bins: tuple[int, int]
) -> np.ndarray:
    """ONNX's per-box sampling grid ``[R, 2]`` (rows, columns) for
    ``sampling_ratio = 0``: ``ceil(extent / bins)`` of the scaled box (at least 1x1
    without `half_pixel`). A grid with no sample on either axis (a zero-size or inverted
    box with `half_pixel`) is ``[0, 0]``: ONNX outputs zeros for that box."""
    box = rois.astype(np.float32) * np.float32(scale)
    extent = np.stack([box[:, 3] - box[:, 1], box[:, 2] - box[:, 0]], axis=1)
    if not half_pixel:
        extent = np.maximum(extent, 1.0)
    grids = np.ceil(extent / np.asarray(bins, np.float32)).astype(np.int64)
    empty = (grids <= 0).any(axis=1, keepdims=True)
    return np.where(empty, 0, grids)


def _attrs(node: Node) -> dict[str, Any]:
    """The node's attributes as `synap.roi_align` properties (grid aside)."""
    mode = node.attr("mode", "avg")
    if mode not in _MODES:
        raise node.fail(f"attribute 'mode' must be 'avg' or 'max', got {mode!r}")
    default = "output_half_pixel" if node.opset < 16 else "half_pixel"
    transform = node.attr("coordinate_transformation_mode", default)
    if transform not in _TRANSFORMS:
        raise node.fail(
            f"attribute 'coordinate_transformation_mode' must be 'half_pixel' or "
            f"'output_half_pixel', got {transform!r}"
        )
    sizes = [node.int_attr(k, 1) for k in ("output_height", "output_width")]
    if min(sizes) < 1:
        raise node.fail(f"output_height and output_width must be positive, got {sizes}")
    scale = node.attr("spatial_scale", 1.0)
    if not isinstance(scale, float) or not math.isfinite(scale):
        raise node.fail(f"attribute 'spatial_scale' must be a finite float, got {scale!r}")
    return {
        "output_height": sizes[0],
        "output_width": sizes[1],
        "spatial_scale": scale,
        "use_max": mode == "max",
        "half_pixel": transform == "half_pixel",
    }


def _check_operands(imp: Importer, node: Node) -> tuple[str, str, str]:
    """X (float, 4-D), rois ([R, 4], X's type) and batch_indices ([R] integers)."""
    if len(node.inputs) != 3 or None in (node.input(i) for i in range(3)):
        raise node.fail("RoiAlign takes X, rois and batch_indices")
    x, rois, indices = node.inputs
    element = imp.element_type(x)
    if not is_float(element) or imp.rank(x) != 4:
        raise node.fail(f"X '{shown(x)}' must be a 4-D float tensor (N, C, H, W)")
    boxes = imp.shape(rois)
    if len(boxes) != 2 or boxes[1] != 4 or imp.element_type(rois) != element:
        raise node.fail(f"rois '{shown(rois)}' must be [num_rois, 4] of X's type {element}")
    index_element = imp.element_type(indices)
    integer = isinstance(index_element, IntegerType) and index_element.width.data > 1
    if imp.shape(indices) != boxes[:1] or not integer:
        raise node.fail(
            f"batch_indices '{shown(indices)}' must be [{boxes[0]}] integers, got "
            f"{list(imp.shape(indices))} {index_element}"
        )
    return x, rois, indices


def _take(imp: Importer, node: Node, value: SSAValue, rows: np.ndarray) -> SSAValue:
    """Rows `rows` of `value` (axis 0), by a gather with constant indices."""
    name = f"{node.outputs[0]}#rows{len(imp.ops)}"
    imp.bind_const(name, rows.astype(np.int32))
    return imp.append(GatherOp.make(value, imp.get(name), axis=0, **node.source))


def _zeros(
    imp: Importer, node: Node, x_name: str, count: int, props: dict[str, Any]
) -> SSAValue:
    """The output of `count` boxes that sample nothing: zeros of X's type, NHWC."""
    channels = imp.shape(x_name)[1]
    shape = (count, channels, props["output_height"], props["output_width"])
    name = f"{node.outputs[0]}#empty_boxes"
    imp.bind_const(name, np.zeros(shape, numpy_dtype(imp.element_type(x_name))))
    return imp.get(name, layout.channels_last(4))


@converts("RoiAlign")
def roi_align(imp: Importer, node: Node) -> None:
    """RoiAlign: one `synap.roi_align` per sampling grid (see the module docstring)."""
    x_name, rois_name, indices_name = _check_operands(imp, node)
    props = _attrs(node)
    ratio = node.int_attr("sampling_ratio", 0)
    if ratio < 0:
        raise node.fail(f"attribute 'sampling_ratio' must be 0 or more, got {ratio}")
    x = imp.get(x_name, layout.channels_last(4))
    rois, indices = imp.get(rois_name), imp.get(indices_name)
    count = imp.shape(rois_name)[0]
    if ratio > 0:
        grids = np.full((count, 2), ratio, np.int64)
    else:
        boxes = imp.const(rois_name)
        if boxes is None:
            raise node.fail(
                f"sampling_ratio 0 (a grid per box) needs constant rois; rois "
                f"'{shown(rois_name)}' is computed at run time: set sampling_ratio > 0"
            )
        bins = (props["output_height"], props["output_width"])
        if not np.isfinite(boxes).all():
            raise node.fail(f"rois '{shown(rois_name)}' holds non-finite coordinates")
        grids = adaptive_grids(
            np.asarray(boxes), props["spatial_scale"], props["half_pixel"], bins
        )
    distinct, group_of = np.unique(grids, axis=0, return_inverse=True)
    group_of = group_of.reshape(-1)
    parts = []
    for k, (grid_h, grid_w) in enumerate(distinct.tolist()):
        rows = np.flatnonzero(group_of == k)
        part_rois, part_indices = rois, indices
        if len(distinct) > 1:
            part_rois = _take(imp, node, rois, rows)
            part_indices = _take(imp, node, indices, rows)
        if grid_h == 0:
            parts.append(_zeros(imp, node, x_name, len(rows), props))
            continue
        op = RoiAlignOp.make(
            x, part_rois, part_indices, grid_h=grid_h, grid_w=grid_w, **props, **node.source
        )
        imp.check_results(op, node)
        parts.append(imp.append(op))
    result = parts[0]
    if len(parts) > 1:
        joined = imp.append(ConcatOp.make(parts, axis=0, **node.source))
        order = np.argsort(
            np.concatenate([np.flatnonzero(group_of == k) for k in range(len(distinct))]),
            kind="stable",
        )
        result = _take(imp, node, joined, order)
    imp.bind_output(node, result, layout.channels_last(4))
