"""Semantic tests of `fuse-activation` (passes/fuse_activation.py): the module runs on the
JAX backend before and after the pass with the same random inputs (stored integers over
the whole storage range for quantized inputs) and gives identical integers / the same
floats, under TFLite and ONNX integer semantics; each test also checks the pass fired
(or, where it must not, that it left the clamps alone)."""

from __future__ import annotations

import re
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from synapc.backends.jax.ops.quantized import (
    activation_range,
    dequantize_float32,
    quantize_half_even,
)
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.fuse_activation import compose, onnx_fusion_is_exact
from synapc.testing.pass_check import check_pipeline, model_from_text, run_unoptimized

PASS = "fuse-activation"
LIT = Path(__file__).parent.parent / "lit_tests" / "passes" / "fuse_activation.mlir"


def _lit_case(name: str) -> str:
    """The lit case holding `func.func @name`, renamed to @main, without its resource
    section (the tests set constant values themselves)."""
    for chunk in LIT.read_text().split("// -----"):
        if f"func.func @{name}(" in chunk:
            chunk = re.sub(r"\{-#.*#-\}", "", chunk, flags=re.S)
            return chunk.replace(f"@{name}(", "@main(")
    raise LookupError(name)


def _count(text: str, op: str) -> int:
    return len(re.findall(rf"= {re.escape(op)} ", text))


# -- the positive lit cases -------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "clamps_before"),
    [
        ("float_conv_layers", 4),
        ("float_elementwise_pool", 6),
        ("compose", 5),
        ("quantized_tflite", 4),
        ("quantized_onnx", 3),
    ],
)
def test_lit_case(case: str, clamps_before: int) -> None:
    """Every clamp of the positive lit cases is fused, with unchanged outputs."""
    text = _lit_case(case)
    assert _count(text, "synap.clamp") == clamps_before
    result = check_pipeline(text, [PASS])
    assert _count(str(result.optimized), "synap.clamp") == 0


def test_lit_case_not_fused_onnx() -> None:
    """Halfway bounds and quantized div under ONNX semantics keep their clamps."""
    result = check_pipeline(_lit_case("quantized_onnx_not_fused"), [PASS])
    assert _count(str(result.optimized), "synap.clamp") == 3


def _with_constants(text: str, values: dict[str, np.ndarray]) -> object:
    """The model of `text` with its constants (by result name) set to `values`."""
    model = model_from_text(text)
    for op in model.module.walk():
        if isinstance(op, ConstantOp) and op.result.name_hint in values:
            model.weights[op.handle] = values[op.result.name_hint]
    return model


def test_maximum_zero() -> None:
    """maximum with a float zero or a zero-point constant becomes a fused relu."""
    model = _with_constants(
        _lit_case("maximum_zero"),
        {"zero": np.zeros(1, np.float32), "qzero": np.full(1, 128, np.uint8)},
    )
    result = check_pipeline(model, [PASS])
    text = str(result.optimized)
    assert _count(text, "synap.maximum") == 0
    assert _count(text, "synap.constant") == 0
    assert text.count("activation relu>") == 2


def test_maximum_not_zero() -> None:
    """maximum with a nonzero constant, another type's zero point or a broadcast stays."""
    model = _with_constants(
        _lit_case("maximum_not_zero"),
        {
            "one": np.ones(1, np.float32),
            "qzero": np.full(1, 128, np.uint8),
            "wide": np.zeros((2, 1), np.float32),
        },
    )
    result = check_pipeline(model, [PASS])
    assert _count(str(result.optimized), "synap.maximum") == 3


# -- producers x activations x semantics, random stored integers over the full range ----

_ACTIVATIONS = {
    Activation.RELU: "{min = 0.0 : f32}",
    Activation.RELU6: "{min = 0.0 : f32, max = 6.0 : f32}",
    Activation.RELU_N1_TO_1: "{min = -1.0 : f32, max = 1.0 : f32}",
    Activation.RELU_0_TO_1: "{min = 0.0 : f32, max = 1.0 : f32}",
}
_X = "tensor<1x5x5x8x!quant.uniform<u8:f32, 0.02:128>>"
_W = "tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>"
_V = "tensor<3x32x!quant.uniform<i8:f32, 0.05:-3>>"
_FW = "tensor<6x32x!quant.uniform<i8:f32, 0.005>>"
_A = "tensor<1x4x4x6x!quant.uniform<i8:f32, 0.05:2>>"
_B = "tensor<1x4x4x6x!quant.uniform<u8:f32, 0.04:120>>"


def _producer(kind: str, out: str, index: int) -> tuple[str, str]:
    """MLIR text of a producer `kind` with result `%pN` of element type `out`, and its
    result type."""
    if kind == "conv":
        t = f"tensor<1x3x3x6x{out}>"
        return f"%p{index} = synap.conv2d %x, %w : ({_X}, {_W}) -> {t}", t
    if kind == "fully_connected":
        t = f"tensor<3x6x{out}>"
        return f"%p{index} = synap.fully_connected %v, %fw : ({_V}, {_FW}) -> {t}", t
    if kind == "add":
        t = f"tensor<1x4x4x6x{out}>"
        return f"%p{index} = synap.add %a, %b : ({_A}, {_B}) -> {t}", t
    t, op = f"tensor<1x3x3x6x{out}>", f"synap.{kind}"
    kernel = "{kernel = array<i64: 2, 2>}"
    return f"%p{index} = {op} %c {kernel} : (tensor<1x4x4x6x{out}>) -> {t}", t


_KINDS = ("conv", "fully_connected", "add", "avg_pool2d", "max_pool2d")


def _matrix_module(out: str, onnx: bool) -> str:
    """@main with one producer of each kind for each activation, each followed by the
    activation's clamp; every clamp result is an output."""
    lines, results, types = [], [], []
    index = 0
    for kind in _KINDS:
        for bounds in _ACTIVATIONS.values():
            line, t = _producer(kind, out, index)
            lines.append(line)
            lines.append(f"%r{index} = synap.clamp %p{index} {bounds} : ({t}) -> {t}")
            results.append(f"%r{index}")
            types.append(t)
            index += 1
    args = (
        f"%x: {_X}, %w: {_W}, %v: {_V}, %fw: {_FW}, %a: {_A}, %b: {_B}, "
        f"%c: tensor<1x4x4x6x{out}>"
    )
    body = "\n    ".join(lines)
    func = (
        f"  func.func @main({args}) -> ({', '.join(types)}) {{\n    {body}\n"
        f"    func.return {', '.join(results)} : {', '.join(types)}\n  }}"
    )
    attrs = ' attributes {"synap.integer_semantics" = "onnx"}' if onnx else ""
    return f"builtin.module{attrs} {{\n{func}\n}}\n"


_HALFWAY = (Activation.RELU_N1_TO_1, Activation.RELU_0_TO_1)


@pytest.mark.parametrize(
    ("out", "onnx", "kept"),
    [
        # TFLite: the clamp kernel and the fused range round bounds alike: all fuse,
        # even at scale 0.4 where 1 / 0.4 = 2.5 is halfway between two steps.
        ("!quant.uniform<u8:f32, 0.4:128>", False, ()),
        # ONNX: exact at scale 0.1; at 0.4, 1 / 0.4 = 2.5 is halfway (the clamp rounds it
        # to 2, a conv-like layer's fused range to 3): their relu_n1_to_1 and relu_0_to_1
        # clamps stay; add and pools clamp in float32 before quantizing and still fuse.
        ("!quant.uniform<u8:f32, 0.1:128>", True, ()),
        ("!quant.uniform<i8:f32, 0.4:-7>", True, ("conv", "fully_connected")),
    ],
)
def test_producers_activations(out: str, onnx: bool, kept: tuple[str, ...]) -> None:
    """conv, fully_connected, add, avg/max pool x relu, relu6, relu_n1_to_1, relu_0_to_1:
    identical integers before and after, fused exactly where the pass says it is exact."""
    text = _matrix_module(out, onnx)
    result = check_pipeline(text, [PASS])
    optimized = str(result.optimized)
    assert _count(optimized, "synap.clamp") == len(kept) * len(_HALFWAY)
    for activation in _ACTIVATIONS:
        fused = optimized.count(f"activation {activation.value}>")
        expected = len(_KINDS) - (len(kept) if activation in _HALFWAY else 0)
        assert fused == expected, activation


def test_halfway_bound_differs_under_onnx_only() -> None:
    """Why the ONNX check is needed: fusing relu_n1_to_1 into a conv at scale 0.4 by hand
    changes integers under ONNX semantics (and does not under TFLite's)."""
    t = "tensor<1x3x3x6x!quant.uniform<i8:f32, 0.4:-7>>"
    args = f"(%x: {_X}, %w: {_W}) -> {t}"
    clamp = (
        f"  func.func @main{args} {{\n"
        f"    %0 = synap.conv2d %x, %w : ({_X}, {_W}) -> {t}\n"
        f"    %1 = synap.clamp %0 {{min = -1.0 : f32, max = 1.0 : f32}} : ({t}) -> {t}\n"
        f"    func.return %1 : {t}\n  }}"
    )
    fused = (
        f"  func.func @main{args} {{\n"
        f"    %0 = synap.conv2d %x, %w {{activation = #synap<activation relu_n1_to_1>}}"
        f" : ({_X}, {_W}) -> {t}\n    func.return %0 : {t}\n  }}"
    )
    onnx = ' attributes {"synap.integer_semantics" = "onnx"}'
    # Random stored integers over the full range: about half of the conv's results lie
    # above the upper bound, which rounds to different integers under ONNX.
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (1, 5, 5, 8)).astype(np.uint8)
    w = rng.integers(-128, 128, (6, 3, 3, 8)).astype(np.int8)
    outputs = {}
    for name, func in (("clamp", clamp), ("fused", fused)):
        for semantics, attrs in (("tflite", ""), ("onnx", onnx)):
            model = model_from_text(f"builtin.module{attrs} {{\n{func}\n}}\n")
            outputs[name, semantics] = run_unoptimized(model, [x, w], "GENERIC")[0]
    assert np.array_equal(outputs["clamp", "tflite"], outputs["fused", "tflite"])
    assert not np.array_equal(outputs["clamp", "onnx"], outputs["fused", "onnx"])


# -- the ONNX exactness check against the backend's kernels ------------------------------


def _types() -> list[UniformQuantizedType]:
    rng = np.random.default_rng(7)
    chosen = [
        ("u8", 0.1, 128),
        ("u8", 0.4, 128),
        ("i8", 2.0, 0),
        ("i8", 0.5, 3),
        ("i8", 1 / 3, -5),
        ("i16", 0.001, 0),
        ("i16", 2.0**-12, 0),
        ("u8", 6 / 255, 0),
        ("i8", 0.0235, -128),
    ]
    chosen += [("i8", float(s), int(z)) for s, z in zip(
        rng.uniform(0.001, 0.5, 6), rng.integers(-128, 128, 6), strict=True
    )]  # fmt: skip
    chosen += [("u8", float(s), 128) for s in 2.0 / rng.integers(1, 40, 3)]
    return [UniformQuantizedType.per_tensor(st, s, z) for st, s, z in chosen]


def test_onnx_check_matches_backend() -> None:
    """`onnx_fusion_is_exact` holds exactly when, on every stored integer, dequantize ->
    quantize (ties to even) is the identity in the backend's kernels and, for conv-like
    producers, the backend's ONNX clamp (dequantize, float32 clip, quantize) equals
    clamping to the fused range; both outcomes occur."""
    outcomes = set()
    for q in _types():
        k = jnp.arange(q.storage_min, q.storage_max + 1).astype(q.storage_dtype)
        real = dequantize_float32(k, q)
        roundtrip = np.array_equal(np.asarray(quantize_half_even(real, q)), np.asarray(k))
        for activation in _ACTIVATIONS:
            low, high = activation.bounds
            clamped = np.asarray(quantize_half_even(jnp.clip(real, low, high), q))
            fused = np.clip(np.asarray(k), *activation_range(activation, q))
            matches = np.array_equal(clamped, fused)
            bounds = activation.bounds
            assert onnx_fusion_is_exact(q, bounds, False) == roundtrip, q
            exact = roundtrip and matches
            assert onnx_fusion_is_exact(q, bounds, True) == exact, (q, activation)
            outcomes.add(exact)
    assert outcomes == {True, False}


def test_compose() -> None:
    """Composition is the intersection of ranges, always an activation here."""
    assert compose(Activation.RELU, Activation.RELU6) is Activation.RELU6
    assert compose(Activation.RELU6, Activation.RELU) is Activation.RELU6
    assert compose(Activation.RELU_N1_TO_1, Activation.RELU) is Activation.RELU_0_TO_1
    assert compose(Activation.RELU6, Activation.RELU_N1_TO_1) is Activation.RELU_0_TO_1
    assert compose(Activation.NONE, Activation.RELU_N1_TO_1) is Activation.RELU_N1_TO_1
