"""Empirical bias correction (Nagel et al. 2019, section 4.2): quantizing a layer's
weights shifts the mean of its output per channel (``E[W_q x] != E[W x]``); measured on
the calibration data, the shift is subtracted through the layer's bias.

`correct_biases` quantizes the annotated float model, runs both on the dataset, and
for every conv / depthwise / fully connected layer that became an integer layer takes
the mean error of its (dequantized) output against the float output per output channel.
A fused activation clamps the output: the mean is taken over the elements where the
float output lies strictly inside the activation's bounds (where the error is the
pre-activation one). The corrected biases go into a copy of the annotated model, which
the ``quantize`` pass then quantizes as usual (so ``synapc-opt`` replays it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from synapc.backends.jax.observe import observed_values
from synapc.dialects.synap.base import element_of, is_float, shape_of
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conv import Conv2DOp, DepthwiseConv2DOp, FullyConnectedOp
from synapc.dtypes import numpy_dtype
from synapc.model import Model
from synapc.passes.common import constant_array, new_constant
from synapc.quantization.compare import layers_by_key, real_values, values_of
from synapc.quantization.dataset import Dataset
from synapc.quantization.statistics import TensorStatistics

__all__ = ["channel_errors", "correct_biases", "output_shift", "with_bias_shift"]

_LAYERS = (Conv2DOp, DepthwiseConv2DOp, FullyConnectedOp)


def _corrected_layers(annotated: Model, quantized: Model) -> list[tuple[str, int]]:
    """(layer key, position in `annotated`) of the float weighted layers with constant
    weights and bias that run as integer layers of the same class in `quantized`."""
    found: list[tuple[str, int]] = []
    quant_ops = layers_by_key(quantized)
    for key, (op, p) in layers_by_key(annotated).items():
        match = quant_ops.get(key)
        if not isinstance(op, _LAYERS) or match is None or type(match[0]) is not type(op):
            continue
        if is_float(element_of(match[0].output)):
            continue  # kept float
        if constant_array(op.filter, annotated.weights) is None:
            continue
        if op.bias is not None and constant_array(op.bias, annotated.weights) is None:
            continue
        found.append((key, p))
    return found


def _input_means(
    annotated: Model,
    dataset: Dataset,
    positions: list[int],
    stats: Mapping[str, TensorStatistics] | None,
) -> list[np.ndarray]:
    """Mean per channel (last axis) of the input of the layer at each position of
    `annotated`, over `dataset` (float model): from the calibration `stats` where they
    hold it (no second run of the model), else measured."""
    ops = list(annotated.main.body.block.ops)
    values = [ops[p].operands[0] for p in positions]
    keys = {v: k for k, v in observed_values(annotated.main).items()}
    if stats is not None and all(
        v in keys and keys[v] in stats and stats[keys[v]].channel_sum is not None
        for v in values
    ):
        return [stats[keys[v]].channel_mean for v in values]
    sums = [np.zeros(shape_of(v)[-1]) for v in values]
    counts = np.zeros(len(values))
    for floats in values_of(annotated, dataset, values):
        for k, x in enumerate(floats):
            rows = x.reshape(-1, x.shape[-1])
            sums[k] += np.sum(rows, axis=0)
            counts[k] += rows.shape[0]
    return [total / max(count, 1) for total, count in zip(sums, counts, strict=True)]


def output_shift(layer: Operation, dw: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """``E[dW x]`` per output channel for input channel means `mean` (every window
    position seeing the mean; padding ignored)."""
    if isinstance(layer, FullyConnectedOp):  # [N, K]
        return dw @ mean
    if isinstance(layer, DepthwiseConv2DOp):  # [1, KH, KW, C*M]; k reads k // M
        per_output = np.repeat(mean, dw.shape[-1] // mean.shape[0])
        return dw.reshape(-1, dw.shape[-1]).sum(axis=0) * per_output
    assert isinstance(layer, Conv2DOp)  # OHWI, [Cout, KH, KW, Cin / groups]
    groups = layer.props()["groups"]
    per_group = mean.reshape(groups, -1)  # group g reads channels g*Cin/G ...
    group_of = np.arange(dw.shape[0]) // (dw.shape[0] // groups)
    summed = dw.reshape(dw.shape[0], -1, dw.shape[-1]).sum(axis=1)  # [Cout, Cin/G]
    return np.sum(summed * per_group[group_of], axis=1)


def channel_errors(
    annotated: Model,
    quantized: Model,
    dataset: Dataset,
    stats: Mapping[str, TensorStatistics] | None = None,
) -> dict[int, np.ndarray]:
    """Position in `annotated` -> mean error per output channel that weight
    quantization adds to each corrected layer's output before its activation:
    ``E[(W_q - W) x]`` over the calibration inputs `x` of the float model."""
    layers = _corrected_layers(annotated, quantized)
    if not layers:
        return {}
    ops = list(annotated.main.body.block.ops)
    quant_ops = layers_by_key(quantized)
    means = _input_means(annotated, dataset, [p for _, p in layers], stats)
    errors: dict[int, np.ndarray] = {}
    for (key, p), mean in zip(layers, means, strict=True):
        qop = quant_ops[key][0]
        stored = constant_array(qop.operands[1], quantized.weights)
        w = constant_array(ops[p].operands[1], annotated.weights)
        if stored is None or w is None:
            continue
        dw = real_values(stored, qop.operands[1].type) - w.astype(np.float64)
        errors[p] = output_shift(ops[p], dw, mean)
    return errors


def with_bias_shift(annotated: Model, shifts: dict[int, np.ndarray]) -> Model:
    """A copy of `annotated` whose layer at each position has its bias minus the
    shift (a bias is created for a layer without one)."""
    module = annotated.module.clone()
    model = annotated.with_module(module)
    ops: list[Operation] = list(model.main.body.block.ops)
    for p, shift in shifts.items():
        layer = ops[p]
        assert isinstance(layer, _LAYERS)
        channels = shift.shape[0]
        if layer.bias is not None:
            bias = constant_array(layer.bias, model.weights)
            assert bias is not None
            bias_type = layer.bias.type
            hint = layer.bias.owner.handle  # type: ignore[union-attr]
        else:
            bias = np.zeros(channels)
            bias_type = TensorType(element_of(layer.input), [channels])
            hint = "bias"
        assert isinstance(bias_type, TensorType)
        new = bias.astype(np.float64) - shift
        const = new_constant(
            model.weights,
            new.astype(numpy_dtype(bias_type.element_type)),
            bias_type,
            f"{hint}_bc",
        )
        block = layer.parent_block()
        assert block is not None
        block.insert_op_before(const, layer)
        old = layer.bias.owner if layer.bias is not None else None
        if layer.bias is not None:
            layer.operands[2] = const.result
        else:
            layer.operands = [*layer.operands, const.result]
        if isinstance(old, ConstantOp) and not old.result.uses:
            old.detach()
            old.erase()
    return model


def correct_biases(
    annotated: Model,
    quantize: Callable[[Model], Model],
    dataset: Dataset,
    rounds: int = 1,
    stats: Mapping[str, TensorStatistics] | None = None,
) -> Model:
    """`annotated` with the biases of its weighted layers corrected for the mean output
    error the quantization by `quantize` leaves on `dataset` (`rounds` times: each
    round measures the model the previous one corrected). The layers' input means come
    from the calibration `stats` of `annotated` when given (a correction changes no
    layer input of the float model)."""
    model = annotated
    for round_ in range(rounds):
        # later rounds measure a model with more ops: the stats' keys no longer match
        errors = channel_errors(
            model, quantize(model), dataset, stats if round_ == 0 else None
        )
        if not errors:
            break
        model = with_bias_shift(model, errors)
    return model
