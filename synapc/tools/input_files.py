"""Input values for `synapc benchmark --input`: a file per input, as `benchmark_model`
takes them, or random values.

A file is a `.npy` array of the input's shape, an image (PNG, JPEG, BMP, ... decoded by
Pillow; channels in the input's `format` order, laid out as the input, no resizing) or raw
bytes of the input's data type and size. Values are assigned like `Tensor.assign`: data
of another type than the input's is normalized with the metafile's means / scale and
quantized. Every problem is one `SynapcError` naming the file and the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from synapc.errors import SynapcError
from synapc.runtime.images import read_image

if TYPE_CHECKING:
    from synapc.runtime import Tensor

#: The seed of the random values of inputs without a file.
SEED = 0
#: Suffixes read as images (anything Pillow reads; others are raw bytes or .npy).
IMAGE_SUFFIXES = (
    ".png",
    ".jpg",
    ".jpeg",
    ".bmp",
    ".gif",
    ".tif",
    ".tiff",
    ".webp",
    ".ppm",
    ".pgm",
)


@dataclass(frozen=True)
class InputSource:
    """Where one input's values came from: a file, or random values (`path` None)."""

    name: str
    path: Path | None

    def describe(self) -> str:
        """``file PATH`` or ``random (seed 0)``, for the report."""
        return f"file {self.path}" if self.path is not None else f"random (seed {SEED})"


def random_input(
    shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator
) -> np.ndarray:
    """Random values of a tensor: the whole range of 8- and 16-bit integers, small
    integers for wider ones, N(0, 1) for floats."""
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = (info.min, info.max) if dtype.itemsize <= 2 else (0, 8)
        return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def input_files(specs: Sequence[str], names: Sequence[str]) -> dict[int, Path]:
    """The file of each input `--input` gives, by input index: one `FILE` per input in
    input order, or `NAME=FILE` for any of them (not mixed)."""
    if not specs:
        return {}
    named: dict[int, Path] = {}
    plain: list[Path] = []
    for spec in specs:
        matches = [n for n in names if spec.startswith(f"{n}=")]
        if matches:
            name = max(matches, key=len)
            index = names.index(name)
            path = Path(spec[len(name) + 1 :])
            if index in named:
                raise SynapcError(
                    f"--input {spec}: input '{name}' already has a file ({named[index]})"
                )
            named[index] = path
            continue
        prefix, equals, _ = spec.partition("=")
        if equals and prefix and not Path(spec).exists():
            close = get_close_matches(prefix, list(names), n=3, cutoff=0.3)
            shown = ", ".join(f"'{n}'" for n in close or list(names)[:5])
            raise SynapcError(
                f"--input {spec}: '{prefix}' is not an input of the model "
                f"(inputs: {shown}), and no file has that name"
            )
        plain.append(Path(spec))
    if named and plain:
        raise SynapcError(
            f"--input {plain[0]}: give either one FILE per input in input order or "
            "NAME=FILE for each, not both"
        )
    if plain and len(plain) != len(names):
        listed = ", ".join(f"'{n}'" for n in names)
        raise SynapcError(
            f"--input: {len(plain)} file{'s' if len(plain) != 1 else ''} "
            f"({', '.join(str(p) for p in plain)}) for a model with {len(names)} "
            f"input{'s' if len(names) != 1 else ''} ({listed}); give one per input "
            "in input order, or NAME=FILE"
        )
    return named or dict(enumerate(plain))


def input_error(path: Path, tensor: Tensor, problem: str) -> SynapcError:
    """The error about `--input` file `path` given for `tensor`: names both."""
    return SynapcError(f"--input {path} for input '{tensor.name}': {problem}")


def _takes(tensor: Tensor) -> str:
    return f"{tensor.data_type.name} {list(tensor.shape)}"


def load_input(path: Path, tensor: Tensor) -> np.ndarray:
    """The values `path` holds for `tensor`: a `.npy` array of the tensor's shape, a
    image of its height and width, or raw bytes of its data type and
    byte size. Every problem is a `SynapcError` naming the file and the input."""
    if not path.is_file():
        raise input_error(path, tensor, "no such file")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as error:
            raise input_error(path, tensor, f"not a readable .npy file ({error})") from None
        if array.dtype.kind not in "biuf":
            raise input_error(path, tensor, f"holds {array.dtype} values, not numbers")
        if array.shape != tensor.shape:
            raise input_error(
                path,
                tensor,
                f"holds an array of shape {list(array.shape)}, the input takes "
                f"{list(tensor.shape)}",
            )
        return array
    if suffix in IMAGE_SUFFIXES:
        try:
            image = read_image(path)
        except SynapcError as error:
            raise input_error(path, tensor, str(error)) from None
        return image_to_tensor(path, image, tensor)
    data = path.read_bytes()
    if len(data) != tensor.size:
        raise input_error(
            path,
            tensor,
            f"{len(data)} bytes, the input ({_takes(tensor)}) takes {tensor.size} bytes "
            "of raw values (.npy files and images are told by their suffix)",
        )
    return np.frombuffer(data, tensor.data_type).reshape(tensor.shape)


def image_to_tensor(path: Path, image: np.ndarray, tensor: Tensor) -> np.ndarray:
    """An H x W x C uint8 image (C: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA) as the values
    of a 4-D image input: its channels in the input's `format` order (rgb / bgr), laid
    out as the input (nhwc / nchw), batch 1. No resizing: the sizes must match."""
    shape = tensor.shape
    if len(shape) != 4 or tensor.layout not in ("nhwc", "nchw"):
        raise input_error(
            path,
            tensor,
            f"the input ({_takes(tensor)}, layout {tensor.layout}) is not an image; "
            "give a .npy or raw file",
        )
    if tensor.layout == "nhwc":
        batch, height, width, channels = shape
    else:
        batch, channels, height, width = shape
    if batch != 1:
        raise input_error(
            path,
            tensor,
            f"the input ({_takes(tensor)}) takes a batch of {batch} images; give a .npy "
            "or raw file",
        )
    h, w, c = image.shape
    if (h, w) != (height, width):
        raise input_error(
            path,
            tensor,
            f"the image is {w}x{h} (width x height), the input ({_takes(tensor)}, "
            f"{tensor.layout}) takes {width}x{height}; resize it first",
        )
    if channels == 3 and c in (1, 2):
        pixels = np.repeat(image[:, :, :1], 3, axis=2)
    elif channels == 3 and c == 4:
        pixels = image[:, :, :3]
    elif channels == 1 and c == 2:
        pixels = image[:, :, :1]
    elif channels == c:
        pixels = image
    else:
        kind = {1: "gray", 2: "gray + alpha", 3: "RGB", 4: "RGBA"}[c]
        raise input_error(
            path,
            tensor,
            f"a {kind} image, the input ({_takes(tensor)}, {tensor.layout}) takes "
            f"{channels} channels",
        )
    order = tensor.format.split()[0].lower() if tensor.format.strip() else "rgb"
    if order == "bgr" and channels >= 3:
        pixels = np.concatenate([pixels[:, :, 2::-1], pixels[:, :, 3:]], axis=2)
    if tensor.layout == "nchw":
        pixels = pixels.transpose(2, 0, 1)
    return np.ascontiguousarray(pixels[np.newaxis])


def assign_inputs(
    inputs: Sequence[Tensor],
    specs: Sequence[str] | None,
    rng: np.random.Generator | None = None,
) -> list[InputSource]:
    """Give every input its values: from its `--input` file (`specs`), else random
    from `rng` (seeded with `SEED` when None). Returns where each input's values came
    from, in input order."""
    rng = rng if rng is not None else np.random.default_rng(SEED)
    files = input_files(specs or [], [t.name for t in inputs])
    sources = []
    for index, tensor in enumerate(inputs):
        path = files.get(index)
        if path is None:
            tensor.assign(random_input(tensor.shape, tensor.data_type, rng))
        else:
            values = load_input(path, tensor)
            try:
                tensor.assign(values)
            except SynapcError as error:
                raise input_error(path, tensor, str(error)) from None
        sources.append(InputSource(tensor.name, path))
    return sources
