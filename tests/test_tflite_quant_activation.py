"""Quantized TFLite activations and unary math through synapc, checked against LiteRT.

Every case is one operator on int8, uint8 or int16 ("16x8" activations) values, run in
LiteRT's reference kernels (`OpResolverType.BUILTIN_REF`) and through
`synapc.import_model` + `synapc.compile(target="VS680")`; the outputs must be identical
integers. The input holds every stored value of its type once, in random order (values
below the zero point are left out for SQRT and RSQRT, which LiteRT rejects), so each case
covers its whole lookup table or integer range.

ELU is missing from LiteRT 2.3's reference resolver; it runs on the builtin kernels
without the default delegate (as in tests/test_tflite_float_ops.py).

Combinations LiteRT refuses at Prepare or Eval have no oracle; `test_refused` checks that
LiteRT still refuses each of them and that synapc raises UnsupportedOpError for them too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import synapc
from synapc.backends.jax.lowering import UnsupportedOpError
from synapc.testing.oracle import (
    Case,
    CaseGraph,
    builtin_resolver,
    check_case,
    reference_resolver,
    run_litert,
)
from synapc.testing.tflite_builder import ModelBuilder, Quant

pytest.importorskip("ai_edge_litert.interpreter")

REFERENCE = reference_resolver()
BUILTIN_NO_DELEGATE = builtin_resolver()

I8, U8, I16 = np.int8, np.uint8, np.int16

# Output parameters TFLite requires for LOGISTIC (int8 / uint8: scale 1/256) and for the
# int16 LOGISTIC and TANH (Q0.15).
SIGMOID_OUT = {I8: Quant(1 / 256, -128), U8: Quant(1 / 256, 0), I16: Quant(2**-15, 0)}
TANH_OUT = {I8: Quant(1 / 128, 0), U8: Quant(1 / 128, 128), I16: Quant(2**-15, 0)}

_CASES: list[Any] = []


def _add(op: str, variant: str, case: Case) -> None:
    resolver = BUILTIN_NO_DELEGATE if op == "ELU" else REFERENCE
    _CASES.append(pytest.param(case, resolver, id=f"{op}-{variant}"))


def _unary(
    op: str,
    dtype: type,
    q_in: Quant,
    q_out: Quant,
    *,
    non_negative: bool = False,
    **options: Any,
) -> Case:
    """`op` on every stored value of `dtype` (from the zero point up with
    `non_negative`), shuffled."""

    def case(g: CaseGraph) -> None:
        info = np.iinfo(dtype)
        zero_point = int(np.asarray(q_in.zero_point))
        low = zero_point if non_negative else info.min
        stored = g.rng.permutation(np.arange(low, info.max + 1))
        real = (stored - zero_point) * float(np.float32(q_in.scale))
        x = g.input(real.shape, dtype=dtype, value=real, quant=q_in)
        g.output(g.op(op, [x], dtype=dtype, quant=q_out, **options))

    return case


# -- RELU family: MBQM rescale to the output, clamp to the quantized bounds ------------
for _op in ("RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1"):
    _add(_op, "int8", _unary(_op, I8, Quant(0.0478, -23), Quant(0.0311, -101)))
    _add(_op, "int8_same_params", _unary(_op, I8, Quant(0.0235, 5), Quant(0.0235, 5)))
    _add(_op, "uint8", _unary(_op, U8, Quant(0.0193, 140), Quant(0.0527, 37)))
for _op in ("RELU", "RELU6"):  # LiteRT has no int16 RELU_N1_TO_1 / RELU_0_TO_1
    # s_in / s_out in float32 and in double give different multipliers here.
    _add(_op, "int16", _unary(_op, I16, Quant(8.48e-5, 0), Quant(2.49e-4, 0)))
_add("RELU", "int8_upscale", _unary("RELU", I8, Quant(0.4, 3), Quant(0.0021, -128)))

# -- LEAKY_RELU: one multiplier per sign -----------------------------------------------
for _variant, _dtype, _q_in, _q_out, _alpha in [
    ("int8_alpha_0.2", I8, Quant(0.0371, 12), Quant(0.0283, 40), 0.2),
    ("int8_alpha_negative", I8, Quant(0.0371, -12), Quant(0.0452, 3), -0.5),
    ("uint8_alpha_0.01", U8, Quant(0.0229, 171), Quant(0.0197, 90), 0.01),
    ("int16_alpha_2.0", I16, Quant(4.13e-4, 0), Quant(6.9e-4, 0), 2.0),
]:
    _add("LEAKY_RELU", _variant, _unary("LEAKY_RELU", _dtype, _q_in, _q_out, alpha=_alpha))

# -- LOGISTIC / TANH: float32 tables (8-bit), interpolated sigmoid table (int16) -------
for _op, _out in (("LOGISTIC", SIGMOID_OUT), ("TANH", TANH_OUT)):
    _add(_op, "int8", _unary(_op, I8, Quant(0.0613, -9), _out[I8]))
    _add(_op, "uint8", _unary(_op, U8, Quant(0.0442, 121), _out[U8]))
    _add(_op, "int16", _unary(_op, I16, Quant(3.05e-4, 0), _out[I16]))
# Power-of-two input scales keep TFLite's multiplier 0 (a plain shift).
_add(
    "LOGISTIC",
    "int16_pot_scale",
    _unary("LOGISTIC", I16, Quant(2**-12, 0), SIGMOID_OUT[I16]),
)
_add("TANH", "int16_pot_scale", _unary("TANH", I16, Quant(2**-11, 0), TANH_OUT[I16]))
_add("TANH", "int8_other_output", _unary("TANH", I8, Quant(0.0613, -9), Quant(0.0093, 7)))

# -- HARD_SWISH: int16 fixed point -----------------------------------------------------
for _variant, _dtype, _q_in, _q_out in [
    ("int8", I8, Quant(0.0467, -17), Quant(0.0351, -80)),
    ("uint8", U8, Quant(0.0587, 133), Quant(0.0402, 41)),
    # reluish multiplier > 1: saturating left shifts.
    ("int8_wide_input", I8, Quant(0.9, 4), Quant(0.45, -100)),
    # reluish multiplier < 1 and an output shift of 16+ bits (int16 RoundingDivideByPOT).
    ("int8_narrow_input", I8, Quant(1e-4, 0), Quant(0.7, 0)),
]:
    _add("HARD_SWISH", _variant, _unary("HARD_SWISH", _dtype, _q_in, _q_out))

# -- GELU: float32 tables (256 entries for 8 bits, 513 interpolated for int16) ---------
# (the exact int8 and int16 parameters tell TFLite's erfc form from 1 + erf)
for _approximate in (False, True):
    _name = "approximate" if _approximate else "exact"
    for _variant, _dtype, _q_in, _q_out in [
        ("int8", I8, Quant(0.0708, -28), Quant(0.0608, -93)),
        ("uint8", U8, Quant(0.0413, 118), Quant(0.0219, 22)),
        ("int16", I16, Quant(6.631e-4, 0), Quant(1.403e-4, 0)),
    ]:
        _add(
            "GELU",
            f"{_variant}_{_name}",
            _unary("GELU", _dtype, _q_in, _q_out, approximate=_approximate),
        )

# -- ELU (int8 table of expm1f; these parameters tell expm1f from expf - 1) ------------
_add("ELU", "int8", _unary("ELU", I8, Quant(0.007953555, 53), Quant(0.010142364, 28)))
_add("ELU", "int8_wide", _unary("ELU", I8, Quant(0.0553, 60), Quant(0.0311, 2)))

# -- EXP / LOG: tables -----------------------------------------------------------------
_add("EXP", "int8", _unary("EXP", I8, Quant(0.0241, -30), Quant(0.0613, -120)))
# exp overflows float32 (and int32) on the top inputs: LiteRT saturates them.
_add("EXP", "int8_overflow", _unary("EXP", I8, Quant(0.83, -11), Quant(0.00136, 55)))
_add("EXP", "int16", _unary("EXP", I16, Quant(1.1e-4, 0), Quant(1.2e-3, 0)))
_add("LOG", "int8", _unary("LOG", I8, Quant(0.0362, -60), Quant(0.0299, 38)))
_add("LOG", "int16", _unary("LOG", I16, Quant(7.5e-4, 0), Quant(6.4e-4, 0)))

# -- SQRT (float32, truncated) / RSQRT (int8 fixed point, int16 table) -----------------
for _op, _q8, _q16 in [
    ("SQRT", Quant(0.0644, 100), Quant(6.8e-4, 0)),
    ("RSQRT", Quant(0.0229, 103), Quant(1.02e-3, 0)),
]:
    _add(_op, "int8", _unary(_op, I8, Quant(0.0467, -113), _q8, non_negative=True))
    _add(_op, "int16", _unary(_op, I16, Quant(4.4e-4, 0), _q16, non_negative=True))

# -- ABS / NEG -------------------------------------------------------------------------
_add("ABS", "int8", _unary("ABS", I8, Quant(0.0763, -30), Quant(0.0452, -103)))
_add("ABS", "int8_same_scale", _unary("ABS", I8, Quant(0.0524, 14), Quant(0.0524, -49)))
_add("ABS", "int16", _unary("ABS", I16, Quant(7.0e-4, 0), Quant(1.2e-3, 0)))
# LiteRT negates the stored integers whatever the quantization (-(-128) wraps to -128).
_add("NEG", "int8", _unary("NEG", I8, Quant(0.0717, 98), Quant(0.0191, 60)))
_add("NEG", "int16", _unary("NEG", I16, Quant(1.25e-3, 0), Quant(1.2e-3, 0)))


@pytest.mark.parametrize(("case", "resolver"), _CASES)
def test_operator(tmp_path: Path, case: Case, resolver: Any) -> None:
    """One quantized operator gives LiteRT's integers on every stored input value."""
    check_case(tmp_path, case, resolver, target="VS680")


def _model(op: str, dtype: type, q_in: Quant, q_out: Quant) -> tuple[bytes, np.ndarray]:
    b = ModelBuilder()
    x = b.input("x", [8], dtype, quant=q_in)
    y = b.tensor("y", [8], dtype, quant=q_out)
    b.op(op, [x], [y])
    b.output(y)
    return b.build(), np.zeros([8], dtype)


_Q8 = Quant(0.05, 3)


@pytest.mark.parametrize(
    ("op", "dtype", "q_in", "q_out"),
    [
        pytest.param(
            "HARD_SWISH", I16, Quant(1e-3, 0), Quant(1e-3, 0), id="HARD_SWISH-int16"
        ),
        pytest.param(
            "HARD_SWISH", I8, Quant(1.0, 0), Quant(1e-3, 0), id="HARD_SWISH-ratio"
        ),
        pytest.param("ELU", U8, _Q8, _Q8, id="ELU-uint8"),
        pytest.param("ELU", I16, Quant(1e-3, 0), Quant(1e-3, 0), id="ELU-int16"),
        pytest.param("LOGISTIC", I16, Quant(1e-3, 0), Quant(1e-3, 0), id="LOGISTIC-int16"),
        *(
            pytest.param(op, U8, _Q8, _Q8, id=f"{op}-uint8")
            for op in ("EXP", "LOG", "SQRT", "RSQRT", "ABS", "NEG", "SQUARE")
        ),
        pytest.param("SQUARE", I8, _Q8, _Q8, id="SQUARE-int8"),
        pytest.param("SQUARE", I16, Quant(1e-3, 0), Quant(1e-3, 0), id="SQUARE-int16"),
    ],
)
def test_refused(tmp_path: Path, op: str, dtype: type, q_in: Quant, q_out: Quant) -> None:
    """Type combinations LiteRT has no integer kernel for are unsupported in synapc too."""
    data, feed = _model(op, dtype, q_in, q_out)
    resolver = BUILTIN_NO_DELEGATE if op == "ELU" else REFERENCE
    with pytest.raises(RuntimeError):
        run_litert(data, [feed], resolver)
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    with pytest.raises(UnsupportedOpError):
        synapc.compile(synapc.import_model(path), target="VS680").run([feed])
