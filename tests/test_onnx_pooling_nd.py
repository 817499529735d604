"""ONNX window operators over 1 to 3 spatial axes (the synap `*_nd` ops): MaxPool's
Indices in both storage orders and with ties, dilated and 3-D pools, 3-D and grouped
transposed convolutions, against ONNX's reference implementation; the refusals, each one
line naming the node and the operator; and the N-D ops' shape verification."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from synapc.dialects.synap.window_nd import MaxPoolNDOp
from synapc.testing.onnx_cases import (
    assert_refused,
    check_against_reference,
    save_node_model,
)

_F = TensorProto.FLOAT
_RNG = np.random.default_rng(7)
#: a float output; and with MaxPool's indices (output "i")
_Y = [("y", _F, None)]
_Y_I = [*_Y, ("i", TensorProto.INT64, None)]
#: synapc's outputs equal the reference's, indices exactly in whatever integer type
_matches_reference = partial(check_against_reference, atol=1e-5, same_dtype=False)


@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices_2d_with_ties_and_padding(
    tmp_path: Path, storage_order: int
) -> None:
    """Ties go to the first cell in row-major window order; column-major numbering
    counts down the rows first; padding never wins."""
    x = np.round(_RNG.standard_normal((2, 3, 5, 6))).astype(np.float32)
    path = save_node_model(
        tmp_path,
        "MaxPool",
        {"x": x},
        outputs=_Y_I,
        kernel_shape=[3, 2],
        strides=[2, 1],
        pads=[1, 0, 1, 1],
        storage_order=storage_order,
    )
    _matches_reference(path, {"x": x})


def test_max_pool_indices_3d_dilated(tmp_path: Path) -> None:
    """Indices of a dilated 3-D window, flat in the channels-first input."""
    x = _RNG.standard_normal((1, 2, 5, 6, 5)).astype(np.float32)
    path = save_node_model(
        tmp_path,
        "MaxPool",
        {"x": x},
        outputs=_Y_I,
        kernel_shape=[2, 2, 2],
        dilations=[2, 1, 2],
        strides=[1, 2, 1],
    )
    _matches_reference(path, {"x": x})


def test_dilated_average_pool_1d_ceil_mode_counting_pads(tmp_path: Path) -> None:
    """count_include_pad counts the explicit pads but not the ceil-mode overhang."""
    x = _RNG.standard_normal((1, 2, 9)).astype(np.float32)
    path = save_node_model(
        tmp_path,
        "AveragePool",
        {"x": x},
        outputs=_Y,
        kernel_shape=[3],
        strides=[2],
        dilations=[2],
        pads=[1, 1],
        ceil_mode=1,
        count_include_pad=1,
    )
    _matches_reference(path, {"x": x})


def test_grouped_conv_transpose_1d_with_output_padding(tmp_path: Path) -> None:
    """Three groups, strides, a dilation and output_padding; run-time weights."""
    x = _RNG.standard_normal((1, 6, 5)).astype(np.float32)
    w = _RNG.standard_normal((6, 2, 3)).astype(np.float32)
    b = _RNG.standard_normal(6).astype(np.float32)
    path = save_node_model(
        tmp_path,
        "ConvTranspose",
        {"x": x, "w": w, "b": b},
        outputs=_Y,
        group=3,
        strides=[2],
        dilations=[2],
        output_padding=[1],
        pads=[1, 0],
    )
    # ONNX's reference implementation is wrong for grouped ConvTranspose with more
    # than one output channel per group
    _matches_reference(path, {"x": x, "w": w, "b": b}, reference="onnxruntime")


def test_grouped_conv_3d(tmp_path: Path) -> None:
    """A grouped, strided, padded 3-D convolution."""
    x = _RNG.standard_normal((1, 4, 4, 5, 6)).astype(np.float32)
    w = _RNG.standard_normal((6, 2, 2, 3, 2)).astype(np.float32)
    path = save_node_model(
        tmp_path,
        "Conv",
        {"x": x, "w": w},
        outputs=_Y,
        group=2,
        strides=[1, 2, 2],
        pads=[1, 0, 1, 0, 1, 1],
    )
    _matches_reference(path, {"x": x, "w": w})


def test_four_spatial_axes_are_refused(tmp_path: Path) -> None:
    """A 4-D window (rank-6 input) has no synap op."""
    x = np.zeros((1, 1, 3, 3, 3, 3), np.float32)
    path = save_node_model(
        tmp_path, "MaxPool", {"x": x}, outputs=_Y, kernel_shape=[2, 2, 2, 2]
    )
    assert_refused(path, "MaxPool", "input rank 6")


def test_bad_storage_order_is_refused(tmp_path: Path) -> None:
    """storage_order is 0 (row-major) or 1 (column-major)."""
    x = np.zeros((1, 1, 4, 4), np.float32)
    path = save_node_model(
        tmp_path, "MaxPool", {"x": x}, outputs=_Y_I, kernel_shape=[2, 2], storage_order=2
    )
    assert_refused(path, "MaxPool", "storage_order")


def test_nd_pool_verifier_checks_window_per_axis() -> None:
    """A window that does not fit, or a pad without a pair per axis, is refused."""
    block = Block(arg_types=[TensorType(f32, [1, 4, 5, 6, 2])])
    x = block.args[0]
    window = {"kernel": [2, 2, 2], "strides": [1, 1, 1], "dilations": [1, 1, 1]}
    with pytest.raises(Exception, match="pad"):
        MaxPoolNDOp.make(x, pad=[0, 0, 0, 0], **window)
    op = MaxPoolNDOp.build(
        operands=[x],
        result_types=[TensorType(f32, [1, 3, 4, 4, 2])],
        properties=MaxPoolNDOp.make(x, pad=[0] * 6, **window).properties,
    )
    with pytest.raises(VerifyException, match="should be"):
        op.verify()
