"""Quantized SOFTMAX, LOG_SOFTMAX and L2_NORMALIZATION against LiteRT.

Every case is one TFLite operator with quantized tensors, run on random data over the
whole storage range of its input (and a little beyond, so both ends occur) in LiteRT
(``OpResolverType.BUILTIN_REF``) and in synapc (target VS680); the stored integers must be
identical. Ids are ``<OP>-<in>_<out>-<variant>``.

What LiteRT 2.3 accepts, so what is covered:

* SOFTMAX: int8 -> int8 (output scale 1/256, zero point -128, both checked), uint8 ->
  uint8 (output parameters not checked; the integers encode 1/256 and 0), int8 -> int16
  and uint8 -> int16 (not checked; 1/65536 and -32768), int16 -> int16 (zero points 0 and
  output scale 1/32768, checked). Refused: uint8 -> int8, int8 -> uint8, 8-bit -> int32,
  int16 -> int8, int16 with a nonzero zero point.
* LOG_SOFTMAX: int8 and uint8 (output scale 16/256, zero point 127 / 255, checked).
  Refused: int16, mixed input and output types.
* L2_NORMALIZATION: int8 and uint8 (output scale 1/128, zero point 0 / 128, checked).
  Refused: int16, mixed types, any fused activation (float too).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import synapc
from synapc.backends.jax.lowering import UnsupportedOpError
from synapc.testing.oracle import (
    Case,
    CaseGraph,
    check_case,
    reference_resolver,
    run_litert,
)
from synapc.testing.tflite_builder import Quant

pytest.importorskip("ai_edge_litert.interpreter")

I8, U8, I16 = np.int8, np.uint8, np.int16

_CASES: list[Any] = []


def _add(op: str, variant: str, case: Case) -> None:
    _CASES.append(pytest.param(case, id=f"{op}-{variant}"))


def _input(
    g: CaseGraph,
    shape: Sequence[int],
    dtype: type,
    scale: float,
    zero_point: int,
    value: np.ndarray | None = None,
    real_range: tuple[float, float] | None = None,
) -> int:
    """An input whose random values cover the whole storage range (and a little more), or
    `real_range`, or hold `value`."""
    info = np.iinfo(dtype)
    low, high = real_range or (
        scale * (int(info.min) - 0.6 - zero_point),
        scale * (int(info.max) + 0.6 - zero_point),
    )
    return g.input(
        shape,
        low,
        high,
        dtype=dtype,
        value=value,
        quant=Quant(scale, zero_point),
    )


def _unary(
    op: str,
    shape: Sequence[int],
    in_dtype: type,
    in_quant: tuple[float, int],
    out_dtype: type,
    out_quant: tuple[float, int],
    value: np.ndarray | None = None,
    real_range: tuple[float, float] | None = None,
    **options: Any,
) -> Case:
    """`op` on one quantized input of `shape` (real `value`s, or random over
    `real_range` or the whole storage range)."""

    def case(g: CaseGraph) -> None:
        x = _input(g, shape, in_dtype, *in_quant, value=value, real_range=real_range)
        g.output(g.op(op, [x], dtype=out_dtype, quant=Quant(*out_quant), **options))

    return case


# -- SOFTMAX ---------------------------------------------------------------------------
_SOFTMAX_OUT = {
    (I8, I8): (1 / 256, -128),
    (U8, U8): (1 / 256, 0),
    (I8, I16): (1 / 65536, -32768),
    (U8, I16): (1 / 65536, -32768),
    (I16, I16): (1 / 32768, 0),
}
_NAMES = {I8: "i8", U8: "u8", I16: "i16"}

for (_in, _out), _variants in {
    (I8, I8): [
        ("depth1", [4, 1], 0.1, 3, 1.0),
        ("depth3_beta0.5_tiny_scale", [5, 3], 0.001, -7, 0.5),
        ("depth40_beta2_wide_scale", [3, 40], 0.4, 0, 2.0),  # many below diff_min
        ("4d_depth10_beta0.7", [1, 2, 3, 10], 0.1, -20, 0.7),
    ],
    (U8, U8): [
        ("depth10_beta0.5", [6, 10], 0.07, 120, 0.5),
        ("4d_depth40_beta2", [1, 2, 2, 40], 0.03, 135, 2.0),
    ],
    (I8, I16): [("4d_depth40_beta0.5", [1, 2, 2, 40], 0.3, 9, 0.5)],
    (U8, I16): [("depth10_beta2", [6, 10], 0.05, 130, 2.0)],
    (I16, I16): [
        ("depth1", [4, 1], 0.0005, 0, 1.0),
        ("depth3_beta0.5", [5, 3], 0.0003, 0, 0.5),
        ("depth40_beta0.7", [3, 40], 0.0007, 0, 0.7),
        ("4d_depth10_beta2", [1, 2, 3, 10], 0.0001, 0, 2.0),
    ],
}.items():
    for _variant, _shape, _scale, _zp, _beta in _variants:
        _add(
            "SOFTMAX",
            f"{_NAMES[_in]}_{_NAMES[_out]}-{_variant}",
            _unary(
                "SOFTMAX",
                _shape,
                _in,
                (_scale, _zp),
                _out,
                _SOFTMAX_OUT[_in, _out],
                beta=_beta,
            ),
        )

# int16: the exp input multiplier is float32(s_in * beta) / (10 / 65535), the product
# rounded to float32 first. With these parameters a double product changes the
# multiplier by 50 units and 1 of these 68,608 outputs (inputs near the row maximum).
_S16, _B16 = 0.00014324789, 0.45
_add(
    "SOFTMAX",
    "i16_i16-float32_scale_times_beta",
    _unary(
        "SOFTMAX",
        [134, 512],
        I16,
        (_S16, 0),
        I16,
        (1 / 32768, 0),
        real_range=(0.0, 2.0 / _B16),
        beta=_B16,
    ),
)

# -- LOG_SOFTMAX -----------------------------------------------------------------------
_LOG_SOFTMAX_OUT = {I8: (16 / 256, 127), U8: (16 / 256, 255)}
for _dtype, _variants in {
    I8: [
        ("depth1", [4, 1], 0.1, 3),
        ("depth3", [5, 3], 0.05, -7),
        ("depth40_wide_scale", [3, 40], 0.4, 0),  # many below the adjusted diff_min
        ("4d_depth10_tiny_scale", [1, 2, 3, 10], 0.001, -20),
    ],
    U8: [
        ("depth10", [6, 10], 0.07, 120),
        ("4d_depth40", [1, 2, 2, 40], 0.2, 135),
    ],
}.items():
    for _variant, _shape, _scale, _zp in _variants:
        _add(
            "LOG_SOFTMAX",
            f"{_NAMES[_dtype]}-{_variant}",
            _unary(
                "LOG_SOFTMAX",
                _shape,
                _dtype,
                (_scale, _zp),
                _dtype,
                _LOG_SOFTMAX_OUT[_dtype],
            ),
        )

# -- L2_NORMALIZATION ------------------------------------------------------------------
_L2_OUT = {I8: (1 / 128, 0), U8: (1 / 128, 128)}
for _dtype, _variants in {
    I8: [
        ("depth1", [6, 1], 0.1, 3),
        ("depth3", [5, 3], 0.05, -7),
        ("depth40", [3, 40], 0.4, 0),
        ("4d_depth10", [1, 2, 3, 10], 0.1, -128),
    ],
    U8: [
        ("depth1", [6, 1], 0.1, 128),
        ("depth10", [6, 10], 0.07, 3),
        ("4d_depth40", [1, 2, 2, 40], 0.2, 135),
    ],
}.items():
    for _variant, _shape, _scale, _zp in _variants:
        _add(
            "L2_NORMALIZATION",
            f"{_NAMES[_dtype]}-{_variant}",
            _unary(
                "L2_NORMALIZATION", _shape, _dtype, (_scale, _zp), _dtype, _L2_OUT[_dtype]
            ),
        )


def _l2_special(dtype: type, zero_point: int) -> np.ndarray:
    """Rows whose sum of squares is 0, 1, 2 (GetInvSqrtQuantizedMultiplierExp's special
    and smallest cases) and at least 2**29 (its divide-by-4 loop), in real units of
    scale 1."""
    info = np.iinfo(dtype)
    far = int(info.min) if zero_point > 0 else int(info.max)  # |x - zp| = 255 or so
    rows = np.zeros([4, 9000])
    rows[1, 5] = 1.0
    rows[2, :2] = [-1.0, 1.0]
    rows[3] = far - zero_point
    return rows


for _dtype, _zp in [(I8, 127), (U8, 0)]:
    _add(
        "L2_NORMALIZATION",
        f"{_NAMES[_dtype]}-zero_tiny_and_huge_rows",
        _unary(
            "L2_NORMALIZATION",
            [4, 9000],
            _dtype,
            (1.0, _zp),
            _dtype,
            _L2_OUT[_dtype],
            _l2_special(_dtype, _zp),
        ),
    )


@pytest.mark.parametrize("case", _CASES)
def test_quantized_normalization(tmp_path: Path, case: Case) -> None:
    """One quantized operator gives LiteRT's integers."""
    check_case(tmp_path, case, reference_resolver(), target="VS680")


@pytest.mark.parametrize(
    ("op", "in_dtype", "in_quant", "out_dtype", "out_quant", "options"),
    [
        pytest.param(
            "SOFTMAX", I8, (0.1, 0), I8, (1 / 256, 0), {"beta": 1.0}, id="SOFTMAX-i8_zp0"
        ),
        pytest.param(
            "SOFTMAX",
            I8,
            (0.1, 0),
            I8,
            (1 / 200, -128),
            {"beta": 1.0},
            id="SOFTMAX-i8_scale",
        ),
        pytest.param(
            "SOFTMAX", U8, (0.1, 0), I8, (1 / 256, -128), {"beta": 1.0}, id="SOFTMAX-u8_i8"
        ),
        pytest.param(
            "SOFTMAX",
            I16,
            (1e-3, 0),
            I8,
            (1 / 256, -128),
            {"beta": 1.0},
            id="SOFTMAX-i16_i8",
        ),
        pytest.param(
            "SOFTMAX",
            I16,
            (1e-3, 5),
            I16,
            (1 / 32768, 0),
            {"beta": 1.0},
            id="SOFTMAX-i16_zp",
        ),
        pytest.param("LOG_SOFTMAX", I16, (1e-3, 0), I16, (16 / 32768, 0), {}, id="LOG-i16"),
        pytest.param("LOG_SOFTMAX", I8, (0.1, 0), I8, (16 / 256, 0), {}, id="LOG-i8_zp0"),
        pytest.param(
            "L2_NORMALIZATION", I16, (1e-3, 0), I16, (1 / 32768, 0), {}, id="L2-i16"
        ),
        pytest.param(
            "L2_NORMALIZATION", U8, (0.1, 0), U8, (1 / 128, 0), {}, id="L2-u8_zp0"
        ),
    ],
)
def test_refused(
    tmp_path: Path,
    op: str,
    in_dtype: type,
    in_quant: tuple[float, int],
    out_dtype: type,
    out_quant: tuple[float, int],
    options: dict[str, Any],
) -> None:
    """What LiteRT's kernels refuse (types, fixed output encodings, int16 zero points) is
    unsupported in synapc too."""
    g = CaseGraph({"t2": (2, 5)})  # the result shape (LiteRT fails before setting it)
    _unary(op, [2, 5], in_dtype, in_quant, out_dtype, out_quant, **options)(g)
    data = g.builder.build()
    with pytest.raises(RuntimeError):
        run_litert(data, g.feeds, reference_resolver())
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    with pytest.raises(UnsupportedOpError):
        synapc.compile(synapc.import_model(path), target="VS680").run(g.feeds)


def test_softmax_scale_below_range_is_refused(tmp_path: Path) -> None:
    """``beta * s_in * 2**26 <= 1`` fails a TFLITE_CHECK in LiteRT (the process aborts, so
    LiteRT is not run here); synapc refuses it."""
    g = CaseGraph({"t2": (2, 5)})
    _unary("SOFTMAX", [2, 5], I8, (1e-8, 0), I8, (1 / 256, -128), beta=1.0)(g)
    path = tmp_path / "model.tflite"
    path.write_bytes(g.builder.build())
    with pytest.raises(UnsupportedOpError, match="beta \\* input scale"):
        synapc.compile(synapc.import_model(path), target="VS680").run(g.feeds)
