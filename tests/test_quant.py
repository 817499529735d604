"""The !quant.uniform type: construction, queries, verification and text round trip."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import TensorType, f16, f32
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from synapc.context import make_context
from synapc.dialects.quant import STORAGE_TYPES, UniformQuantizedType, format_scale
from synapc.dialects.quant import verify_quantized_tensor as check_tensor


def parse_type(ctx, text: str):
    return Parser(ctx, text).parse_attribute()


def test_per_tensor_queries() -> None:
    t = UniformQuantizedType.per_tensor("u8", 0.0235, 128)
    assert str(t) == "!quant.uniform<u8:f32, 0.0235:128>"
    assert (t.scale, t.zero_point, t.storage_dtype) == (0.0235, 128, np.dtype(np.uint8))
    assert (t.storage_min, t.storage_max, t.bitwidth, t.is_signed) == (0, 255, 8, False)
    assert not t.is_per_axis and t.quantized_dimension is None


def test_per_axis_queries() -> None:
    t = UniformQuantizedType.per_axis("i8", 0, [0.1, 0.2], [0, 1])
    assert str(t) == "!quant.uniform<i8:f32:0, {0.1,0.2:1}>"
    assert t.quantized_dimension == 0
    np.testing.assert_array_equal(t.scales, [0.1, 0.2])
    np.testing.assert_array_equal(t.zero_points, [0, 1])


def test_dynamic_fixed_point_is_power_of_two_scale() -> None:
    t = UniformQuantizedType.dynamic_fixed_point("i16", 15)
    assert t.scale == 2.0**-15 and t.zero_point == 0


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: UniformQuantizedType.per_tensor("u4", 1.0), "storage type 'u4'"),
        (lambda: UniformQuantizedType.per_tensor("u8", 0.0), "scale must be positive"),
        (
            lambda: UniformQuantizedType.per_tensor("u8", float("nan")),
            "positive and finite",
        ),
        (lambda: UniformQuantizedType.per_tensor("i8", 1.0, 128), "zero point 128"),
        (lambda: UniformQuantizedType.per_axis("i8", -1, [1.0]), "axis must be >= 0"),
        (lambda: UniformQuantizedType.per_axis("i8", 0, [1.0, 2.0], [0]), "2 scales but 1"),
        (lambda: UniformQuantizedType.per_axis("i8", 0, []), "at least one scale"),
    ],
)
def test_invalid_types_are_rejected(build, message: str) -> None:
    with pytest.raises(VerifyException, match=message):
        build()


def test_scale_count_checked_against_tensor_axis() -> None:
    q = UniformQuantizedType.per_axis("i8", 1, [0.5, 0.25])
    check_tensor(TensorType(q, [3, 2]), "filter")
    with pytest.raises(
        VerifyException, match="filter: 2 scales for quantized axis 1 of size 4"
    ):
        check_tensor(TensorType(q, [3, 4]), "filter")
    with pytest.raises(VerifyException, match="axis 1 is out of range for rank 1"):
        check_tensor(TensorType(q, [2]), "bias")


@pytest.mark.parametrize("value", [1.0, 0.1, 1e-05, 3.0517578125e-05, 1e22, 123456.789])
def test_format_scale_is_exact_and_lexes_as_mlir_float(value: float) -> None:
    text = format_scale(value)
    assert float(text) == value
    assert "." in text.split("e")[0]


storage_names = st.sampled_from(sorted(STORAGE_TYPES))
scales = st.floats(min_value=1e-30, max_value=1e30, allow_nan=False, allow_infinity=False)


@st.composite
def quant_types(draw: st.DrawFn) -> UniformQuantizedType:
    storage = draw(storage_names)
    _, lo, hi = STORAGE_TYPES[storage]
    zero_points = st.integers(min_value=lo, max_value=hi)
    expressed = draw(st.sampled_from([f32, f16]))
    if draw(st.booleans()):
        return UniformQuantizedType.per_tensor(
            storage, draw(scales), draw(zero_points), expressed
        )
    count = draw(st.integers(min_value=1, max_value=6))
    return UniformQuantizedType.per_axis(
        storage,
        draw(st.integers(min_value=0, max_value=4)),
        draw(st.lists(scales, min_size=count, max_size=count)),
        draw(st.lists(zero_points, min_size=count, max_size=count)),
        expressed,
    )


@given(quant_types())
def test_random_quant_types_round_trip(t: UniformQuantizedType) -> None:
    text = str(t)
    parsed = parse_type(make_context(), text)
    assert parsed == t
    assert str(parsed) == text
