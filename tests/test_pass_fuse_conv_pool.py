"""Semantic tests of `fuse-conv-pool`: each module runs on the JAX backend before and
after the pass (no other pass) and gives the same floats / identical integers, and the
pass must have fired (conv2d -> max_pool2d pairs replaced by synap.conv2d_pool)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synapc.dialects.synap.attributes import Activation
from synapc.model import Model
from synapc.passes.fuse_conv_pool import composed_activation
from synapc.testing.pass_check import PassCheck, check_pipeline, model_from_text

PASS = "fuse-conv-pool"
A = Activation


def _tame_weights(model: Model) -> Model:
    """Random weights fill quantized i32 biases over the whole int32 range, which
    saturates every output: give them small values instead; and scale float weights
    (N(0, 1)) by 0.1, so that results fall both inside and outside the clamp ranges."""
    rng = np.random.default_rng(1)
    for handle in list(model.weights):
        array = model.weights[handle]
        if array.dtype == np.int32:
            model.weights[handle] = rng.integers(-2000, 2000, array.shape).astype(np.int32)
        elif array.dtype.kind == "f":
            model.weights[handle] = array * np.asarray(0.1, array.dtype)
    return model


def _check(
    text: str, *, fused: int, unfused_pools: int = 0, target: str = "GENERIC"
) -> PassCheck:
    """Run the pass on `text` (weights tamed, see `_tame_weights`), compare the outputs,
    and check how many conv2d_pool and max_pool2d ops the result has."""
    result = check_pipeline(_tame_weights(model_from_text(text)), [PASS], target=target)
    optimized = str(result.optimized)
    assert optimized.count("synap.conv2d_pool") == fused, optimized
    assert optimized.count("synap.max_pool2d") == unfused_pools, optimized
    values = np.concatenate([o.ravel() for o in result.before])
    assert np.unique(values).size >= 8, "degenerate test: outputs (nearly) all clamped"
    return result


def _onnx(text: str) -> str:
    """`text` in a module with ONNX integer semantics."""
    semantics = '{"synap.integer_semantics" = "onnx"}'
    return f"builtin.module attributes {semantics} {{\n{text}}}\n"


def _pair(
    i: int,
    operands: str,
    types: str,
    conv: str,
    pooled: str,
    conv_props: str = "",
    pool_props: str = "kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>",
) -> str:
    """MLIR lines of `%c{i} = conv2d(operands)` and `%p{i} = max_pool2d(%c{i})`."""
    conv_attrs = f" {{{conv_props}}}" if conv_props else ""
    return (
        f"  %c{i} = synap.conv2d {operands}{conv_attrs}\n"
        f"      : ({types})\n"
        f"      -> {conv}\n"
        f"  %p{i} = synap.max_pool2d %c{i} {{{pool_props}}}\n"
        f"      : ({conv}) -> {pooled}\n"
    )


def _function(
    args: str, constants: dict[str, str], body: str, results: dict[str, str]
) -> str:
    """`func.func @main(args)` with `synap.constant`s (name -> type), `body` and
    returning `results` (name -> type)."""
    lines = [
        f"  %{n} = synap.constant dense_resource<{n}> : {t}" for n, t in constants.items()
    ]
    names = ", ".join(f"%{n}" for n in results)
    types = ", ".join(results.values())
    return (
        f"func.func @main({args}) -> ({types}) {{\n"
        + "\n".join(lines)
        + f"\n{body}  func.return {names} : {types}\n}}\n"
    )


# --------------------------------------------------------------------------------------
# Float
# --------------------------------------------------------------------------------------

F_X, F_W, F_B = "tensor<1x8x8x3xf32>", "tensor<8x3x3x3xf32>", "tensor<8xf32>"


def test_float_conv_relu_pool() -> None:
    """The lit case: bias, padding, relu; the conv's source layer is kept."""
    body = _pair(
        0,
        "%x, %w, %b",
        f"{F_X}, {F_W}, {F_B}",
        "tensor<1x8x8x8xf32>",
        "tensor<1x4x4x8xf32>",
        'layer_name = "conv", layer_index = 2 : i64, pad = array<i64: 1, 1, 1, 1>, '
        "activation = #synap<activation relu>",
        'layer_name = "pool", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>',
    )
    text = _function(
        f"%x: {F_X}", {"w": F_W, "b": F_B}, body, {"p0": "tensor<1x4x4x8xf32>"}
    )
    result = _check(text, fused=1)
    assert 'layer_name = "conv", layer_index = 2 : i64' in str(result.optimized)


def test_float_all_properties() -> None:
    """Strided, dilated, grouped conv without bias; padded 3x3 pool with stride 2."""
    w = "tensor<6x3x3x2xf32>"
    body = _pair(
        0,
        "%x, %w",
        f"tensor<1x9x9x4xf32>, {w}",
        "tensor<1x9x4x6xf32>",
        "tensor<1x5x2x6xf32>",
        "strides = array<i64: 1, 2>, dilations = array<i64: 2, 1>, "
        "pad = array<i64: 2, 2, 1, 0>, groups = 2 : i64",
        "kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
        "pad = array<i64: 1, 1, 1, 1>",
    )
    text = _function(
        "%x: tensor<1x9x9x4xf32>", {"w": w}, body, {"p0": "tensor<1x5x2x6xf32>"}
    )
    _check(text, fused=1)


def test_float_chain() -> None:
    """Two stages fuse; a third pool reads a conv2d_pool and stays."""
    w2 = "tensor<4x1x1x8xf32>"
    body = _pair(
        1,
        "%x, %w1",
        f"tensor<1x16x16x3xf32>, {F_W}",
        "tensor<1x16x16x8xf32>",
        "tensor<1x8x8x8xf32>",
        "pad = array<i64: 1, 1, 1, 1>",
    )
    body += _pair(
        2,
        "%p1, %w2",
        f"tensor<1x8x8x8xf32>, {w2}",
        "tensor<1x8x8x4xf32>",
        "tensor<1x4x4x4xf32>",
    )
    body += (
        "  %p3 = synap.max_pool2d %p2 {kernel = array<i64: 2, 2>}\n"
        "      : (tensor<1x4x4x4xf32>) -> tensor<1x3x3x4xf32>\n"
    )
    text = _function(
        "%x: tensor<1x16x16x3xf32>",
        {"w1": F_W, "w2": w2},
        body,
        {"p3": "tensor<1x3x3x4xf32>"},
    )
    _check(text, fused=2, unfused_pools=1)


#: (conv activation, pool activation) pairs: each activation on each side, and folds
#: that give each activation.
SOME_PAIRS = [
    (A.NONE, A.NONE),
    (A.RELU, A.NONE),
    (A.NONE, A.RELU6),
    (A.RELU6, A.RELU_N1_TO_1),
    (A.RELU_N1_TO_1, A.RELU),
    (A.RELU_0_TO_1, A.RELU),
    (A.RELU, A.RELU_0_TO_1),
    (A.RELU6, A.RELU6),
    (A.RELU_N1_TO_1, A.RELU_0_TO_1),
]


def _activation_pairs(x: str, w: str, b: str, conv: str, pooled: str) -> str:
    """@main with one conv2d -> max_pool2d pair per `SOME_PAIRS` entry: padded 3x3
    convs, padded 3x3 pools with stride 2."""
    body = "".join(
        _pair(
            i,
            "%x, %w, %b",
            f"{x}, {w}, {b}",
            conv,
            pooled,
            f"pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation {first}>",
            "kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
            f"pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation {then}>",
        )
        for i, (first, then) in enumerate(SOME_PAIRS)
    )
    results = {f"p{i}": pooled for i in range(len(SOME_PAIRS))}
    return _function(f"%x: {x}", {"w": w, "b": b}, body, results)


FLOAT_PAIRS = _activation_pairs(F_X, F_W, F_B, "tensor<1x8x8x8xf32>", "tensor<1x4x4x8xf32>")


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
def test_float_activation_pairs(target: str) -> None:
    """Conv and pool activations fuse (the pool's clamp folds into the conv's), in
    float32 and on the NPU's float16 (every pair: test_composed_activation_...)."""
    _check(FLOAT_PAIRS, fused=len(SOME_PAIRS), target=target)


def test_composed_activation_is_the_intersection() -> None:
    """For every pair, clamping by one then the other is clamping by the composition."""
    x = np.linspace(-8, 8, 161)
    for first, then in itertools.product(Activation, Activation):
        composed = composed_activation(first, then)
        assert composed is not None
        twice = np.clip(np.clip(x, *first.bounds), *then.bounds)
        assert np.array_equal(twice, np.clip(x, *composed.bounds)), (first, then)


# --------------------------------------------------------------------------------------
# Quantized
# --------------------------------------------------------------------------------------

I8_IN = "tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>"
I8_W = "tensor<4x3x3x3x!quant.uniform<i8:f32:0, {0.002,0.004,0.003,0.001}>>"
I8_B = "tensor<4x!quant.uniform<i32:f32:0, {0.0001,0.0002,0.00015,0.00005}>>"
I8_CONV = "tensor<1x8x8x4x!quant.uniform<i8:f32, 0.25:5>>"
I8_POOLED = "tensor<1x4x4x4x!quant.uniform<i8:f32, 0.25:5>>"
INT8_PAIRS = _activation_pairs(I8_IN, I8_W, I8_B, I8_CONV, I8_POOLED)


def test_quantized_tflite_int8_activation_pairs() -> None:
    """int8, per-channel weights, TFLite semantics: every pair fuses; the integer clamps
    of the conv and of the pool compose into the folded activation's clamp."""
    _check(INT8_PAIRS, fused=len(SOME_PAIRS))


def test_quantized_onnx_int8_activation_pairs() -> None:
    """Under ONNX semantics only pools without an activation fuse (the others stay, and
    the integers are the same)."""
    without = sum(then is A.NONE for _, then in SOME_PAIRS)
    _check(_onnx(INT8_PAIRS), fused=without, unfused_pools=len(SOME_PAIRS) - without)


U8_OUT = "!quant.uniform<u8:f32, 0.25:100>"


def _quantized_u8(pooled: str = U8_OUT) -> str:
    """A grouped, strided uint8 conv (per-tensor uint8 weights with a zero point, relu6)
    and a padded 3x3 pool whose result has element type `pooled`."""
    x = "tensor<1x9x9x4x!quant.uniform<u8:f32, 0.05:128>>"
    w = "tensor<6x3x3x2x!quant.uniform<u8:f32, 0.002:120>>"
    b = "tensor<6x!quant.uniform<i32:f32, 0.0001>>"
    body = _pair(
        0,
        "%x, %w, %b",
        f"{x}, {w}, {b}",
        f"tensor<1x9x5x6x{U8_OUT}>",
        f"tensor<1x5x3x6x{pooled}>",
        "strides = array<i64: 1, 2>, pad = array<i64: 1, 1, 1, 1>, groups = 2 : i64, "
        "activation = #synap<activation relu6>",
        "kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
        "pad = array<i64: 1, 1, 1, 1>",
    )
    return _function(
        f"%x: {x}", {"w": w, "b": b}, body, {"p0": f"tensor<1x5x3x6x{pooled}>"}
    )


def test_quantized_tflite_uint8_grouped() -> None:
    _check(_quantized_u8(), fused=1)


def test_quantized_onnx_uint8_grouped() -> None:
    _check(_onnx(_quantized_u8()), fused=1)


def test_quantized_pool_that_changes_type_is_kept() -> None:
    """A pool that requantizes (another scale) is not an integer max: not fused."""
    _check(_quantized_u8("!quant.uniform<u8:f32, 0.5:100>"), fused=0, unfused_pools=1)


def _quantized_16x8(pool_activation: Activation) -> str:
    """int16 activations with int8 weights and no bias (int64 accumulation)."""
    x = "tensor<1x8x8x3x!quant.uniform<i16:f32, 0.001>>"
    out = "!quant.uniform<i16:f32, 0.015>"
    body = _pair(
        0,
        "%x, %w",
        f"{x}, {I8_W}",
        f"tensor<1x8x8x4x{out}>",
        f"tensor<1x4x4x4x{out}>",
        "pad = array<i64: 1, 1, 1, 1>",
        "kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
        f"activation = #synap<activation {pool_activation}>",
    )
    return _function(f"%x: {x}", {"w": I8_W}, body, {"p0": f"tensor<1x4x4x4x{out}>"})


def test_quantized_tflite_16x8() -> None:
    """16-bit activations, TFLite semantics: fused, the pool's relu folded."""
    _check(_quantized_16x8(A.RELU), fused=1)


def test_quantized_onnx_16bit() -> None:
    _check(_onnx(_quantized_16x8(A.NONE)), fused=1)
