"""ONNX GridSample as `synap.grid_sample`, AffineGrid as a matrix product with a
constant base grid, and DeformConv as `synap.deform_conv2d`."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType

from synapc.dialects.synap.base import element_of, is_float
from synapc.dialects.synap.conv import MatMulOp
from synapc.dialects.synap.sampling import (
    DeformConv2DOp,
    GridSampleOp,
    SampleMode,
    SampleModeAttr,
    SamplePadding,
    SamplePaddingAttr,
)
from synapc.dtypes import numpy_dtype
from synapc.importers.onnx import layout
from synapc.importers.onnx.helpers import to_2d, window_attrs
from synapc.importers.onnx.reader import Importer, Node, converts

#: GridSample's mode names (opset 16 spelled the interpolations bilinear and bicubic).
_MODES = {
    "linear": SampleMode.LINEAR,
    "bilinear": SampleMode.LINEAR,
    "nearest": SampleMode.NEAREST,
    "cubic": SampleMode.CUBIC,
    "bicubic": SampleMode.CUBIC,
}


def _require_float(imp: Importer, node: Node, name: str, what: str) -> None:
    """Refuse a non-floating-point input (interpolation computes real values)."""
    element = imp.element_type(name)
    if not is_float(element):
        raise node.fail(f"{what} must be floating-point, got {element}")


def _align_corners(node: Node) -> bool:
    """The `align_corners` attribute, which must be 0 or 1."""
    value = node.int_attr("align_corners", 0)
    if value not in (0, 1):
        raise node.fail(f"attribute 'align_corners' must be 0 or 1, got {value}")
    return bool(value)


@converts("GridSample")
def grid_sample(imp: Importer, node: Node) -> None:
    """X (N, C, *S) sampled at Grid (N, *O, len(S)): channels-last sampling."""
    x, grid = node.input(0), node.input(1)
    if x is None or grid is None:
        raise node.fail("needs inputs X and grid")
    rank = imp.rank(x)
    if rank not in (4, 5):
        raise node.fail(f"X must have rank 4 or 5 (2 or 3 spatial axes), got rank {rank}")
    mode = node.attr("mode", "linear")
    if mode not in _MODES:
        raise node.fail(f"mode '{mode}' is not supported")
    if _MODES[mode] == SampleMode.CUBIC and rank != 4:
        raise node.fail(f"mode '{mode}' is defined for 4-D X only, got rank {rank}")
    padding = node.attr("padding_mode", "zeros")
    if padding not in {p.value for p in SamplePadding}:
        raise node.fail(f"padding_mode '{padding}' is not supported")
    _require_float(imp, node, x, "X")
    _require_float(imp, node, grid, "grid")
    grid_shape = imp.shape(grid)
    if (
        len(grid_shape) != rank
        or grid_shape[-1] != rank - 2
        or grid_shape[0] != imp.shape(x)[0]
    ):
        raise node.fail(
            f"grid of shape {list(grid_shape)} does not fit X of shape {list(imp.shape(x))}"
        )
    cl = layout.channels_last(rank)
    imp.emit(
        node,
        GridSampleOp,
        imp.get(x, cl),
        imp.get(grid),
        perm=cl,
        mode=SampleModeAttr(_MODES[mode]),
        padding=SamplePaddingAttr(SamplePadding(padding)),
        align_corners=_align_corners(node),
    )


def _base_axis(size: int, align_corners: bool) -> np.ndarray:
    """Normalized coordinates of the pixels of an axis of `size` pixels: their centres
    spread over ``[-1, 1]`` with `align_corners`, else over the edges of that range."""
    if align_corners:
        if size == 1:
            return np.full(1, -1.0)
        return -1.0 + 2.0 * np.arange(size) / (size - 1)
    return -1.0 + (2.0 * np.arange(size) + 1.0) / size


def base_grid(sizes: list[int], align_corners: bool) -> np.ndarray:
    """The homogeneous coordinates ``(x, y[, z], 1)`` of every output position, x along
    the last axis, as a ``(prod(sizes), len(sizes) + 1)`` array."""
    axes = [_base_axis(s, align_corners) for s in sizes]
    mesh = np.meshgrid(*axes, indexing="ij")
    columns = [m.reshape(-1) for m in reversed(mesh)]
    columns.append(np.ones(int(np.prod(sizes))))
    return np.stack(columns, axis=1)


@converts("AffineGrid")
def affine_grid(imp: Importer, node: Node) -> None:
    """theta (N, r, r + 1) applied to the base grid of a constant size ``(N, C, *S)``."""
    theta = node.input(0)
    if theta is None or node.input(1) is None:
        raise node.fail("needs inputs theta and size")
    size = imp.const_ints(node, 1, "size")
    if len(size) not in (4, 5):
        raise node.fail(f"size {size} must have 4 or 5 values (2-D or 3-D)")
    if any(s < 1 for s in size):
        raise node.fail(f"size {size} must be positive")
    spatial = len(size) - 2
    shape = imp.shape(theta)
    if shape != (size[0], spatial, spatial + 1):
        raise node.fail(
            f"theta of shape {list(shape)} should be {[size[0], spatial, spatial + 1]} "
            f"for size {size}"
        )
    _require_float(imp, node, theta, "theta")
    element = imp.element_type(theta)
    points = base_grid(size[2:], _align_corners(node))
    name = f"{imp.out_name(node)}::base_grid"
    imp.bind_const(name, points[None].astype(numpy_dtype(element)))
    product = imp.emit(
        node, MatMulOp, imp.get(name), imp.get(theta), output=None, transpose_rhs=True
    )
    value = product.results[0]
    grid = imp.reshape(value, (size[0], *size[2:], spatial), **node.source)
    assert isinstance(value.type, TensorType) and element_of(value) == element
    imp.bind(imp.out_name(node), grid)


@converts("DeformConv")
def deform_conv(imp: Importer, node: Node) -> None:
    """A 2-D deformable convolution as `synap.deform_conv2d` on NHWC tensors (an absent
    mask is a constant of ones)."""
    x, w, offset = node.input(0), node.input(1), node.input(2)
    if x is None or w is None or offset is None:
        raise node.fail("needs inputs X, W and offset")
    rank = imp.rank(x)
    if rank != 4:
        raise node.fail(f"only 2-D deformable convolution is supported, X rank {rank}")
    bias, mask = node.input(3), node.input(4)
    for name, what in ((x, "X"), (w, "W"), (offset, "offset"), (bias, "B"), (mask, "mask")):
        if name is not None:
            _require_float(imp, node, name, what)
            if imp.element_type(name) != imp.element_type(x):
                raise node.fail(f"{what} must have the element type of X")
    x_shape, w_shape = imp.shape(x), imp.shape(w)
    if len(w_shape) != 4:
        raise node.fail(f"W of shape {list(w_shape)} must have rank 4")
    strides, dilations, pads = window_attrs(node, x_shape[2:], w_shape[2:])
    group = node.int_attr("group", 1)
    offset_groups = node.int_attr("offset_group", 1)
    cl = layout.channels_last(4)
    n, o_h, o_w = imp.shape(offset)[0], *imp.shape(offset)[2:]
    if mask is not None:
        mask_value = imp.get(mask, cl)
    else:
        taps = offset_groups * w_shape[2] * w_shape[3]
        ones = np.ones((n, o_h, o_w, taps), numpy_dtype(imp.element_type(x)))
        name = f"{imp.out_name(node)}::mask"
        imp.bind_const(name, ones)
        mask_value = imp.get(name)
    imp.emit(
        node,
        DeformConv2DOp,
        imp.get(x, cl),
        imp.get(w, (0, 2, 3, 1)),
        imp.get(offset, cl),
        mask_value,
        None if bias is None else imp.get(bias),
        perm=cl,
        strides=strides,
        dilations=dilations,
        pad=to_2d(pads),
        groups=group,
        offset_groups=offset_groups,
    )
