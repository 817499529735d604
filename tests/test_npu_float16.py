"""The float16 arithmetic of NPU float layers (docs/npu_float16.md): float16 storage,
float32 within a layer, one rounding at each layer's boundary."""

from __future__ import annotations

import numpy as np

import synapc
from synapc.mlir_io import parse_module
from synapc.model import Model
from synapc.weights import WeightStore

T = "tensor<4xf32>"
TWO_LAYERS = f"""
func.func @main(%x: {T}, %y: {T}) -> {T} {{
  %a = synap.mul %x, %x : ({T}, {T}) -> {T}
  %b = synap.add %a, %y : ({T}, {T}) -> {T}
  func.return %b : {T}
}}
"""


def _model(text: str) -> Model:
    store = WeightStore()
    return Model.from_module(parse_module(text, store), store)


def test_each_layer_result_is_rounded_to_float16() -> None:
    """(1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 is stored as 1 + 2^-9; adding 2^-11 is then an
    exact float16 tie that rounds to even (1 + 2^-9). Carried in float32 into the add,
    the 2^-20 would round it up instead (1 + 2^-9 + 2^-10)."""
    model = _model(TWO_LAYERS)
    ops = [type(op).__name__ for op in synapc.optimize(model).main.body.block.ops]
    assert ops == ["MulOp", "AddOp", "ReturnOp"]  # two layers, not one fused
    x = np.full(4, 1 + 2**-10, np.float32)
    y = np.full(4, 2**-11, np.float32)
    expected = (np.float16(x[0]) * np.float16(x[0])) + np.float16(y[0])
    assert expected == np.float16(1 + 2**-9)
    got = synapc.compile(model, "VS680").run([x, y])[0]
    assert np.array_equal(got, np.full(4, np.float32(expected)))
    generic = synapc.compile(model, "GENERIC").run([x, y])[0]
    assert np.array_equal(generic, x * x + y)  # float32: no rounding to float16


def test_single_operation_layers_equal_ieee_float16() -> None:
    """A one-operation layer computed in float32 and rounded once is the correctly
    rounded float16 result: the same as numpy's float16 arithmetic, on random values."""
    rng = np.random.default_rng(0)
    n = 4096
    t = f"tensor<{n}xf32>"
    lines = [f"func.func @main(%x: {t}, %y: {t}) -> ({t}, {t}, {t}) {{"]
    for name in ("add", "mul", "div"):
        lines.append(f"  %{name} = synap.{name} %x, %y : ({t}, {t}) -> {t}")
    lines += [f"  func.return %add, %mul, %div : {t}, {t}, {t}", "}"]
    x16 = rng.uniform(-8, 8, n).astype(np.float16)
    y16 = rng.uniform(0.5, 8, n).astype(np.float16)
    got = synapc.compile(_model("\n".join(lines)), "VS680").run(
        [x16.astype(np.float32), y16.astype(np.float32)]
    )
    for out, want in zip(got, (x16 + y16, x16 * y16, x16 / y16), strict=True):
        assert np.array_equal(out, want.astype(np.float32))
