"""Quantized binary elementwise operators and PRELU through synapc, checked against LiteRT.

Every case builds a one-operator model with quantized tensors (int8, uint8, or int16
activations), feeds stored integers drawn over the whole storage range (8-bit cases called
"all_pairs" feed every pair of stored values through a [256, 1] x [1, 256] broadcast), runs
it in LiteRT's reference kernels (`OpResolverType.BUILTIN_REF`) and in synapc, and
requires identical integers.

What LiteRT 2.3 does here, found while writing these cases:

* ADD / SUB rescale in double, MUL / DIV / PRELU compute their multipliers in float32
  (the `f32_multiplier` cases use scales where a double multiplier changes 4-8 outputs).
* int16 ADD / SUB with power-of-two scales take the LSTM "POT" path while the options'
  `pot_scale_int16` is set (the schema default): a rounding shift of one input and a
  saturating add. Cleared, the same scales take the general path (about 3,000 of 16,384
  outputs differ between the two). int16 ADD / SUB / MUL refuse non-zero zero points; the
  POT ADD cannot broadcast (the interpreter aborts), POT SUB can.
* DIV runs the integer reciprocal kernel for int8, uint8 and int16 alike, and refuses a
  divisor equal to its zero point. For a small dividend and a large divisor its final
  shift leaves gemmlowp's range [0, 31]; the x86-64 build then masks shift counts (see
  `rounding_divide_by_pot_x86`), which the "all_pairs" cases exercise. SUB with an output
  rescale above one (a tiny output scale) goes through the same out-of-range shift.
* MAXIMUM / MINIMUM compare stored integers and ignore every quantization parameter.
* SQUARED_DIFFERENCE is int8 only; every op above broadcasts up to 6-D.
* MUL int16 x int16 -> int8 / uint8 is gemmlowp's Q0.15 product shifted right by 8 (the
  scales are ignored); it cannot broadcast (the interpreter aborts).
* PRELU: int8 and uint8, and int16 input with int8 alpha (16x8). With int16 alpha the
  kernel reads the alpha buffer as int8 (a type confusion; no case). Per-channel alpha
  is read with scale 0 (no case; synapc refuses per-axis quantization here).
* POW has no quantized kernel (Prepare refuses int8, uint8 and int16).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from synapc.dialects.synap import elementwise as ew
from synapc.testing.oracle import Case, CaseGraph, check_case, reference_resolver
from synapc.testing.tflite_builder import Quant

pytest.importorskip("ai_edge_litert.interpreter")

REFERENCE = reference_resolver()

I8, U8, I16 = np.int8, np.uint8, np.int16
TYPES = {"int8": I8, "uint8": U8, "int16": I16}

# (lhs, rhs, output) quantization per storage type, all different; int16 is symmetric.
# The output scales keep RELU6 and RELU_N1_TO_1 bounds inside the storage range.
QUANTS = {
    I8: (Quant(0.05, 7), Quant(0.031, -11), Quant(0.07, 3)),
    U8: (Quant(0.05, 131), Quant(0.031, 117), Quant(0.07, 125)),
    I16: (Quant(0.0005, 0), Quant(0.00037, 0), Quant(0.0007, 0)),
}
# Scales where computing the multiplier in double instead of float32 changes outputs.
F32_SENSITIVE = {
    "MUL": (0.031143400818109512, 0.04915779083967209, 0.04879487678408623),
    "DIV": (0.09477349370718002, 0.09799055755138397, 0.08625251054763794),
    "PRELU": (0.00362219987437129, 0.032080937176942825, 0.021077610552310944),
}
POT = 2.0**-12  # int16 power-of-two scale (RELU6's bound 6.0 is 24576)

Operand = Sequence[int] | np.ndarray  # a shape (random stored values) or stored values


def _stored(
    g: CaseGraph,
    spec: Operand,
    dtype: type,
    quant: Quant,
    *,
    const: bool = False,
    nonzero: bool = False,
) -> int:
    """An input (or constant) holding stored integers: `spec` itself, or values drawn
    uniformly over `dtype`'s range for shape `spec`; `nonzero` avoids the zero point
    (a DIV divisor)."""
    info = np.iinfo(dtype)
    zero_point = int(quant.zero_point)
    if isinstance(spec, np.ndarray):
        q = spec.astype(np.int64)
    else:
        q = g.rng.integers(info.min, info.max, size=list(spec), endpoint=True)
    if nonzero:
        q = np.where(q == zero_point, zero_point + (1 if zero_point < info.max else -1), q)
    real = (q - zero_point) * float(np.float32(quant.scale))
    if const:
        return g.const(real, dtype, quant)
    return g.input(q.shape, dtype=dtype, value=real, quant=quant)


def _all_pairs(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """Every stored value of an 8-bit `dtype` as [256, 1] and [1, 256]."""
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1)
    return values.reshape(-1, 1), values.reshape(1, -1)


def _binary(
    op: str,
    dtype: type,
    lhs: Operand,
    rhs: Operand,
    quants: tuple[Quant, Quant, Quant] | None = None,
    *,
    out_dtype: type | None = None,
    const_lhs: bool = False,
    const_rhs: bool = False,
    **options: Any,
) -> Case:
    """`op` of two quantized operands (shapes or stored values)."""
    qa, qb, qo = quants or QUANTS[dtype]

    def case(g: CaseGraph) -> None:
        a = _stored(g, lhs, dtype, qa, const=const_lhs)
        b = _stored(g, rhs, dtype, qb, const=const_rhs, nonzero=op == "DIV")
        g.output(g.op(op, [a, b], dtype=out_dtype or dtype, quant=qo, **options))

    return case


def _prelu(
    dtype: type,
    x: Operand,
    alpha: Operand,
    quants: tuple[Quant, Quant, Quant] | None = None,
    *,
    alpha_dtype: type | None = None,
    const: bool = True,
) -> Case:
    """PRELU of a quantized input and slope (a constant unless `const` is false)."""
    qx, qa, qo = quants or QUANTS[dtype]

    def case(g: CaseGraph) -> None:
        a = _stored(g, x, dtype, qx)
        b = _stored(g, alpha, alpha_dtype or dtype, qa, const=const)
        g.output(g.op("PRELU", [a, b], dtype=dtype, quant=qo))

    return case


def _f32_quants(op: str, dtype: type) -> tuple[Quant, Quant, Quant]:
    zero_points = [int(q.zero_point) for q in QUANTS[dtype]]
    return tuple(Quant(s, z) for s, z in zip(F32_SENSITIVE[op], zero_points, strict=True))


_CASES: list[Any] = []
_COVERED: set[tuple[str, str]] = set()


def _add(op: str, type_name: str, variant: str, case: Case, *marks: Any) -> None:
    _COVERED.add((op, type_name))
    _CASES.append(pytest.param(case, id=f"{op}-{type_name}-{variant}", marks=marks))


# Whether the synap ops carry TFLite's `pot_scale_int16` option (the importer passes it
# when they do); without it int16 ADD/SUB with power-of-two scales always take the POT path.
_HAS_POT_FLAG = "pot_scale_int16" in ew.AddOp.get_irdl_definition().properties

# -- ADD, SUB, MUL, DIV ----------------------------------------------------------------
for _op in ("ADD", "SUB", "MUL", "DIV"):
    for _name, _dtype in (("int8", I8), ("uint8", U8)):
        _add(_op, _name, "all_pairs", _binary(_op, _dtype, *_all_pairs(_dtype)))
        _add(_op, _name, "broadcast_4d", _binary(_op, _dtype, [2, 1, 3, 4], [3, 1]))
        _add(
            _op,
            _name,
            "const_scalar_rhs",
            _binary(_op, _dtype, [2, 3, 4], [], const_rhs=True),
        )
        _add(
            _op,
            _name,
            "relu6",
            _binary(_op, _dtype, [4, 9], [4, 9], fused_activation_function="RELU6"),
        )
    _add(
        _op,
        "int8",
        "broadcast_6d",
        _binary(_op, I8, [2, 1, 3, 1, 2, 3], [1, 3, 1, 2, 1, 3]),
    )
    _add(_op, "int8", "const_lhs", _binary(_op, I8, [3, 4], [2, 3, 4], const_lhs=True))
    for _act in ("RELU", "RELU_N1_TO_1"):
        _add(
            _op,
            "int8",
            _act.lower(),
            _binary(_op, I8, [3, 1, 8], [3, 5, 8], fused_activation_function=_act),
        )
    _add(_op, "int16", "same_shape", _binary(_op, I16, [8, 64], [8, 64]))
    _add(
        _op,
        "int16",
        "broadcast_6d",
        _binary(_op, I16, [2, 1, 3, 1, 2, 3], [1, 3, 1, 2, 1, 3]),
    )
    _add(_op, "int16", "const_rhs", _binary(_op, I16, [4, 16], [16], const_rhs=True))
    for _act in ("RELU6", "RELU_N1_TO_1"):
        _add(
            _op,
            "int16",
            _act.lower(),
            _binary(_op, I16, [4, 32], [4, 32], fused_activation_function=_act),
        )

for _op in ("MUL", "DIV"):
    _add(
        _op,
        "int8",
        "all_pairs_f32_multiplier",
        _binary(_op, I8, *_all_pairs(I8), _f32_quants(_op, I8)),
    )
# DIV: a much larger output scale moves more final shifts out of [-31, 0]
_add(
    "DIV",
    "uint8",
    "all_pairs_large_output_scale",
    _binary(
        "DIV", U8, *_all_pairs(U8), (Quant(0.05, 131), Quant(0.031, 117), Quant(0.5, 9))
    ),
)
# SUB with an output rescale above one (LiteRT's "narrow stats range" case)
_add(
    "SUB",
    "int8",
    "all_pairs_output_rescale_above_one",
    _binary("SUB", I8, *_all_pairs(I8), (Quant(1.0, 0), Quant(1.0, 0), Quant(7.8e-9, 0))),
)

# int16 ADD / SUB with power-of-two scales: the POT path (`pot_scale_int16` default true)
_POT_QUANTS = {
    "shift_lhs": (Quant(POT / 2, 0), Quant(POT, 0), Quant(POT, 0)),
    "shift_rhs": (Quant(POT, 0), Quant(POT / 8, 0), Quant(POT, 0)),
    "equal_scales": (Quant(POT, 0), Quant(POT, 0), Quant(POT, 0)),
}
for _op in ("ADD", "SUB"):
    for _variant, _quants in _POT_QUANTS.items():
        _add(_op, "int16", f"pot_{_variant}", _binary(_op, I16, [8, 64], [8, 64], _quants))
    _add(
        _op,
        "int16",
        "pot_shift_lhs_relu6",
        _binary(
            _op,
            I16,
            [8, 64],
            [8, 64],
            _POT_QUANTS["shift_lhs"],
            fused_activation_function="RELU6",
        ),
    )
    _add(
        _op,
        "int16",
        "pot_scales_general_path",
        _binary(
            _op, I16, [8, 64], [8, 64], _POT_QUANTS["shift_lhs"], pot_scale_int16=False
        ),
        pytest.mark.skipif(
            not _HAS_POT_FLAG, reason="synap ADD/SUB have no pot_scale_int16 property"
        ),
    )
_add(
    "SUB",
    "int16",
    "pot_broadcast",
    _binary("SUB", I16, [4, 1, 16], [3, 1], _POT_QUANTS["shift_rhs"]),
)

# MUL int16 x int16 -> 8 bit (LSTM): Q0.15 product, scales unused
for _name, _out, _quant in (("int8", I8, Quant(0.01, -5)), ("uint8", U8, Quant(0.01, 120))):
    for _act in ("NONE", "RELU6"):
        _add(
            "MUL",
            f"int16_to_{_name}",
            _act.lower(),
            _binary(
                "MUL",
                I16,
                [8, 64],
                [8, 64],
                (QUANTS[I16][0], QUANTS[I16][1], _quant),
                out_dtype=_out,
                fused_activation_function=_act,
            ),
        )

# -- MAXIMUM, MINIMUM, SQUARED_DIFFERENCE ----------------------------------------------
for _op in ("MAXIMUM", "MINIMUM"):
    for _name, _dtype in TYPES.items():
        _add(_op, _name, "broadcast_4d", _binary(_op, _dtype, [2, 1, 3, 4], [3, 1]))
        _q = QUANTS[_dtype][0]
        _add(_op, _name, "same_quant", _binary(_op, _dtype, [4, 8], [4, 8], (_q, _q, _q)))
    for _name, _dtype in (("int8", I8), ("uint8", U8)):
        # different parameters: LiteRT compares the stored integers anyway
        _add(_op, _name, "all_pairs", _binary(_op, _dtype, *_all_pairs(_dtype)))
    _add(
        _op,
        "int8",
        "broadcast_6d",
        _binary(_op, I8, [2, 1, 3, 1, 2, 3], [1, 3, 1, 2, 1, 3]),
    )
    _add(_op, "int16", "const_rhs", _binary(_op, I16, [4, 16], [16], const_rhs=True))

_add(
    "SQUARED_DIFFERENCE",
    "int8",
    "all_pairs",
    _binary("SQUARED_DIFFERENCE", I8, *_all_pairs(I8)),
)
_add(
    "SQUARED_DIFFERENCE",
    "int8",
    "broadcast_6d",
    _binary("SQUARED_DIFFERENCE", I8, [2, 1, 3, 1, 2, 3], [1, 3, 1, 2, 1, 3]),
)
_add(
    "SQUARED_DIFFERENCE",
    "int8",
    "const_rhs_equal_scales",
    _binary(
        "SQUARED_DIFFERENCE",
        I8,
        [3, 4, 5],
        [5],
        (Quant(0.05, 7), Quant(0.05, -3), Quant(0.2, -128)),
        const_rhs=True,
    ),
)

# -- PRELU -----------------------------------------------------------------------------
for _name, _dtype in (("int8", I8), ("uint8", U8)):
    _x, _alpha = _all_pairs(_dtype)
    _add(
        "PRELU",
        _name,
        "all_pairs",
        _prelu(_dtype, np.repeat(_x, 256, axis=1), _alpha.reshape(-1)),
    )
    _add("PRELU", _name, "alpha_h_and_c", _prelu(_dtype, [1, 3, 4, 5], [3, 1, 5]))
    _add(
        "PRELU",
        _name,
        "alpha_input_same_shape",
        _prelu(_dtype, [2, 3, 4], [2, 3, 4], const=False),
    )
    _add("PRELU", _name, "5d", _prelu(_dtype, [2, 3, 2, 4, 5], [1, 4, 5]))
_x, _alpha = _all_pairs(I8)
_add(
    "PRELU",
    "int8",
    "all_pairs_f32_multiplier",
    _prelu(I8, np.repeat(_x, 256, axis=1), _alpha.reshape(-1), _f32_quants("PRELU", I8)),
)
_add(
    "PRELU",
    "int16",
    "int8_alpha_per_channel_values",
    _prelu(
        I16,
        [2, 3, 4, 5],
        [5],
        (Quant(0.0005, 0), Quant(0.01, 3), Quant(0.0004, 0)),
        alpha_dtype=I8,
    ),
)
_add(
    "PRELU",
    "int16",
    "int8_alpha_input",
    _prelu(
        I16,
        [4, 64],
        [4, 64],
        (Quant(0.0005, 0), Quant(0.01, -7), Quant(0.0007, 0)),
        alpha_dtype=I8,
        const=False,
    ),
)


@pytest.mark.parametrize("case", _CASES)
def test_quantized_op(tmp_path: Path, case: Case) -> None:
    """synapc gives LiteRT's integers exactly."""
    check_case(tmp_path, case, REFERENCE)


EXPECTED = (
    {(op, t) for op in ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM") for t in TYPES}
    | {("MUL", "int16_to_int8"), ("MUL", "int16_to_uint8")}
    | {("SQUARED_DIFFERENCE", "int8")}
    | {("PRELU", t) for t in TYPES}
)


def test_every_operator_and_type_has_cases() -> None:
    """Each operator has cases for every storage type LiteRT supports it with."""
    assert EXPECTED == _COVERED
