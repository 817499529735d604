"""QuantizeLinear / DequantizeLinear beyond the `!quant.uniform` types (float8, 4- and
2-bit storage, blocked quantization, run-time scales), ConvInteger and MatMulInteger:
bit-exact against ONNX's reference implementation, and refusals that name the node."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

import synapc
from synapc.testing.onnx_cases import assert_refused, check_against_reference, save_model

_save = partial(save_model, opset=21)
#: synapc's output equals the reference's bit for bit, in the same element type
_check = partial(check_against_reference, exact=True)
#: refusals come from the import or the compilation, naming the operator
_refused = partial(assert_refused, node=None, target="GENERIC")


# ties (k + 0.5 after the division) and saturation on both ends
_X = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 300.0, -300.0, 7.0, 0.0], np.float32)


@pytest.mark.parametrize(
    ("zp_dtype", "zp"),
    [
        (ml_dtypes.int4, 1),
        (ml_dtypes.uint4, 3),
        (ml_dtypes.int2, 0),
        (ml_dtypes.uint2, 1),
        (np.uint8, 128),
    ],
)
def test_quantize_to_integers_ties_to_even_and_saturates(
    tmp_path: Path, zp_dtype: type, zp: int
) -> None:
    """Run-time x, constant scale: halves round to even, then the range clamps."""
    zero = np.array(zp, zp_dtype)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(zp_dtype))
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    path = _save(
        tmp_path,
        [node],
        [("x", TensorProto.FLOAT, [10])],
        [("y", elem, [10])],
        initializers={"s": np.array(1.0, np.float32), "z": zero},
    )
    _check(path, {"x": _X})


@pytest.mark.parametrize("saturate", [0, 1])
@pytest.mark.parametrize("elem", [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2])
def test_quantize_to_float8_follows_saturate(
    tmp_path: Path, elem: int, saturate: int
) -> None:
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], saturate=saturate)
    zero = np.array(0, helper.tensor_dtype_to_np_dtype(elem))
    path = _save(
        tmp_path,
        [node],
        [("x", TensorProto.FLOAT, [4])],
        [("y", elem, [4])],
        initializers={"s": np.array(0.5, np.float32), "z": zero},
    )
    _check(path, {"x": np.array([0.3, 1e6, -1e6, 2.0], np.float32)})


def test_blocked_dequantize_with_a_remainder_block(tmp_path: Path) -> None:
    """block_size 2 along an axis of 5: the last block holds one element."""
    node = helper.make_node(
        "DequantizeLinear", ["x", "s", "z"], ["y"], axis=1, block_size=2
    )
    path = _save(
        tmp_path,
        [node],
        [("x", TensorProto.INT8, [2, 5])],
        [("y", TensorProto.FLOAT, [2, 5])],
        initializers={
            "s": np.array([[0.5, 2.0, 4.0], [1.0, 0.25, 3.0]], np.float32),
            "z": np.array([[1, -2, 0], [3, 0, -1]], np.int8),
        },
    )
    _check(path, {"x": np.arange(-5, 5, dtype=np.int8).reshape(2, 5)})


def test_run_time_blocked_scale_and_zero_point(tmp_path: Path) -> None:
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=0, block_size=2)
    path = _save(
        tmp_path,
        [node],
        [
            ("x", TensorProto.FLOAT, [4, 3]),
            ("s", TensorProto.FLOAT, [2, 3]),
            ("z", TensorProto.UINT8, [2, 3]),
        ],
        [("y", TensorProto.UINT8, [4, 3])],
    )
    x = np.array([[0.5, 1.5, 2.5], [-0.5, 3.0, 9.0], [100.0, -2.5, 0.0], [7.5, 1.0, -1.0]])
    scale = np.array([[1.0, 0.5, 2.0], [0.25, 1.0, 0.5]], np.float32)
    zero = np.array([[10, 0, 255], [128, 3, 1]], np.uint8)
    _check(path, {"x": x.astype(np.float32), "s": scale, "z": zero})


def test_refusals_name_the_node(tmp_path: Path) -> None:
    """A blocked scale of the wrong shape, a non-zero float8 zero point."""
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2)
    path = _save(
        tmp_path,
        [node],
        [("x", TensorProto.FLOAT, [2, 5])],
        [("y", TensorProto.UINT8, [2, 5])],
        initializers={"s": np.ones((2, 2), np.float32)},
    )
    _refused(path, "needs [2, 3] (ceil(5/2) blocks)", operator="QuantizeLinear")
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])
    path = _save(
        tmp_path,
        [node],
        [("x", TensorProto.FLOAT8E4M3FN, [3])],
        [("y", TensorProto.FLOAT, [3])],
        initializers={
            "s": np.array(1.0, np.float32),
            "z": np.array(2.0, ml_dtypes.float8_e4m3fn),
        },
    )
    _refused(path, "must be 0", operator="DequantizeLinear")


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_matmul_integer_per_row_and_per_column_zero_points(
    tmp_path: Path, dtype: type
) -> None:
    """Exact int32 sums of (a - a_zp[row]) * (b - b_zp[col])."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    a = rng.integers(info.min, info.max, (3, 64), endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, (64, 4), endpoint=True).astype(dtype)
    az = rng.integers(info.min, info.max, (3,), endpoint=True).astype(dtype)
    bz = rng.integers(info.min, info.max, (4,), endpoint=True).astype(dtype)
    path = _save(
        tmp_path,
        [node],
        [("a", elem, [3, 64]), ("b", elem, [64, 4]), ("az", elem, [3]), ("bz", elem, [4])],
        [("y", TensorProto.INT32, [3, 4])],
        opset=10,
    )
    got = synapc.compile(synapc.import_model(path), "GENERIC").run([a, b, az, bz])[0]
    expected = (a.astype(np.int64) - az.reshape(3, 1)) @ (b.astype(np.int64) - bz)
    np.testing.assert_array_equal(got, expected.astype(np.int32))


def test_conv_integer_per_channel_weight_zero_point(tmp_path: Path) -> None:
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])
    rng = np.random.default_rng(1)
    w = rng.integers(-128, 127, (2, 3, 3, 3), endpoint=True).astype(np.int8)
    path = _save(
        tmp_path,
        [node],
        [("x", TensorProto.UINT8, [1, 3, 5, 5])],
        [("y", TensorProto.INT32, [1, 2, 5, 5])],
        initializers={
            "w": w,
            "xz": np.array(200, np.uint8),
            "wz": np.array([5, -7], np.int8),
        },
        opset=10,
    )
    _check(path, {"x": rng.integers(0, 255, (1, 3, 5, 5)).astype(np.uint8)})


@pytest.mark.parametrize("per_axis", [False, True])
def test_run_time_dequantize_of_a_quantized_type(tmp_path: Path, per_axis: bool) -> None:
    """A QuantizeLinear on the `!quant.uniform` path read by a DequantizeLinear with a
    run-time scale (the arithmetic path) dequantizes its storage integers."""
    scale = np.array([0.5, 0.25, 2.0], np.float32) if per_axis else np.float32(0.5)
    zero = np.array([3, -7, 0], np.int8) if per_axis else np.int8(-5)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
        helper.make_node("DequantizeLinear", ["q", "t"], ["y"], axis=1),
    ]
    path = _save(
        tmp_path,
        nodes,
        [("x", TensorProto.FLOAT, [2, 3]), ("t", TensorProto.FLOAT, [3])],
        [("y", TensorProto.FLOAT, [2, 3])],
        initializers={"s": np.asarray(scale), "z": np.asarray(zero)},
    )
    x = np.array([[1.3, -7.0, 40.0], [-100.0, 2.5, 300.0]], np.float32)
    _check(path, {"x": x, "t": np.array([0.5, 3.0, -1.25], np.float32)})


@pytest.mark.parametrize(
    ("zero", "x_dtype"),
    [
        (np.array([128, 0, 3], np.uint8), np.float32),
        (np.array([-5, 0, 7], np.int8), np.float16),
        (np.array([-1, 2, 0], np.int16), np.float32),
    ],
)
def test_run_time_quantize_maps_nan_as_the_reference(
    tmp_path: Path, zero: np.ndarray, x_dtype: type
) -> None:
    """NaN quantizes to the storage minimum (maximum for a negative zero point), as the
    reference does; the division runs in the promoted type of x and the scale."""
    elem = helper.np_dtype_to_tensor_dtype(zero.dtype)
    x_elem = helper.np_dtype_to_tensor_dtype(np.dtype(x_dtype))
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)
    path = _save(
        tmp_path,
        [node],
        [("x", x_elem, [2, 3]), ("s", TensorProto.FLOAT, [3])],
        [("y", elem, [2, 3])],
        initializers={"z": zero},
    )
    x = np.array([[np.nan, np.nan, np.nan], [2.5, -3.5, 1e4]], x_dtype)
    _check(path, {"x": x, "s": np.array([1.0, 0.5, 2.0], np.float32)})


def test_integer_products_refuse_by_their_own_name(tmp_path: Path) -> None:
    """A rank-0 MatMulInteger operand with a per-row zero point is refused by rank (not
    an IndexError); ConvInteger's refusals from the Conv converter name ConvInteger."""
    node = helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"])
    path = _save(
        tmp_path,
        [node],
        [("a", TensorProto.UINT8, []), ("b", TensorProto.UINT8, [2, 3])],
        [("y", TensorProto.INT32, [3])],
        initializers={"za": np.array([1, 2], np.uint8)},
    )
    _refused(path, "input 0 ('a') has rank 0", operator="MatMulInteger")
    node = helper.make_node(
        "ConvInteger", ["x", "w"], ["y"], auto_pad="SIDEWAYS", name="ci"
    )
    path = _save(
        tmp_path,
        [node],
        [("x", TensorProto.UINT8, [1, 1, 4, 4]), ("w", TensorProto.UINT8, [1, 1, 2, 2])],
        [("y", TensorProto.INT32, [1, 1, 3, 3])],
    )
    _refused(path, "auto_pad 'SIDEWAYS' is not supported", operator="ConvInteger")


def test_matmul_integer_of_a_quantized_type(tmp_path: Path) -> None:
    """MatMulInteger reads the storage integers of a `!quant.uniform` QuantizeLinear."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("MatMulInteger", ["q", "b"], ["y"]),
    ]
    path = _save(
        tmp_path,
        nodes,
        [("x", TensorProto.FLOAT, [2, 3]), ("b", TensorProto.UINT8, [3, 2])],
        [("y", TensorProto.INT32, [2, 2])],
        initializers={"s": np.array(0.5, np.float32), "z": np.array(3, np.uint8)},
    )
    x = np.array([[1.0, 2.0, -3.0], [40.0, 5.0, 600.0]], np.float32)
    _check(path, {"x": x, "b": np.arange(6, dtype=np.uint8).reshape(3, 2)})
