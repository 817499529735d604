"""`insert-preprocess{input=0 type="nv12" size=1080,1920 crop=true}`: the metafile's
`preprocess` of one model input (../shared/METAFILE.md, "preprocess"; contract18).

The input of `@main` is replaced by the inputs of its `type` (uint8 planes, or raw
float32 values; then with `crop` four i32 scalars: width, height, left, top), and the
graph in front of the model computes the tensor the model took from them:

1. the planes as one NHWC uint8 image: `synap.yuv_to_rgb` for the YUV types (RGB or BGR
   as the input's format says), a transpose of `rgb888p`, a concat of `rgb888p3`'s
   planes; `gray`, `rgb` and `bgra` are images already;
2. with `size` or `crop`, `synap.crop_resize` to the tensor's height and width
   (`optimize` fuses it with a colour conversion in front, see `fuse-yuv-resize`);
3. the channel order the model takes: BGRA's first three channels reversed for RGB,
   RGB reversed for a `bgr` input;
4. the normalization ``(x - means[c]) / scale`` in float32, with the input's means and
   scale (the options, else its ``synap.means`` / ``synap.scale``, else for an 8-bit
   quantized tensor its own quantization, which stores the pixel values unchanged);
5. conversion to the tensor's element type: `synap.quantize` for a quantized tensor, a
   cast otherwise (none for a uint8 tensor without normalization);
6. a transpose to NCHW when the tensor is NCHW (its ``synap.layout``, or `layout`).

The new arguments carry ``synap.name`` (``<input>_<plane>``, the input's own name for a
one-plane type, ``<input>_crop_<field>``), ``synap.format`` (``"<type> plane=<role>"``,
``"crop field=<field>"``) and ``synap.layout``; the first carries ``synap.preprocess``.
Combinations the model cannot take are refused with a `SynapcError` naming the input and
the field: `gray` into a tensor of other than one channel, another image type into one
of other than three, odd sizes for the 4:2:0 types, `size` or `crop` with `float32`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from synapc.context import weights_of
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.conversion import CastOp, QuantizeOp
from synapc.dialects.synap.data_movement import (
    ConcatOp,
    SliceOp,
    StridedSliceOp,
    TransposeOp,
)
from synapc.dialects.synap.elementwise import DivOp, SubOp
from synapc.dialects.synap.preprocess import I32, UI8, CropResizeOp, YuvToRgbOp
from synapc.errors import SynapcError
from synapc.io_attributes import (
    FORMAT,
    LAYOUT,
    MEANS,
    NAME,
    PREPROCESS,
    SCALE,
    io_attributes,
    io_float,
    io_floats,
    io_string,
    layout_of,
)
from synapc.passes.apply_layout import main_function
from synapc.passes.common import new_constant
from synapc.preprocess_types import (
    COLOR_MATRICES,
    COLOR_RANGES,
    CROP_FIELDS,
    RESIZE_MODES,
    ROLES,
    SUBSAMPLED,
    YUV_TYPES,
)

_CHOICES = {
    "color_range": COLOR_RANGES,
    "color_matrix": COLOR_MATRICES,
    "resize": RESIZE_MODES,
    "layout": ("nhwc", "nchw"),
}


@dataclass(frozen=True)
class _Target:
    """The tensor the model takes: its type, layout and (for images) N, H, W, C."""

    type: TensorType[Attribute]
    layout: str
    nhwc: tuple[int, int, int, int] | None


@dataclass(frozen=True)
class InsertPreprocessPass(ModulePass):
    """Replace input `input` of `@main` (an index, or its ``synap.name``) by the inputs
    of preprocessing `type` and the conversion from them (see the module docstring)."""

    name = "insert-preprocess"

    #: The preprocessing type (yuv444, yuv420, nv12, nv21, gray, rgb, bgra, rgb888p,
    #: rgb888p3, float32).
    type: str
    #: The input: its index in `@main`'s arguments or its name.
    input: int | str = 0
    #: [H, W] of the incoming image (default: the tensor's).
    size: tuple[int, ...] | None = None
    #: Add the four crop scalars (width, height, left, top).
    crop: bool = False
    color_range: str = "limited"
    color_matrix: str = "bt601"
    #: bilinear or nearest.
    resize: str = "bilinear"
    #: Whether the model takes BGR (default: the input's format says "bgr").
    bgr: bool | None = None
    #: Per-channel means (one value: all channels); default: the input's synap.means.
    means: tuple[int | float, ...] | None = None
    #: Divisor after the means; default: the input's synap.scale.
    scale: int | float | None = None
    #: The tensor's layout, nhwc or nchw (default: the input's synap.layout).
    layout: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        func = main_function(op)
        index = self._index(func)
        label = io_string(func, "input", index, NAME) or f"input_{index}"
        _Rewrite(self, func, index, label, ctx).run()

    def _index(self, func: FuncOp) -> int:
        count = len(func.function_type.inputs.data)
        if isinstance(self.input, int):
            if not 0 <= self.input < count:
                raise SynapcError(
                    f"insert-preprocess: input={self.input}: @main has {count} inputs"
                )
            return self.input
        for i in range(count):
            if io_string(func, "input", i, NAME) == self.input:
                return i
        raise SynapcError(f"insert-preprocess: input={self.input!r}: no input of that name")


class _Rewrite:
    """One application of the pass: checks, new arguments, the inserted ops."""

    def __init__(
        self,
        options: InsertPreprocessPass,
        func: FuncOp,
        index: int,
        label: str,
        ctx: Context,
    ) -> None:
        self.o = options
        self.func = func
        self.index = index
        self.label = label
        self.ctx = ctx
        self.block: Block = func.body.block
        self.ops: list[Operation] = []

    # -- checks ---------------------------------------------------------------------
    def fail(self, field: str, problem: str) -> SynapcError:
        """The error for one option of the input."""
        return SynapcError(f"insert-preprocess: input '{self.label}': {field}: {problem}")

    def target(self) -> _Target:
        """The tensor the model takes, checked against the options."""
        t = self.block.args[self.index].type
        if not isinstance(t, TensorType):
            raise self.fail("type", f"the input is not a tensor ({t})")
        o = self.o
        if o.type not in ROLES:
            raise self.fail("type", f"{o.type!r} is not one of {', '.join(ROLES)}")
        for field, choices in _CHOICES.items():
            value = getattr(o, field)
            if value is not None and value not in choices:
                raise self.fail(field, f"{value!r} is not one of {', '.join(choices)}")
        shape = tuple(t.get_shape())
        layout = o.layout or layout_of(self.func, "input", self.index)
        if len(shape) != 4:
            if o.type != "float32":
                raise self.fail(
                    "type", f"{o.type} takes a 4-D image tensor, the input is {list(shape)}"
                )
            return _Target(t, "none", None)
        if layout == "nchw":
            n, c, h, w = shape
        else:
            layout = "nhwc"
            n, h, w, c = shape
        if o.type == "gray" and c != 1:
            raise self.fail("type", f"gray needs a 1-channel tensor, the input has {c}")
        if o.type not in ("gray", "float32") and c != 3:
            raise self.fail("type", f"{o.type} needs a 3-channel tensor, the input has {c}")
        if o.type == "float32" and (o.size is not None or o.crop):
            field = "size" if o.size is not None else "crop"
            raise self.fail(field, "float32 input is not resized or cropped")
        if o.size is not None and (len(o.size) != 2 or min(o.size) < 1):
            raise self.fail(
                "size", f"expected [H, W] of positive sizes, got {list(o.size)}"
            )
        ih, iw = self.image_size((n, h, w, c))
        if o.type in SUBSAMPLED and (ih % 2 or iw % 2):
            field = "size" if o.size is not None else "type"
            raise self.fail(
                field, f"{o.type} (4:2:0) needs an even height and width, got {ih}x{iw}"
            )
        return _Target(t, layout, (n, h, w, c))

    def image_size(self, nhwc: tuple[int, int, int, int]) -> tuple[int, int]:
        """The incoming image's (H, W): `size`, else the tensor's."""
        if self.o.size is not None:
            return int(self.o.size[0]), int(self.o.size[1])
        return nhwc[1], nhwc[2]

    def normalization(self, target: _Target) -> tuple[tuple[float, ...], float]:
        """(means, scale): the options, the input's attributes, or for an 8-bit
        quantized tensor its zero point and 1 / its scale."""
        means = self.o.means
        scale = self.o.scale
        if means is None:
            means = io_floats(self.func, "input", self.index, MEANS)
        if scale is None:
            scale = io_float(self.func, "input", self.index, SCALE)
        element = target.type.element_type
        if means is None and scale is None and isinstance(element, UniformQuantizedType):
            q = element
            if q.bitwidth == 8 and not q.is_per_axis:
                return (float(q.zero_point),), float(1.0 / np.float64(q.scale))
        means = tuple(float(m) for m in (means or (0.0,)))
        scale = 1.0 if scale is None else float(scale)
        channels = 1 if target.nhwc is None else target.nhwc[3]
        if len(means) not in (1, channels):
            raise self.fail("means", f"{len(means)} values for {channels} channels")
        if scale == 0:
            raise self.fail("scale", "must not be zero")
        return means, scale

    # -- building -------------------------------------------------------------------
    def add(self, op: Operation) -> SSAValue:
        """Queue `op` for insertion in front of the body; its (first) result."""
        self.ops.append(op)
        return op.results[0]

    def plane_types(self, target: _Target) -> list[tuple[str, TensorType[Attribute]]]:
        """(role, type) of every new plane argument."""
        o = self.o
        if o.type == "float32":
            return [("float32", TensorType(f32, target.type.get_shape()))]
        assert target.nhwc is not None
        n = target.nhwc[0]
        h, w = self.image_size(target.nhwc)
        half = (n, h // 2, w // 2)
        shapes: dict[str, tuple[int, ...]] = {
            "y": (n, h, w, 1),
            "gray": (n, h, w, 1),
            "rgb": (n, 3, h, w) if o.type == "rgb888p" else (n, h, w, 3),
            "bgra": (n, h, w, 4),
            "uv": (*half, 2),
            "vu": (*half, 2),
        }
        chroma = half if o.type in SUBSAMPLED else (n, h, w)
        shapes.update({r: (*chroma, 1) for r in ("u", "v")})
        shapes.update({r: (n, h, w, 1) for r in ("r", "g", "b")})
        return [(role, TensorType(UI8, shapes[role])) for role in ROLES[o.type]]

    def image(self, planes: list[SSAValue], bgr: bool) -> tuple[SSAValue, bool]:
        """The NHWC uint8 image of the planes, and whether its channels are already
        in the model's order."""
        o = self.o
        if o.type in YUV_TYPES:
            convert = YuvToRgbOp.make(
                planes,
                format=o.type,
                color_range=o.color_range,
                color_matrix=o.color_matrix,
                bgr=bgr,
            )
            return self.add(convert), True
        if o.type == "rgb888p":
            return self.add(TransposeOp.make(planes[0], perm=[0, 2, 3, 1])), False
        if o.type == "rgb888p3":
            ordered = planes[::-1] if bgr else planes
            return self.add(ConcatOp.make(ordered, axis=3)), True
        return planes[0], o.type == "gray"

    def channels(self, image: SSAValue, bgr: bool) -> SSAValue:
        """`image` with the model's channel order: BGRA to RGB or BGR, RGB to BGR."""
        n, h, w, _ = image.type.get_shape()  # type: ignore[attr-defined]
        if self.o.type == "bgra" and bgr:
            return self.add(
                SliceOp.make(image, start=[0, 0, 0, 0], result_types=[_u8((n, h, w, 3))])
            )
        if self.o.type == "bgra" or bgr:
            end = [n, h, w, -1]
            return self.add(
                StridedSliceOp.make(
                    image,
                    begin=[0, 0, 0, 2],
                    end=end,
                    strides=[1, 1, 1, -1],
                )
            )
        return image

    def convert(self, image: SSAValue, target: _Target) -> SSAValue:
        """Normalize, convert to the tensor's element type, lay out as the tensor."""
        o = self.o
        means, scale = self.normalization(target)
        element = target.type.element_type
        plain = all(m == 0 for m in means) and scale == 1
        value = image
        if not (plain and element == UI8):
            if value.type.element_type != f32:  # type: ignore[attr-defined]
                value = self.add(CastOp.make(value, element_type=f32))
            if not plain:
                weights = weights_of(self.ctx)
                mean_array = np.asarray(means, np.float32)
                if len(means) == 1:
                    mean_array = mean_array.reshape(())
                elif target.layout == "nchw" and o.type == "float32":
                    mean_array = mean_array.reshape(-1, 1, 1)
                mean_const = new_constant(weights, mean_array, hint="preprocess_means")
                scale_const = new_constant(
                    weights, np.asarray(scale, np.float32), hint="preprocess_scale"
                )
                self.ops += [mean_const, scale_const]
                value = self.add(SubOp.make(value, mean_const.results[0]))
                value = self.add(DivOp.make(value, scale_const.results[0]))
            if isinstance(element, UniformQuantizedType):
                value = self.add(QuantizeOp.make(value, element_type=element))
            elif element != f32:
                value = self.add(CastOp.make(value, element_type=element))
        if target.layout == "nchw" and self.o.type != "float32":
            value = self.add(TransposeOp.make(value, perm=[0, 3, 1, 2]))
        return value

    def run(self) -> None:
        """Check, add the new arguments, insert the ops, drop the old argument."""
        o = self.o
        target = self.target()
        old = self.block.args[self.index]
        attrs = [io_attributes(self.func, "input", i) for i in range(len(self.block.args))]
        bgr = o.bgr
        if bgr is None:
            fmt = attrs[self.index].get(FORMAT)
            words = fmt.data.split() if isinstance(fmt, StringAttr) else []
            bgr = bool(words) and words[0] == "bgr"
        new_attrs: list[dict[str, Attribute]] = []
        planes: list[SSAValue] = []
        types = self.plane_types(target)
        single = len(types) == 1
        position = self.index
        for role, t in types:
            planes.append(self.block.insert_arg(t, position))
            position += 1
            planar = o.type == "rgb888p" or (
                o.type == "float32" and target.layout == "nchw"
            )
            layout = "none" if target.nhwc is None else "nchw" if planar else "nhwc"
            new_attrs.append(
                {
                    NAME: StringAttr(self.label if single else f"{self.label}_{role}"),
                    FORMAT: StringAttr(f"{o.type} plane={role}"),
                    LAYOUT: StringAttr(layout),
                }
            )
        crop: list[SSAValue] = []
        if o.crop:
            for field in CROP_FIELDS:
                crop.append(self.block.insert_arg(TensorType(I32, []), position))
                position += 1
                new_attrs.append(
                    {
                        NAME: StringAttr(f"{self.label}_crop_{field}"),
                        FORMAT: StringAttr(f"crop field={field}"),
                        LAYOUT: StringAttr("none"),
                    }
                )
        new_attrs[0][PREPROCESS] = self.description(target, [a[NAME] for a in new_attrs])
        if o.type == "float32":
            result = self.convert(planes[0], target)
        else:
            assert target.nhwc is not None
            image, ordered = self.image(planes, bgr)
            if o.size is not None or o.crop:
                size = list(target.nhwc[1:3])
                image = self.add(CropResizeOp.make(image, crop, size=size, mode=o.resize))
            if not ordered:
                image = self.channels(image, bgr)
            result = self.convert(image, target)
        first = self.block.first_op
        for new_op in self.ops:
            if first is None:
                self.block.add_op(new_op)
            else:
                self.block.insert_op_before(new_op, first)
        old.replace_all_uses_with(result)
        result.name_hint = None  # not the replaced argument's name
        self.block.erase_arg(old)
        attrs[self.index : self.index + 1] = new_attrs
        self.func.arg_attrs = ArrayAttr([DictionaryAttr(a) for a in attrs])
        self.func.function_type = FunctionType.from_lists(
            [a.type for a in self.block.args], list(self.func.function_type.outputs.data)
        )

    def description(self, target: _Target, names: Sequence[Attribute]) -> DictionaryAttr:
        """``synap.preprocess`` of the first new argument (contract18)."""
        o = self.o
        entries: dict[str, Attribute] = {
            "input": StringAttr(self.label),
            "type": StringAttr(o.type),
            "crop": IntegerAttr.from_bool(o.crop),
            "color_range": StringAttr(o.color_range),
            "color_matrix": StringAttr(o.color_matrix),
            "resize": StringAttr(o.resize),
            "layout": StringAttr(target.layout),
        }
        if o.size is not None:
            entries["size"] = ArrayAttr([IntegerAttr(int(s), i64) for s in o.size])
        return DictionaryAttr(entries)


def _u8(shape: Sequence[int]) -> TensorType[Attribute]:
    return TensorType(UI8, list(shape))


def package_metadata(func: FuncOp) -> dict[str, str]:
    """The package metadata of `func`'s preprocessed inputs (contract18): key
    "preprocess", a JSON list with one object per input whose argument carries
    ``synap.preprocess``: its keys plus "inputs", the names of the new inputs (the
    planes, then the crop scalars). Empty without preprocessed inputs."""
    entries: list[dict[str, object]] = []
    count = len(func.function_type.inputs.data)
    for index in range(count):
        description = io_attributes(func, "input", index).get(PREPROCESS)
        if not isinstance(description, DictionaryAttr):
            continue
        entry = {key: _plain(value) for key, value in description.data.items()}
        planes = len(ROLES.get(str(entry.get("type")), ()))
        width = planes + (len(CROP_FIELDS) if entry.get("crop") else 0)
        entry["inputs"] = [
            io_string(func, "input", i, NAME) or f"input_{i}"
            for i in range(index, min(index + width, count))
        ]
        entries.append(entry)
    return {"preprocess": json.dumps(entries)} if entries else {}


def _plain(value: Attribute) -> object:
    """A ``synap.preprocess`` value as JSON: string, bool, or list of ints."""
    if isinstance(value, StringAttr):
        return value.data
    if isinstance(value, IntegerAttr):
        number = value.value.data
        return bool(number) if value.type == IntegerType(1) else number
    if isinstance(value, ArrayAttr):
        return [_plain(v) for v in value.data]
    return str(value)
