"""Preprocessing of camera and decoder frames inside the graph (metafile `preprocess`).

`synap.yuv_to_rgb` converts the uint8 planes of a YUV frame to an RGB (or BGR) image, and
`synap.crop_resize` resizes an image, or a crop rectangle of it given at run time, to a
fixed size. Both compute what OpenCV computes (`cv2.cvtColor`, `cv2.resize`), so a model
converted with preprocessing sees the pixels it would see from the usual OpenCV pipeline.
Everything else the metafile's preprocessing does (channel reorder, normalization, type
conversion, layout) is composed from the other synap ops.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import IntegerType, Signedness, TensorType, f32
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.str_enum import StrEnum

from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    enum_prop,
    int_array_prop,
    shape_of,
)
from synapc.dialects.synap.shapes import ShapeError

#: The element type of image planes and of the colour converter's result.
UI8 = IntegerType(8, Signedness.UNSIGNED)
#: The element type of the crop scalars.
I32 = IntegerType(32)


class YuvFormat(StrEnum):
    """How the planes of a YUV frame are laid out (N x H x W luma in all of them).

    ``yuv444``: Y, U, V planes of N x H x W x 1; ``yuv420`` (I420): Y, then U and V of
    N x H/2 x W/2 x 1; ``nv12``: Y, then U and V interleaved in one N x H/2 x W/2 x 2
    plane; ``nv21``: as nv12 with V first. In the 4:2:0 formats each chroma sample
    covers a 2 x 2 block of luma."""

    YUV444 = "yuv444"
    YUV420 = "yuv420"
    NV12 = "nv12"
    NV21 = "nv21"

    @property
    def subsampled(self) -> bool:
        """Whether chroma has half the luma's height and width (4:2:0)."""
        return self != YuvFormat.YUV444

    @property
    def plane_count(self) -> int:
        """How many planes (operands) the format has."""
        return 2 if self in (YuvFormat.NV12, YuvFormat.NV21) else 3


@irdl_attr_definition
class YuvFormatAttr(EnumAttribute[YuvFormat], SpacedOpaqueSyntaxAttribute):
    """The plane layout of `synap.yuv_to_rgb`."""

    name = "synap.yuv_format"


class ColorRange(StrEnum):
    """``limited``: Y in [16, 235] and chroma in [16, 240] (video, the default);
    ``full``: all three in [0, 255] (JPEG)."""

    LIMITED = "limited"
    FULL = "full"


@irdl_attr_definition
class ColorRangeAttr(EnumAttribute[ColorRange], SpacedOpaqueSyntaxAttribute):
    """The value range of `synap.yuv_to_rgb`'s input."""

    name = "synap.color_range"


class ColorMatrix(StrEnum):
    """The YUV -> RGB matrix: ITU-R BT.601 (standard definition, the default) or
    ITU-R BT.709 (high definition)."""

    BT601 = "bt601"
    BT709 = "bt709"


@irdl_attr_definition
class ColorMatrixAttr(EnumAttribute[ColorMatrix], SpacedOpaqueSyntaxAttribute):
    """The colour matrix of `synap.yuv_to_rgb`."""

    name = "synap.color_matrix"


class CropResizeMode(StrEnum):
    """Interpolation of `synap.crop_resize`: OpenCV's INTER_LINEAR or INTER_NEAREST."""

    BILINEAR = "bilinear"
    NEAREST = "nearest"


@irdl_attr_definition
class CropResizeModeAttr(EnumAttribute[CropResizeMode], SpacedOpaqueSyntaxAttribute):
    """The interpolation of `synap.crop_resize`."""

    name = "synap.crop_resize_mode"


def yuv_planes(planes: list[Shape], fmt: YuvFormat) -> Shape:
    """The N x H x W x 3 image the planes of a `fmt` frame give; raises ShapeError when
    their number or shapes do not fit the format (4:2:0 needs even H and W and chroma of
    half the luma's height and width)."""
    if len(planes) != fmt.plane_count:
        raise ShapeError(f"{fmt} takes {fmt.plane_count} planes, got {len(planes)}")
    if any(len(p) != 4 for p in planes):
        raise ShapeError(f"planes must be NHWC (rank 4), got {[list(p) for p in planes]}")
    n, h, w, c = planes[0]
    if c != 1:
        raise ShapeError(f"the Y plane must have 1 channel, got {list(planes[0])}")
    if fmt.subsampled and (h % 2 or w % 2):
        raise ShapeError(f"{fmt} needs an even height and width, got {h} x {w}")
    chroma = (n, h // 2, w // 2) if fmt.subsampled else (n, h, w)
    depth = 2 if fmt.plane_count == 2 else 1
    roles = ("uv" if fmt == YuvFormat.NV12 else "vu",) if depth == 2 else ("u", "v")
    for role, plane in zip(roles, planes[1:], strict=True):
        if tuple(plane) != (*chroma, depth):
            raise ShapeError(
                f"the {role} plane of {fmt} with a Y plane of {list(planes[0])} must be "
                f"{[*chroma, depth]}, got {list(plane)}"
            )
    return (n, h, w, 3)


def _check_ui8(op: SynapOp, values: list[tuple[str, Attribute]]) -> None:
    for what, element in values:
        if element != UI8:
            op.fail(f"{what} must be ui8, got {element}")


#: The enumerated properties of the ops here, by name, with their attribute types.
_ENUM_PROPS: dict[str, type[EnumAttribute[Any]]] = {
    "format": YuvFormatAttr,
    "color_range": ColorRangeAttr,
    "color_matrix": ColorMatrixAttr,
    "mode": CropResizeModeAttr,
}


class PreprocessOp(SynapOp):
    """A synap op whose `make` also takes its enumerated properties as enum members or
    their strings (e.g. ``format="nv12"``)."""

    @classmethod
    def make(cls, *operands: Any, **kwargs: Any) -> Any:
        """`SynapOp.make`, with enumerated properties given by value."""
        for name, attr_type in _ENUM_PROPS.items():
            value = kwargs.get(name)
            if isinstance(value, str):
                kwargs[name] = attr_type(attr_type.enum_type(value))
        return super().make(*operands, **kwargs)


@irdl_op_definition
class YuvToRgbOp(PreprocessOp):
    """The RGB image of a YUV frame given as uint8 planes (see `YuvFormat`).

    Per pixel, with U' = U - 128, V' = V - 128 and Y' = max(Y - 16, 0) in limited range
    (OpenCV clamps Y below 16) or Y' = Y in full range:
    R = cy Y' + cvr V', G = cy Y' + cug U' + cvg V', B = cy Y' + cub U',
    each rounded (half up) and clipped to [0, 255]. The coefficients are those of
    METAFILE.md, as 20-bit fixed point (round(c * 2**20)), which makes limited-range
    BT.601 bit-exact with OpenCV's `cvtColor` (COLOR_YUV2RGB_NV12 / _NV21 / _I420):

    | range, matrix | cy | cvr | cug | cvg | cub |
    | limited, BT.601 | 1.164 | 1.596 | -0.391 | -0.813 | 2.018 |
    | full, BT.601 | 1 | 1.402 | -0.344 | -0.714 | 1.772 |
    | limited, BT.709 | 1.16438 | 1.79274 | -0.21325 | -0.53291 | 2.11240 |
    | full, BT.709 | 1 | 1.5748 | -0.18732 | -0.46812 | 1.8556 |

    BT.709's are computed from ITU-R BT.709-6's Kr = 0.2126, Kb = 0.0722
    (Kg = 1 - Kr - Kb): cvr = 2(1 - Kr), cub = 2(1 - Kb), cug = -2 Kb (1 - Kb) / Kg,
    cvg = -2 Kr (1 - Kr) / Kg, times 255/224 (and cy = 255/219) in limited range (the
    table shows them rounded). `bgr` gives B, G, R instead."""

    name = "synap.yuv_to_rgb"

    planes = var_operand_def(TensorType)
    output = result_def(TensorType)

    format = enum_prop(YuvFormatAttr, YuvFormat.NV12)
    color_range = enum_prop(ColorRangeAttr, ColorRange.LIMITED)
    color_matrix = enum_prop(ColorMatrixAttr, ColorMatrix.BT601)
    bgr = bool_prop(False)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [yuv_planes(operand_shapes, YuvFormat(props["format"]))]

    def verify_semantics(self) -> None:
        values = [(f"plane #{i}", element_of(p)) for i, p in enumerate(self.planes)]
        _check_ui8(self, [*values, ("the result", element_of(self.output))])


@irdl_op_definition
class CropResizeOp(PreprocessOp):
    """An NHWC image (ui8 or f32), or a crop rectangle of it, resized to `size` [h, w].

    Without crop operands the whole image is resized; with them (four i32 scalars:
    crop width, height, left, top, in input pixels, known at run time) the rectangle
    ``image[:, top:top + height, left:left + width]`` is, exactly as OpenCV resizes that
    sub-image. A rectangle reaching outside the image is clamped into it, never read
    outside: left and top to [0, W - 1] and [0, H - 1], then width and height to
    [1, W - left] and [1, H - top] (the values are only known at run time, so the op
    cannot refuse them; the runtime's `assign` is the place to).

    `bilinear` is OpenCV's INTER_LINEAR: half-pixel centres (source x = (x + 0.5) *
    in / out - 0.5, computed in double and rounded to float), border pixels repeated;
    for ui8 the weights are 11-bit fixed point (rounded to nearest even) and the sums
    rounded as OpenCV's SIMD kernels do, so the result is bit-exact with `cv2.resize`;
    f32 images use the float weights (1 - f, f), horizontal pass first, as OpenCV's
    float formula does (OpenCV's own float kernels sum in another order: a few float32
    ulps apart, not bit-exact). `nearest` is OpenCV's INTER_NEAREST, which is not
    half-pixel: source x = min(floor(x * (1 / (out / in))), in - 1), in double."""

    name = "synap.crop_resize"

    image = operand_def(TensorType)
    crop = var_operand_def(TensorType)
    output = result_def(TensorType)

    size = int_array_prop()
    mode = enum_prop(CropResizeModeAttr, CropResizeMode.BILINEAR)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        image, crop = operand_shapes[0], operand_shapes[1:]
        size = props["size"]
        if len(image) != 4:
            raise ShapeError(f"image must be NHWC (rank 4), got {list(image)}")
        if len(size) != 2 or min(size) < 1:
            raise ShapeError(f"size must be two positive integers [h, w], got {list(size)}")
        if len(crop) not in (0, 4):
            raise ShapeError(
                "takes no crop operands or four (width, height, left, top), got "
                f"{len(crop)}"
            )
        for name, shape in zip(("width", "height", "left", "top"), crop, strict=False):
            if tuple(shape) != ():
                raise ShapeError(f"crop {name} must be a scalar, got shape {list(shape)}")
        return [(image[0], size[0], size[1], image[3])]

    def verify_semantics(self) -> None:
        element = element_of(self.image)
        if element not in (UI8, f32):
            self.fail(f"image must be ui8 or f32, got {element}")
        for name, value in zip(("width", "height", "left", "top"), self.crop, strict=False):
            if element_of(value) != I32:
                self.fail(f"crop {name} must be i32, got {element_of(value)}")

    @property
    def has_crop(self) -> bool:
        """Whether the op resizes a run-time crop rectangle (four crop operands)."""
        return len(self.crop) == 4

    def out_size(self) -> tuple[int, int]:
        """The result's (h, w)."""
        h, w = shape_of(self.output)[1:3]
        return h, w


ATTRIBUTES = [YuvFormatAttr, ColorRangeAttr, ColorMatrixAttr, CropResizeModeAttr]
OPS = [YuvToRgbOp, CropResizeOp]
