"""Small fully quantized networks: chains of integer kernels give LiteRT's integers.

The single-operator files check each kernel alone; here each layer consumes the previous
layer's stored integers, as in a real int8, uint8 or 16x8 model produced by the TFLite
converter (conv -> depthwise -> residual add -> pool -> fully connected -> softmax, plus
a two-input branch with concatenation and resize). Every output must be identical to
LiteRT's `BUILTIN_REF` kernels (0 elements differ), on VS680 and on GENERIC.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synapc.testing.oracle import CaseGraph, check_case
from synapc.testing.tflite_builder import Quant

pytest.importorskip("ai_edge_litert.interpreter")


def _scheme(dtype: type) -> tuple[type, int, type]:
    """(activation dtype, activation zero point, bias dtype) of a quantization scheme."""
    if dtype == np.int16:
        return np.int16, 0, np.int64
    return dtype, (5 if dtype == np.int8 else 131), np.int32


def _conv_weights(
    g: CaseGraph, shape: list[int], axis: int, per_channel: bool, uint8: bool = False
) -> tuple[int, np.ndarray]:
    """Int8 weights (per-channel along `axis` or per-tensor), or uint8 ones with a zero
    point for uint8 layers (`in_scale` unused), and their scales."""
    channels = shape[axis]
    real = 0.4 * g.rng.standard_normal(shape)
    reduce_axes = tuple(i for i in range(len(shape)) if i != axis)
    if per_channel:
        w_scales = np.abs(real).max(axis=reduce_axes) / 127.0
        w_quant = Quant(w_scales, 0, axis=axis)
    else:
        w_scales = np.full(channels, np.abs(real).max() / 127.0)
        w_quant = Quant(float(w_scales[0]), 0)
    if uint8:
        w_scales = np.full(channels, 2 * np.abs(real).max() / 255.0)
        return g.const(real, np.uint8, Quant(float(w_scales[0]), 128)), w_scales
    weights = g.const(real, np.int8, w_quant)
    return weights, w_scales


def _network(dtype: type, per_channel: bool) -> object:
    act, zp, bias_dtype = _scheme(dtype)
    u8 = dtype == np.uint8

    def q(scale: float) -> Quant:
        return Quant(scale, zp)

    def case(g: CaseGraph) -> None:
        x = g.input([1, 8, 8, 3], -1.0, 1.0, act, quant=q(2 / 255))
        w, w_scales = _conv_weights(g, [8, 3, 3, 3], 0, per_channel, u8)
        b = g.const(g.rng.normal(0, 0.1, 8), bias_dtype,
                    Quant((2 / 255) * w_scales, 0, axis=0) if per_channel
                    else Quant((2 / 255) * float(w_scales[0]), 0))  # fmt: skip
        conv = g.op("CONV_2D", [x, w, b], dtype=act, quant=q(0.03), padding="SAME",
                    stride_h=1, stride_w=1, fused_activation_function="RELU")  # fmt: skip
        dw_w, dw_scales = _conv_weights(g, [1, 3, 3, 8], 3, per_channel, u8)
        dw_b = g.const(g.rng.normal(0, 0.1, 8), bias_dtype,
                       Quant(0.03 * dw_scales, 0, axis=0) if per_channel
                       else Quant(0.03 * float(dw_scales[0]), 0))  # fmt: skip
        dw = g.op("DEPTHWISE_CONV_2D", [conv, dw_w, dw_b], dtype=act, quant=q(0.05),
                  padding="SAME", stride_h=1, stride_w=1, depth_multiplier=1,
                  fused_activation_function="RELU6")  # fmt: skip
        added = g.op("ADD", [conv, dw], dtype=act, quant=q(0.06))
        pooled = g.op("AVERAGE_POOL_2D", [added], dtype=act, quant=q(0.06), padding="VALID",
                      stride_h=2, stride_w=2, filter_height=2, filter_width=2)  # fmt: skip
        mean = g.op("MEAN", [pooled, g.const(np.array([1, 2], np.int32))], dtype=act,
                    quant=q(0.04), keep_dims=False)  # fmt: skip
        fc_w, fc_scales = _conv_weights(g, [5, 8], 0, per_channel, u8)
        fc_b = g.const(g.rng.normal(0, 0.1, 5), bias_dtype,
                       Quant(0.04 * fc_scales, 0, axis=0) if per_channel
                       else Quant(0.04 * float(fc_scales[0]), 0))  # fmt: skip
        logits = g.op("FULLY_CONNECTED", [mean, fc_w, fc_b], dtype=act, quant=q(0.1))
        out_quant = (
            Quant(1 / 32768, 0)
            if dtype == np.int16
            else Quant(1 / 256, -128 if dtype == np.int8 else 0)
        )
        probs = g.op("SOFTMAX", [logits], dtype=act, quant=out_quant, beta=1.0)
        g.output(probs, pooled)

    return case


def _branches(dtype: type) -> object:
    """Two inputs, logistic and resize on one branch, concatenation and a max pool."""
    act, zp, _ = _scheme(dtype)

    def case(g: CaseGraph) -> None:
        a = g.input([1, 4, 4, 2], -2.0, 2.0, act, quant=Quant(4 / 255, zp))
        b = g.input([1, 8, 8, 3], -2.0, 2.0, act, quant=Quant(4 / 255, zp))
        up = g.op("RESIZE_BILINEAR", [a, g.const(np.array([8, 8], np.int32))], dtype=act,
                  quant=Quant(4 / 255, zp), half_pixel_centers=True)  # fmt: skip
        joined = g.op("CONCATENATION", [up, b], dtype=act, quant=Quant(4 / 255, zp), axis=3)
        pooled = g.op("MAX_POOL_2D", [joined], dtype=act, quant=Quant(4 / 255, zp),
                      padding="SAME", stride_h=2, stride_w=2, filter_height=3,
                      filter_width=3)  # fmt: skip
        g.output(pooled)

    return case


@pytest.mark.parametrize("target", ["VS680", "GENERIC"])
@pytest.mark.parametrize(
    ("dtype", "per_channel"),
    [
        pytest.param(np.int8, True, id="int8-per_channel"),
        pytest.param(np.int8, False, id="int8-per_tensor"),
        pytest.param(np.uint8, False, id="uint8"),
        pytest.param(np.int16, True, id="16x8"),
    ],
)
def test_network(tmp_path: Path, dtype: type, per_channel: bool, target: str) -> None:
    """conv -> depthwise -> add -> pool -> mean -> fully connected -> softmax."""
    check_case(tmp_path, _network(dtype, per_channel), target=target)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16], ids=lambda d: d.__name__)
def test_branches(tmp_path: Path, dtype: type) -> None:
    """resize + concatenation + max pool over two quantized inputs."""
    check_case(tmp_path, _branches(dtype), target="VS680")
