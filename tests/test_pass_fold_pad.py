"""Semantic tests of `fold-pad`: every `@fold_*` case of the lit golden file, and a few
more, run on the JAX backend before and after the pass with identical results (integers
bit for bit); the pass must have removed the pad. The `@keep_*` cases must keep it, and
for the subtle ones a hand-folded module shows that folding would indeed change the
result."""

from __future__ import annotations

import re
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from synapc.backends.jax.ops.quantized import quantize_half_even, quantize_real
from synapc.compiler import optimize
from synapc.dialects.synap.attributes import IntegerSemantics
from synapc.passes.fold_pad import stored_fill
from synapc.testing.pass_check import (
    check_pipeline,
    model_from_text,
    random_inputs,
    run_unoptimized,
)

PASS = "fold-pad"
LIT_FILE = Path(__file__).resolve().parents[1] / "lit_tests" / "passes" / "fold_pad.mlir"


def _lit_cases() -> dict[str, str]:
    """The functions of the lit file (with their `builtin.module` wrapper if they have
    one), renamed to `@main` and keyed by their name."""
    cases = {}
    for chunk in LIT_FILE.read_text().split("// -----"):
        pieces = (
            [chunk]
            if "builtin.module" in chunk
            else re.split(r"(?m)^(?=func\.func)", chunk)
        )
        for piece in pieces:
            name = re.search(r"func\.func @(\w+)", piece)
            if name:
                cases[name.group(1)] = piece.replace(f"@{name.group(1)}(", "@main(")
    return cases


LIT_CASES = _lit_cases()
FOLD_CASES = sorted(name for name in LIT_CASES if name.startswith("fold_"))
KEEP_CASES = sorted(name for name in LIT_CASES if name.startswith("keep_"))


def _pads(text: str) -> int:
    return text.count("synap.pad ")


def _check_folds(text: str, seed: int = 0) -> None:
    """The pass removes every pad of `text` and the outputs stay the same."""
    assert _pads(text) > 0
    result = check_pipeline(text, [PASS], seed=seed)
    assert _pads(str(result.optimized)) == 0, str(result.optimized)


def test_lit_file_has_cases() -> None:
    assert len(FOLD_CASES) >= 15 and len(KEEP_CASES) >= 10


@pytest.mark.parametrize("name", FOLD_CASES)
def test_lit_fold_case_is_exact(name: str) -> None:
    _check_folds(LIT_CASES[name])


@pytest.mark.parametrize("name", KEEP_CASES)
def test_lit_keep_case_keeps_pad(name: str) -> None:
    text = LIT_CASES[name]
    optimized = optimize(model_from_text(text), [PASS])
    assert _pads(str(optimized)) == _pads(text)


# -- more cases -------------------------------------------------------------------------

QX = "!quant.uniform<i16:f32, 0.001:0>"
QW16 = "!quant.uniform<i8:f32:0, {0.01,0.02}>"
QO16 = "!quant.uniform<i16:f32, 0.002:0>"


def test_int16_conv_tflite() -> None:
    """16x8 conv (int64 accumulation, constant weights): the zero point 0 pad folds."""
    text = f"""
    func.func @main(%x: tensor<1x5x5x3x{QX}>) -> tensor<1x5x5x2x{QO16}> {{
      %w = synap.constant dense_resource<w> : tensor<2x3x3x3x{QW16}>
      %p = synap.pad %x {{pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>}} :
        (tensor<1x5x5x3x{QX}>) -> tensor<1x7x7x3x{QX}>
      %y = synap.conv2d %p, %w {{activation = #synap<activation relu>}} :
        (tensor<1x7x7x3x{QX}>, tensor<2x3x3x3x{QW16}>) -> tensor<1x5x5x2x{QO16}>
      func.return %y : tensor<1x5x5x2x{QO16}>
    }}"""
    _check_folds(text)


@pytest.mark.parametrize("semantics", ["tflite", "onnx"])
def test_quant_chain_conv_relu_pad_max_pool_pad_conv(semantics: str) -> None:
    """pad -> conv(relu6) -> pad -> max pool -> pad -> conv: all three pads fold."""
    q = "!quant.uniform<u8:f32, 0.03:110>"
    qw = "!quant.uniform<u8:f32, 0.01:127>"
    text = f"""
    builtin.module attributes {{"synap.integer_semantics" = "{semantics}"}} {{
      func.func @main(%x: tensor<1x8x8x3x{q}>, %w: tensor<6x3x3x3x{qw}>,
                      %v: tensor<4x3x3x6x{qw}>) -> tensor<1x4x4x4x{q}> {{
        %p0 = synap.pad %x {{pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>}} :
          (tensor<1x8x8x3x{q}>) -> tensor<1x10x10x3x{q}>
        %c = synap.conv2d %p0, %w {{activation = #synap<activation relu6>}} :
          (tensor<1x10x10x3x{q}>, tensor<6x3x3x3x{qw}>) -> tensor<1x8x8x6x{q}>
        %p1 = synap.pad %c {{pads = array<i64: 0, 0, 0, 1, 0, 1, 0, 0>}} :
          (tensor<1x8x8x6x{q}>) -> tensor<1x9x9x6x{q}>
        %m = synap.max_pool2d %p1
          {{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>}} :
          (tensor<1x9x9x6x{q}>) -> tensor<1x4x4x6x{q}>
        %p2 = synap.pad %m {{pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>}} :
          (tensor<1x4x4x6x{q}>) -> tensor<1x6x6x6x{q}>
        %y = synap.conv2d %p2, %v : (tensor<1x6x6x6x{q}>, tensor<4x3x3x6x{qw}>)
          -> tensor<1x4x4x4x{q}>
        func.return %y : tensor<1x4x4x4x{q}>
      }}
    }}"""
    _check_folds(text)


def test_float_max_pool_after_avg_pool_relu_shares_pad() -> None:
    """A relu'd avg pool's result padded once and read by a max pool and a conv."""
    text = """
    func.func @main(%x: tensor<1x8x8x4xf32>, %w: tensor<4x3x3x4xf32>)
        -> (tensor<1x4x4x4xf32>, tensor<1x8x8x4xf32>) {
      %a = synap.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>,
        pad = array<i64: 0, 1, 0, 1>, activation = #synap<activation relu>} :
        (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
      %p = synap.pad %a {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} :
        (tensor<1x8x8x4xf32>) -> tensor<1x10x10x4xf32>
      %m = synap.max_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} :
        (tensor<1x10x10x4xf32>) -> tensor<1x4x4x4xf32>
      %c = synap.conv2d %p, %w : (tensor<1x10x10x4xf32>, tensor<4x3x3x4xf32>)
        -> tensor<1x8x8x4xf32>
      func.return %m, %c : tensor<1x4x4x4xf32>, tensor<1x8x8x4xf32>
    }"""
    _check_folds(text)


# -- the kept cases really are not foldable ------------------------------------------------


def _differs(original: str, hand_folded: str) -> bool:
    """Whether the hand-folded module computes something else than the original."""
    model = model_from_text(original)
    inputs = random_inputs(model.inputs)
    before = run_unoptimized(model, inputs, "GENERIC")
    after = run_unoptimized(model_from_text(hand_folded), inputs, "GENERIC")
    return any(not np.array_equal(b, a) for b, a in zip(before, after, strict=True))


def _hand_fold(name: str, pool_props: str) -> tuple[str, str]:
    """The lit case `name` and a copy where the pool reads the pad's input with
    `pool_props` (the naive fold); the pad stays, unused."""
    text = LIT_CASES[name]
    folded = re.sub(
        r"(synap\.(?:max|avg)_pool2d) %p \{[^}]*\} : \(tensor<[^)]*\)",
        lambda m: f"{m.group(1)} %SRC {{{pool_props}}} : (SRCTYPE)",
        text,
    )
    pad = re.search(r"synap\.pad (%\w+) \{[^}]*\} : \((tensor<[^)]*>)\)", text)
    assert pad is not None and folded != text
    return text, folded.replace("%SRC", pad.group(1)).replace("SRCTYPE", pad.group(2))


def test_naive_fold_of_padding_only_window_differs() -> None:
    original, folded = _hand_fold(
        "keep_max_pool_window_of_padding_only",
        "kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
        "pad = array<i64: 2, 0, 0, 0>",
    )
    assert _differs(original, folded)


def test_naive_fold_of_zero_point_fill_into_max_pool_differs() -> None:
    original, folded = _hand_fold(
        "keep_max_pool_quant_zero_fill_of_any_values",
        "kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>",
    )
    assert _differs(original, folded)


def test_naive_fold_into_avg_pool_not_counting_its_pad_differs() -> None:
    props = "kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: {}>"
    original, folded = _hand_fold(
        "keep_avg_pool_own_pad_not_counted", props.format("2, 1, 1, 2")
    )
    assert _differs(original, folded)
    original, folded = _hand_fold(
        "keep_avg_pool_own_pad_not_counted",
        props.format("2, 1, 1, 2") + ", count_include_pad = true",
    )
    assert _differs(original, folded)


def test_naive_fold_of_storage_min_onnx_requantizing_pool_differs() -> None:
    original, folded = _hand_fold(
        "keep_max_pool_quant_storage_min_onnx",
        "kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
        "pad = array<i64: 2, 0, 1, 1>",
    )
    assert _differs(original, folded)


# -- the pass's fill arithmetic matches the backend ----------------------------------------


@pytest.mark.parametrize(
    "qtype", ["!quant.uniform<u8:f32, 0.05:128>", "!quant.uniform<i8:f32, 0.0235:-3>"]
)
def test_stored_fill_matches_backend_pad(qtype: str) -> None:
    """`stored_fill` gives the integers the JAX pad kernel writes, under both semantics,
    for values around the rounding ties of the scale and beyond the storage range."""
    q = (
        model_from_text(
            f"func.func @main(%x: tensor<1x{qtype}>) -> tensor<1x{qtype}> {{\n"
            f"  func.return %x : tensor<1x{qtype}>\n}}"
        )
        .inputs[0]
        .quantization
    )
    assert q is not None
    halves = np.arange(-300, 301, dtype=np.float32) * np.float32(q.scale) / 2
    values = [float(v) for v in (*halves, 0.0, -0.0, 1e9, -1e9)]
    onnx = quantize_half_even(jnp.asarray(np.float32(values)), q)
    for value, want_onnx in zip(values, np.asarray(onnx).tolist(), strict=True):
        want = min(max(quantize_real(value, q), q.storage_min), q.storage_max)
        assert stored_fill(value, q, IntegerSemantics.TFLITE) == want, value
        assert stored_fill(value, q, IntegerSemantics.ONNX) == want_onnx, value
    assert stored_fill(-np.inf, q, IntegerSemantics.ONNX) == q.storage_min
    assert stored_fill(-np.inf, q, IntegerSemantics.TFLITE) is None
