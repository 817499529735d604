"""Spatial resizing of NHWC tensors."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, f32
from xdsl.irdl import irdl_op_definition, opt_prop_def

from synapc.dialects.synap.attributes import (
    CoordinateMode,
    CoordinateModeAttr,
    NearestRounding,
    NearestRoundingAttr,
    ResizeMode,
    ResizeModeAttr,
)
from synapc.dialects.synap.base import bool_prop, enum_prop, float_prop, shape_of
from synapc.dialects.synap.data_movement import _ShapedByResult


def f32_values(values: list[float] | tuple[float, ...]) -> ArrayAttr[FloatAttr]:
    """The `scales` / `roi` property value holding `values`."""
    return ArrayAttr([FloatAttr(float(v), f32) for v in values])


def floats_of(attr: ArrayAttr[FloatAttr] | None) -> tuple[float, ...] | None:
    """The floats of a `scales` / `roi` property (None when it is absent)."""
    if attr is None:
        return None
    return tuple(float(a.value.data) for a in attr.data)


@irdl_op_definition
class ResizeOp(_ShapedByResult):
    """Resize H and W of an NHWC tensor to the result's H and W.

    `coordinate_mode` maps output pixels to input coordinates (align-corners,
    half-pixel, ...); `nearest_rounding` picks the source pixel in nearest mode.

    ONNX's remaining parameters, all elided at their defaults: `scales` (H, W) is the
    scale coordinates are mapped with when it is not the output / input size ratio (a
    scale that does not give a whole output size); `cubic_coeff_a` is the cubic kernel's
    A; `exclude_outside` gives taps outside the input weight 0 (the others renormalized);
    `antialias` stretches the linear / cubic kernel by 1 / scale when downsampling; `roi`
    ([h0, w0, h1, w1], normalized; absent: the whole input) is the region
    tf_crop_and_resize samples, and outputs mapped outside the input take
    `extrapolation_value`."""

    name = "synap.resize"

    mode = enum_prop(ResizeModeAttr, ResizeMode.NEAREST)
    coordinate_mode = enum_prop(CoordinateModeAttr, CoordinateMode.HALF_PIXEL)
    nearest_rounding = enum_prop(NearestRoundingAttr, NearestRounding.ROUND_PREFER_FLOOR)
    scales = opt_prop_def(ArrayAttr.constr(FloatAttr.constr(f32)))
    cubic_coeff_a = float_prop(-0.75)
    exclude_outside = bool_prop(False)
    antialias = bool_prop(False)
    roi = opt_prop_def(ArrayAttr.constr(FloatAttr.constr(f32)))
    extrapolation_value = float_prop(0.0)

    def scale_values(self) -> tuple[float, float] | None:
        """The (H, W) coordinate scales when given, else None (the size ratios)."""
        values = floats_of(self.scales)
        return None if values is None else (values[0], values[1])

    def roi_values(self) -> tuple[float, float, float, float] | None:
        """The region of interest [h0, w0, h1, w1] when given, else None."""
        values = floats_of(self.roi)
        return None if values is None else (values[0], values[1], values[2], values[3])

    def verify_semantics(self) -> None:
        before, after = shape_of(self.input), shape_of(self.output)
        if len(before) != 4 or len(after) != 4:
            self.fail(
                f"input and result must be NHWC (rank 4), got {list(before)} -> "
                f"{list(after)}"
            )
        if (before[0], before[3]) != (after[0], after[3]):
            self.fail(
                f"batch and channels must not change: {list(before)} -> {list(after)}"
            )
        self._verify_parameters()

    def _verify_parameters(self) -> None:
        """The ONNX parameters: finite numbers, two positive scales consistent with
        the sizes, a four-value roi for tf_crop_and_resize coordinates only, antialias
        only where a kernel stretches."""
        p = self.props()
        scales = floats_of(self.scales)
        if scales is not None and (
            len(scales) != 2 or not all(math.isfinite(s) and s > 0 for s in scales)
        ):
            self.fail(f"scales must be two positive finite numbers (H, W), got {scales}")
        if scales is not None:
            before, after = shape_of(self.input), shape_of(self.output)
            for scale, size_in, size_out in zip(
                scales, before[1:3], after[1:3], strict=True
            ):
                if not abs(scale * size_in - size_out) < 1:
                    self.fail(
                        f"scales {list(scales)} do not give the result's height and width "
                        f"{list(after[1:3])} from {list(before[1:3])}"
                    )
        for name in ("cubic_coeff_a", "extrapolation_value"):
            if not math.isfinite(p[name]):
                self.fail(f"{name} must be finite, got {p[name]}")
        roi = floats_of(self.roi)
        crop = p["coordinate_mode"] == CoordinateMode.TF_CROP_AND_RESIZE
        if roi is not None:
            if not crop:
                self.fail(
                    f"a roi is only used by tf_crop_and_resize, not {p['coordinate_mode']}"
                )
            if len(roi) != 4 or not all(math.isfinite(v) for v in roi):
                self.fail(f"roi must be four finite numbers [h0, w0, h1, w1], got {roi}")
        if p["antialias"] and p["mode"] == ResizeMode.NEAREST:
            self.fail("antialias applies to bilinear and cubic resizing, not nearest")


OPS = [ResizeOp]
