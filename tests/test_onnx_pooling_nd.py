"""ONNX window operators over 1 to 3 spatial axes (the synap `*_nd` ops): MaxPool's
Indices in both storage orders and with ties, dilated and 3-D pools, 3-D and grouped
transposed convolutions, against ONNX's reference implementation; the refusals, each one
line naming the node and the operator; and the N-D ops' shape verification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

import synapc
from synapc.dialects.synap.window_nd import MaxPoolNDOp

_OPSET = 22
_F = TensorProto.FLOAT
_RNG = np.random.default_rng(7)


def _model(
    tmp_path: Path,
    op_type: str,
    inputs: dict[str, list[int]],
    outputs: list[str],
    **attrs: Any,
) -> Path:
    """A model of one float `op_type` node called 'the_layer' (an output named "i"
    holds indices)."""
    node = helper.make_node(op_type, list(inputs), outputs, name="the_layer", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, _F, s) for n, s in inputs.items()],
        [
            helper.make_tensor_value_info(o, TensorProto.INT64 if o == "i" else _F, None)
            for o in outputs
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _matches_reference(
    path: Path, feeds: dict[str, np.ndarray], onnxruntime: bool = False
) -> None:
    """synapc's outputs equal ONNX's reference outputs (indices exactly), or
    onnxruntime's where the reference implementation is wrong (grouped ConvTranspose
    with more than one output channel per group)."""
    model = synapc.import_model(path)
    got = synapc.compile(model, "GENERIC").run([feeds[i.name] for i in model.inputs])
    if onnxruntime:
        import onnxruntime as ort

        want = ort.InferenceSession(str(path)).run(None, feeds)
    else:
        want = ReferenceEvaluator(str(path)).run(None, feeds)
    for g, w in zip(got, want, strict=True):
        if np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(np.asarray(g).astype(w.dtype), w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def _refused(path: Path, *needles: str) -> None:
    """Importing `path` fails with one line naming the node, the operator and
    `needles`."""
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.import_model(path)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert "node 'the_layer'" in message and "MaxPool" in message, message
    for needle in needles:
        assert needle in message, message


@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices_2d_with_ties_and_padding(
    tmp_path: Path, storage_order: int
) -> None:
    """Ties go to the first cell in row-major window order; column-major numbering
    counts down the rows first; padding never wins."""
    x = np.round(_RNG.standard_normal((2, 3, 5, 6))).astype(np.float32)
    path = _model(
        tmp_path,
        "MaxPool",
        {"x": [2, 3, 5, 6]},
        ["y", "i"],
        kernel_shape=[3, 2],
        strides=[2, 1],
        pads=[1, 0, 1, 1],
        storage_order=storage_order,
    )
    _matches_reference(path, {"x": x})


def test_max_pool_indices_3d_dilated(tmp_path: Path) -> None:
    """Indices of a dilated 3-D window, flat in the channels-first input."""
    x = _RNG.standard_normal((1, 2, 5, 6, 5)).astype(np.float32)
    path = _model(
        tmp_path,
        "MaxPool",
        {"x": [1, 2, 5, 6, 5]},
        ["y", "i"],
        kernel_shape=[2, 2, 2],
        dilations=[2, 1, 2],
        strides=[1, 2, 1],
    )
    _matches_reference(path, {"x": x})


def test_dilated_average_pool_1d_ceil_mode_counting_pads(tmp_path: Path) -> None:
    """count_include_pad counts the explicit pads but not the ceil-mode overhang."""
    x = _RNG.standard_normal((1, 2, 9)).astype(np.float32)
    path = _model(
        tmp_path,
        "AveragePool",
        {"x": [1, 2, 9]},
        ["y"],
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
    path = _model(
        tmp_path,
        "ConvTranspose",
        {"x": [1, 6, 5], "w": [6, 2, 3], "b": [6]},
        ["y"],
        group=3,
        strides=[2],
        dilations=[2],
        output_padding=[1],
        pads=[1, 0],
    )
    _matches_reference(path, {"x": x, "w": w, "b": b}, onnxruntime=True)


def test_grouped_conv_3d(tmp_path: Path) -> None:
    """A grouped, strided, padded 3-D convolution."""
    x = _RNG.standard_normal((1, 4, 4, 5, 6)).astype(np.float32)
    w = _RNG.standard_normal((6, 2, 2, 3, 2)).astype(np.float32)
    path = _model(
        tmp_path,
        "Conv",
        {"x": [1, 4, 4, 5, 6], "w": [6, 2, 2, 3, 2]},
        ["y"],
        group=2,
        strides=[1, 2, 2],
        pads=[1, 0, 1, 0, 1, 1],
    )
    _matches_reference(path, {"x": x, "w": w})


def test_four_spatial_axes_are_refused(tmp_path: Path) -> None:
    """A 4-D window (rank-6 input) has no synap op."""
    path = _model(
        tmp_path, "MaxPool", {"x": [1, 1, 3, 3, 3, 3]}, ["y"], kernel_shape=[2, 2, 2, 2]
    )
    _refused(path, "input rank 6")


def test_bad_storage_order_is_refused(tmp_path: Path) -> None:
    """storage_order is 0 (row-major) or 1 (column-major)."""
    path = _model(
        tmp_path, "MaxPool", {"x": [1, 1, 4, 4]}, ["y", "i"], kernel_shape=[2, 2],
        storage_order=2,
    )  # fmt: skip
    _refused(path, "storage_order")


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
