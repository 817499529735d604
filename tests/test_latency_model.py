"""The NPU latency model: a layer's work and traffic, and the fit's vectorized formula
(benchmarks/cost_model.py) equal to the module's per-layer one."""

from __future__ import annotations

import numpy as np

from synapc.backends.targets import get_target
from synapc.backends.targets.latency import (
    CALIBRATIONS,
    ELEMENT_OPERATIONS,
    Calibration,
    layer_cost,
    layer_time,
)
from synapc.mlir_io import parse_module
from synapc.weights import WeightStore

U8 = "!quant.uniform<u8:f32, 0.05:128>"
W8 = "!quant.uniform<u8:f32, 0.02:120>"
X, W = f"tensor<1x8x8x4x{U8}>", f"tensor<4x3x3x4x{W8}>"
Y, Z, P = (f"tensor<1x{s}x{U8}>" for s in ("6x6x4", "12x12x4", "4x6x6"))
TEXT = f"""
func.func @main(%x: {X}, %w: {W}) -> {Y} {{
  %y = synap.conv2d %x, %w : ({X}, {W}) -> {Y}
  %z = synap.resize %y : ({Y}) -> {Z}
  %t = synap.transpose %y {{perm = array<i64: 0, 3, 1, 2>}} : ({Y}) -> {P}
  func.return %y : {Y}
}}
"""


def _ops():
    module = parse_module(TEXT, WeightStore())
    func = next(iter(module.ops))
    return list(func.body.block.ops)[:3]


def test_work_and_traffic_of_a_layer() -> None:
    conv, resize, _ = _ops()
    cost = layer_cost(conv)
    assert cost.macs and cost.operations == 2 * (6 * 6 * 4) * (3 * 3 * 4)
    assert cost.bytes == 8 * 8 * 4 + 4 * 3 * 3 * 4 + 6 * 6 * 4  # uint8 everywhere
    resized = layer_cost(resize)
    per_element = ELEMENT_OPERATIONS["synap.resize"]
    assert not resized.macs and resized.operations == per_element * 12 * 12 * 4


def test_the_fit_computes_what_the_model_does() -> None:
    from benchmarks.cost_model import features, predicted_ms

    class _Model:
        def __init__(self, ops):
            self.main = type("F", (), {})()
            self.main.body = type("B", (), {})()
            self.main.body.block = type("K", (), {"ops": ops})()

    for soc in ("VS680", "VS640"):
        target = get_target(soc)
        ops = _ops()
        feats = features(_Model(ops), soc)
        for c in (CALIBRATIONS[soc], Calibration(1e-5, 0.5, 0.2, 0.05, 0.7)):
            expected = 1000 * sum(layer_time(op, target, "npu", c) for op in ops)
            constants = np.array([[c.overhead_s, c.mac_efficiency, c.tp_efficiency,
                                   c.ppu_efficiency, c.bandwidth_efficiency]])  # fmt: skip
            np.testing.assert_allclose(predicted_ms(feats, constants), [expected])


def test_a_layer_the_npu_cannot_run_is_timed_on_the_cpu() -> None:
    conv, _, _ = _ops()
    vs680 = get_target("VS680")
    assert layer_time(conv, vs680, "cpu") > 0
    assert layer_time(conv, get_target("GENERIC")) > 0
