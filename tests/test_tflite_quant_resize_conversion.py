"""Quantized TFLite resize and conversion operators through synapc, checked against
LiteRT.

Every case builds a one-operator model, runs it in LiteRT (`OpResolverType.BUILTIN_REF`)
and in synapc, and requires identical integers (dequantized floats: equal within 1e-5).
Quantized inputs hold random values over the whole storage range.

What LiteRT 2.3 does, as found while writing these cases:

* RESIZE_BILINEAR: int8 and int16 run ResizeBilinearInteger (10-bit fixed point); uint8
  runs the float kernel (float32 weights, + 0.5, truncated). Both resize operators take
  the output quantization to be the input's (the integers are not rescaled).
* QUANTIZE from float: per-tensor ``round(double(x) / double(scale))`` (ties away from
  zero), per-channel with a float32 quotient. Requantizing (int8 / uint8 -> int8, uint8,
  int16; int16 -> int8, int16, int32; int32 -> int8, int16) multiplies by the double
  ``s_in / s_out`` as a fixed-point multiplier (double rounding). LiteRT refuses float ->
  int32, int8 / uint8 -> int32, int16 -> uint8 and int32 -> uint8 / int32.
* CAST from float to an integer truncates and saturates (NaN becomes the maximum);
  integers wrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import synapc
from synapc.testing.oracle import (
    QUANTS,
    Case,
    CaseGraph,
    build_case,
    check_case,
    reference_resolver,
    run_litert,
    storage_range,
)
from synapc.testing.tflite_builder import Quant

pytest.importorskip("ai_edge_litert.interpreter")

TYPES = tuple(QUANTS)


def _real(stored: np.ndarray, quant: Quant) -> np.ndarray:
    """The real values that per-tensor `quant` stores as the integers `stored`."""
    scales, zero_points = quant.arrays()
    return float(scales[0]) * (stored - float(zero_points[0]))


def _i32(values: Any) -> np.ndarray:
    return np.asarray(values, np.int32)


_CASES: list[Any] = []


def _add(op: str, variant: str, case: Case) -> None:
    _CASES.append(pytest.param(case, id=f"{op}-{variant}"))


# -- resize ----------------------------------------------------------------------------
def _resize(
    op: str, type_name: str, shape: Sequence[int], size: Sequence[int], **options: Any
) -> Case:
    dtype, quant = QUANTS[type_name]
    low, high = storage_range(dtype, quant)

    def case(g: CaseGraph) -> None:
        x = g.input(shape, low, high, dtype, quant=quant)
        g.output(g.op(op, [x, g.const(_i32(size))], dtype=dtype, quant=quant, **options))

    return case


_MODES = [
    ("asymmetric", {}),
    ("align_corners", {"align_corners": True}),
    ("half_pixel_centers", {"half_pixel_centers": True}),
]
for _op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
    for _t in TYPES:
        for _mode, _options in _MODES:
            # H up by a non-integer factor, W down
            _add(
                _op, f"{_t}_7x4_{_mode}", _resize(_op, _t, [1, 4, 6, 3], [7, 4], **_options)
            )
    for _t in TYPES:
        _add(
            _op,
            f"{_t}_up_x2_batch2_half_pixel",
            _resize(_op, _t, [2, 3, 3, 2], [6, 6], half_pixel_centers=True),
        )
    _add(
        _op,
        "int8_to_1x1_align_corners",
        _resize(_op, "int8", [1, 4, 6, 2], [1, 1], align_corners=True),
    )
    _add(_op, "uint8_up_5x11", _resize(_op, "uint8", [1, 3, 4, 4], [5, 11]))


def _bilinear_every_uint8_pair(**options: Any) -> Case:
    """uint8 RESIZE_BILINEAR of 2 rows holding every pair of stored values to 7 rows:
    float32 weights such as 1/6 make thousands of sums land within an ulp of a
    truncation boundary, where other float evaluations (FMA, float64) would differ."""
    dtype, quant = QUANTS["uint8"]
    pairs = np.stack(np.meshgrid(np.arange(256), np.arange(256), indexing="ij"))
    real = _real(pairs.reshape(1, 2, 1, -1), quant)

    def case(g: CaseGraph) -> None:
        x = g.input(real.shape, dtype=dtype, value=real, quant=quant)
        g.output(
            g.op(
                "RESIZE_BILINEAR",
                [x, g.const(_i32([7, 1]))],
                dtype=dtype,
                quant=quant,
                **options,
            )
        )

    return case


for _mode, _options in _MODES[1:]:
    _add(
        "RESIZE_BILINEAR",
        f"uint8_every_pair_{_mode}",
        _bilinear_every_uint8_pair(**_options),
    )


# -- quantize --------------------------------------------------------------------------
def _quantize_float(
    type_name: str, quant: Quant | None = None, values: np.ndarray | None = None
) -> Case:
    """QUANTIZE of random floats over (a little beyond) the output's range, or `values`."""
    dtype, default = QUANTS[type_name]
    quant = quant or default
    low, high = storage_range(dtype, quant)
    shape = [4, 30] if values is None else list(values.shape)

    def case(g: CaseGraph) -> None:
        x = g.input(shape, low, high, value=values)
        g.output(g.op("QUANTIZE", [x], dtype=dtype, quant=quant, shape=shape))

    return case


for _t in TYPES:
    _add("QUANTIZE", f"float_to_{_t}", _quantize_float(_t))
# exact ties x / scale = n + 1/2 with a scale whose reciprocal is inexact (they round
# away from zero), plus values far out of range, infinities and NaN
_SCALE = 249 * 2.0**-11
_SPECIAL = np.array([1e10, -1e10, 3e9, np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
for _t, _zero_point in [("int8", -1), ("int16", 0), ("uint8", 128)]:
    _ties = ((np.arange(-140, 140) + 0.5) * _SCALE).astype(np.float32)
    _add(
        "QUANTIZE",
        f"float_to_{_t}_ties_and_specials",
        _quantize_float(_t, Quant(_SCALE, _zero_point), np.concatenate([_ties, _SPECIAL])),
    )
_add(
    "QUANTIZE",
    "float_to_int8_per_channel",
    _quantize_float("int8", Quant(np.array([0.01, 0.02, 0.03, 0.05]), 0, axis=0)),
)
_add(
    "QUANTIZE",
    "float_to_int8_per_channel_axis1",
    _quantize_float("int8", Quant(np.linspace(0.01, 0.04, 30), -2, axis=1)),
)

_REQUANTIZE_TO = {
    "int8": Quant(0.07, 5),
    "uint8": Quant(0.03, 120),
    "int16": Quant(0.0003, 0),
    "int32": Quant(0.00002, 0),
}
_SOURCES = {**QUANTS, "int32": (np.int32, Quant(0.0001, 0))}


def _requantize(source: str, target: str, low: int = -70000, high: int = 70000) -> Case:
    """QUANTIZE of random stored integers of type `source` (within [low, high])."""
    in_dtype, in_quant = _SOURCES[source]
    out_dtype = {"int32": np.int32, **{k: v[0] for k, v in QUANTS.items()}}[target]
    info = np.iinfo(in_dtype)

    def case(g: CaseGraph) -> None:
        stored = g.rng.integers(
            max(info.min, low), min(info.max, high), [3, 50], endpoint=True
        )
        x = g.input([3, 50], dtype=in_dtype, value=_real(stored, in_quant), quant=in_quant)
        g.output(g.op("QUANTIZE", [x], dtype=out_dtype, quant=_REQUANTIZE_TO[target]))

    return case


for _source, _targets in [
    ("int8", ("int8", "uint8", "int16")),
    ("uint8", ("int8", "uint8", "int16")),
    ("int16", ("int8", "int16", "int32")),
    ("int32", ("int8", "int16")),
]:
    for _target in _targets:
        _add("QUANTIZE", f"{_source}_to_{_target}", _requantize(_source, _target))


# -- dequantize ------------------------------------------------------------------------
def _dequantize(
    type_name: str, quant: Quant | None = None, shape: Sequence[int] = (3, 40)
) -> Case:
    dtype, default = QUANTS[type_name]
    quant = quant or default
    low, high = storage_range(dtype, quant)

    def case(g: CaseGraph) -> None:
        x = g.input(shape, low, high, dtype, quant=quant)
        g.output(g.op("DEQUANTIZE", [x], shape=shape))

    return case


for _t in TYPES:
    _add("DEQUANTIZE", _t, _dequantize(_t))
_add(
    "DEQUANTIZE",
    "int8_per_channel",
    _dequantize("int8", Quant(np.array([0.01, 0.02, 0.037]), [1, -4, 0], axis=0)),
)
_add(
    "DEQUANTIZE",
    "uint8_per_channel_axis1",
    _dequantize("uint8", Quant(np.linspace(0.01, 0.2, 40), 128, axis=1)),
)


# -- cast ------------------------------------------------------------------------------
_CAST_FLOATS = np.array(
    [
        -3e9,
        -70000.5,
        -200.7,
        -129.5,
        -3.7,
        -0.5,
        -0.0,
        0.4,
        1.5,
        127.9,
        255.5,
        300.2,
        32767.9,
        70000.3,
        2147483520.0,
        2147483648.0,
        3e9,
        np.inf,
        -np.inf,
        np.nan,
    ],
    np.float32,
)


def _cast(source: type, target: type) -> Case:
    """CAST of (extreme) values of type `source` to `target` (no quantization)."""

    def case(g: CaseGraph) -> None:
        if source == np.float32:
            values = _CAST_FLOATS
        elif source == np.bool_:
            values = np.array([True, False, True, True])
        else:
            info = np.iinfo(source)
            extremes = [info.min, info.max, 0, 1, min(info.max, 200), min(info.max, 129)]
            values = np.concatenate(
                [np.array(extremes), g.rng.integers(info.min, info.max, 12, endpoint=True)]
            ).astype(source)
        x = g.input(values.shape, dtype=source, value=values)
        g.output(g.op("CAST", [x], dtype=target))

    return case


_CAST_TYPES = {
    "float32": np.float32,
    "int32": np.int32,
    "int16": np.int16,
    "int8": np.int8,
    "uint8": np.uint8,
    "bool": np.bool_,
}
for _source, _target in [
    ("float32", "int8"),
    ("float32", "uint8"),
    ("float32", "int16"),
    ("float32", "int32"),
    ("float32", "bool"),
    ("int32", "int8"),
    ("int32", "uint8"),
    ("int32", "int16"),
    ("int32", "bool"),
    ("int16", "int8"),
    ("int16", "float32"),
    ("int8", "uint8"),
    ("int8", "int32"),
    ("uint8", "int8"),
    ("uint8", "float32"),
    ("bool", "int32"),
    ("bool", "float32"),
]:
    _add(
        "CAST",
        f"{_source}_to_{_target}",
        _cast(_CAST_TYPES[_source], _CAST_TYPES[_target]),
    )


@pytest.mark.parametrize("case", _CASES)
def test_operator(tmp_path: Path, case: Case) -> None:
    """One quantized (or integer) operator gives LiteRT's integers."""
    check_case(tmp_path, case)


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
def test_resize_with_other_output_quantization_is_rejected(tmp_path: Path, op: str) -> None:
    """LiteRT resizes the stored integers and writes them into an output quantized
    differently without rescaling; synapc refuses to import such a model rather than
    compute other integers."""

    def case(g: CaseGraph) -> None:
        x = g.input([1, 2, 3, 1], -2.0, 2.0, np.int8, quant=Quant(0.05, -3))
        g.output(g.op(op, [x, g.const(_i32([4, 4]))], dtype=np.int8, quant=Quant(0.1, 2)))

    resolver = reference_resolver()
    data, feeds = build_case(case, resolver)
    run_litert(data, feeds, resolver)  # LiteRT accepts and runs the model
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    with pytest.raises(synapc.SynapcError, match="without rescaling"):
        synapc.import_model(path)


def test_cast_of_quantized_tensor_is_rejected(tmp_path: Path) -> None:
    """LiteRT's CAST converts the stored integers of a quantized tensor and ignores its
    quantization; synapc's cast takes no quantized types, and the importer says so."""

    def case(g: CaseGraph) -> None:
        x = g.input([2, 3], -2.0, 2.0, np.int8, quant=Quant(0.05, -3))
        g.output(g.op("CAST", [x], dtype=np.int32))

    resolver = reference_resolver()
    data, feeds = build_case(case, resolver)
    run_litert(data, feeds, resolver)  # LiteRT accepts and runs the model
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    with pytest.raises(synapc.SynapcError, match="CAST of a quantized tensor"):
        synapc.import_model(path)
