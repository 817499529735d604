"""Estimated time of each layer on a target: work and traffic over an engine's throughput
and bandwidth, plus a per-layer overhead.

A layer's work is its multiply-accumulates (convolutions, fully connected layers, matrix
products: two operations each) or, for the other layers, one operation per element they
write (`LayerCost`); its traffic is the bytes of its operands, weights and
results in the types the engine holds them in. On the NPU engine that runs it
(`support.layer_support`), a layer takes

    overhead + work / (engine peak x factor) + bytes / (bandwidth x factor)

(the sum, not a roofline's maximum: the published times are fitted better when a
layer's transfers and computation do not overlap) and on the CPU or GPU
``overhead + work / (peak x efficiency)``. The peaks and the
bandwidth are the target's (`descriptions`); the overhead and the efficiencies are a few
per-target constants (`CALIBRATIONS`, `HOST_CALIBRATIONS`) fitted to the vendor's
published times by
``benchmarks/cost_model.py`` on models of the same architecture built here (weights do
not change latency); the fit's leave-one-model-out error is that script's report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from synapc.backends.targets.descriptions import Target
from synapc.backends.targets.support import layer_support
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.base import shape_of
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.memory.liveness import tensor_bytes
from synapc.passes.memory.placement import placement_of

#: Layers whose work is multiply-accumulates with their second operand (filter,
#: weights, right-hand matrix).
_MAC_LAYERS = frozenset(
    {"synap.conv2d", "synap.conv2d_pool", "synap.depthwise_conv2d",
     "synap.transpose_conv2d", "synap.conv_nd", "synap.fully_connected", "synap.matmul"}
)  # fmt: skip


#: Operations per element written of the element-wise layers that do more than one:
#: a colour conversion with resize computes each output value from a 4-tap bilinear
#: filter (about 8 operations) of Y and of the chroma plane and its row of the 3x3
#: colour matrix (about 6); a plain resize or colour conversion about half of that.
ELEMENT_OPERATIONS = {
    "synap.yuv_to_rgb_resize": 24,
    "synap.crop_resize": 12,
    "synap.resize": 8,
    "synap.yuv_to_rgb": 8,
}


@dataclass(frozen=True)
class LayerCost:
    """What a layer does: operations (a multiply-accumulate is two), bytes it moves,
    and whether the operations are multiply-accumulates (convolution cores) or
    element-wise (tensor processors, shader)."""

    operations: float
    bytes: float
    macs: bool


@dataclass(frozen=True)
class Calibration:
    """A target's fitted constants: seconds per layer, and the factors that turn the
    engines' peaks and the DDR bandwidth (`descriptions`) into what layers reach: at
    most 1 for the convolution cores' published peak, free for the assumed figures
    (tensor processors, shader, bandwidth)."""

    overhead_s: float
    mac_efficiency: float
    tp_efficiency: float
    ppu_efficiency: float
    bandwidth_efficiency: float

    def efficiency(self, engine: str) -> float:
        """The fraction of `engine`'s peak layers reach."""
        return {"NN": self.mac_efficiency, "TP": self.tp_efficiency}.get(
            engine, self.ppu_efficiency
        )


#: Fitted by benchmarks/cost_model.py on its nine calibration models (2026-11-26), their
#: memory planned as convert plans it (SRAM-resident tensors leave DDR); its
#: leave-one-model-out error: median 23 % (VS680) / 24 % (VS640). The convolution cores
#: reach their published peak (the fit's bound): the layers' time is mostly their
#: traffic. The bandwidth factor above 1 says the assumed DDR figure understates what
#: layers see (before the SRAM placement was counted it was 4.6 on VS680, now 2.1).
CALIBRATIONS: dict[str, Calibration] = {
    "VS680": Calibration(1.75e-05, 1.0, 0.224, 0.0735, 2.08),
    "VS640": Calibration(1.89e-05, 1.0, 0.562, 0.266, 4.51),
}


@dataclass(frozen=True)
class HostCalibration:
    """A target's fitted constants for its CPU and GPU delegates (the TFLite CPU and
    GPU delegates' published "online" times): seconds per layer, and the fraction of
    each processor's peak (`descriptions`) that layers reach."""

    overhead_s: float
    cpu_efficiency: float
    gpu_efficiency: float


#: Fitted by benchmarks/cost_model.py: the CPU on six published rows, four quantized
#: models (whose int8 kernels the fit lets run a constant factor faster: 1.4x on VS680,
#: 2.5x on VS640) and two float ones, the efficiency being the float one synapc's CPU
#: subgraphs run (leave-one-model-out median error 20 % VS680, 23 % VS640); the GPU on
#: its two buildable float rows with the CPU's overhead (each predicted from the other:
#: 16 and 22 % VS680, 10 and 13 % VS640).
HOST_CALIBRATIONS: dict[str, HostCalibration] = {
    "VS680": HostCalibration(4.47e-05, 0.452, 0.152),
    "VS640": HostCalibration(5.62e-05, 1.0, 0.147),
}
#: GENERIC's host: no published peak; a nominal 10 G operations per second.
GENERIC_OPS_PER_SECOND = 1.0e10


def _elements(value: SSAValue) -> int:
    t = value.type
    return int(np.prod(t.get_shape(), dtype=np.int64)) if isinstance(t, TensorType) else 0


def in_sram(value: SSAValue) -> bool:
    """Whether the memory plan (``plan-memory``) keeps `value` in the on-chip SRAM."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return False
    places = placement_of(owner)
    place = places[value.index] if places else None  # type: ignore[attr-defined]
    return place is not None and place[0] == "sram"


def layer_cost(op: Operation, float_bytes: int = 2) -> LayerCost:
    """The work and traffic of one layer (float tensors of `float_bytes` each); the
    traffic is what crosses DDR: tensors the memory plan keeps in SRAM do not count."""
    values = [v for v in (*op.operands, *op.results) if not in_sram(v)]
    moved = sum(tensor_bytes(v, float_bytes) for v in values)
    if op.name in _MAC_LAYERS and len(op.operands) > 1 and op.results:
        out = _elements(op.results[0])
        weight = shape_of(op.operands[1])
        if op.name == "synap.depthwise_conv2d":
            per_output = math.prod(weight[1:-1])  # [1, KH, KW, C]
        elif op.name in ("synap.fully_connected",):
            per_output = weight[-1]  # [out, in]
        elif op.name == "synap.matmul":
            per_output = shape_of(op.operands[0])[-1]
        else:  # OHWI filters: KH x KW x Cin / groups
            per_output = math.prod(weight[1:])
        return LayerCost(2.0 * out * per_output, float(moved), True)
    # element-wise work: operations per element written
    per_element = ELEMENT_OPERATIONS.get(op.name, 1)
    written = sum(_elements(v) for v in op.results)
    return LayerCost(float(per_element * written), float(moved), False)


def _peak(target: Target, engine: str, quantized_bits: int | None) -> float:
    kinds = target.engines[engine].ops_per_second
    if quantized_bits is None:
        kind = "float16" if "float16" in kinds else "float32"
    else:
        kind = "8bit" if quantized_bits <= 8 else "16bit"
    fact = kinds.get(kind) or next(iter(kinds.values()))
    return fact.value


def _bits(op: Operation) -> int | None:
    for v in (*op.operands[:1], *op.results[:1]):
        t = v.type
        if isinstance(t, TensorType) and isinstance(t.element_type, UniformQuantizedType):
            return t.element_type.bitwidth
    return None


def layer_time(
    op: Operation,
    target: Target,
    delegate: str = "npu",
    calibration: Calibration | None = None,
) -> float:
    """Estimated seconds of layer `op` on `target`'s `delegate` (``npu`` meaning the
    engine the NPU's rules choose; a layer the NPU cannot run is timed on the CPU)."""
    if isinstance(op, ConstantOp | ReturnOp):
        return 0.0
    engine = None
    if delegate == "npu" and target.has_npu:
        engine = layer_support(op, target).engine
    if engine is None:
        return host_time(op, target, "gpu" if delegate == "gpu" else "cpu")
    c = calibration or CALIBRATIONS[target.name]
    compute, memory = npu_terms(op, target, engine)
    return c.overhead_s + compute / c.efficiency(engine) + memory / c.bandwidth_efficiency


def host_time(
    op: Operation, target: Target, host: str, calibration: HostCalibration | None = None
) -> float:
    """Estimated seconds of `op` on `target`'s CPU or GPU (`host`)."""
    cost = layer_cost(op, 2 if host == "gpu" else 4)
    engine = host.upper()
    if engine not in target.engines:  # GENERIC: the host itself, no published peak
        return cost.operations / GENERIC_OPS_PER_SECOND
    c = calibration or HOST_CALIBRATIONS[target.name]
    peak = next(iter(target.engines[engine].ops_per_second.values())).value
    efficiency = c.gpu_efficiency if host == "gpu" else c.cpu_efficiency
    return c.overhead_s + cost.operations / (peak * efficiency)


def npu_terms(op: Operation, target: Target, engine: str) -> tuple[float, float]:
    """Seconds of `op`'s work at its engine's peak and of its traffic at the full
    bandwidth (what the calibration's efficiencies scale)."""
    cost = layer_cost(op)
    assert target.ddr_bandwidth is not None
    return (
        cost.operations / _peak(target, engine, _bits(op)),
        cost.bytes / target.ddr_bandwidth.value,
    )


def function_time(func: FuncOp, target: Target, delegate: str = "npu") -> float:
    """Estimated seconds of every layer of `func` on `delegate`, one after another."""
    return sum(layer_time(op, target, delegate) for op in func.body.block.ops)
