"""Automatic mixed precision (the ``quantization.mixed_precision`` extension of
METAFILE.md): raise the layers whose quantization hurts the output most to a wider type,
until the output SQNR against the float model reaches a target or a fraction of the
layers are raised.

Sensitivity is measured, not guessed: the model is quantized with the given types, run
next to the float model on the calibration data, and every layer's SQNR taken
(`synapc.quantization.compare.output_sqnr`). A layer's own contribution is the relative
noise power of its output minus the largest of the layers it reads
(``10^(-SQNR/10)``: what the layer adds rather than inherits); layers are raised in the
order of their contributions, in groups (half the remaining budget at a time), each
group kept only if the output SQNR improves (an int16 layer is not always better: its
output range and weight scheme differ; a group that does not help is halved). Layers an
explicit per-layer map names keep the map's type."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from xdsl.ir import Operation

from synapc.dialects.synap.constant import ConstantOp
from synapc.model import Model
from synapc.quantization.annotate import LayerTypes
from synapc.quantization.compare import FloatReference, layer_key, output_sqnr
from synapc.quantization.dataset import Dataset

__all__ = ["MixedPrecision", "MixedPrecisionResult", "choose_precision", "own_noise"]

#: Width rank of the layer types: a layer is raised only to a wider type.
_RANK = {"uint8": 0, "int8": 0, "int16": 1, "float16": 2}


@dataclass(frozen=True)
class MixedPrecision:
    """The metafile's ``mixed_precision`` settings."""

    data_type: str = "int16"
    target_sqnr_db: float = 30.0
    max_fraction: float = 0.1


@dataclass
class MixedPrecisionResult:
    """What automatic mixed precision decided: the layer types, the layers raised (by
    key, in order), the output SQNR after each step (the first with none raised), and
    the annotated and quantized models of the final mix."""

    types: LayerTypes
    raised: list[str] = field(default_factory=list)
    history: list[float] = field(default_factory=list)
    annotated: Model | None = None
    quantized: Model | None = None


def own_noise(
    ops: list[Operation], positions: list[int], sqnr: Mapping[str, float]
) -> dict[int, float]:
    """Position -> the relative noise power a layer adds to what it reads (see the
    module docstring); layers without a measured SQNR are left out."""

    def noise(op: Operation) -> float | None:
        key = layer_key(op)
        if key is None or key not in sqnr:
            return None
        db = sqnr[key]
        return 0.0 if math.isinf(db) else 10 ** (-db / 10)

    added: dict[int, float] = {}
    for p in positions:
        mine = noise(ops[p])
        if mine is None:
            continue
        inherited = [
            n
            for v in ops[p].operands
            if isinstance(v.owner, Operation)
            and not isinstance(v.owner, ConstantOp)
            and (n := noise(v.owner)) is not None
        ]
        added[p] = mine - max(inherited, default=0.0)
    return added


def choose_precision(
    types: LayerTypes,
    named: set[int],
    spec: MixedPrecision,
    annotate: Callable[[LayerTypes], Model],
    quantize: Callable[[Model], Model],
    dataset: Dataset,
    reference: Model | None = None,
) -> MixedPrecisionResult:
    """Raise layers of `types` (those not in `named`) to ``spec.data_type``, those
    adding the most noise first, until the output SQNR against the float `reference`
    (the model `types` indexes; default: the annotated model of `types`) reaches
    ``spec.target_sqnr_db`` or ``floor(spec.max_fraction * layers)`` are raised.

    Layers are ranked once, by the noise each adds in the mix of `types` (one run
    measuring every layer), and raised in that order in groups: half of the remaining
    budget at a time, a group kept only if the output SQNR improves; a group that does
    not help is halved (its noisiest half tried alone) down to a single layer, which is
    then skipped. Trials measure the outputs only, and the float side is compiled once:
    each mix compiles just its quantized model, and at most ``ceil(log2(limit + 1)) +
    3`` mixes are measured (measured: 10 % of the layers in int16 gained nothing on
    the models of `benchmarks/ptq.py`, whose noise builds up over every layer, so the
    search is kept short). `annotate` gives the annotated model of a type choice,
    `quantize` its quantized form."""
    current = LayerTypes(dict(types.ops), dict(types.args))
    limit = math.floor(spec.max_fraction * len(current.ops) + 1e-9)
    result = MixedPrecisionResult(current)
    wider = _RANK[spec.data_type]
    first = annotate(current)
    float_model = reference or first
    # positions of `types` are the float model's (bias correction may move constants)
    ops: list[Operation] = list(float_model.main.body.block.ops)
    keys = [k for op in ops if (k := layer_key(op)) is not None]
    float_side = FloatReference(float_model, keys)
    float_outputs = FloatReference(float_model)  # what trials measure
    quantized = quantize(first)
    best, per_layer = output_sqnr(
        float_model, quantized, dataset, keys, reference=float_side
    )
    result.history.append(best)
    result.annotated, result.quantized = first, quantized
    candidates = [
        p
        for p, kind in current.ops.items()
        if p not in named and _RANK.get(kind, wider) < wider
    ]
    added = own_noise(ops, candidates, per_layer)
    queue = [p for p in sorted(added, key=lambda p: -added[p]) if added[p] > 0]
    budget = math.ceil(math.log2(limit + 1)) + 3
    group = math.ceil(limit / 2)
    while (
        queue
        and best < spec.target_sqnr_db
        and len(result.raised) < limit
        and len(result.history) < budget
    ):
        trial = queue[: max(1, min(group, limit - len(result.raised)))]
        for p in trial:
            current.ops[p] = spec.data_type
        annotated = annotate(current)
        quantized = quantize(annotated)
        total, _ = output_sqnr(float_model, quantized, dataset, (), reference=float_outputs)
        result.history.append(total)
        if total > best:
            result.raised += [layer_key(ops[p]) or f"op #{p}" for p in trial]
            best = total
            result.annotated, result.quantized = annotated, quantized
            del queue[: len(trial)]
            group = math.ceil((limit - len(result.raised)) / 2)
            continue
        for p in trial:  # it did not help: back
            current.ops[p] = types.ops[p]
        if len(trial) == 1:  # skip that layer, and try groups again after it
            del queue[0]
            group = math.ceil((limit - len(result.raised)) / 2)
        else:
            group = len(trial) // 2
    result.types = current
    return result
