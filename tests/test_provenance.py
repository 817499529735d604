"""Source-layer provenance through the optimization pipeline: after `synapc.optimize`,
every source layer of the imported model is named exactly once, as an op's `layer_name`
or in its `fused_layers`, except the layers folded into constants; fused layers are
listed in source order. Checked on an ONNX CNN built here, on an NCHW-style IR model and
on real ONNX and TFLite models."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ArrayAttr, StringAttr

import synapc
from synapc.dialects.synap.activation import SigmoidOp
from synapc.dialects.synap.base import SynapOp
from synapc.dialects.synap.constant import ConstantOp
from synapc.mlir_io import parse_module, print_module
from synapc.model import Model
from synapc.passes.common import layers_of, merged_fused_layers, source_of
from synapc.testing.models import model_path
from synapc.testing.pass_check import check_pipeline, model_from_text
from synapc.weights import WeightStore


def layer_counts(model: Model) -> Counter[str]:
    """How often each source layer is named by a computing (non-constant) synap op."""
    counts: Counter[str] = Counter()
    for op in model.module.walk():
        if isinstance(op, SynapOp) and not isinstance(op, ConstantOp):
            counts.update(layers_of(op))
    return counts


def unaccounted_layers(imported: Model, optimized: Model) -> set[str]:
    """The source layers of `imported` that no op of `optimized` names, after checking
    that `optimized` names no other layer and each at most as often as `imported` does
    (exactly once for a layer that one op computed)."""
    before, after = layer_counts(imported), layer_counts(optimized)
    assert set(after) <= set(before), set(after) - set(before)
    repeated = {n: (c, before[n]) for n, c in after.items() if c > before[n]}
    assert not repeated, repeated
    return set(before) - set(after)


def fused_of(model: Model) -> dict[str, list[str]]:
    """`layer_name` -> `fused_layers` of every op that has both."""
    return {
        op.layer_name.data: [s.data for s in op.fused_layers.data]
        for op in model.module.walk()
        if isinstance(op, SynapOp)
        and op.layer_name is not None
        and op.fused_layers is not None
    }


# -- the attribute ---------------------------------------------------------------------
def test_fused_layers_round_trips_and_is_absent_when_empty() -> None:
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = synap.sigmoid %x {layer_name = "s", layer_index = 3 : i64,
                         fused_layers = ["a", "b"]} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}"""
    store = WeightStore()
    printed = print_module(parse_module(text, store))
    assert 'fused_layers = ["a", "b"]' in printed
    assert print_module(parse_module(printed, store)) == printed
    x = parse_module(text, store).body.block.first_op.body.block.args[0]
    op = SigmoidOp.make(x, layer_name="s", fused_layers=["a"])
    assert op.fused_layers == ArrayAttr([StringAttr("a")])
    assert SigmoidOp.make(x, fused_layers=[]).fused_layers is None
    assert "fused_layers" not in SigmoidOp.make(x).attributes


def test_merged_layers_keep_graph_order_without_repeats_or_own_name() -> None:
    model = model_from_text("""!t = tensor<4xf32>
func.func @main(%x: !t) -> !t {
  %c = synap.constant {layer_name = "folded"} dense_resource<c> : !t
  %a = synap.add %x, %c {layer_name = "a", fused_layers = ["pre"]} : (!t, !t) -> !t
  %b = synap.sigmoid %a {layer_name = "b", fused_layers = ["a", "b2"]} : (!t) -> !t
  %d = synap.tanh %b {layer_name = "d", fused_layers = ["b2"]} : (!t) -> !t
  func.return %d : !t
}""")
    c, a, b, d = list(model.main.body.block.ops)[:4]
    # absorbed in any order: graph order wins; the constant's layer is not tracked
    assert merged_fused_layers(b, [d, a, c]) == ["a", "pre", "b2", "d"]
    assert merged_fused_layers(a, [b]) == ["pre", "b", "b2"]
    assert source_of(b, d) == {"layer_name": "b", "fused_layers": ["a", "b2", "d"]}
    assert source_of(c) == {"layer_name": "folded"}


# -- an ONNX CNN -----------------------------------------------------------------------
def _cnn(path: Path) -> Path:
    """conv0 -> transpose pair -> pad -> conv1 + batch-norm -> relu -> max pool -> conv2
    -> per-channel scale -> decomposed hard-swish -> two equal sigmoids -> add -> global
    average pool -> flatten -> gemm."""
    rng = np.random.default_rng(0)
    n = helper.make_node

    def f32(name: str, value: object) -> onnx.TensorProto:
        return numpy_helper.from_array(np.asarray(value, np.float32), name)

    nodes = [
        n("Conv", ["x", "w0"], ["c0"], name="conv0", kernel_shape=[1, 1]),
        n("Transpose", ["c0"], ["t0"], name="t_a", perm=[0, 2, 3, 1]),
        n("Transpose", ["t0"], ["t1"], name="t_b", perm=[0, 3, 1, 2]),
        n("Pad", ["t1", "pads"], ["xp"], name="pad1"),
        n("Conv", ["xp", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3]),
        n("BatchNormalization", ["c1", "g", "beta", "mean", "var"], ["bn"], name="bn1"),
        n("Relu", ["bn"], ["r1"], name="relu1"),
        n("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "w2"], ["c2"], name="conv2", kernel_shape=[1, 1]),
        n("Mul", ["c2", "s"], ["c2s"], name="scale2"),
        n("Add", ["c2s", "three"], ["h3"], name="hs_add"),
        n("Clip", ["h3", "zero", "six"], ["r6"], name="hs_clip"),
        n("Mul", ["c2s", "r6"], ["hr"], name="hs_mul"),
        n("Div", ["hr", "six"], ["hs"], name="hs_div"),
        n("Sigmoid", ["hs"], ["sa"], name="sig_a"),
        n("Sigmoid", ["hs"], ["sb"], name="sig_b"),
        n("Add", ["sa", "sb"], ["ss"], name="sum"),
        n("GlobalAveragePool", ["ss"], ["gap"], name="gap"),
        n("Flatten", ["gap"], ["flat"], name="flatten"),
        n("Gemm", ["flat", "wf", "bf"], ["y"], name="fc", transB=1),
    ]
    inits = [
        numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
        f32("w0", rng.normal(0, 0.3, (3, 3, 1, 1))),
        f32("w1", rng.normal(0, 0.3, (8, 3, 3, 3))),
        f32("b1", rng.normal(0, 0.1, 8)),
        f32("g", rng.uniform(0.5, 1.5, 8)),
        f32("beta", rng.normal(0, 0.1, 8)),
        f32("mean", rng.normal(0, 0.1, 8)),
        f32("var", rng.uniform(0.5, 1.5, 8)),
        f32("w2", rng.normal(0, 0.3, (6, 8, 1, 1))),
        f32("s", rng.uniform(0.5, 1.5, (1, 6, 1, 1))),
        f32("three", 3.0),
        f32("zero", 0.0),
        f32("six", 6.0),
        f32("wf", rng.normal(0, 0.3, (5, 6))),
        f32("bf", rng.normal(0, 0.1, 5)),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_onnx_cnn_names_every_layer_once(tmp_path: Path) -> None:
    imported = synapc.import_model(_cnn(tmp_path / "cnn.onnx"))
    optimized = synapc.optimize(imported)
    assert unaccounted_layers(imported, optimized) == set()
    ops = [op.name for op in optimized.main.body.block.ops if op.name != "synap.constant"]
    assert ops.count("synap.conv2d_pool") == 1 and "synap.hard_swish" in ops
    assert "synap.clamp" not in ops and "synap.pad" not in ops
    fused = fused_of(optimized)
    # the importer folds the batch norm into conv1, which keeps its name
    assert fused["conv1"] == ["pad1", "bn1", "relu1", "pool1"]
    assert fused["conv2"] == ["scale2"]
    assert fused["hs_div"] == ["hs_add", "hs_clip", "hs_mul"]
    assert fused["sig_a"] == ["sig_b"]


# -- an NCHW-style IR model ------------------------------------------------------------
NCHW = """!nchw = tensor<1x4x8x8xf32>
!nhwc = tensor<1x8x8x4xf32>
!c = tensor<1x4x1x1xf32>
func.func @main(%x: !nchw) -> tensor<1x5xf32> {
  %t = synap.transpose %x {layer_name = "to_nhwc", perm = array<i64: 0, 2, 3, 1>}
      : (!nchw) -> !nhwc
  %w = synap.constant dense_resource<w> : tensor<3x3x4x4xf32>
  %wt = synap.transpose %w {layer_name = "w_ohwi", perm = array<i64: 3, 0, 1, 2>}
      : (tensor<3x3x4x4xf32>) -> tensor<4x3x3x4xf32>
  %c = synap.conv2d %t, %wt {layer_name = "conv", pad = array<i64: 1, 1, 1, 1>}
      : (!nhwc, tensor<4x3x3x4xf32>) -> !nhwc
  %u = synap.transpose %c {layer_name = "to_nchw", perm = array<i64: 0, 3, 1, 2>}
      : (!nhwc) -> !nchw
  %s = synap.constant dense_resource<s> : !c
  %m = synap.mul %u, %s {layer_name = "bn_mul"} : (!nchw, !c) -> !nchw
  %b = synap.constant dense_resource<b> : !c
  %a = synap.add %m, %b {layer_name = "bn_add"} : (!nchw, !c) -> !nchw
  %r = synap.clamp %a {layer_name = "relu", min = 0.0 : f32} : (!nchw) -> !nchw
  %e = synap.reshape %r {layer_name = "same"} : (!nchw) -> !nchw
  %f = synap.reshape %e {layer_name = "flatten"} : (!nchw) -> tensor<1x256xf32>
  %wf = synap.constant dense_resource<wf> : tensor<5x256xf32>
  %y = synap.fully_connected %f, %wf {layer_name = "fc"}
      : (tensor<1x256xf32>, tensor<5x256xf32>) -> tensor<1x5xf32>
  func.return %y : tensor<1x5xf32>
}"""


def test_nchw_model_names_layers_once_except_folded_constants() -> None:
    model = model_from_text(NCHW)
    result = check_pipeline(model, ["optimize"])  # outputs unchanged, too
    optimized = result.optimized
    # the weight transpose is computed at compile time: its layer is gone with it
    assert unaccounted_layers(model, optimized) == {"w_ohwi"}
    fused = fused_of(optimized)
    # the identity reshape "same" passes its input on: the op producing it takes it
    assert fused["conv"] == ["bn_mul", "bn_add", "relu", "same"]
    assert fused["fc"] == ["to_nchw"]  # the flatten's transpose is in fc's weights
    assert "flatten" in layer_counts(optimized) and "flatten" not in fused
    assert "to_nhwc" in layer_counts(optimized) and "to_nhwc" not in fused


def test_second_optimize_keeps_provenance() -> None:
    once = synapc.optimize(model_from_text(NCHW))
    twice = synapc.optimize(once)
    assert print_module(twice.module) == print_module(once.module)


# -- real models -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "shape"),
    [("ppocr_mobile_v2_cls", (1, 3, 48, 192)), ("selfie_segmentation", None)],
)
def test_real_model_names_every_layer_once(name: str, shape: tuple | None) -> None:
    shapes = None if shape is None else [shape]
    imported = synapc.import_model(model_path(name), input_shapes=shapes)
    optimized = synapc.optimize(imported)
    assert unaccounted_layers(imported, optimized) == set()
    fused = fused_of(optimized)
    assert len(fused) >= 20, len(fused)
    order = {n: i for i, n in enumerate(layer_counts(imported))}
    for own, layers in fused.items():
        assert [order[n] for n in layers] == sorted(order[n] for n in layers), own
