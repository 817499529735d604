"""ONNX GridSample, AffineGrid, DeformConv, CausalConvWithState and LinearAttention end
to end against onnx's reference implementation, on inputs the conformance suite does not
cover (coordinates far outside the input, groups, strides, dilations, longer sequences);
and the refusals, each one line naming the node and the operator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import synapc
from synapc.testing.pass_check import model_from_text

_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}


def _model(
    tmp_path: Path,
    op_type: str,
    inputs: dict[str, np.ndarray],
    outputs: list[str],
    opset: int,
    constants: dict[str, np.ndarray] | None = None,
    **attrs: Any,
) -> Path:
    """A one-node model of `op_type`: `inputs` are graph inputs (an empty name skips an
    optional input), `constants` initializers."""
    constants = constants or {}
    names = [*inputs, *constants]
    node = helper.make_node(op_type, names, outputs, name="the_layer", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(k, _TYPES[v.dtype], v.shape)
            for k, v in inputs.items()
        ],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(v, k) for k, v in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / f"{op_type.lower()}.onnx"
    onnx.save(model, str(path))
    return path


def _compare(path: Path, feeds: dict[str, np.ndarray], atol: float = 1e-5) -> None:
    """synapc's outputs match onnx's reference evaluator's."""
    want = ReferenceEvaluator(str(path)).run(None, feeds)
    model = synapc.import_model(path)
    got = synapc.compile(model, "GENERIC").run([feeds[i.name] for i in model.inputs])
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=atol)


def _refused(path: Path, *words: str) -> None:
    """Importing the model fails with one line naming the node, the operator and
    `words`."""
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.import_model(path)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert "node 'the_layer'" in message, message
    for word in words:
        assert word in message, message


@pytest.mark.parametrize(
    ("mode", "padding", "align"),
    [
        ("cubic", "reflection", 0),
        ("cubic", "border", 1),
        ("linear", "reflection", 1),
        ("nearest", "reflection", 0),
        ("linear", "zeros", 0),
    ],
)
def test_grid_sample_far_outside(
    tmp_path: Path, mode: str, padding: str, align: int
) -> None:
    """Grid values up to 3.5 (several reflections) and 2 batches, 3 channels."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    grid = rng.uniform(-3.5, 3.5, (2, 6, 7, 2)).astype(np.float32)
    path = _model(
        tmp_path,
        "GridSample",
        {"X": x, "grid": grid},
        ["Y"],
        22,
        mode=mode,
        padding_mode=padding,
        align_corners=align,
    )
    _compare(path, {"X": x, "grid": grid})


def test_affine_grid_then_grid_sample(tmp_path: Path) -> None:
    """A run-time theta drives AffineGrid (constant size) on a 3-D volume."""
    rng = np.random.default_rng(2)
    theta = rng.standard_normal((2, 3, 4)).astype(np.float32)
    path = _model(
        tmp_path,
        "AffineGrid",
        {"theta": theta},
        ["grid"],
        20,
        constants={"size": np.array([2, 3, 4, 5, 6], np.int64)},
        align_corners=0,
    )
    _compare(path, {"theta": theta})


def test_deform_conv_groups_strides_dilations(tmp_path: Path) -> None:
    """Two channel groups, two offset groups, stride 2, dilation 2, asymmetric pads."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 4, 7, 6)).astype(np.float32)
    w = rng.standard_normal((6, 2, 2, 3)).astype(np.float32)
    offset = rng.uniform(-2, 2, (1, 2 * 2 * 3 * 2, 4, 2)).astype(np.float32)
    mask = rng.uniform(0, 1, (1, 2 * 2 * 3, 4, 2)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    feeds = {"X": x, "W": w, "offset": offset, "B": bias, "mask": mask}
    path = _model(
        tmp_path,
        "DeformConv",
        feeds,
        ["Y"],
        22,
        group=2,
        offset_group=2,
        strides=[2, 2],
        dilations=[2, 2],
        pads=[1, 0, 1, 2],
    )
    _compare(path, feeds, atol=1e-4)


def test_causal_conv_and_linear_attention(tmp_path: Path) -> None:
    """CausalConvWithState with SiLU and past state; gated-delta LinearAttention with
    grouped query heads over 6 tokens and a past state."""
    rng = np.random.default_rng(4)
    conv = {
        "input": rng.standard_normal((2, 3, 5)).astype(np.float32),
        "weight": rng.standard_normal((3, 1, 3)).astype(np.float32),
        "bias": rng.standard_normal(3).astype(np.float32),
        "past_state": rng.standard_normal((2, 3, 2)).astype(np.float32),
    }
    path = _model(
        tmp_path, "CausalConvWithState", conv, ["y", "state"], 27, activation="silu"
    )
    _compare(path, conv)
    key = rng.standard_normal((1, 6, 2, 4))
    attention = {
        "query": rng.standard_normal((1, 6, 16)).astype(np.float32),
        "key": (key / np.linalg.norm(key, axis=-1, keepdims=True))
        .reshape(1, 6, 8)
        .astype(np.float32),
        "value": rng.standard_normal((1, 6, 6)).astype(np.float32),
        "past_state": rng.standard_normal((1, 2, 4, 3)).astype(np.float32),
        "decay": -rng.uniform(0, 1, (1, 6, 8)).astype(np.float32),
        "beta": rng.uniform(0, 1, (1, 6, 2)).astype(np.float32),
    }
    path = _model(
        tmp_path,
        "LinearAttention",
        attention,
        ["o", "s"],
        27,
        q_num_heads=4,
        kv_num_heads=2,
    )
    _compare(path, attention)


def test_refusals(tmp_path: Path) -> None:
    """What the converters cannot represent is refused at import, naming the node."""
    ints = np.zeros((1, 1, 3, 3), np.int32)
    grid = np.zeros((1, 2, 2, 2), np.float32)
    path = _model(tmp_path, "GridSample", {"X": ints, "grid": grid}, ["Y"], 22)
    _refused(path, "GridSample", "X must be floating-point")
    volume = np.zeros((1, 1, 2, 2, 2), np.float32)
    grid3 = np.zeros((1, 2, 2, 2, 3), np.float32)
    path = _model(
        tmp_path, "GridSample", {"X": volume, "grid": grid3}, ["Y"], 22, mode="cubic"
    )
    _refused(path, "GridSample", "mode 'cubic'")
    theta = np.zeros((1, 2, 3), np.float32)
    path = _model(
        tmp_path, "AffineGrid", {"theta": theta, "size": np.zeros(4, np.int32)}, ["g"], 20
    )
    _refused(path, "AffineGrid", "size (input 1) must be a constant")
    qkv = {n: np.zeros((1, 2, 8), np.float32) for n in ("query", "key", "value")}
    path = _model(
        tmp_path, "LinearAttention", qkv, ["o", "s"], 27, q_num_heads=2, kv_num_heads=2
    )
    _refused(path, "LinearAttention", "update_rule 'gated_delta' needs decay")


def test_quantized_grid_sample_is_refused_at_compile() -> None:
    """The kernel interpolates real values: a quantized grid_sample is refused by
    `synapc.compile`, naming the layer."""
    q8 = "!quant.uniform<i8:f32, 0.05:-3>"
    text = f"""builtin.module {{
  func.func @main(%x: tensor<1x3x3x2x{q8}>, %g: tensor<1x2x2x2xf32>)
      -> (tensor<1x2x2x2x{q8}>) {{
    %y = synap.grid_sample %x, %g {{layer_name = "gs1"}} : (tensor<1x3x3x2x{q8}>,
      tensor<1x2x2x2xf32>) -> tensor<1x2x2x2x{q8}>
    func.return %y : tensor<1x2x2x2x{q8}>
  }}
}}"""
    model = model_from_text(text)
    model.source = "net.mlir"
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.compile(model, "GENERIC")
    message = str(caught.value)
    assert "\n" not in message
    assert 'layer "gs1"' in message and "quantized synap.grid_sample" in message, message
