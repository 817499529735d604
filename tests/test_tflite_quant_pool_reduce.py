"""Quantized pooling, reductions and arg-reductions through synapc, checked against LiteRT.

Every case builds a one-operator model with quantized tensors (int8, uint8, or 16x8's
int16 activations), feeds random data over the whole storage range, runs it in LiteRT's
reference kernels (`OpResolverType.BUILTIN_REF`) and in synapc, and requires identical
integers.

What LiteRT 2.3 does here, found while writing these cases:

* AVERAGE_POOL_2D / MAX_POOL_2D work on the stored integers as they are: the output's
  quantization is not used to rescale (different input and output parameters are accepted
  and ignored; int16 accepts a non-zero zero point too); only the fused activation's range
  comes from the output's parameters.
* MEAN (every axes set, keep_dims or not, same or different quantization) and SUM use
  `reference_ops::QuantizedMeanOrSum`; the 4-D spatial-mean kernels are only in the
  optimized resolver.
* REDUCE_MAX / REDUCE_MIN refuse different input and output quantization; int16 MEAN, SUM,
  REDUCE_MAX and REDUCE_MIN refuse non-zero zero points; ARG_MAX / ARG_MIN refuse int16
  inputs. Those combinations have no case.
* The reference SUM kernel of the 2.3 wheel reads and writes int8 and int16 tensors as
  uint8 (its QuantizedMeanOrSum wrapper uses `GetTensorData<uint8_t>` for every type). For
  int8 that is the uint8 kernel on the same bytes, so int8 SUM cases keep the stored inputs
  and the results in [0, 127], where both agree. For int16 half of the output is never
  written, so int16 SUM is checked against the builtin kernels without delegate
  (optimized, float32 rescale) with power-of-two scale ratios, where both are exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from synapc.testing.oracle import (
    Case,
    CaseGraph,
    builtin_resolver,
    check_case,
    reference_resolver,
    storage_range,
)
from synapc.testing.tflite_builder import Quant

pytest.importorskip("ai_edge_litert.interpreter")

REFERENCE = reference_resolver()
BUILTIN_NO_DELEGATE = builtin_resolver()

I8, U8, I16 = np.int8, np.uint8, np.int16
TYPES = {"int8": I8, "uint8": U8, "int16": I16}

# Input and (different) output parameters per storage type; int16 is symmetric.
IN_Q = {I8: Quant(0.05, 7), U8: Quant(0.05, 131), I16: Quant(0.0005, 0)}
OUT_Q = {I8: Quant(0.031, -11), U8: Quant(0.043, 119), I16: Quant(0.00037, 0)}
# Pooling: scales where RELU6's upper bound falls inside the storage range.
POOL_Q = {I8: Quant(0.07, 7), U8: Quant(0.06, 120), I16: Quant(0.0003, 0)}


_CASES: list[Any] = []
_COVERED: set[tuple[str, str]] = set()


def _add(op: str, type_name: str, variant: str, case: Case, resolver: Any = None) -> None:
    _COVERED.add((op, type_name))
    resolver = REFERENCE if resolver is None else resolver
    _CASES.append(pytest.param(case, resolver, id=f"{op}-{type_name}-{variant}"))


# -- pooling ---------------------------------------------------------------------------
def _pool(
    op: str,
    dtype: type,
    kernel: tuple[int, int],
    padding: str,
    strides: tuple[int, int],
    activation: str,
    out_quant: Quant | None = None,
    in_quant: Quant | None = None,
) -> Case:
    def case(g: CaseGraph) -> None:
        quant = in_quant or POOL_Q[dtype]
        x = g.input([2, 7, 9, 3], *storage_range(dtype, quant), dtype, quant=quant)
        y = g.op(
            op,
            [x],
            dtype=dtype,
            quant=out_quant or quant,
            filter_height=kernel[0],
            filter_width=kernel[1],
            padding=padding,
            stride_h=strides[0],
            stride_w=strides[1],
            fused_activation_function=activation,
        )
        g.output(y)

    return case


for _op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
    for _name, _dtype in TYPES.items():
        for _variant, _k, _pad, _s, _act in [
            ("k3_same_s2", (3, 3), "SAME", (2, 2), "NONE"),
            ("k2x3_same_s2x1_relu6", (2, 3), "SAME", (2, 1), "RELU6"),
            ("k3_valid_s1_relu", (3, 3), "VALID", (1, 1), "RELU"),
            ("k4_same_s3_relu_n1_to_1", (4, 4), "SAME", (3, 3), "RELU_N1_TO_1"),
        ]:
            _add(_op, _name, _variant, _pool(_op, _dtype, _k, _pad, _s, _act))
    # LiteRT ignores the output's parameters except for the activation range
    _add(
        _op,
        "int8",
        "out_quant_differs_relu6",
        _pool(_op, I8, (3, 3), "SAME", (2, 2), "RELU6", Quant(0.04, -20)),
    )
    _add(
        _op,
        "int16",
        "zero_point_nonzero",
        _pool(_op, I16, (3, 3), "SAME", (1, 1), "RELU", in_quant=Quant(0.0003, 5)),
    )


# -- reductions ------------------------------------------------------------------------
def _reduce(
    op: str,
    dtype: type,
    shape: Sequence[int],
    axes: Sequence[int],
    keep_dims: bool,
    in_quant: Quant,
    out_quant: Quant,
    *,
    bounds: tuple[float, float] | None = None,
) -> Case:
    def case(g: CaseGraph) -> None:
        low, high = bounds or storage_range(dtype, in_quant)
        x = g.input(shape, low, high, dtype, quant=in_quant)
        axis = g.const(np.asarray(axes, np.int32))
        g.output(g.op(op, [x, axis], dtype=dtype, quant=out_quant, keep_dims=keep_dims))

    return case


_MEAN_VARIANTS = [
    # (variant, shape, axes, keep_dims, requantize)
    ("axes_1_2_keep", [2, 5, 6, 8], [1, 2], True, False),
    ("axes_1_2_keep_requant", [2, 5, 6, 8], [1, 2], True, True),
    ("axes_2_1_requant", [2, 5, 6, 8], [2, 1], False, True),
    ("axis_neg1_keep_requant", [2, 3, 4, 13], [-1], True, True),
    ("axes_0_2", [3, 4, 5, 6], [0, 2], False, False),
    ("axes_0_2_requant", [3, 4, 5, 6], [0, 2], False, True),
    ("all_axes_requant", [2, 3, 4, 5], [0, 1, 2, 3], False, True),
    ("no_axes_requant", [3, 4], [], False, True),
]
for _name, _dtype in TYPES.items():
    for _variant, _shape, _axes, _keep, _requant in _MEAN_VARIANTS:
        _out = OUT_Q[_dtype] if _requant else IN_Q[_dtype]
        _add(
            "MEAN",
            _name,
            _variant,
            _reduce("MEAN", _dtype, _shape, _axes, _keep, IN_Q[_dtype], _out),
        )

for _op in ("REDUCE_MAX", "REDUCE_MIN"):
    for _name, _dtype in TYPES.items():
        for _variant, _shape, _axes, _keep in [
            ("axes_1_2_keep", [2, 5, 6, 8], [1, 2], True),
            ("axes_0_neg1", [3, 4, 5, 6], [0, -1], False),
            ("all_axes", [2, 3, 4, 5], [0, 1, 2, 3], False),
        ]:
            _q = IN_Q[_dtype]
            _add(_op, _name, _variant, _reduce(_op, _dtype, _shape, _axes, _keep, _q, _q))


def _count(shape: Sequence[int], axes: Sequence[int]) -> int:
    return int(np.prod([shape[a] for a in {a % len(shape) for a in axes}]))


_SUM_VARIANTS = [
    # (variant, shape, axes, keep_dims)
    ("axes_1_2_keep", [2, 5, 6, 8], [1, 2], True),
    ("axes_0_neg1", [3, 4, 5, 6], [0, -1], False),
    ("axis_1", [6, 7], [1], False),
    ("all_axes_keep", [2, 3, 4, 5], [0, 1, 2, 3], True),
]
for _variant, _shape, _axes, _keep in _SUM_VARIANTS:
    _n = _count(_shape, _axes)
    # uint8, full range: the output scale lets the larger sums saturate
    _in = IN_Q[U8]
    _add(
        "SUM",
        "uint8",
        _variant,
        _reduce("SUM", U8, _shape, _axes, _keep, _in, Quant(0.05 * _n**0.5, 119)),
    )
    # int8: stored inputs in [0, 127] and results well inside [0, 127] (see docstring)
    _in = Quant(0.05, 20)
    _add(
        "SUM",
        "int8",
        _variant,
        _reduce(
            "SUM",
            I8,
            _shape,
            _axes,
            _keep,
            _in,
            Quant(0.05 * _n * 1.37, 20),
            bounds=(-20 * 0.05, 107.5 * 0.05),
        ),
    )
for _variant, _shape, _axes, _keep, _ratio in [
    ("axes_1_2_keep_same_scale", [2, 5, 6, 8], [1, 2], True, 1.0),
    ("axes_0_neg1_scale_x4", [3, 4, 5, 6], [0, -1], False, 4.0),
    ("no_axes_scale_x2", [3, 4], [], False, 2.0),
]:
    _in = IN_Q[I16]
    _add(
        "SUM",
        "int16",
        _variant,
        _reduce("SUM", I16, _shape, _axes, _keep, _in, Quant(0.0005 / _ratio, 0)),
        BUILTIN_NO_DELEGATE,
    )
_add(
    "SUM",
    "uint8",
    "no_axes_requant",
    _reduce("SUM", U8, [3, 4], [], False, IN_Q[U8], OUT_Q[U8]),
)


# -- arg-reductions --------------------------------------------------------------------
def _arg(
    op: str, dtype: type, shape: Sequence[int], axis: int, out: str, ties: bool
) -> Case:
    out_dtype = np.int32 if out == "INT32" else np.int64

    def case(g: CaseGraph) -> None:
        quant = IN_Q[dtype]
        if ties:  # few distinct stored values: the first extreme index must win
            value = float(quant.scale) * g.rng.integers(-1, 2, shape)
            x = g.input(shape, dtype=dtype, value=value, quant=quant)
        else:
            x = g.input(shape, *storage_range(dtype, quant), dtype, quant=quant)
        axis_t = g.const(np.asarray([axis], np.int32))
        g.output(g.op(op, [x, axis_t], dtype=out_dtype, output_type=out))

    return case


for _op in ("ARG_MAX", "ARG_MIN"):
    for _name, _dtype in (("int8", I8), ("uint8", U8)):
        for _variant, _shape, _axis, _out, _ties in [
            ("axis1_int32", [2, 9, 5], 1, "INT32", False),
            ("axis_neg1_int64", [3, 4, 11], -1, "INT64", False),
            ("ties_axis0_int64", [7, 6], 0, "INT64", True),
        ]:
            _add(_op, _name, _variant, _arg(_op, _dtype, _shape, _axis, _out, _ties))


@pytest.mark.parametrize(("case", "resolver"), _CASES)
def test_quantized_op(tmp_path: Path, case: Case, resolver: Any) -> None:
    """synapc gives LiteRT's integers exactly."""
    check_case(tmp_path, case, resolver)


EXPECTED = {
    (op, t)
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN")
    for t in TYPES
} | {(op, t) for op in ("ARG_MAX", "ARG_MIN") for t in ("int8", "uint8")}


def test_every_operator_and_type_has_cases() -> None:
    """Each operator has cases for every storage type LiteRT supports it with."""
    assert EXPECTED == _COVERED
