"""Running an annotated float model and its quantized form side by side on a dataset:
the values of chosen layers in both (quantized ones dequantized), for the quality steps
(bias correction, mixed precision) that measure what quantization did to them.

Layers are matched by their layer key (``layer_name``, else ``@layer_index``): the last
non-constant op computing a layer in each model.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation, SSAValue

from synapc.model import Model
from synapc.quantization.dataset import Dataset
from synapc.quantization.flow import _last_by_layer, _quantized_inputs, _real, _runner

__all__ = [
    "layers_by_key",
    "output_sqnr",
    "paired_values",
    "real_values",
    "sqnr_db",
    "values_of",
]


def layers_by_key(model: Model) -> dict[str, tuple[Operation, int]]:
    """Layer key -> the last non-constant op computing it in `model`'s @main and its
    position."""
    return _last_by_layer(model.main)


def _returned(model: Model) -> list[SSAValue]:
    ret = model.main.body.block.last_op
    assert isinstance(ret, ReturnOp)
    return list(ret.operands)


def paired_values(
    annotated: Model,
    quantized: Model,
    dataset: Dataset,
    float_values: Sequence[SSAValue],
    quant_values: Sequence[SSAValue],
) -> Iterator[tuple[list[np.ndarray], list[np.ndarray]]]:
    """Per batch of `dataset`: `float_values` of `annotated` and the matching
    `quant_values` of `quantized` as real numbers (float64)."""
    float_run = _runner(annotated, list(float_values))
    quant_run = _runner(quantized, list(quant_values))
    for batch in dataset.batches():
        floats = [a.astype(np.float64) for a in float_run(batch)]
        quants = quant_run(_quantized_inputs(quantized, batch))
        yield floats, [_real(a, v.type) for a, v in zip(quants, quant_values, strict=True)]


def values_of(
    model: Model, dataset: Dataset, values: Sequence[SSAValue]
) -> Iterator[list[np.ndarray]]:
    """Per batch of `dataset`: `values` of the float `model` (float64)."""
    run = _runner(model, list(values))
    for batch in dataset.batches():
        yield [a.astype(np.float64) for a in run(batch)]


def real_values(array: np.ndarray, tensor_type: object) -> np.ndarray:
    """`array` (stored values of a tensor of `tensor_type`) as real numbers: quantized
    ones dequantized (per axis too), float ones as float64."""
    return _real(np.asarray(array), tensor_type)


def sqnr_db(signal: float, noise: float) -> float:
    """``10 log10(signal / noise)`` (inf without noise)."""
    return math.inf if noise == 0 else 10 * math.log10(max(signal, 1e-300) / noise)


def output_sqnr(
    annotated: Model,
    quantized: Model,
    dataset: Dataset,
    layers: Sequence[str] = (),
) -> tuple[float, dict[str, float]]:
    """The SQNR (dB) of the quantized model's outputs against the float model's over
    `dataset` (the lowest over the outputs), and that of each of `layers` (layer keys
    present in both), from one run of each model."""
    float_ops, quant_ops = layers_by_key(annotated), layers_by_key(quantized)
    names = [n for n in layers if n in float_ops and n in quant_ops]
    float_values = [*_returned(annotated), *(float_ops[n][0].results[0] for n in names)]
    quant_values = [*_returned(quantized), *(quant_ops[n][0].results[0] for n in names)]
    signal = np.zeros(len(float_values))
    noise = np.zeros(len(float_values))
    for floats, quants in paired_values(
        annotated, quantized, dataset, float_values, quant_values
    ):
        for k, (x, xq) in enumerate(zip(floats, quants, strict=True)):
            if x.shape != xq.shape:
                continue
            signal[k] += np.sum(x * x)
            noise[k] += np.sum((x - xq) ** 2)
    outputs = len(float_values) - len(names)
    total = min(sqnr_db(signal[k], noise[k]) for k in range(outputs))
    per_layer = {
        n: sqnr_db(signal[outputs + k], noise[outputs + k]) for k, n in enumerate(names)
    }
    return total, per_layer
