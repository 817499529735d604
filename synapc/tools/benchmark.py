"""`synapc benchmark`: time a `model.synap` the way TFLite's `benchmark_model` does.

Loads the package (Init), runs one first inference (which compiles, or loads the program
from JAX's persistent cache), `--warmup-runs` warm-up inferences and `--num-runs` timed
ones, then prints the timings in microseconds, the count/first/curr/min/max/avg/std line
of the timed runs and the peak memory (the process's maximum resident set size).
`--profiling` adds a per-layer table (layer, type, time, share), which needs a package
converted with --profiling.

`--num_threads N` sizes XLA's CPU thread pools: XLA reads `PJRT_NPROC` once, when JAX
creates its CPU backend, so it is set before that and refused when JAX already runs in
the process. `--input FILE` (one per input, in input order) or `--input NAME=FILE` (any
subset; the others stay random) gives input values: a `.npy` array, an 8-bit `.png` /
`.bmp` image (decoded with zlib and numpy only, channels in the input's `format` order and
its layout) or raw bytes of the input's data type and size. Values are assigned like
`Tensor.assign`: data of another type than the input's is normalized with the metafile's
means / scale and quantized. Inputs without a file get random values (fixed seed).
"""

from __future__ import annotations

import argparse
import os
import resource
import struct
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from synapc.errors import SynapcError

if TYPE_CHECKING:
    from synapc.runtime import LayerTiming, Tensor

SEED = 0
#: The environment variable XLA's CPU client sizes its thread pools from (then `NPROC`,
#: then the CPUs the process may run on), read once when JAX creates the CPU backend.
THREADS_VARIABLE = "PJRT_NPROC"
IMAGE_SUFFIXES = (".png", ".bmp")
JPEG_SUFFIXES = (".jpg", ".jpeg")

#: The thread count this process asked XLA for (None: not set by synapc).
_requested_threads: int | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `synapc benchmark` options."""
    parser.add_argument("--model", required=True, metavar="PATH", help="model.synap to run")
    parser.add_argument(
        "--num-runs",
        type=int,
        default=50,
        metavar="N",
        help="timed inferences (default 50)",
    )
    parser.add_argument(
        "--warmup-runs",
        type=int,
        default=1,
        metavar="N",
        help="untimed inferences after the first one (default 1)",
    )
    parser.add_argument(
        "--num_threads",
        "--num-threads",
        dest="num_threads",
        type=int,
        default=None,
        metavar="N",
        help="CPU threads XLA may use (default: one per CPU the process may run on)",
    )
    parser.add_argument(
        "--input",
        action="append",
        dest="inputs",
        default=None,
        metavar="[NAME=]FILE",
        help="values of an input: .npy, 8-bit .png / .bmp image or raw bytes; one per "
        "input in input order, or NAME=FILE (repeatable; default random)",
    )
    parser.add_argument(
        "--profiling",
        action="store_true",
        help="also time each layer (package converted with --profiling)",
    )


def peak_memory_mb() -> float:
    """The process's peak resident set size in MB (ru_maxrss: KiB on Linux, bytes on
    macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


# -- threads -----------------------------------------------------------------------------


def _jax_backend_initialized() -> bool:
    """Whether JAX has created its backends in this process (then XLA's CPU thread pools
    are fixed). True when this JAX cannot tell: refusing beats ignoring the request."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge
    except ImportError:
        return True
    initialized = getattr(xla_bridge, "backends_are_initialized", None)
    return bool(initialized()) if callable(initialized) else True


def set_num_threads(count: int) -> None:
    """Make XLA's CPU client run computations on `count` threads: sets `PJRT_NPROC`,
    which XLA reads when JAX creates its CPU backend. A `SynapcError` when that backend
    already exists in this process (unless this function already asked for `count`)."""
    global _requested_threads
    if count < 1:
        raise SynapcError(f"--num_threads {count}: need at least one thread")
    if _requested_threads == count:
        return
    if _jax_backend_initialized():
        raise SynapcError(
            f"--num_threads {count}: JAX's CPU backend is already initialized in this "
            "process and XLA fixes its thread count then; run synapc benchmark in a "
            f"new process, or set {THREADS_VARIABLE}={count} before JAX first runs"
        )
    os.environ[THREADS_VARIABLE] = str(count)
    _requested_threads = count


def default_num_threads() -> int:
    """The thread count XLA's CPU client takes by itself: `PJRT_NPROC`, else `NPROC`,
    else the number of CPUs the process may run on."""
    for variable in (THREADS_VARIABLE, "NPROC"):
        try:
            return max(0, int(os.environ.get(variable, "")))
        except ValueError:
            continue
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1


# -- input values ------------------------------------------------------------------------


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
    `.png` / `.bmp` image of its height and width, or raw bytes of its data type and
    byte size. Every problem is a `SynapcError` naming the file and the input."""
    if not path.is_file():
        raise input_error(path, tensor, "no such file")
    suffix = path.suffix.lower()
    if suffix in JPEG_SUFFIXES:
        raise input_error(
            path,
            tensor,
            "JPEG images cannot be decoded (synapc decodes 8-bit .png and .bmp "
            "images); convert it to .png, .bmp or .npy",
        )
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
            "of raw values (.npy, .png and .bmp files are told by their suffix)",
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


# -- images (zlib and numpy only) -----------------------------------------------------


def read_image(path: Path) -> np.ndarray:
    """Decode an 8-bit PNG or an uncompressed BMP into an H x W x C uint8 array (C: 1
    gray, 2 gray + alpha, 3 RGB, 4 RGBA). An unreadable or unsupported image is a
    `SynapcError` saying why."""
    data = path.read_bytes()
    if data.startswith(_PNG_SIGNATURE):
        return _decode_png(data)
    if data.startswith(b"BM"):
        return _decode_bmp(data)
    raise SynapcError(f"not a PNG or BMP image ({path.suffix or 'no suffix'} file)")


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: PNG colour type -> channels of the decoded pixels (before palette expansion).
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    chunks = []
    offset = len(_PNG_SIGNATURE)
    while offset < len(data):
        if offset + 12 > len(data):
            raise SynapcError("truncated PNG image")
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        body = data[offset + 8 : offset + 8 + length]
        crc = data[offset + 8 + length : offset + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise SynapcError("truncated PNG image")
        if zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
            raise SynapcError(f"corrupt PNG image (bad checksum of chunk {kind!r})")
        chunks.append((kind, body))
        offset += 12 + length
        if kind == b"IEND":
            break
    return chunks


def _decode_png(data: bytes) -> np.ndarray:
    chunks = _png_chunks(data)
    if not chunks or chunks[0][0] != b"IHDR" or len(chunks[0][1]) != 13:
        raise SynapcError("corrupt PNG image (no header)")
    width, height, depth, color, compression, filtering, interlace = struct.unpack(
        ">IIBBBBB", chunks[0][1]
    )
    if color not in _PNG_CHANNELS or compression != 0 or filtering != 0:
        raise SynapcError("corrupt PNG image (unknown colour type or method)")
    if interlace != 0:
        raise SynapcError("interlaced PNG images are not supported; save it without")
    small = depth in (1, 2, 4) and color in (0, 3)
    if depth != 8 and not small:
        raise SynapcError(
            f"{depth}-bit PNG images are not supported (8-bit ones are, and 1, 2 or "
            "4-bit gray and palette ones)"
        )
    if width == 0 or height == 0:
        raise SynapcError("corrupt PNG image (empty)")
    channels = _PNG_CHANNELS[color]
    try:
        raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    except zlib.error as error:
        raise SynapcError(f"corrupt PNG image ({error})") from None
    row_bytes = (width * channels * depth + 7) // 8
    if len(raw) < height * (row_bytes + 1):
        raise SynapcError("truncated PNG image")
    rows = _unfilter(raw, height, row_bytes, max(1, channels * depth // 8))
    if small:
        bits = np.unpackbits(rows, axis=1).reshape(height, -1, depth)[:, :width]
        weights = (1 << np.arange(depth - 1, -1, -1)).astype(np.uint8)
        values = (bits * weights).sum(axis=2).astype(np.uint8)
        if color == 0:
            values = (values.astype(np.uint16) * 255 // ((1 << depth) - 1)).astype(np.uint8)
        pixels = values[:, :, np.newaxis]
    else:
        pixels = rows.reshape(height, width, channels)
    if color != 3:
        return pixels
    palette = next((body for kind, body in chunks if kind == b"PLTE"), None)
    if palette is None or len(palette) % 3:
        raise SynapcError("corrupt PNG image (palette image without a palette)")
    colors = np.frombuffer(palette, np.uint8).reshape(-1, 3)
    index = pixels[:, :, 0]
    if int(index.max()) >= len(colors):
        raise SynapcError("corrupt PNG image (palette index out of range)")
    return colors[index]


def _unfilter(raw: bytes, height: int, row_bytes: int, bpp: int) -> np.ndarray:
    """Undo PNG's per-row filters (none, sub, up, average, Paeth)."""
    out = np.zeros((height, row_bytes), np.uint8)
    prior = np.zeros(row_bytes, np.uint8)
    stride = row_bytes + 1
    for y in range(height):
        kind = raw[y * stride]
        row = np.frombuffer(raw, np.uint8, row_bytes, y * stride + 1)
        if kind == 0:
            current = row.copy()
        elif kind == 1:
            current = _unfilter_sub(row, bpp)
        elif kind == 2:
            current = row + prior
        elif kind in (3, 4):
            current = _unfilter_serial(row, prior, bpp, paeth=kind == 4)
        else:
            raise SynapcError(f"corrupt PNG image (unknown row filter {kind})")
        out[y] = current
        prior = current
    return out


def _unfilter_sub(row: np.ndarray, bpp: int) -> np.ndarray:
    """Sub: each byte adds the one `bpp` to its left, a running sum per channel."""
    padded = np.zeros(-(-len(row) // bpp) * bpp, np.uint8)
    padded[: len(row)] = row
    sums = np.cumsum(padded.reshape(-1, bpp), axis=0, dtype=np.uint8)
    return sums.reshape(-1)[: len(row)]


def _unfilter_serial(
    row: np.ndarray, prior: np.ndarray, bpp: int, paeth: bool
) -> np.ndarray:
    """Average and Paeth, which depend on the bytes just decoded: one byte at a time."""
    current = bytearray(row.tobytes())
    above = prior.tobytes()
    for i in range(len(current)):
        left = current[i - bpp] if i >= bpp else 0
        up = above[i]
        if paeth:
            corner = above[i - bpp] if i >= bpp else 0
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
        else:
            predictor = (left + up) >> 1
        current[i] = (current[i] + predictor) & 0xFF
    return np.frombuffer(bytes(current), np.uint8)


def _decode_bmp(data: bytes) -> np.ndarray:
    if len(data) < 54:
        raise SynapcError("truncated BMP image")
    offset, header = struct.unpack("<II", data[10:18])
    if header < 40:
        raise SynapcError(
            f"unsupported BMP image (header of {header} bytes; Windows 3+ BMP only)"
        )
    width, height, _, bits, compression, _, _, _, used = struct.unpack(
        "<iiHHIIiiI", data[18:50]
    )
    alpha = bits == 32
    if compression == 3 and bits == 32:  # BI_BITFIELDS: masks right after the 40 bytes
        masks = struct.unpack("<4I", data[54:70].ljust(16, b"\0"))
        if masks[:3] != (0xFF0000, 0xFF00, 0xFF):
            raise SynapcError("unsupported BMP image (32-bit with unusual colour masks)")
        alpha = header >= 56 and masks[3] == 0xFF000000
    elif compression != 0:
        raise SynapcError("compressed BMP images are not supported (uncompressed only)")
    if bits not in (8, 24, 32):
        raise SynapcError(f"{bits}-bit BMP images are not supported (8, 24 or 32-bit)")
    if width <= 0 or height == 0:
        raise SynapcError("corrupt BMP image (empty)")
    rows = abs(height)
    stride = (width * bits // 8 + 3) & ~3
    if len(data) < offset + rows * stride:
        raise SynapcError("truncated BMP image")
    table = np.frombuffer(data, np.uint8, rows * stride, offset).reshape(rows, stride)
    if height > 0:  # stored bottom-up
        table = table[::-1]
    if bits == 8:
        count = used or 256
        if len(data) < 14 + header + 4 * count:
            raise SynapcError("truncated BMP image (palette)")
        palette = np.frombuffer(data, np.uint8, 4 * count, 14 + header).reshape(count, 4)
        index = table[:, :width]
        if int(index.max()) >= count:
            raise SynapcError("corrupt BMP image (palette index out of range)")
        rgb = palette[:, 2::-1]
        gray = bool((rgb == rgb[:, :1]).all())
        return np.ascontiguousarray(rgb[index][:, :, :1] if gray else rgb[index])
    pixels = table[:, : width * bits // 8].reshape(rows, width, bits // 8)
    if alpha and pixels[:, :, 3].any():  # a BI_RGB 32-bit file may leave it all zero
        return np.ascontiguousarray(pixels[:, :, [2, 1, 0, 3]])
    return np.ascontiguousarray(pixels[:, :, 2::-1])


# -- the report ------------------------------------------------------------------------


def timing_line(times: Sequence[float]) -> str:
    """TFLite's statistics line: ``count= first= curr= min= max= avg= std=``."""
    values = np.asarray(times, np.float64)
    return (
        f"count={len(values)} first={values[0]:.0f} curr={values[-1]:.0f} "
        f"min={values.min():.0f} max={values.max():.0f} avg={values.mean():.1f} "
        f"std={values.std():.0f}"
    )


def _times(predict: Callable[[], object], last: Callable[[], float], n: int) -> list[float]:
    times = []
    for _ in range(n):
        predict()
        times.append(last())
    return times


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the benchmark described by `args` and print the report to `out` (stdout)."""
    out = out or sys.stdout
    if args.num_runs < 1:
        raise SynapcError(f"--num-runs {args.num_runs}: need at least one timed run")
    if args.warmup_runs < 0:
        raise SynapcError(f"--warmup-runs {args.warmup_runs}: cannot be negative")
    path = Path(args.model)
    if not path.is_file():
        raise SynapcError(f"{path}: no such file")
    threads = getattr(args, "num_threads", None)
    if threads is not None:
        set_num_threads(threads)
    else:
        threads = default_num_threads()
    from synapc.runtime import Network

    size = path.stat().st_size
    start = time.perf_counter_ns()
    network = Network(path)
    init_us = (time.perf_counter_ns() - start) / 1000.0
    init_peak = peak_memory_mb()
    if args.profiling and not network.package.has_layers:
        network.profile()  # raises the "built without --profiling" error
    sources = assign_inputs(
        network.inputs, getattr(args, "inputs", None), np.random.default_rng(SEED)
    )

    def last() -> float:
        return network.statistics.last_time_us

    print(f"Graph: [{path}]", file=out)
    print(f"The input model file size (MB): {size / 1e6:.6f}", file=out)
    print(f"Target: {network.package.target}", file=out)
    print(f"Num threads: [{threads}]", file=out)
    for tensor, source in zip(network.inputs, sources, strict=True):
        print(
            f"Input '{tensor.name}' {tensor.data_type.name} {list(tensor.shape)}: "
            f"{source.describe()}",
            file=out,
        )
    print(f"Init: {init_us:.0f} us", file=out)
    first = _times(network.predict, last, 1)[0]
    warmup = _times(network.predict, last, args.warmup_runs)
    print(
        f"Running {args.warmup_runs} warm-up and {args.num_runs} timed inference runs.",
        file=out,
    )
    runs = _times(network.predict, last, args.num_runs)
    print(timing_line(runs), file=out)
    warmup_avg = f"{np.mean(warmup):.1f}" if warmup else "n/a"
    print(
        f"Inference timings in us: Init: {init_us:.0f}, First inference: {first:.0f}, "
        f"Warmup (avg): {warmup_avg}, Inference (avg): {np.mean(runs):.1f}",
        file=out,
    )
    print(
        f"Peak memory footprint (MB): init={init_peak:.2f} overall={peak_memory_mb():.2f}",
        file=out,
    )
    if args.profiling:
        print_profile(network.profile(), out)
    return 0


def print_profile(timings: Sequence[LayerTiming], out: TextIO) -> None:
    """The per-layer table: layer, type, time (us), share (%), in graph order, and a
    total line."""
    total = sum(t.time_us for t in timings)
    rows = [
        (
            t.name,
            t.type,
            f"{t.time_us:.1f}",
            f"{100.0 * t.time_us / total if total else 0.0:.1f}",
        )
        for t in timings
    ]
    rows.append(("total", "", f"{total:.1f}", "100.0"))
    header = ("layer", "type", "time (us)", "share (%)")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    print("Per-layer profile (one run each, graph order):", file=out)
    for i, row in enumerate([header, *rows]):
        if i == len(rows):
            print("-" * (sum(widths) + 6), file=out)
        print(
            f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  "
            f"{row[3]:>{widths[3]}}",
            file=out,
        )
