"""Running an annotated float model and its quantized form side by side on a dataset:
the values of chosen layers in both (quantized ones dequantized), for the quality steps
(bias correction, mixed precision) that measure what quantization did to them.

Layers are matched by their layer key (``layer_name``, else ``@layer_index``): the last
non-constant op computing a layer in each model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import jax
import numpy as np
from xdsl.dialects.builtin import FunctionType, IntegerAttr, StringAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from synapc.dialects.quant import UniformQuantizedType, quantize_array
from synapc.dialects.synap.base import is_float
from synapc.dialects.synap.constant import ConstantOp
from synapc.model import Model
from synapc.quantization.dataset import Dataset

if TYPE_CHECKING:
    from synapc.quantization.flow import Progress

__all__ = [
    "FloatReference",
    "last_by_layer",
    "layer_key",
    "layer_sqnr",
    "layers_by_key",
    "output_sqnr",
    "paired_values",
    "quantized_inputs",
    "real_values",
    "runner",
    "sqnr_db",
    "values_of",
]


def layer_key(op: Operation) -> str | None:
    """The key of the layer `op` computes: its ``layer_name``, else ``@layer_index``
    (None when it has neither)."""
    name = op.attributes.get("layer_name")
    if isinstance(name, StringAttr):
        return name.data
    index = op.attributes.get("layer_index")
    return f"@{index.value.data}" if isinstance(index, IntegerAttr) else None


def last_by_layer(func: FuncOp) -> dict[str, tuple[Operation, int]]:
    """Layer key -> the last non-constant op of `func` computing it and its position."""
    found: dict[str, tuple[Operation, int]] = {}
    for p, op in enumerate(func.body.block.ops):
        key = layer_key(op)
        if key is not None and not isinstance(op, ConstantOp | ReturnOp) and op.results:
            found[key] = (op, p)
    return found


def layers_by_key(model: Model) -> dict[str, tuple[Operation, int]]:
    """Layer key -> the last non-constant op computing it in `model`'s @main and its
    position."""
    return last_by_layer(model.main)


def runner(
    model: Model, values: list[SSAValue]
) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
    """A batched function, one jitted call per batch, computing `values` of `model`'s
    @main from a batch of its inputs."""
    from synapc.backends.jax.lowering import lower
    from synapc.backends.targets import get_target

    func = model.main
    positions = {op: p for p, op in enumerate(func.body.block.ops)}
    copy = func.clone()
    copy_ops = list(copy.body.block.ops)
    copied = [
        copy.body.block.args[v.index]
        if isinstance(v, BlockArgument)  # a layer reading @main's input directly
        else copy_ops[positions[v.owner]].results[v.index]  # type: ignore[index]
        for v in values
    ]
    ret = copy.body.block.last_op
    assert isinstance(ret, ReturnOp)
    copy.body.block.erase_op(ret)
    copy.body.block.add_op(ReturnOp(*copied))
    copy.function_type = FunctionType.from_lists(
        list(copy.function_type.inputs.data), [v.type for v in copied]
    )
    copy.res_attrs = None
    function, params = lower(
        copy,
        model.weights,
        get_target("GENERIC"),
        model.integer_semantics,
        float_dtype=np.dtype(np.float32),
    )
    # lax.map, not vmap: the integer kernels (int16 x int8 convolutions) have no
    # batching rule that keeps their accumulator type
    batched = jax.jit(lambda *xs: jax.lax.map(lambda args: function(params, *args), xs))
    return lambda batch: [np.asarray(a) for a in batched(*batch)]


def real_values(array: np.ndarray, tensor_type: Any) -> np.ndarray:
    """`array` (stored values of a tensor of `tensor_type`, possibly with leading batch
    dimensions) as real numbers: quantized ones dequantized (per axis too), float ones
    as float64."""
    array = np.asarray(array)
    element = tensor_type.element_type
    if isinstance(element, UniformQuantizedType):
        scales, zeros = element.scales, element.zero_points
        axis = element.quantized_dimension
        if axis is not None:
            shape = [1] * (array.ndim)
            shape[array.ndim - len(tensor_type.get_shape()) + axis] = -1
            scales, zeros = scales.reshape(shape), zeros.reshape(shape)
        return (array.astype(np.float64) - zeros) * scales
    return array.astype(np.float64)


def quantized_inputs(model: Model, batch: Sequence[np.ndarray]) -> list[np.ndarray]:
    """A float batch as `model`'s inputs take it: quantized inputs stored with the
    quantization arithmetic of `synapc.dialects.quant` (`quantize_array`)."""
    out = []
    for info, array in zip(model.inputs, batch, strict=True):
        q = info.quantization
        if q is not None and not q.is_per_axis:
            array = quantize_array(np.asarray(array), q)
        out.append(np.asarray(array).astype(info.dtype))
    return out


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
    progress: Progress | None = None,
    what: str = "SQNR",
) -> Iterator[tuple[list[np.ndarray], list[np.ndarray]]]:
    """Per batch of `dataset`: `float_values` of `annotated` and the matching
    `quant_values` of `quantized` as real numbers (float64); `progress` (if any)
    counts the batches as `what`."""
    float_run = runner(annotated, list(float_values))
    quant_run = runner(quantized, list(quant_values))
    batches: Iterable[Sequence[np.ndarray]] = dataset.batches()
    if progress is not None:
        batches = progress.wrap(batches, what)
    for batch in batches:
        floats = [a.astype(np.float64) for a in float_run(batch)]
        quants = quant_run(quantized_inputs(quantized, batch))
        yield (
            floats,
            [real_values(a, v.type) for a, v in zip(quants, quant_values, strict=True)],
        )


def values_of(
    model: Model, dataset: Dataset, values: Sequence[SSAValue]
) -> Iterator[list[np.ndarray]]:
    """Per batch of `dataset`: `values` of the float `model` (float64)."""
    run = runner(model, list(values))
    for batch in dataset.batches():
        yield [a.astype(np.float64) for a in run(batch)]


def sqnr_db(signal: float, noise: float) -> float:
    """``10 log10(signal / noise)`` (inf without noise)."""
    return math.inf if noise == 0 else 10 * math.log10(max(signal, 1e-300) / noise)


class FloatReference:
    """What the float model computes that quantized variants of it are measured against:
    its outputs and the outputs of chosen layers, compiled once (a search over many
    quantized variants then compiles only each variant)."""

    def __init__(self, model: Model, layers: Sequence[str] = ()) -> None:
        ops = layers_by_key(model)
        self.names = [n for n in layers if n in ops]
        self.outputs = len(_returned(model))
        values = [*_returned(model), *(ops[n][0].results[0] for n in self.names)]
        self._run = runner(model, values)

    def __call__(self, batch: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The values of one batch, as float64."""
        return [a.astype(np.float64) for a in self._run(batch)]


def output_sqnr(
    annotated: Model,
    quantized: Model,
    dataset: Dataset,
    layers: Sequence[str] = (),
    reference: FloatReference | None = None,
) -> tuple[float, dict[str, float]]:
    """The SQNR (dB) of the quantized model's outputs against the float model's over
    `dataset` (the lowest over the outputs), and that of each of `layers` (layer keys
    present in both), from one run of each model; `reference` (of the float model,
    covering `layers`) saves compiling the float side again."""
    if reference is None:
        reference = FloatReference(annotated, layers)
    quant_ops = layers_by_key(quantized)
    wanted = set(layers)
    names = [n for n in reference.names if n in wanted and n in quant_ops]
    position = {n: reference.outputs + k for k, n in enumerate(reference.names)}
    picked = [*range(reference.outputs), *(position[n] for n in names)]
    quant_values = [*_returned(quantized), *(quant_ops[n][0].results[0] for n in names)]
    quant_run = runner(quantized, quant_values)
    signal = np.zeros(len(picked))
    noise = np.zeros(len(picked))
    for batch in dataset.batches():
        floats = reference(batch)
        quants = quant_run(quantized_inputs(quantized, batch))
        pairs = zip(picked, quants, quant_values, strict=True)
        for k, (i, array, value) in enumerate(pairs):
            x, xq = floats[i], real_values(array, value.type)
            if x.shape != xq.shape:
                continue
            signal[k] += np.sum(x * x)
            noise[k] += np.sum((x - xq) ** 2)
    outputs = reference.outputs
    total = min(sqnr_db(signal[k], noise[k]) for k in range(outputs))
    per_layer = {
        n: sqnr_db(signal[outputs + k], noise[outputs + k]) for k, n in enumerate(names)
    }
    return total, per_layer


def layer_sqnr(
    annotated: Model,
    quantized: Model,
    dataset: Dataset,
    progress: Progress | None = None,
) -> dict[str, float]:
    """SQNR in dB (`sqnr_db`) of every layer's output (the first result of the last op
    computing it) in `quantized` (dequantized) against `annotated` (float), over
    `dataset`; layers whose outputs differ in shape are left out."""
    float_ops, quant_ops = layers_by_key(annotated), layers_by_key(quantized)
    names = [
        n
        for n in float_ops
        if n in quant_ops
        and isinstance(t := float_ops[n][0].results[0].type, TensorType)
        and is_float(t.element_type)
        and isinstance(u := quant_ops[n][0].results[0].type, TensorType)
        and u.get_shape() == t.get_shape()
    ]
    if not names:
        return {}
    signal = np.zeros(len(names))
    noise = np.zeros(len(names))
    for floats, quants in paired_values(
        annotated,
        quantized,
        dataset,
        [float_ops[n][0].results[0] for n in names],
        [quant_ops[n][0].results[0] for n in names],
        progress,
    ):
        for k, (x, xq) in enumerate(zip(floats, quants, strict=True)):
            signal[k] += np.sum(x * x)
            noise[k] += np.sum((x - xq) ** 2)
    return {n: sqnr_db(signal[k], noise[k]) for k, n in enumerate(names)}
