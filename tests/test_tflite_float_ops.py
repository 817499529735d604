"""Float TFLite operators through synapc, checked against LiteRT's reference kernels.

Every case builds a small float32 model with `ModelBuilder` (one operator, except the
two network cases at the end), runs it in LiteRT (`OpResolverType.BUILTIN_REF`) and
through `synapc.import_model` + `synapc.compile(target="GENERIC")`, and compares all
outputs: floats within 1e-5 relative (absolute 1e-5 of the largest reference
magnitude), integers exactly, shapes and dtypes equal.

A case is a function that adds tensors and operators to a `CaseGraph`. It states no result
shapes: the model is first built with placeholder shapes, LiteRT computes every
tensor's shape while preparing it (as the TFLite converter would have written them), and
the model is rebuilt with those shapes. Inputs come from a generator seeded the same way
for both builds, so both carry identical data.

ELU is the one operator LiteRT 2.3 does not register in its reference resolver; it runs
on the builtin kernels without the default (XNNPACK) delegate instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import synapc
from synapc.testing.oracle import (
    F32,
    SEED,
    Case,
    CaseGraph,
    build_case,
    builtin_resolver,
    check_case,
    reference_resolver,
    run_litert,
)
from synapc.testing.tflite_builder import ModelBuilder

pytest.importorskip("ai_edge_litert.interpreter")

REFERENCE = reference_resolver()
# For operators missing from the reference resolver: TFLite's own builtin kernels.
BUILTIN_NO_DELEGATE = builtin_resolver()


def _check(tmp_path: Path, case: Case, resolver: Any = REFERENCE) -> None:
    check_case(tmp_path, case, resolver, target="GENERIC")


# ======================================================================================
# Cases. `_CASES` collects pytest params with ids "<OPERATOR>-<variant>".
# ======================================================================================
_CASES: list[Any] = []
_COVERED: set[str] = set()


def _add(op: str, variant: str, case: Case, *marks: Any) -> None:
    _COVERED.add(op)
    resolver = BUILTIN_NO_DELEGATE if op == "ELU" else REFERENCE
    _CASES.append(pytest.param(case, resolver, id=f"{op}-{variant}", marks=marks))


def _single(
    op: str,
    shapes: Sequence[Sequence[int]],
    *,
    low: float = -4.0,
    high: float = 4.0,
    consts: Sequence[Any] = (),
    outputs: int = 1,
    dtype: type = F32,
    in_dtype: type = F32,
    **options: Any,
) -> Case:
    """One `op` on random inputs of `shapes`, then the constant inputs `consts`."""

    def case(g: CaseGraph) -> None:
        inputs = [g.input(s, low, high, in_dtype) for s in shapes]
        inputs += [c if isinstance(c, int) else g.const(c) for c in consts]
        result = g.op(op, inputs, outputs=outputs, dtype=dtype, **options)
        g.output(*(result if outputs > 1 else [result]))

    return case


def _i32(values: Any) -> np.ndarray:
    return np.asarray(values, np.int32)


def _i64(values: Any) -> np.ndarray:
    return np.asarray(values, np.int64)


# -- convolutions ----------------------------------------------------------------------
def _conv(
    x_shape: Sequence[int],
    w_shape: Sequence[int],
    *,
    op: str = "CONV_2D",
    bias: bool = True,
    low: float = -2.0,
    high: float = 2.0,
    **options: Any,
) -> Case:
    """CONV_2D or DEPTHWISE_CONV_2D with weights [O or 1, KH, KW, I or C*M]."""

    def case(g: CaseGraph) -> None:
        x = g.input(x_shape, low, high)
        inputs = [x, g.weights(w_shape, 0.5)]
        if bias:
            channels = w_shape[0] if op == "CONV_2D" else w_shape[3]
            inputs.append(g.weights([channels]))
        g.output(g.op(op, inputs, **options))

    return case


def _strides(s: int | tuple[int, int]) -> dict[str, int]:
    sh, sw = (s, s) if isinstance(s, int) else s
    return {"stride_h": sh, "stride_w": sw}


def _dilations(d: int | tuple[int, int]) -> dict[str, int]:
    dh, dw = (d, d) if isinstance(d, int) else d
    return {"dilation_h_factor": dh, "dilation_w_factor": dw}


for _variant, _w, _pad, _s, _d, _act in [
    ("k3_same_s1", [5, 3, 3, 4], "SAME", 1, 1, "NONE"),
    ("k3_valid_s1", [5, 3, 3, 4], "VALID", 1, 1, "NONE"),
    ("k3_same_s2", [5, 3, 3, 4], "SAME", 2, 1, "NONE"),
    ("k3_valid_s2", [5, 3, 3, 4], "VALID", 2, 1, "NONE"),
    ("k2x3_same_s2x1", [3, 2, 3, 4], "SAME", (2, 1), 1, "NONE"),
    ("k4_same_s3", [2, 4, 4, 4], "SAME", 3, 1, "NONE"),
    ("k1_valid", [6, 1, 1, 4], "VALID", 1, 1, "NONE"),
    ("k3_same_dil2", [5, 3, 3, 4], "SAME", 1, 2, "NONE"),
    ("k3_valid_dil2x1", [5, 3, 3, 4], "VALID", 1, (2, 1), "NONE"),
    ("k3_same_s2_dil2", [5, 3, 3, 4], "SAME", 2, 2, "NONE"),
    ("relu", [5, 3, 3, 4], "SAME", 1, 1, "RELU"),
    ("relu6", [5, 3, 3, 4], "SAME", 2, 1, "RELU6"),
    ("relu_n1_to_1", [5, 3, 3, 4], "VALID", 1, 1, "RELU_N1_TO_1"),
    ("groups2_same", [6, 3, 3, 2], "SAME", 1, 1, "NONE"),
    ("groups4_valid_s2", [8, 3, 3, 1], "VALID", 2, 1, "RELU"),
]:
    _add(
        "CONV_2D",
        _variant,
        _conv(
            [1, 7, 8, 4],
            _w,
            padding=_pad,
            fused_activation_function=_act,
            **_strides(_s),
            **_dilations(_d),
        ),
    )
_add("CONV_2D", "batch2", _conv([2, 5, 5, 3], [4, 3, 3, 3], padding="SAME", **_strides(1)))

for _variant, _x, _w, _m, _pad, _s, _d, _act in [
    ("m1_k3_same_s1", [1, 7, 8, 3], [1, 3, 3, 3], 1, "SAME", 1, 1, "NONE"),
    ("m1_k3_valid_s1", [1, 7, 8, 3], [1, 3, 3, 3], 1, "VALID", 1, 1, "NONE"),
    ("m1_k3_same_s2", [1, 7, 8, 3], [1, 3, 3, 3], 1, "SAME", 2, 1, "NONE"),
    ("m1_k3_valid_s2", [1, 7, 8, 3], [1, 3, 3, 3], 1, "VALID", 2, 1, "NONE"),
    ("m2_k3_same_s1", [1, 7, 8, 3], [1, 3, 3, 6], 2, "SAME", 1, 1, "NONE"),
    ("m2_k2_valid_s2", [1, 7, 8, 3], [1, 2, 2, 6], 2, "VALID", 2, 1, "NONE"),
    ("m1_k3_same_dil2", [1, 7, 8, 3], [1, 3, 3, 3], 1, "SAME", 1, 2, "NONE"),
    ("m2_k3_valid_dil2", [1, 7, 8, 3], [1, 3, 3, 6], 2, "VALID", 1, 2, "NONE"),
    ("m2_k3_same_s2_dil2", [1, 9, 8, 3], [1, 3, 3, 6], 2, "SAME", 2, 2, "NONE"),
    ("c1_m4_k3x2_same_s2x1", [1, 6, 5, 1], [1, 3, 2, 4], 4, "SAME", (2, 1), 1, "NONE"),
    ("relu", [1, 7, 8, 3], [1, 3, 3, 3], 1, "SAME", 1, 1, "RELU"),
    ("relu6", [1, 7, 8, 3], [1, 3, 3, 6], 2, "SAME", 1, 1, "RELU6"),
    ("relu_n1_to_1", [1, 7, 8, 3], [1, 3, 3, 3], 1, "VALID", 2, 1, "RELU_N1_TO_1"),
    ("batch2", [2, 5, 5, 4], [1, 3, 3, 4], 1, "SAME", 1, 1, "NONE"),
]:
    _add(
        "DEPTHWISE_CONV_2D",
        _variant,
        _conv(
            _x,
            _w,
            op="DEPTHWISE_CONV_2D",
            depth_multiplier=_m,
            padding=_pad,
            fused_activation_function=_act,
            low=-3.0,
            high=3.0,
            **_strides(_s),
            **_dilations(_d),
        ),
    )


def _transpose_conv(
    x_shape: Sequence[int],
    w_shape: Sequence[int],
    out_shape: Sequence[int],
    *,
    bias: bool,
    **options: Any,
) -> Case:
    """TRANSPOSE_CONV(output_shape, weights [O, KH, KW, I], input[, bias])."""

    def case(g: CaseGraph) -> None:
        x = g.input(x_shape, -2.0, 2.0)
        inputs = [g.const(_i32(out_shape)), g.weights(w_shape, 0.5), x]
        if bias:
            inputs.append(g.weights([w_shape[0]]))
        g.output(g.op("TRANSPOSE_CONV", inputs, **options))

    return case


for _variant, _x, _w, _out, _pad, _s, _bias, _act in [
    ("same_s2_bias", [1, 4, 5, 3], [2, 3, 3, 3], [1, 8, 10, 2], "SAME", 2, True, "NONE"),
    ("same_s2_nobias", [1, 4, 5, 3], [2, 3, 3, 3], [1, 8, 10, 2], "SAME", 2, False, "NONE"),
    ("valid_s2_bias", [1, 4, 5, 3], [2, 3, 3, 3], [1, 9, 11, 2], "VALID", 2, True, "NONE"),
    (
        "valid_s2_nobias",
        [1, 4, 5, 3],
        [2, 3, 3, 3],
        [1, 9, 11, 2],
        "VALID",
        2,
        False,
        "NONE",
    ),
    (
        "same_s2_k4_odd_out",
        [1, 4, 5, 3],
        [2, 4, 4, 3],
        [1, 7, 9, 2],
        "SAME",
        2,
        True,
        "NONE",
    ),
    ("same_s2_k2", [1, 3, 3, 2], [3, 2, 2, 2], [1, 6, 6, 3], "SAME", 2, True, "NONE"),
    ("valid_s2_k2", [1, 3, 3, 2], [3, 2, 2, 2], [1, 6, 6, 3], "VALID", 2, False, "NONE"),
    ("same_s1", [1, 4, 5, 3], [2, 3, 3, 3], [1, 4, 5, 2], "SAME", 1, True, "NONE"),
    ("valid_s2x1", [1, 4, 5, 3], [2, 3, 2, 3], [1, 9, 6, 2], "VALID", (2, 1), True, "NONE"),
    ("same_s2_relu", [1, 4, 5, 3], [2, 3, 3, 3], [1, 8, 10, 2], "SAME", 2, True, "RELU"),
    ("batch2_same_s2", [2, 3, 3, 2], [2, 3, 3, 2], [2, 6, 6, 2], "SAME", 2, True, "NONE"),
]:
    _add(
        "TRANSPOSE_CONV",
        _variant,
        _transpose_conv(
            _x,
            _w,
            _out,
            bias=_bias,
            padding=_pad,
            fused_activation_function=_act,
            **_strides(_s),
        ),
    )


def _fully_connected(
    x_shape: Sequence[int], w_shape: Sequence[int], bias: str, **options: Any
) -> Case:
    """FULLY_CONNECTED with bias "const", "absent" (-1) or "none" (two inputs)."""

    def case(g: CaseGraph) -> None:
        inputs = [g.input(x_shape, -2.0, 2.0), g.weights(w_shape, 0.5)]
        if bias == "const":
            inputs.append(g.weights([w_shape[0]]))
        elif bias == "absent":
            inputs.append(-1)
        g.output(g.op("FULLY_CONNECTED", inputs, **options))

    return case


for _variant, _x, _w, _bias, _keep, _act in [
    ("2d_bias", [3, 5], [4, 5], "const", False, "NONE"),
    ("2d_batch1", [1, 5], [4, 5], "const", False, "NONE"),
    ("2d_no_bias_absent", [3, 5], [4, 5], "absent", False, "NONE"),
    ("2d_no_bias_two_inputs", [3, 5], [4, 5], "none", False, "NONE"),
    ("3d_flatten", [2, 3, 5], [4, 5], "const", False, "NONE"),
    ("3d_keep_num_dims", [2, 3, 5], [4, 5], "const", True, "NONE"),
    ("3d_keep_num_dims_no_bias", [2, 3, 5], [4, 5], "absent", True, "NONE"),
    ("4d_flatten_across_dims", [1, 2, 3, 4], [3, 6], "const", False, "NONE"),
    ("relu", [3, 5], [4, 5], "const", False, "RELU"),
    ("relu6", [3, 5], [4, 5], "const", False, "RELU6"),
    ("relu_n1_to_1", [2, 3, 5], [4, 5], "absent", True, "RELU_N1_TO_1"),
]:
    _add(
        "FULLY_CONNECTED",
        _variant,
        _fully_connected(
            _x, _w, _bias, keep_num_dims=_keep, fused_activation_function=_act
        ),
    )


def _batch_matmul(
    lhs: Sequence[int], rhs: Sequence[int], *, const_rhs: bool = False, **options: Any
) -> Case:
    def case(g: CaseGraph) -> None:
        x = g.input(lhs, -2.0, 2.0)
        y = g.weights(rhs) if const_rhs else g.input(rhs, -2.0, 2.0)
        g.output(g.op("BATCH_MATMUL", [x, y], **options))

    return case


for _variant, _lhs, _rhs, _adj_x, _adj_y, _const in [
    ("2d", [3, 4], [4, 5], False, False, False),
    ("3d", [2, 3, 4], [2, 4, 5], False, False, False),
    ("adj_x", [2, 4, 3], [2, 4, 5], True, False, False),
    ("adj_y", [2, 3, 4], [2, 5, 4], False, True, False),
    ("adj_x_adj_y", [2, 4, 3], [2, 5, 4], True, True, False),
    ("broadcast_batch", [2, 1, 3, 4], [3, 4, 5], False, False, False),
    ("broadcast_batch_adj_y", [1, 3, 4], [2, 5, 4], False, True, False),
    ("const_rhs_2d", [2, 3, 4], [4, 5], False, False, True),
]:
    _add(
        "BATCH_MATMUL",
        _variant,
        _batch_matmul(_lhs, _rhs, const_rhs=_const, adj_x=_adj_x, adj_y=_adj_y),
    )

# -- pooling ---------------------------------------------------------------------------
for _op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
    for _variant, _x, _k, _pad, _s, _act in [
        ("k3_same_s1", [1, 7, 9, 3], (3, 3), "SAME", 1, "NONE"),
        ("k3_same_s2", [1, 7, 9, 3], (3, 3), "SAME", 2, "NONE"),
        ("k2_valid_s2", [1, 7, 9, 3], (2, 2), "VALID", 2, "NONE"),
        ("k3_valid_s2_relu6", [1, 7, 9, 3], (3, 3), "VALID", 2, "RELU6"),
        ("k3_same_s2_relu6", [1, 7, 9, 3], (3, 3), "SAME", 2, "RELU6"),
        ("k2x3_same_s2x1_relu", [1, 7, 9, 3], (2, 3), "SAME", (2, 1), "RELU"),
        ("k4_same_s3", [1, 7, 9, 3], (4, 4), "SAME", 3, "NONE"),
        ("k3_same_s1_relu_n1_to_1", [2, 4, 5, 2], (3, 3), "SAME", 1, "RELU_N1_TO_1"),
        ("global_valid", [1, 7, 9, 3], (7, 9), "VALID", 1, "NONE"),
    ]:
        _add(
            _op,
            _variant,
            _single(
                _op,
                [_x],
                low=-8.0,
                high=8.0,
                filter_height=_k[0],
                filter_width=_k[1],
                padding=_pad,
                fused_activation_function=_act,
                **_strides(_s),
            ),
        )

# -- reductions ------------------------------------------------------------------------
for _op in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"):
    for _variant, _axes, _keep in [
        ("axes_1_2_keep", [1, 2], True),
        ("axes_1_2", [1, 2], False),
        ("axis_neg1_keep", [-1], True),
        ("axis_neg1", [-1], False),
        ("axes_0_neg1", [0, -1], False),
        ("axes_3_1_unsorted_keep", [3, 1], True),
        ("axes_duplicate_1_neg3", [1, -3], False),
        ("all_axes", [0, 1, 2, 3], False),
        ("all_axes_keep", [0, 1, 2, 3], True),
        ("scalar_axis_2", np.int32(2), False),
        ("no_axes", np.zeros([0], np.int32), False),
        ("no_axes_keep", np.zeros([0], np.int32), True),
    ]:
        _add(
            _op,
            _variant,
            _single(_op, [[2, 3, 4, 5]], consts=[_i32(_axes)], keep_dims=_keep),
        )


# -- binary elementwise ----------------------------------------------------------------
def _operand_values(g: CaseGraph, op: str, side: int, shape: Sequence[int]) -> np.ndarray:
    """Values for operand `side` of binary `op`: POW gets bases in [0.5, 3) and exponents
    in [-2, 2), DIV divisors in +-[0.5, 2), everything else [-4, 4)."""
    if op == "POW":
        return g.rng.uniform(*((0.5, 3.0) if side == 0 else (-2.0, 2.0)), size=shape)
    if op == "DIV" and side == 1:
        sign = np.where(g.rng.random(shape) < 0.5, -1.0, 1.0)
        return sign * g.rng.uniform(0.5, 2.0, size=shape)
    return g.rng.uniform(-4.0, 4.0, size=shape)


def _binary(
    op: str,
    lhs: Sequence[int],
    rhs: Sequence[int],
    *,
    const_lhs: bool = False,
    const_rhs: bool = False,
    **options: Any,
) -> Case:
    """`op` of two operands of shapes `lhs` and `rhs` (constants when asked)."""

    def case(g: CaseGraph) -> None:
        operands = []
        for side, (shape, const) in enumerate(((lhs, const_lhs), (rhs, const_rhs))):
            value = _operand_values(g, op, side, shape)
            operands.append(g.const(value, F32) if const else g.input(shape, value=value))
        g.output(g.op(op, operands, **options))

    return case


_BROADCASTS = [
    ("same_shape", [2, 3, 4], [2, 3, 4], {}),
    ("broadcast_last_dim", [2, 3, 4], [4], {}),
    ("broadcast_both", [2, 1, 4], [3, 1], {}),
    ("broadcast_4d", [1, 3, 1, 5], [2, 1, 4, 1], {}),
    ("scalar_const_rhs", [2, 3, 4], [], {"const_rhs": True}),
    ("const_lhs", [3, 4], [2, 3, 4], {"const_lhs": True}),
]
for _op in ("ADD", "SUB", "MUL", "DIV"):
    for _variant, _lhs, _rhs, _flags in _BROADCASTS:
        _add(_op, _variant, _binary(_op, _lhs, _rhs, **_flags))
    for _variant, _lhs, _rhs, _act in [
        ("relu", [2, 3, 4], [2, 3, 4], "RELU"),
        ("relu6_broadcast", [2, 3, 4], [3, 1], "RELU6"),
        ("relu_n1_to_1", [2, 3, 4], [4], "RELU_N1_TO_1"),
    ]:
        _add(_op, _variant, _binary(_op, _lhs, _rhs, fused_activation_function=_act))
for _op in ("MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "POW"):
    for _variant, _lhs, _rhs, _flags in _BROADCASTS:
        _add(_op, _variant, _binary(_op, _lhs, _rhs, **_flags))
_add(
    "POW",
    "integer_exponent_const",
    _single("POW", [[2, 3, 4]], low=-3.0, high=3.0, consts=[np.full([4], 3.0, F32)]),
)

# -- activations and unary functions ---------------------------------------------------
for _op, _low, _high in [
    ("RELU", -4.0, 4.0),
    ("RELU6", -8.0, 8.0),
    ("RELU_N1_TO_1", -2.0, 2.0),
    ("RELU_0_TO_1", -2.0, 2.0),
    ("LOGISTIC", -6.0, 6.0),
    ("TANH", -5.0, 5.0),
    ("HARD_SWISH", -6.0, 6.0),
    ("ELU", -5.0, 5.0),
    ("EXP", -5.0, 5.0),
    ("LOG", 0.01, 10.0),
    ("SQRT", 0.0, 10.0),
    ("RSQRT", 0.01, 10.0),
    ("ABS", -4.0, 4.0),
    ("NEG", -4.0, 4.0),
    ("SQUARE", -4.0, 4.0),
]:
    _add(_op, "4d", _single(_op, [[2, 3, 4, 5]], low=_low, high=_high))
    _add(_op, "2d", _single(_op, [[3, 7]], low=_low, high=_high))
_add("LOGISTIC", "wide_range", _single("LOGISTIC", [[4, 25]], low=-30.0, high=30.0))
_add("TANH", "wide_range", _single("TANH", [[4, 25]], low=-20.0, high=20.0))
_add("EXP", "wide_range", _single("EXP", [[4, 25]], low=-20.0, high=20.0))
for _alpha in (0.2, 0.01, 2.0):
    _add(
        "LEAKY_RELU", f"alpha_{_alpha}", _single("LEAKY_RELU", [[2, 3, 4, 5]], alpha=_alpha)
    )
for _approximate in (False, True):
    _add(
        "GELU",
        f"approximate_{str(_approximate).lower()}",
        _single("GELU", [[2, 3, 4, 5]], low=-5.0, high=5.0, approximate=_approximate),
    )
_add("GELU", "approximate_false_wide", _single("GELU", [[4, 25]], low=-12.0, high=12.0))


def _prelu(x_shape: Sequence[int], alpha_shape: Sequence[int], const: bool = True) -> Case:
    def case(g: CaseGraph) -> None:
        x = g.input(x_shape)
        alpha = (
            g.const(g.rng.uniform(-0.5, 1.5, alpha_shape), F32)
            if const
            else g.input(alpha_shape, -0.5, 1.5)
        )
        g.output(g.op("PRELU", [x, alpha]))

    return case


_add("PRELU", "per_channel_alpha", _prelu([1, 3, 4, 5], [5]))
_add("PRELU", "per_channel_alpha_1x1xc", _prelu([2, 3, 4, 5], [1, 1, 5]))
_add("PRELU", "alpha_h_and_c", _prelu([1, 3, 4, 5], [3, 1, 5]))
_add("PRELU", "alpha_input_same_shape", _prelu([2, 3, 4], [2, 3, 4], const=False))

for _variant, _shape, _beta, _low, _high in [
    ("2d_beta1", [3, 10], 1.0, -5.0, 5.0),
    ("3d_beta0.5", [2, 3, 8], 0.5, -5.0, 5.0),
    ("4d_beta1", [1, 2, 3, 7], 1.0, -5.0, 5.0),
    ("wide_range_beta0.5", [2, 20], 0.5, -80.0, 80.0),
    ("1d_beta2", [9], 2.0, -5.0, 5.0),
]:
    _add(
        "SOFTMAX", _variant, _single("SOFTMAX", [_shape], low=_low, high=_high, beta=_beta)
    )
for _variant, _shape, _low, _high in [
    ("2d", [3, 10], -5.0, 5.0),
    ("3d", [2, 3, 8], -5.0, 5.0),
    ("wide_range", [2, 20], -60.0, 60.0),
]:
    _add("LOG_SOFTMAX", _variant, _single("LOG_SOFTMAX", [_shape], low=_low, high=_high))


def _l2_normalization(value: np.ndarray) -> Case:
    def case(g: CaseGraph) -> None:
        g.output(g.op("L2_NORMALIZATION", [g.input(value.shape, value=value)]))

    return case


_L2_RNG = np.random.default_rng(SEED + 1)
_add("L2_NORMALIZATION", "2d", _l2_normalization(_L2_RNG.uniform(-3, 3, [3, 8])))
_add("L2_NORMALIZATION", "4d", _l2_normalization(_L2_RNG.uniform(-3, 3, [1, 2, 3, 6])))
_add(
    "L2_NORMALIZATION",
    "tiny_and_zero_rows",
    _l2_normalization(
        np.stack(
            [
                _L2_RNG.uniform(-1e-7, 1e-7, 6),  # norm below TFLite's epsilon 1e-6
                np.zeros(6),
                _L2_RNG.uniform(-1e-6, 1e-6, 6),  # norm around the epsilon
                _L2_RNG.uniform(-3, 3, 6),
            ]
        )
    ),
)


# -- concatenation, split, slicing -----------------------------------------------------
def _concat(
    shapes: Sequence[Sequence[int]], axis: int, const: int | None = None, **options: Any
) -> Case:
    """CONCATENATION of inputs of `shapes`; input number `const` is a constant."""

    def case(g: CaseGraph) -> None:
        inputs = [
            g.weights(s, 4.0) if i == const else g.input(s, -8.0, 8.0)
            for i, s in enumerate(shapes)
        ]
        g.output(g.op("CONCATENATION", inputs, axis=axis, **options))

    return case


for _variant, _shapes, _axis, _const, _act in [
    ("axis0", [[2, 3, 4], [1, 3, 4]], 0, None, "NONE"),
    ("axis1_three_inputs", [[2, 1, 4], [2, 3, 4], [2, 2, 4]], 1, None, "NONE"),
    ("axis_neg1", [[2, 3, 1], [2, 3, 4]], -1, None, "NONE"),
    ("axis3_4d", [[1, 2, 3, 4], [1, 2, 3, 2]], 3, None, "NONE"),
    ("axis_neg3_4d", [[1, 2, 3, 4], [1, 1, 3, 4]], -3, None, "NONE"),
    ("const_input", [[2, 3], [2, 2]], 1, 0, "NONE"),
]:
    _add("CONCATENATION", _variant, _concat(_shapes, _axis, _const))


def _split(shape: Sequence[int], axis: int, num: int) -> Case:
    def case(g: CaseGraph) -> None:
        x = g.input(shape)
        outputs = g.op("SPLIT", [g.const(_i32(axis)), x], outputs=num, num_splits=num)
        g.output(*(outputs if num > 1 else [outputs]))

    return case


for _variant, _shape, _axis, _num in [
    ("axis0_2", [4, 3, 2], 0, 2),
    ("axis1_3", [2, 6, 4], 1, 3),
    ("axis_neg1_2", [2, 3, 4], -1, 2),
    ("axis2_1", [2, 3, 4], 2, 1),
]:
    _add("SPLIT", _variant, _split(_shape, _axis, _num))


def _split_v(shape: Sequence[int], sizes: Sequence[int], axis: int) -> Case:
    def case(g: CaseGraph) -> None:
        inputs = [g.input(shape), g.const(_i32(sizes)), g.const(_i32([axis]))]
        outputs = g.op("SPLIT_V", inputs, outputs=len(sizes), num_splits=len(sizes))
        g.output(*(outputs if len(sizes) > 1 else [outputs]))

    return case


for _variant, _shape, _sizes, _axis in [
    ("sizes_2_1_3_axis1", [2, 6, 3], [2, 1, 3], 1),
    ("size_neg1_axis_neg1", [2, 3, 7], [1, -1, 2], -1),
    ("axis0", [4, 2], [3, 1], 0),
    ("single_piece", [2, 5], [5], 1),
]:
    _add("SPLIT_V", _variant, _split_v(_shape, _sizes, _axis))

# SLICE's Prepare checks the stored result shape, so these state it.
for _variant, _shape, _begin, _size, _out in [
    ("basic", [3, 4, 5], _i32([1, 0, 2]), _i32([2, 3, 2]), [2, 3, 2]),
    ("size_neg1", [3, 4, 5], _i32([1, 1, 0]), _i32([-1, 2, -1]), [2, 2, 5]),
    ("4d_int64", [2, 3, 4, 5], _i64([0, 1, 1, 2]), _i64([2, 1, -1, 3]), [2, 1, 3, 3]),
    ("1d_full", [6], _i32([0]), _i32([-1]), [6]),
]:
    _add("SLICE", _variant, _single("SLICE", [_shape], consts=[_begin, _size], shape=_out))


def _strided_slice(
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int],
    shape: Sequence[int] = (4, 5, 6),
    **options: Any,
) -> Case:
    return _single(
        "STRIDED_SLICE",
        [shape],
        consts=[_i32(begin), _i32(end), _i32(strides)],
        **options,
    )


for _variant, _b, _e, _s, _options in [
    ("basic", [1, 0, 2], [3, 5, 6], [1, 2, 1], {}),
    ("strides_2_3", [0, 1, 0], [4, 5, 6], [2, 3, 4], {}),
    ("negative_strides", [3, 4, 5], [0, 0, 0], [-1, -2, -1], {}),
    ("negative_strides_2_3", [3, 4, 5], [0, 1, 0], [-2, -1, -3], {}),
    (
        "reverse_with_masks",
        [0, 0, 0],
        [0, 0, 0],
        [-1, -1, -1],
        {"begin_mask": 7, "end_mask": 7},
    ),
    (
        "begin_end_masks",
        [2, 1, 1],
        [3, 4, 5],
        [1, 1, 2],
        {"begin_mask": 0b101, "end_mask": 0b010},
    ),
    ("negative_stride_end_mask", [2, 3, 4], [0, 0, 0], [-1, -1, -2], {"end_mask": 0b110}),
    (
        "negative_stride_begin_mask",
        [0, 0, 0],
        [1, 2, 0],
        [-1, -2, -1],
        {"begin_mask": 0b111},
    ),
    ("negative_indices", [-3, -4, 0], [-1, 5, -2], [1, 1, 1], {}),
    ("negative_indices_negative_stride", [-1, -2, -1], [-4, -5, -7], [-1, -1, -2], {}),
    ("out_of_range", [-10, 1, 0], [10, 100, 6], [1, 2, 3], {}),
    ("negative_stride_out_of_range", [10, -1, 4], [-10, -100, 0], [-2, -1, -3], {}),
    ("empty_range", [3, 0, 0], [1, 5, 6], [1, 1, 1], {}),
    ("negative_stride_begin_before_start", [-10, 4, 5], [-20, 0, 0], [-1, -1, -1], {}),
    ("negative_stride_begin_past_end", [1, 30, 5], [0, 0, -30], [1, -2, -2], {}),
    ("shrink_axes_0_2", [1, 0, 2], [2, 5, 3], [1, 1, 1], {"shrink_axis_mask": 0b101}),
    ("shrink_negative_begin", [-1, 0, 0], [0, 5, 6], [1, 1, 2], {"shrink_axis_mask": 1}),
    (
        "shrink_with_negative_stride",
        [0, 3, 1],
        [0, 0, 4],
        [-1, -1, 1],
        {"shrink_axis_mask": 0b100, "begin_mask": 1, "end_mask": 1},
    ),
    ("shrink_all", [1, 2, 3], [2, 3, 4], [1, 1, 1], {"shrink_axis_mask": 0b111}),
    ("fewer_dims", [1, 1], [3, 4], [1, 1], {}),
    ("offset", [1, 1, 0], [2, 3, 6], [1, 1, 2], {"offset": True}),
]:
    _add("STRIDED_SLICE", _variant, _strided_slice(_b, _e, _s, **_options))
_add(
    "STRIDED_SLICE",
    "4d_begin_mask_shrink",
    _strided_slice(
        [0, 1, 0, 2],
        [1, 3, 4, 0],
        [1, 1, 2, -1],
        shape=(1, 3, 4, 5),
        begin_mask=0b0100,
        end_mask=0b0001,
        shrink_axis_mask=0b0001,
    ),
)

# -- reshaping and layout --------------------------------------------------------------
for _variant, _shape, _consts, _options in [
    ("shape_input", [2, 3, 4], [_i32([4, -1])], {}),
    ("shape_input_to_1d", [2, 3, 4], [_i32([-1])], {}),
    ("shape_input_3d", [2, 12], [_i32([3, 2, 4])], {}),
    ("options_only", [2, 3, 4], [], {"new_shape": [6, 4]}),
]:
    _add("RESHAPE", _variant, _single("RESHAPE", [_shape], consts=_consts, **_options))
for _variant, _shape, _dims in [
    ("dim0", [1, 3, 1, 4], [0]),
    ("all_unit_dims", [1, 3, 1, 4], []),
    ("dim_neg2", [1, 3, 1, 4], [-2]),
    ("two_dims", [2, 1, 3, 1], [1, 3]),
]:
    _add("SQUEEZE", _variant, _single("SQUEEZE", [_shape], squeeze_dims=_dims))
for _variant, _shape, _axis in [
    ("axis0", [3, 4], _i32([0])),
    ("axis_neg1", [3, 4], _i32([-1])),
    ("axis2_scalar", [2, 3, 4], _i32(2)),
    ("axis1_int64", [2, 3], _i64([1])),
]:
    _add("EXPAND_DIMS", _variant, _single("EXPAND_DIMS", [_shape], consts=[_axis]))
for _variant, _shape, _perm in [
    ("2d", [3, 5], [1, 0]),
    ("3d", [2, 3, 4], [2, 0, 1]),
    ("4d_nhwc_to_nchw", [1, 2, 3, 4], [0, 3, 1, 2]),
    ("4d", [2, 3, 4, 5], [3, 1, 0, 2]),
    ("5d", [2, 1, 3, 2, 2], [4, 2, 0, 3, 1]),
    ("identity", [2, 3], [0, 1]),
]:
    _add("TRANSPOSE", _variant, _single("TRANSPOSE", [_shape], consts=[_i32(_perm)]))

for _variant, _shape, _pads in [
    ("4d", [1, 3, 4, 2], _i32([[0, 0], [1, 2], [0, 1], [0, 0]])),
    ("2d", [3, 4], _i32([[2, 1], [0, 3]])),
    ("3d_int64_pads", [2, 3, 2], _i64([[1, 0], [0, 0], [2, 2]])),
]:
    _add("PAD", _variant, _single("PAD", [_shape], consts=[_pads]))
for _variant, _shape, _pads, _value in [
    ("4d_value_1.5", [1, 3, 4, 2], _i32([[0, 0], [1, 2], [0, 1], [0, 0]]), 1.5),
    ("2d_value_neg2", [3, 4], _i32([[2, 1], [0, 3]]), -2.0),
]:
    _add(
        "PADV2", _variant, _single("PADV2", [_shape], consts=[_pads, np.array(_value, F32)])
    )
for _mode in ("REFLECT", "SYMMETRIC"):
    for _variant, _shape, _pads in [
        ("4d", [1, 4, 5, 2], _i32([[0, 0], [2, 1], [1, 3], [0, 0]])),
        ("2d", [3, 4], _i32([[1, 2], [2, 0]])),
        ("1d_one_side", [5], _i32([[0, 3]])),
    ]:
        _add(
            "MIRROR_PAD",
            f"{_mode.lower()}_{_variant}",
            _single("MIRROR_PAD", [_shape], consts=[_pads], mode=_mode),
        )
_add(
    "MIRROR_PAD",
    "symmetric_full_size",
    _single("MIRROR_PAD", [[2, 3]], consts=[_i32([[2, 2], [3, 3]])], mode="SYMMETRIC"),
)
_add(
    "MIRROR_PAD",
    "reflect_max_size",
    _single("MIRROR_PAD", [[3, 4]], consts=[_i32([[2, 2], [3, 3]])], mode="REFLECT"),
)

for _op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
    for _size_name, _size in [
        ("up_x2", [8, 12]),
        ("up_7x9", [7, 9]),
        ("down_3x4", [3, 4]),
        ("down_x0.5", [2, 3]),
        ("mixed_5x4", [5, 4]),
        ("to_1x1", [1, 1]),
    ]:
        for _mode, _options in [
            ("asymmetric", {}),
            ("align_corners", {"align_corners": True}),
            ("half_pixel_centers", {"half_pixel_centers": True}),
        ]:
            _add(
                _op,
                f"{_size_name}_{_mode}",
                _single(_op, [[1, 4, 6, 2]], consts=[_i32(_size)], **_options),
            )
    _add(
        _op,
        "batch2_up_3x",
        _single(_op, [[2, 2, 3, 3]], consts=[_i32([6, 9])], half_pixel_centers=True),
    )

for _variant, _shape, _block in [("b2", [1, 2, 3, 8], 2), ("b3_batch2", [2, 2, 2, 9], 3)]:
    _add("DEPTH_TO_SPACE", _variant, _single("DEPTH_TO_SPACE", [_shape], block_size=_block))
for _variant, _shape, _block in [("b2", [1, 4, 6, 3], 2), ("b3_batch2", [2, 6, 3, 2], 3)]:
    _add("SPACE_TO_DEPTH", _variant, _single("SPACE_TO_DEPTH", [_shape], block_size=_block))

for _variant, _shape, _indices, _axis in [
    ("axis0", [5, 3], _i32([3, 0, 4, 4]), 0),
    ("axis1_2d_indices", [2, 5, 3], _i32([[0, 4], [2, 2]]), 1),
    ("axis_neg1", [2, 3, 6], _i32([5, 1]), -1),
    ("axis0_int64_indices", [4, 2, 3], _i64([1, 3]), 0),
    ("scalar_index_axis1", [3, 4], _i32(2), 1),
]:
    _add("GATHER", _variant, _single("GATHER", [_shape], consts=[_indices], axis=_axis))


def _arg(op: str, shape: Sequence[int], axis: np.ndarray, out: str, ties: bool) -> Case:
    dtype = np.int32 if out == "INT32" else np.int64

    def case(g: CaseGraph) -> None:
        # with ties (few distinct values) the first extreme index must win
        x = g.input(shape, value=g.rng.integers(0, 3, shape) if ties else None)
        g.output(g.op(op, [x, g.const(axis)], dtype=dtype, output_type=out))

    return case


for _op in ("ARG_MAX", "ARG_MIN"):
    for _variant, _shape, _axis, _out, _ties in [
        ("axis1_int32", [2, 5, 3], _i32([1]), "INT32", False),
        ("axis1_int64", [2, 5, 3], _i32([1]), "INT64", False),
        ("axis_neg1_int64", [2, 3, 7], _i32([-1]), "INT64", False),
        ("axis0_int32", [6, 4], _i32([0]), "INT32", False),
        ("int64_axis_tensor_int32", [3, 6], _i64([1]), "INT32", False),
        ("ties_first_wins_int32", [4, 9], _i32([1]), "INT32", True),
        ("ties_first_wins_int64", [2, 3, 8], _i32([2]), "INT64", True),
        ("4d_axis3", [1, 2, 3, 5], _i32([3]), "INT32", False),
    ]:
        _add(_op, _variant, _arg(_op, _shape, _axis, _out, _ties))

for _variant, _shapes, _axis in [
    ("three_axis0", [[2, 3]] * 3, 0),
    ("three_axis1", [[2, 3]] * 3, 1),
    ("three_axis_neg1", [[2, 3]] * 3, -1),
    ("two_1d", [[4]] * 2, 0),
    ("single_4d_axis2", [[1, 2, 3]], 2),
]:
    _add("PACK", _variant, _single("PACK", _shapes, values_count=len(_shapes), axis=_axis))
for _variant, _shape, _axis in [
    ("axis0", [3, 2, 4], 0),
    ("axis1", [3, 2, 4], 1),
    ("axis_neg1", [3, 2, 4], -1),
    ("single", [1, 5], 0),
]:
    _num = _shape[_axis]
    _add(
        "UNPACK", _variant, _single("UNPACK", [_shape], outputs=_num, num=_num, axis=_axis)
    )

for _variant, _shape, _multiples in [
    ("2d", [2, 3], _i32([2, 2])),
    ("3d", [2, 1, 3], _i32([1, 3, 2])),
    ("int64_multiples", [3, 2], _i64([2, 1])),
    ("ones", [2, 2], _i32([1, 1])),
]:
    _add("TILE", _variant, _single("TILE", [_shape], consts=[_multiples]))
for _variant, _shape, _target in [
    ("3x1_to_2x3x4", [3, 1], _i32([2, 3, 4])),
    ("1d_to_3d", [4], _i32([2, 3, 4])),
    ("middle_unit", [1, 3, 1], _i32([2, 3, 5])),
    ("int64_shape", [2, 1], _i64([2, 4])),
]:
    # BROADCAST_TO starts at version 2 (LiteRT registers versions 2-3)
    _add(
        "BROADCAST_TO",
        _variant,
        _single("BROADCAST_TO", [_shape], consts=[_target], version=2),
    )

_add(
    "CAST",
    "float_to_int32",
    _single("CAST", [[3, 7]], low=-50.0, high=50.0, dtype=np.int32),
)
_add(
    "CAST",
    "float_to_int32_halves",
    lambda g: g.output(
        g.op(
            "CAST",
            [g.input([8], value=[-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, 1e6])],
            dtype=np.int32,
        )
    ),
)
_add(
    "CAST",
    "int32_to_float",
    _single("CAST", [[2, 3, 4]], low=-1000, high=1000, in_dtype=np.int32),
)
_add(
    "CAST",
    "int32_to_float_large",
    lambda g: g.output(
        g.op(
            "CAST",
            [g.input([4], value=[2**24 + 1, -(2**31), 2**31 - 1, 7], dtype=np.int32)],
        )
    ),
)


# -- networks --------------------------------------------------------------------------
def _network(g: CaseGraph) -> None:
    """CONV_2D -> DEPTHWISE_CONV_2D -> ADD residual -> MEAN -> FULLY_CONNECTED -> SOFTMAX,
    with the logits and the probabilities as outputs."""
    x = g.input([1, 9, 8, 3], -1.0, 1.0)
    conv = g.op(
        "CONV_2D",
        [x, g.weights([8, 3, 3, 3], 0.5), g.weights([8], 0.1)],
        padding="SAME",
        fused_activation_function="RELU",
        **_strides(2),
    )
    depthwise = g.op(
        "DEPTHWISE_CONV_2D",
        [conv, g.weights([1, 3, 3, 8], 0.5), g.weights([8], 0.1)],
        padding="SAME",
        depth_multiplier=1,
        fused_activation_function="RELU6",
        **_strides(1),
    )
    residual = g.op("ADD", [conv, depthwise])
    pooled = g.op("MEAN", [residual, g.const(_i32([1, 2]))], keep_dims=False)
    logits = g.op("FULLY_CONNECTED", [pooled, g.weights([5, 8], 0.5), g.weights([5], 0.1)])
    probabilities = g.op("SOFTMAX", [logits], beta=1.0)
    g.output(probabilities, logits)


def _two_inputs(g: CaseGraph) -> None:
    """Two inputs of different shapes feeding several operators and three outputs."""
    a = g.input([2, 3, 4])
    b = g.input([4], 0.5, 2.0)
    scaled = g.op("MUL", [a, b])
    shifted = g.op("SUB", [scaled, a], fused_activation_function="RELU")
    peak = g.op("REDUCE_MAX", [shifted, g.const(_i32([1]))], keep_dims=True)
    g.output(g.op("DIV", [a, b]), peak, scaled)


@pytest.mark.parametrize(("case", "resolver"), _CASES)
def test_operator(tmp_path: Path, case: Case, resolver: Any) -> None:
    """One float operator matches LiteRT's reference kernel."""
    _check(tmp_path, case, resolver)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(_network, id="conv_dw_add_mean_fc_softmax"),
        pytest.param(_two_inputs, id="two_inputs"),
    ],
)
def test_network(tmp_path: Path, case: Case) -> None:
    """Small multi-operator float models match LiteRT, every output."""
    _check(tmp_path, case)


@pytest.mark.parametrize(
    ("activation", "low", "high"),
    [("RELU", 0.0, None), ("RELU6", 0.0, 6.0), ("RELU_N1_TO_1", -1.0, 1.0)],
)
def test_concatenation_with_fused_activation_is_concat_then_clamp(
    tmp_path: Path, activation: str, low: float, high: float | None
) -> None:
    """The schema allows a fused activation on CONCATENATION but LiteRT's Prepare refuses
    it, so NumPy is the reference: clip(concatenate(inputs))."""
    rng = np.random.default_rng(5)
    a = rng.uniform(-8, 8, (2, 3)).astype(np.float32)
    b = rng.uniform(-8, 8, (2, 2)).astype(np.float32)
    builder = ModelBuilder()
    xa = builder.input("a", [2, 3], np.float32)
    xb = builder.input("b", [2, 2], np.float32)
    y = builder.tensor("y", [2, 5], np.float32)
    builder.op("CONCATENATION", [xa, xb], [y], axis=1, fused_activation_function=activation)
    builder.output(y)
    path = tmp_path / "concat.tflite"
    path.write_bytes(builder.build())
    (got,) = synapc.compile(synapc.import_model(path), target="GENERIC").run([a, b])
    np.testing.assert_array_equal(got, np.clip(np.concatenate([a, b], axis=1), low, high))


def test_resize_nearest_align_corners_with_half_pixel_centers_is_rejected(
    tmp_path: Path,
) -> None:
    """LiteRT's nearest kernel runs align_corners with half_pixel_centers (TensorFlow and
    LiteRT's bilinear kernel refuse the pair), as round((x + 0.5) * (in - 1) / (out - 1));
    synapc has no coordinate mode for that and says so rather than resizing differently."""
    case = _single(
        "RESIZE_NEAREST_NEIGHBOR",
        [[1, 4, 6, 2]],
        consts=[_i32([7, 9])],
        align_corners=True,
        half_pixel_centers=True,
    )
    data, feeds = build_case(case, REFERENCE)
    run_litert(data, feeds, REFERENCE)  # LiteRT accepts and runs the model
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    with pytest.raises(synapc.SynapcError, match="align_corners together with half_pixel"):
        synapc.import_model(path)


OPERATORS = (
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "TRANSPOSE_CONV",
    "FULLY_CONNECTED",
    "BATCH_MATMUL",
    "AVERAGE_POOL_2D",
    "MAX_POOL_2D",
    "MEAN",
    "SUM",
    "REDUCE_MAX",
    "REDUCE_MIN",
    "ADD",
    "SUB",
    "MUL",
    "DIV",
    "MAXIMUM",
    "MINIMUM",
    "SQUARED_DIFFERENCE",
    "POW",
    "RELU",
    "RELU6",
    "RELU_N1_TO_1",
    "RELU_0_TO_1",
    "LEAKY_RELU",
    "PRELU",
    "LOGISTIC",
    "TANH",
    "HARD_SWISH",
    "GELU",
    "ELU",
    "EXP",
    "LOG",
    "SQRT",
    "RSQRT",
    "ABS",
    "NEG",
    "SQUARE",
    "SOFTMAX",
    "LOG_SOFTMAX",
    "CONCATENATION",
    "SPLIT",
    "SPLIT_V",
    "SLICE",
    "STRIDED_SLICE",
    "RESHAPE",
    "SQUEEZE",
    "EXPAND_DIMS",
    "TRANSPOSE",
    "PAD",
    "PADV2",
    "MIRROR_PAD",
    "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR",
    "DEPTH_TO_SPACE",
    "SPACE_TO_DEPTH",
    "GATHER",
    "ARG_MAX",
    "ARG_MIN",
    "PACK",
    "UNPACK",
    "TILE",
    "BROADCAST_TO",
    "CAST",
    "L2_NORMALIZATION",
)


def test_every_operator_has_cases() -> None:
    """The cases above cover exactly the operators listed."""
    assert set(OPERATORS) == _COVERED
