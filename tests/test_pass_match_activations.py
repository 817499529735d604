"""Semantic tests of `match-activations`: every case of its lit file, run on the JAX
backend before and after the pass (float outputs within 1e-5 relative), must give the
same outputs, and the positive cases must actually fuse; plus ONNX LayerNormalization
imported with `synapc.import_model`, and the new `synap.layer_norm` op itself."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import synapc
from synapc.compiler import optimize
from synapc.dialects.synap.normalization import LayerNormOp
from synapc.mlir_io import parse_module, print_module, write_module
from synapc.testing.pass_check import check_pipeline, model_from_text, run_unoptimized
from synapc.weights import WeightStore

PASS = "match-activations"
LIT = Path(__file__).parent.parent / "lit_tests" / "passes" / "match_activations.mlir"


def _cases() -> dict[str, str]:
    """The lit file's cases by function name, each renamed to @main."""
    cases = {}
    for chunk in LIT.read_text().split("// -----"):
        name = re.search(r"func\.func @(\w+)\(", chunk)
        assert name is not None
        cases[name.group(1)] = chunk.replace(f"@{name.group(1)}(", "@main(", 1)
    return cases


CASES = _cases()

#: Positive lit cases: the fused op and the ops that must be gone afterwards.
FUSED = {
    "hard_swish_div": ("synap.hard_swish", ["synap.clamp", "synap.mul", "synap.div"]),
    "hard_swish_inner_scale": ("synap.hard_swish", ["synap.clamp", "synap.mul"]),
    "hard_swish_fused_relu6": ("synap.hard_swish", ["synap.add", "synap.mul"]),
    "hard_swish_hard_sigmoid": ("synap.hard_swish", ["synap.hard_sigmoid", "synap.mul"]),
    "swish": ("synap.swish", ["synap.sigmoid", "synap.mul"]),
    "swish_beta": ("synap.swish", ["synap.sigmoid", "synap.mul"]),
    "gelu_tanh_pow": ("synap.gelu", ["synap.tanh", "synap.pow", "synap.mul"]),
    "gelu_tanh_cube": ("synap.gelu", ["synap.tanh", "synap.mul", "synap.add"]),
    "gelu_erf_div": ("synap.gelu", ["synap.erf", "synap.div", "synap.mul"]),
    "gelu_erf_mul": ("synap.gelu", ["synap.erf", "synap.mul", "synap.add"]),
    "layer_norm_onnx": ("synap.layer_norm", ["synap.reduce_mean", "synap.rsqrt"]),
    "layer_norm_pytorch": ("synap.layer_norm", ["synap.reduce_mean", "synap.sqrt"]),
    "layer_norm_no_affine": ("synap.layer_norm", ["synap.reduce_mean", "synap.mul"]),
}
#: Lit cases that must come out unchanged.
UNCHANGED = [name for name in CASES if name not in FUSED]


def _ops(text: str) -> list[str]:
    """The synap op names of a printed module, in order."""
    return re.findall(r"= (synap\.\w+)", text)


def test_every_lit_case_is_classified() -> None:
    assert set(FUSED) <= set(CASES)
    assert len(UNCHANGED) >= 6


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_case_keeps_outputs(name: str) -> None:
    fused, gone = FUSED[name]
    result = check_pipeline(CASES[name], [PASS])
    after = _ops(print_module(result.optimized.module))
    assert after.count(fused) == 1, after
    for op in gone:
        assert op not in after, after
    # the chain left no dead constants behind (layer norm keeps gamma and beta)
    assert after.count("synap.constant") == (
        2 if fused == "synap.layer_norm" and "affine" not in name else 0
    ), after


@pytest.mark.parametrize("name", UNCHANGED)
def test_unmatched_case_is_unchanged(name: str) -> None:
    # identical IR computes identical outputs: no need to run it
    before = model_from_text(CASES[name])
    after = optimize(before, [PASS])
    assert print_module(after.module) == print_module(before.module)


@pytest.mark.parametrize("name", ["hard_swish_quantized", "layer_norm_quantized"])
def test_quantized_chain_is_unchanged_under_both_semantics(name: str) -> None:
    text = CASES[name]
    onnx_text = text.replace(
        "func.func @main",
        'builtin.module attributes {"synap.integer_semantics" = "onnx"} {\nfunc.func @main',
        1,
    ).replace("\n{-#", "\n}\n{-#", 1)
    for source in (text, onnx_text):
        before = model_from_text(source)
        after = optimize(before, [PASS])
        assert "quant.uniform" in print_module(before.module)
        assert print_module(after.module) == print_module(before.module)
    assert model_from_text(onnx_text).integer_semantics.value == "onnx"


# -- ONNX LayerNormalization through the importer ---------------------------------------


def _onnx_layer_norm(tmp_path: Path, shape: list[int], bias: bool, eps: float) -> Path:
    rng = np.random.default_rng(3)
    width = shape[-1]
    inits = [numpy_helper.from_array(rng.normal(1, 0.3, width).astype(np.float32), "g")]
    inputs = ["x", "g"]
    if bias:
        inits.append(
            numpy_helper.from_array(rng.normal(0, 0.3, width).astype(np.float32), "b")
        )
        inputs.append("b")
    node = helper.make_node(
        "LayerNormalization", inputs, ["y"], name="ln", axis=-1, epsilon=eps
    )
    graph = helper.make_graph(
        [node],
        "layer_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8
    )
    path = tmp_path / "layer_norm.onnx"
    onnx.save(model, path)
    return path


@pytest.mark.parametrize(
    ("shape", "bias", "eps"), [([2, 5, 16], True, 1e-5), ([3, 32], False, 1e-3)]
)
def test_onnx_layer_normalization(
    tmp_path: Path, shape: list[int], bias: bool, eps: float
) -> None:
    model = synapc.import_model(_onnx_layer_norm(tmp_path, shape, bias, eps))
    assert "synap.reduce_mean" in print_module(model.module)
    result = check_pipeline(model, [PASS])
    after = _ops(print_module(result.optimized.module))
    assert after == ["synap.constant"] * (2 if bias else 1) + ["synap.layer_norm"], after
    (op,) = [o for o in result.optimized.module.walk() if isinstance(o, LayerNormOp)]
    assert (op.gamma is not None, op.beta is not None) == (True, bias)
    assert op.props()["epsilon"] == pytest.approx(eps, rel=1e-6)
    assert op.layer_name is not None and op.layer_name.data == "ln"
    # against the ONNX definition, in float64
    x = np.random.default_rng(0).normal(0, 2, shape).astype(np.float32)
    (y,) = run_unoptimized(result.optimized, [x], "GENERIC")
    store = model.weights
    gamma = np.asarray(store[op.gamma.owner.handle], np.float64).reshape(-1)
    beta = 0 if op.beta is None else store[op.beta.owner.handle].reshape(-1)
    x64 = x.astype(np.float64)
    centered = x64 - x64.mean(-1, keepdims=True)
    want = centered / np.sqrt((centered**2).mean(-1, keepdims=True) + eps) * gamma + beta
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def _scalar(name: str, value: float) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, np.float32), name)


def test_onnx_pytorch_export_form(tmp_path: Path) -> None:
    """The node sequence PyTorch's TorchScript exporter (opset < 17) writes for
    LayerNorm -> x * relu6(x + 3) / 6 -> SiLU -> tanh-GELU, through the ONNX importer."""
    rng = np.random.default_rng(4)
    n = helper.make_node
    nodes = [
        n("ReduceMean", ["x"], ["mean"], axes=[-1]),
        n("Sub", ["x", "mean"], ["d"]),
        n("Pow", ["d", "two"], ["d2"]),
        n("ReduceMean", ["d2"], ["var"], axes=[-1]),
        n("Add", ["var", "eps"], ["ve"]),
        n("Sqrt", ["ve"], ["sd"]),
        n("Div", ["d", "sd"], ["norm"]),
        n("Mul", ["norm", "weight"], ["scaled"]),
        n("Add", ["scaled", "bias"], ["h"]),
        n("Add", ["h", "three"], ["h3"]),
        n("Clip", ["h3", "zero", "six"], ["r6"]),
        n("Mul", ["h", "r6"], ["hr"]),
        n("Div", ["hr", "six"], ["hs"]),
        n("Sigmoid", ["hs"], ["sg"]),
        n("Mul", ["hs", "sg"], ["silu"]),
        n("Mul", ["silu", "half"], ["g0"]),
        n("Pow", ["silu", "three"], ["g1"]),
        n("Mul", ["g1", "cubic"], ["g2"]),
        n("Add", ["silu", "g2"], ["g3"]),
        n("Mul", ["g3", "k"], ["g4"]),
        n("Tanh", ["g4"], ["g5"]),
        n("Add", ["g5", "one"], ["g6"]),
        n("Mul", ["g0", "g6"], ["y"]),
    ]
    inits = [
        _scalar("two", 2.0),
        _scalar("eps", 1e-5),
        numpy_helper.from_array(rng.normal(1, 0.3, 16).astype(np.float32), "weight"),
        numpy_helper.from_array(rng.normal(0, 0.3, 16).astype(np.float32), "bias"),
        _scalar("three", 3.0),
        _scalar("zero", 0.0),
        _scalar("six", 6.0),
        _scalar("half", 0.5),
        _scalar("cubic", 0.044715),
        _scalar("k", float(np.sqrt(2 / np.pi))),
        _scalar("one", 1.0),
    ]
    graph = helper.make_graph(
        nodes,
        "pytorch_export",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 16])],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8
    )
    onnx.save(model, tmp_path / "export.onnx")
    imported = synapc.import_model(tmp_path / "export.onnx")
    result = check_pipeline(imported, [PASS])
    after = _ops(print_module(result.optimized.module))
    assert after == [
        "synap.constant",
        "synap.constant",
        "synap.layer_norm",
        "synap.hard_swish",
        "synap.swish",
        "synap.gelu",
    ], after


# -- the synap.layer_norm op -------------------------------------------------------------

LN_OPS = """func.func @main(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> (
    tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %0 = synap.layer_norm %x scale %g : tensor<8xf32> bias %g : tensor<8xf32> {epsilon = \
1.000000e-03 : f32} : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %1 = synap.layer_norm %x bias %g : tensor<8xf32> : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %2 = synap.layer_norm %x {axis = 1 : i64} : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  func.return %0, %1, %2 : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
}"""


def test_layer_norm_op_round_trips_and_computes() -> None:
    module = parse_module(LN_OPS, WeightStore())
    text = print_module(module)
    assert print_module(parse_module(text, WeightStore())) == text
    generic = io.StringIO()
    write_module(module, generic, print_generic=True)
    assert "operandSegmentSizes = array<i32: 1, 0, 1>" in generic.getvalue()
    assert print_module(parse_module(generic.getvalue(), WeightStore())) == text
    model = model_from_text(LN_OPS)
    rng = np.random.default_rng(5)
    x = rng.normal(1, 3, (2, 3, 8)).astype(np.float32)
    g = rng.normal(0, 1, 8).astype(np.float32)
    outputs = run_unoptimized(model, [x, g], "GENERIC")

    def reference(axis: int, eps: float) -> np.ndarray:
        x64 = x.astype(np.float64)
        centered = x64 - x64.mean(axis, keepdims=True)
        return centered / np.sqrt((centered**2).mean(axis, keepdims=True) + eps)

    wants = [reference(-1, 1e-3) * g + g, reference(-1, 1e-5) + g, reference(1, 1e-5)]
    for got, want in zip(outputs, wants, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_pytorch_exported_erf_gelu_becomes_one_op(tmp_path: Path) -> None:
    """nn.GELU() as PyTorch's TorchScript-based ONNX exporter writes it (Div, Erf, Add,
    Mul, Mul): imported and optimized, it is one exact `synap.gelu` and the outputs
    match ONNX Runtime."""
    import onnxruntime as ort
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8)
    ).eval()
    path = tmp_path / "mlp.onnx"
    torch.onnx.export(
        net,
        (torch.randn(4, 16),),
        str(path),
        input_names=["x"],
        dynamo=False,
        opset_version=17,
    )
    exported = [n.op_type for n in onnx.load(path).graph.node]
    assert "Erf" in exported and "Gelu" not in exported, exported

    optimized = optimize(synapc.import_model(path))
    after = _ops(print_module(optimized.module))
    assert after.count("synap.gelu") == 1 and "synap.erf" not in after, after
    assert "approximate = true" not in print_module(optimized.module)

    x = np.random.default_rng(6).normal(0, 2, (4, 16)).astype(np.float32)
    want = ort.InferenceSession(str(path)).run(None, {"x": x})[0]
    (got,) = synapc.compile(optimized, "GENERIC").run([x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
