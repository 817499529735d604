"""Preprocessed inputs at run time: the planes and crop scalars that replace one input.

A package converted with a metafile `preprocess` lists in its metadata key "preprocess"
(a JSON list, contract18) one object per preprocessed input: the original input's name
(`input`), `type`, `size`, `crop`, `color_range`, `color_matrix`, `resize`, `layout` and
`inputs`, the names of the model inputs that replace it (the planes of the type in
`ROLES` order, then with `crop` the four int32 scalars width, height, left, top).
`PreprocessedInput` ties those `Tensor`s together so that `Tensor.assign` of an image (a
file path or an H x W x 3 uint8 RGB array) on the first plane fills every plane, and
checks the crop rectangle before each `predict`. The crop scalars start as the whole
image (width, height, 0, 0). The metadata is untrusted: anything inconsistent with the
package's inputs is a `PackageError` naming the field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from synapc.backends.package import PackageError
from synapc.errors import SynapcError
from synapc.preprocess_types import CROP_FIELDS, ROLES
from synapc.runtime import images

if TYPE_CHECKING:
    from synapc.runtime.tensor import Tensor

_DEFAULTS = {"color_range": "limited", "color_matrix": "bt601", "layout": "nhwc"}


@dataclass
class PreprocessedInput:
    """One preprocessed model input: its metadata entry, its plane tensors by role, its
    crop scalars by field and the incoming image's height and width (None for a
    `float32` input that is not a 4-D image)."""

    name: str
    type: str
    entry: dict[str, Any]
    planes: dict[str, Tensor]
    crop: dict[str, Tensor] = field(default_factory=dict)
    height: int | None = None
    width: int | None = None

    @property
    def first(self) -> Tensor:
        """The first plane: the tensor an image is assigned to."""
        return next(iter(self.planes.values()))

    def describe(self, tensor: Tensor) -> str:
        """``tensor 'x_uv' (plane uv of nv12 input 'x')``, for messages."""
        role = next((r for r, t in self.planes.items() if t is tensor), None)
        if role is None:
            role = next(f for f, t in self.crop.items() if t is tensor)
            return f"tensor '{tensor.name}' (crop {role} of input '{self.name}')"
        return f"tensor '{tensor.name}' (plane {role} of {self.type} input '{self.name}')"

    def takes_image(self, tensor: Tensor, data: Any) -> bool:
        """Whether `data` assigned to `tensor` is an image for all planes: a path, or on
        the first plane an array of another shape than the plane's ending in 3
        channels."""
        if isinstance(data, (str, os.PathLike)):
            return True
        if tensor is not self.first or not isinstance(data, np.ndarray):
            return False
        return data.shape != tensor.shape and data.ndim in (3, 4) and data.shape[-1] == 3

    def assign(self, tensor: Tensor, data: Any) -> None:
        """Assign an image (path or RGB array) given to `tensor`: converted to every
        plane, refused on anything but the first plane and when its size differs."""
        if tensor is not self.first:
            raise SynapcError(
                f"{self.describe(tensor)}: an image is assigned to the first plane "
                f"'{self.first.name}', which fills every plane of the input"
            )
        where = f"input '{self.name}' ({self.type})"
        if self.height is None or self.width is None:
            raise SynapcError(
                f"{where}: {list(tensor.shape)} is not an image; assign raw float32 values"
            )
        if isinstance(data, (str, os.PathLike)):
            rgb = images.read_rgb(Path(data))
            what = f"image {data}"
        else:
            rgb = images.check_rgb(data, f"{where}: the image")
            what = "the image"
        batch = tensor.shape[0]
        if rgb.ndim == 3:
            rgb = rgb[np.newaxis]
        if rgb.ndim != 4 or rgb.shape[0] != batch:
            raise SynapcError(
                f"{where}: takes a batch of {batch} image{'s' if batch != 1 else ''}; "
                f"assign an array of {batch} x {self.height} x {self.width} x 3"
            )
        height, width = rgb.shape[1:3]
        if (height, width) != (self.height, self.width):
            raise SynapcError(
                f"{where}: {what} is {width}x{height} (width x height), the planes take "
                f"{self.width}x{self.height}; resize it first, or convert the model with "
                f"preprocess size [{height}, {width}]"
            )
        planes = images.rgb_to_planes(
            rgb,
            self.type,
            self.entry["color_range"],
            self.entry["color_matrix"],
            self.entry["layout"],
        )
        for role, plane in planes.items():
            target = self.planes[role]
            if plane.shape != target.shape:
                raise SynapcError(
                    f"{self.describe(target)}: the image gives {list(plane.shape)}, the "
                    f"plane takes {list(target.shape)}; assign raw values"
                )
        for role, plane in planes.items():
            self.planes[role]._value = plane.astype(self.planes[role].data_type)

    def check_crop(self) -> None:
        """Refuse a crop rectangle that is empty or not inside the incoming image
        (`SynapcError` naming the input and the field)."""
        if not self.crop or self.height is None or self.width is None:
            return
        v = {f: int(t._value) for f, t in self.crop.items()}
        problem = None
        if v["width"] < 1 or v["height"] < 1:
            bad = "width" if v["width"] < 1 else "height"
            problem = bad, f"{v[bad]} (the rectangle is empty)"
        elif v["left"] < 0 or v["top"] < 0:
            bad = "left" if v["left"] < 0 else "top"
            problem = bad, f"{v[bad]} is negative"
        elif v["left"] + v["width"] > self.width:
            problem = (
                "width",
                (
                    f"left {v['left']} + width {v['width']} exceeds the image width "
                    f"{self.width}"
                ),
            )
        elif v["top"] + v["height"] > self.height:
            problem = (
                "height",
                (
                    f"top {v['top']} + height {v['height']} exceeds the image height "
                    f"{self.height}"
                ),
            )
        if problem is not None:
            bad, text = problem
            raise SynapcError(
                f"input '{self.name}': crop {bad} ('{self.crop[bad].name}'): {text}; the "
                f"crop rectangle must lie inside the {self.width}x{self.height} image"
            )


def assign_crop(group: PreprocessedInput, tensor: Tensor, data: Any) -> None:
    """Set a crop scalar from an integer (Python, numpy, or a 0-d integer array)."""
    value = np.asarray(data) if not isinstance(data, (str, os.PathLike)) else None
    if value is None or value.shape != () or value.dtype.kind not in "iu":
        raise SynapcError(f"{group.describe(tensor)}: takes an integer (pixels)")
    if not -(2**31) <= int(value) < 2**31:
        raise SynapcError(f"{group.describe(tensor)}: {int(value)} is out of int32 range")
    tensor._value = np.asarray(int(value), tensor.data_type)


def _entry_error(path: Path, at: str, problem: str) -> PackageError:
    return PackageError(f'{path}: bundle.json: metadata["preprocess"]{at}: {problem}')


def preprocessed_inputs(
    path: Path, metadata: dict[str, str], tensors: list[Tensor]
) -> list[PreprocessedInput]:
    """The preprocessed inputs the package metadata describes, tied to the network's
    input `tensors` (each tensor's `preprocess` set to its group); none without the
    key. Inconsistent metadata is a `PackageError` naming the field."""
    text = metadata.get("preprocess")
    if text is None:
        return []
    try:
        entries = json.loads(text)
    except ValueError:
        raise _entry_error(path, "", "not valid JSON") from None
    if not isinstance(entries, list):
        raise _entry_error(path, "", "expected a list")
    by_name = {t.name: t for t in tensors}
    return [_group(path, f"[{i}]", e, by_name) for i, e in enumerate(entries)]


def _group(
    path: Path, at: str, entry: Any, by_name: dict[str, Tensor]
) -> PreprocessedInput:
    if not isinstance(entry, dict):
        raise _entry_error(path, at, "expected an object")
    entry = {**_DEFAULTS, **{k: v for k, v in entry.items() if v is not None}}
    for key in ("input", "type", "color_range", "color_matrix", "layout"):
        if not isinstance(entry.get(key), str):
            raise _entry_error(path, f"{at}.{key}", "expected a string")
    try:
        images.check_type(entry["type"])
        images.check_color(entry["color_range"], entry["color_matrix"])
    except SynapcError as error:
        raise _entry_error(path, at, str(error)) from None
    type_, crop = entry["type"], entry.get("crop", False)
    if not isinstance(crop, bool):
        raise _entry_error(path, f"{at}.crop", "expected true or false")
    roles = ROLES[type_]
    names = entry.get("inputs")
    count = len(roles) + (len(CROP_FIELDS) if crop else 0)
    if not isinstance(names, list) or len(names) != count:
        raise _entry_error(path, f"{at}.inputs", f"expected {count} input names")
    for j, name in enumerate(names):
        if not isinstance(name, str) or name not in by_name:
            raise _entry_error(path, f"{at}.inputs[{j}]", "names no input of the model")
    group = PreprocessedInput(
        entry["input"],
        type_,
        entry,
        {r: by_name[n] for r, n in zip(roles, names, strict=False)},
        {
            f: by_name[n]
            for f, n in zip(CROP_FIELDS if crop else (), names[len(roles) :], strict=True)
        },
    )
    _check_shapes(path, at, group)
    for tensor in [*group.planes.values(), *group.crop.values()]:
        if tensor.preprocess is not None:
            raise _entry_error(path, f"{at}.inputs", f"'{tensor.name}' is listed twice")
        tensor.preprocess = group
    if group.height is not None and group.width is not None:
        start = {"width": group.width, "height": group.height, "left": 0, "top": 0}
        for name, tensor in group.crop.items():
            tensor._value = np.asarray(start[name], tensor.data_type)
    return group


def _check_shapes(path: Path, at: str, group: PreprocessedInput) -> None:
    """The planes' shapes and data types fit the type, the crop scalars are int32
    scalars; sets the group's image height and width."""
    first_role, first = next(iter(group.planes.items()))
    layout = group.entry["layout"]
    shapes: dict[str, tuple[int, ...]] = {}
    image_like = group.type != "float32" or (
        len(first.shape) == 4 and first.shape[1 if layout == "nchw" else 3] == 3
    )
    if image_like:
        if len(first.shape) != 4:
            raise _entry_error(path, f"{at}.inputs[0]", f"'{first.name}' is not 4-D")
        height, width = images.image_size(group.type, first_role, first.shape, layout)
        try:
            shapes = images.plane_shapes(group.type, height, width, layout)
        except SynapcError as error:
            raise _entry_error(path, f"{at}.inputs[0]", str(error)) from None
        group.height, group.width = height, width
    dtype = images.plane_dtype(group.type)
    for j, (role, tensor) in enumerate(group.planes.items()):
        expected = (first.shape[0], *shapes[role]) if image_like else tensor.shape
        if tensor.shape != expected or tensor.data_type != dtype:
            raise _entry_error(
                path,
                f"{at}.inputs[{j}]",
                f"'{tensor.name}' is {tensor.data_type.name}{list(tensor.shape)}, plane "
                f"{role} of {group.type} takes {dtype.name}{list(expected)}",
            )
    for j, tensor in enumerate(group.crop.values(), start=len(group.planes)):
        if tensor.shape != () or tensor.data_type != np.int32:
            raise _entry_error(
                path, f"{at}.inputs[{j}]", f"'{tensor.name}' is not an int32 scalar"
            )
