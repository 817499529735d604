"""Kernel of `dialects/synap/roi.py`: `synap.roi_align`.

Bilinear sampling is separable: each sample's four corner weights are a row weight
times a column weight, and a sample outside ``[-1, size]`` in either direction has
weight 0. Per box, the rows of its image at the sample heights are gathered, then the
columns at the sample widths, giving ``[out_h, grid_h, out_w, grid_w, C]`` per corner."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from synapc.backends.jax.lowering import LoweringContext, kernel, op_check
from synapc.dialects.synap.base import shape_of
from synapc.dialects.synap.roi import RoiAlignOp


@op_check(RoiAlignOp)
def _check(op: RoiAlignOp) -> list[tuple[str, tuple[int, ...]]]:
    """The four corner tensors of all samples are intermediates."""
    props = op.props()
    boxes = shape_of(op.rois)[0]
    channels = shape_of(op.input)[3]
    samples = (boxes, props["output_height"], props["grid_h"], props["output_width"])
    return [("RoiAlign samples", (*samples, props["grid_w"], channels))]


def _axis_taps(
    start: jax.Array, extent: jax.Array, bins: int, grid: int, size: int
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Low / high indices and weights ``[R, bins, grid]`` of the samples along one axis
    of `size` for boxes starting at `start` and `extent` long."""
    step = extent / bins
    offsets = jnp.arange(bins)[:, None] + (jnp.arange(grid)[None, :] + 0.5) / grid
    pos = start[:, None, None] + offsets[None] * step[:, None, None]
    inside = (pos >= -1.0) & (pos <= size)
    pos = jnp.maximum(pos, 0.0)
    low = jnp.floor(pos).astype(jnp.int32)
    edge = low >= size - 1
    low = jnp.where(edge, size - 1, low)
    high = jnp.where(edge, size - 1, low + 1)
    frac = jnp.where(edge, 0.0, pos - low)
    return low, high, jnp.where(inside, 1.0 - frac, 0.0), jnp.where(inside, frac, 0.0)


@kernel(RoiAlignOp)
def roi_align(
    op: RoiAlignOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """RoiAlign in at least float32 (ONNX's reference arithmetic, vectorized)."""
    props = op.props()
    x, rois, batch = args
    compute = jnp.promote_types(x.dtype, jnp.float32)
    x, rois = x.astype(compute), rois.astype(compute)
    _, height, width, _ = x.shape
    shift = 0.5 if props["half_pixel"] else 0.0
    box = rois * props["spatial_scale"] - shift
    extent_w, extent_h = box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]
    if not props["half_pixel"]:
        extent_w, extent_h = jnp.maximum(extent_w, 1.0), jnp.maximum(extent_h, 1.0)
    oh, ow, gh, gw = (
        props[k] for k in ("output_height", "output_width", "grid_h", "grid_w")
    )
    ys = _axis_taps(box[:, 1], extent_h, oh, gh, height)
    xs = _axis_taps(box[:, 0], extent_w, ow, gw, width)

    def one_box(
        image_index: jax.Array,
        y: tuple[jax.Array, ...],
        xx: tuple[jax.Array, ...],
    ) -> jax.Array:
        image = x[image_index]
        y_lo, y_hi, wy_lo, wy_hi = y
        x_lo, x_hi, wx_lo, wx_hi = xx
        wy = [w[:, :, None, None, None] for w in (wy_lo, wy_hi)]
        wx = [w[None, None, :, :, None] for w in (wx_lo, wx_hi)]
        corners = [
            wy[i] * wx[j] * image[rows][:, :, cols]
            for i, rows in enumerate((y_lo, y_hi))
            for j, cols in enumerate((x_lo, x_hi))
        ]
        if props["use_max"]:
            best = jnp.maximum(
                jnp.maximum(corners[0], corners[1]), jnp.maximum(*corners[2:])
            )
            return best.max(axis=(1, 3))
        return sum(corners).sum(axis=(1, 3)) / (gh * gw)

    result = jax.vmap(one_box)(batch.astype(jnp.int32), ys, xs)
    return [result.astype(ctx.dtype_of(op.output))]
