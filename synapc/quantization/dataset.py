"""The calibration dataset of the metafile's ``quantization.dataset``: one glob per model
input, read as batches for `synapc.quantization.collect_statistics`.

Each input's glob is expanded and sorted; every input must match the same number of
files (sample ``k`` is the ``k``-th file of each input). ``.jpg`` / ``.jpeg`` / ``.png``
files are decoded (`synapc.runtime.images.read_image`), resized (bilinear) to the
input's H x W, put in its channel order (``format: bgr`` swaps RGB) and layout (NCHW or
NHWC, as the model's input is) and normalised with the input's means / scale
(``(x - means[c]) / scale``; an integer input receives the pixels as they are). ``.npy``
files are used as they are: their shape is the input's, with or without its leading
batch dimension of 1. ``random`` (for every input, or as one input's glob) stands for
random data of the input's shape: uniform pixels normalised like an image for an input
with means or scale, standard normal values for other float inputs, uniform integers
for integer inputs; seeded, so that a conversion is reproducible.

Files are read a batch at a time (`Dataset.batches`), never all at once. Problems are
`SynapcError`s naming the field (``quantization.dataset[i]``) and the file: an empty
glob, unequal counts, an image for an input that is not an image (4-D with 1 or 3
channels), a ``.npy`` of the wrong shape, a missing or unreadable file.
"""

from __future__ import annotations

import glob
import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from synapc.errors import SynapcError
from synapc.io_attributes import FORMAT, MEANS, SCALE, io_float, io_floats, io_string
from synapc.io_attributes import layout_of as io_layout
from synapc.model import Model

__all__ = [
    "BATCH_SIZE",
    "RANDOM",
    "RANDOM_SAMPLES",
    "Dataset",
    "InputFeed",
    "dataset_digest",
    "input_feeds",
]

#: The dataset keyword for random data.
RANDOM = "random"
#: Samples of a dataset that is random for every input.
RANDOM_SAMPLES = 16
#: Samples per calibration batch.
BATCH_SIZE = 8
#: File suffixes decoded as images.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
#: File suffix of arrays used as they are.
ARRAY_SUFFIX = ".npy"


@dataclass(frozen=True)
class InputFeed:
    """What the dataset needs to know of one model input: its name, shape and numpy
    dtype, its layout (``nchw`` / ``nhwc``), its normalisation (None: not given) and its
    channel order (``bgr`` or ``rgb``)."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    layout: str
    means: tuple[float, ...] | None = None
    scale: float | None = None
    bgr: bool = False

    @property
    def image_size(self) -> tuple[int, int, int] | None:
        """``(H, W, C)`` when the input takes images (4-D, 1 or 3 channels), else None."""
        if len(self.shape) != 4:
            return None
        if self.layout == "nchw":
            _, c, h, w = self.shape
        else:
            _, h, w, c = self.shape
        return (h, w, c) if c in (1, 3) else None


def input_feeds(model: Model) -> list[InputFeed]:
    """The `InputFeed` of every input of `model`, as its `@main` describes them (the
    layout, means, scale and format recorded by the signature passes)."""
    func = model.main
    feeds = []
    for index, info in enumerate(model.inputs):
        fmt = (io_string(func, "input", index, FORMAT) or "").split()
        feeds.append(
            InputFeed(
                name=info.name,
                shape=tuple(info.shape),
                dtype=info.dtype,
                layout=io_layout(func, "input", index),
                means=io_floats(func, "input", index, MEANS),
                scale=io_float(func, "input", index, SCALE),
                bgr=bool(fmt) and fmt[0] == "bgr",
            )
        )
    return feeds


class Dataset:
    """The samples of ``quantization.dataset`` for the model inputs `feeds`.

    `globs` holds one glob per input, or ``["random"]`` for all of them; `field` names
    the metafile field in errors. The globs are expanded and checked here (files are
    read only by `batches`)."""

    def __init__(
        self,
        globs: str | Sequence[str],
        feeds: Sequence[InputFeed],
        *,
        field: str = "quantization.dataset",
        batch_size: int = BATCH_SIZE,
        random_samples: int = RANDOM_SAMPLES,
        seed: int = 0,
    ) -> None:
        globs = [globs] if isinstance(globs, str) else list(globs)
        if not globs:
            raise SynapcError(f"{field}: no dataset given (one glob per input)")
        if globs == [RANDOM]:
            globs = [RANDOM] * len(feeds)
        self.feeds = list(feeds)
        self.field = field
        self.batch_size = batch_size
        self.seed = seed
        if len(globs) != len(self.feeds):
            raise SynapcError(
                f"{field}: {len(globs)} glob(s) for {len(self.feeds)} inputs (one glob "
                "per input, in the order of inputs)"
            )
        self.files: list[list[str] | None] = [
            None if g == RANDOM else self._expand(g, self._entry(i))
            for i, g in enumerate(globs)
        ]
        counts = {len(f) for f in self.files if f is not None}
        if len(counts) > 1:
            shown = ", ".join(
                f"input '{feed.name}': {len(f)}"
                for feed, f in zip(self.feeds, self.files, strict=True)
                if f is not None
            )
            raise SynapcError(
                f"{field}: the globs match different numbers of files ({shown}); every "
                "input needs one file per sample"
            )
        self.size = counts.pop() if counts else random_samples
        for i, (feed, files) in enumerate(zip(self.feeds, self.files, strict=True)):
            if files is not None:
                self._check_kinds(files, feed, self._entry(i))

    def _entry(self, index: int) -> str:
        return f"{self.field}[{index}]" if len(self.feeds) > 1 else self.field

    @staticmethod
    def _expand(pattern: str, entry: str) -> list[str]:
        files = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
        if not files:
            raise SynapcError(f"{entry}: '{pattern}' matches no files")
        return files

    @staticmethod
    def _check_kinds(files: list[str], feed: InputFeed, entry: str) -> None:
        """Every file is an image or a ``.npy``; images only for image inputs."""
        for path in files:
            suffix = os.path.splitext(path)[1].lower()
            if suffix == ARRAY_SUFFIX:
                continue
            if suffix not in IMAGE_SUFFIXES:
                raise SynapcError(
                    f"{entry}: '{path}': expected .jpg, .png or .npy files, got "
                    f"'{suffix or path}'"
                )
            if feed.image_size is None:
                raise SynapcError(
                    f"{entry}: '{path}' is an image, but input '{feed.name}' of shape "
                    f"{list(feed.shape)} is not an image input (4-D with 1 or 3 "
                    "channels); give .npy files for it"
                )

    def __len__(self) -> int:
        """The number of samples."""
        return self.size

    @property
    def batch_count(self) -> int:
        """The number of batches `batches` yields."""
        return -(-self.size // self.batch_size)

    def digest(self) -> str:
        """SHA-256 of the samples' sources (`_digest`): what a cache keys on."""
        return _digest(self.files, f"{self.size} {self.seed}", self.field)

    def batches(self) -> Iterator[list[np.ndarray]]:
        """The samples, `batch_size` at a time: one ``(B, *input.shape)`` array per
        input. Reads only the files of the batch it yields."""
        for start in range(0, self.size, self.batch_size):
            stop = min(self.size, start + self.batch_size)
            yield [
                np.stack([self._sample(i, k) for k in range(start, stop)])
                for i in range(len(self.feeds))
            ]

    def _sample(self, index: int, k: int) -> np.ndarray:
        """Sample `k` of input `index`, of the input's shape and dtype."""
        feed, files = self.feeds[index], self.files[index]
        if files is None:
            return self._random(feed, np.random.default_rng([self.seed, index, k]))
        path = files[k]
        entry = self._entry(index)
        if not os.path.isfile(path):
            raise SynapcError(f"{entry}: '{path}': no such file")
        if path.lower().endswith(ARRAY_SUFFIX):
            return self._array(path, feed, entry)
        return self._image(path, feed, entry)

    @staticmethod
    def _array(path: str, feed: InputFeed, entry: str) -> np.ndarray:
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise SynapcError(f"{entry}: '{path}': not a readable .npy ({error})") from None
        if array.shape == feed.shape[1:] and feed.shape[:1] == (1,):
            array = array[np.newaxis]
        if array.shape != feed.shape:
            raise SynapcError(
                f"{entry}: '{path}' has shape {list(array.shape)}; input '{feed.name}' "
                f"takes {list(feed.shape)} (the batch dimension may be left out)"
            )
        return array.astype(feed.dtype, copy=False)

    @staticmethod
    def _image(path: str, feed: InputFeed, entry: str) -> np.ndarray:
        from PIL import Image

        from synapc.runtime.images import read_image, rgb_to_gray

        size = feed.image_size
        assert size is not None
        height, width, channels = size
        try:
            pixels = read_image(path)
        except SynapcError as error:
            raise SynapcError(f"{entry}: '{path}': {error}") from None
        rgb = np.repeat(pixels[:, :, :1], 3, 2) if pixels.shape[2] < 3 else pixels[..., :3]
        image = Image.fromarray(np.ascontiguousarray(rgb))
        if image.size != (width, height):
            image = image.resize((width, height), Image.Resampling.BILINEAR)
        rgb = np.asarray(image, np.uint8)
        hwc = rgb_to_gray(rgb) if channels == 1 else rgb[..., ::-1] if feed.bgr else rgb
        return Dataset._layout(_normalized(hwc, feed), feed)

    @staticmethod
    def _layout(hwc: np.ndarray, feed: InputFeed) -> np.ndarray:
        chw = np.moveaxis(hwc, -1, 0) if feed.layout == "nchw" else hwc
        return np.ascontiguousarray(chw[np.newaxis]).astype(feed.dtype, copy=False)

    @staticmethod
    def _random(feed: InputFeed, rng: np.random.Generator) -> np.ndarray:
        dtype = feed.dtype
        if dtype.kind == "b":
            return rng.integers(0, 2, feed.shape).astype(dtype)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            low, high = max(info.min, -(2**15)), min(info.max, 2**15 - 1)
            return rng.integers(low, high, feed.shape, endpoint=True).astype(dtype)
        if feed.means is None and feed.scale is None:
            return rng.standard_normal(feed.shape).astype(dtype)
        size = feed.image_size
        pixels = rng.uniform(0.0, 255.0, feed.shape)
        if size is None:
            return _normalized(pixels, feed, channel_axis=None).astype(dtype)
        hwc = np.moveaxis(pixels[0], 0, -1) if feed.layout == "nchw" else pixels[0]
        return Dataset._layout(_normalized(hwc, feed), feed)


def _normalized(
    pixels: np.ndarray, feed: InputFeed, channel_axis: int | None = -1
) -> np.ndarray:
    """``(pixels - means[c]) / scale`` for a float input (channel last), the pixels as
    they are for an integer one."""
    if feed.dtype.kind != "f":
        return pixels
    means = np.asarray(feed.means if feed.means is not None else (0.0,), np.float64)
    if channel_axis is None:
        means = means[:1]
    scale = feed.scale if feed.scale is not None else 1.0
    return (pixels.astype(np.float64) - means) / scale


def _digest(files: Sequence[Sequence[str] | None], salt: str, field: str) -> str:
    """SHA-256 over every file's name and contents, per input in order (None: random),
    and `salt`. Streams the files."""
    digest = hashlib.sha256(salt.encode())
    for paths in files:
        digest.update(b"\0random" if paths is None else b"\0files")
        for path in paths or []:
            digest.update(os.path.basename(path).encode() + b"\0")
            try:
                with open(path, "rb") as stream:
                    for chunk in iter(lambda: stream.read(1 << 20), b""):
                        digest.update(chunk)
            except OSError as error:
                raise SynapcError(f"{field}: '{path}': {error.strerror or error}") from None
    return digest.hexdigest()


def dataset_digest(globs: Sequence[str], field: str = "quantization.dataset") -> str:
    """The SHA-256 of a dataset's contents before the model is known (for the
    conversion's cache key): each glob expanded and sorted, every file hashed; an
    empty glob is an error naming its field."""
    files = [
        None
        if g == RANDOM
        else Dataset._expand(g, f"{field}[{i}]" if len(globs) > 1 else field)
        for i, g in enumerate(globs)
    ]
    return _digest(files, f"{RANDOM_SAMPLES} 0", field)
