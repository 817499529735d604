"""`synapc image-to-raw` and `synapc image-from-raw`: image files to and from the raw
planes of a preprocessing input type (`synapc.runtime.images` does the conversion).

`image-to-raw IMAGE --type T [--size H W] [--color-range R] [--color-matrix M] [--layout L]
[--name NAME] [--npy] --out-dir D` writes one file per plane, named as the model inputs
that replace an input NAME (default: the image's stem) with preprocess type T:
``D/NAME_y.raw`` and ``D/NAME_uv.raw`` for nv12, ``D/NAME.raw`` for one-plane types. A
`.raw` file is the plane's bytes (uint8; float32 little-endian for `float32`), row-major
in the plane's shape; with `--npy` the files are `.npy` arrays of the plane's shape with
a batch axis of 1, the shape of the model input (both work with `synapc benchmark
--input` and `Tensor.assign`). `--size` resizes the image first (Pillow, bilinear).

`image-from-raw --type T --size H W PLANES... --out IMAGE` reads the planes in the type's
order (`.npy` by suffix, with or without the batch axis of 1; anything else raw bytes)
and writes the RGB image (format by suffix). Every problem is one `SynapcError` line
naming the file and the field.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from synapc.errors import SynapcError
from synapc.runtime import images


def _add_colour(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--type", required=True, help=f"preprocess type: {', '.join(images.TYPES)}"
    )
    parser.add_argument(
        "--color-range", default="limited", help="limited (default) or full (YUV types)"
    )
    parser.add_argument(
        "--color-matrix", default="bt601", help="bt601 (default) or bt709 (YUV types)"
    )
    parser.add_argument(
        "--layout", default="nhwc", help="nhwc (default) or nchw: float32 planes only"
    )


def add_to_raw_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `synapc image-to-raw`."""
    parser.add_argument("image", help="image file (PNG, JPEG, BMP, ...)")
    _add_colour(parser)
    parser.add_argument(
        "--size", nargs=2, type=int, metavar=("H", "W"), help="resize the image to H x W"
    )
    parser.add_argument("--name", help="input name the files are named after")
    parser.add_argument("--npy", action="store_true", help="write .npy instead of .raw")
    parser.add_argument("--out-dir", required=True, help="output folder")


def add_from_raw_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `synapc image-from-raw`."""
    _add_colour(parser)
    parser.add_argument(
        "--size", nargs=2, type=int, required=True, metavar=("H", "W"), help="image size"
    )
    parser.add_argument("planes", nargs="+", help="plane files, in the type's order")
    parser.add_argument("--out", required=True, help="image file to write (PNG, ...)")


def _check_options(args: argparse.Namespace) -> None:
    try:
        images.check_type(args.type)
        images.check_color(args.color_range, args.color_matrix)
    except SynapcError as error:  # "type 'x': ..." / "color_range 'x': ..."
        raise SynapcError(f"--{str(error).replace('_', '-', 1)}") from None
    if args.layout not in ("nhwc", "nchw"):
        raise SynapcError(f"--layout {args.layout!r}: expected nhwc or nchw")
    if args.size is not None and min(args.size) < 1:
        raise SynapcError(f"--size {args.size[0]} {args.size[1]}: sizes must be positive")


def _resized(rgb: np.ndarray, size: list[int] | None) -> np.ndarray:
    if size is None or tuple(size) == rgb.shape[:2]:
        return rgb
    from PIL import Image

    height, width = size
    image = Image.fromarray(rgb).resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(image, np.uint8)


def to_raw(args: argparse.Namespace) -> int:
    """Run `synapc image-to-raw`: write the planes; prints each file written."""
    _check_options(args)
    rgb = _resized(images.read_rgb(args.image), args.size)
    try:
        planes = images.rgb_to_planes(
            rgb, args.type, args.color_range, args.color_matrix, args.layout
        )
    except SynapcError as error:
        raise SynapcError(f"{args.image}: {error}; --size H W resizes it") from None
    name = args.name or Path(args.image).stem
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for plane_name, plane in zip(
        images.plane_names(name, args.type), planes.values(), strict=True
    ):
        if args.npy:
            path = out / f"{plane_name}.npy"
            np.save(path, plane[np.newaxis].astype(plane.dtype.newbyteorder("<")))
        else:
            path = out / f"{plane_name}.raw"
            path.write_bytes(plane.astype(plane.dtype.newbyteorder("<")).tobytes())
        print(path)
    return 0


def _read_plane(
    path: Path, role: str, shape: tuple[int, ...], dtype: np.dtype
) -> np.ndarray:
    """A plane file: `.npy` of `shape` (or with a batch axis of 1), else raw bytes."""
    where = f"{path} (plane {role})"
    if not path.is_file():
        raise SynapcError(f"{where}: no such file")
    takes = f"{dtype.name} {list(shape)}"
    if path.suffix.lower() == ".npy":
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as error:
            raise SynapcError(f"{where}: not a readable .npy file ({error})") from None
        if array.shape == (1, *shape):
            array = array[0]
        if array.shape != shape or array.dtype != dtype:
            raise SynapcError(
                f"{where}: holds {array.dtype.name} {list(array.shape)}, the plane is "
                f"{takes}"
            )
        return array
    data = path.read_bytes()
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(data) != expected:
        raise SynapcError(
            f"{where}: {len(data)} bytes, the plane ({takes}) takes {expected} bytes"
        )
    return np.frombuffer(data, dtype.newbyteorder("<")).astype(dtype).reshape(shape)


def from_raw(args: argparse.Namespace) -> int:
    """Run `synapc image-from-raw`: read the planes, write the RGB image."""
    _check_options(args)
    height, width = args.size
    try:
        shapes = images.plane_shapes(args.type, height, width, args.layout)
    except SynapcError as error:
        raise SynapcError(f"--size {height} {width}: {error}") from None
    roles = images.ROLES[args.type]
    if len(args.planes) != len(roles):
        raise SynapcError(
            f"{len(args.planes)} plane file{'s' if len(args.planes) != 1 else ''} given; "
            f"type {args.type} has {len(roles)}: {', '.join(roles)} (in this order)"
        )
    dtype = images.plane_dtype(args.type)
    planes = {
        role: _read_plane(Path(path), role, shapes[role], dtype)
        for role, path in zip(roles, args.planes, strict=True)
    }
    rgb = images.planes_to_rgb(
        planes, args.type, args.color_range, args.color_matrix, args.layout
    )
    images.write_rgb(args.out, rgb)
    return 0
