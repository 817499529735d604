"""Calibration decisions written into the IR, for the `quantize` pass to consume.

`layer_types` resolves the metafile's ``quantization.data_type`` (one type, or the
per-layer map of METAFILE.md) on an optimized model: ``'*'`` (every layer, applied
first), ``INPUTS`` (the model inputs), a layer name (every op computing that source
layer, fused ones included), ``'name...'`` (the ops downstream of that layer in the
def-use graph, the layer itself and side branches that do not depend on it excluded),
``'@id'`` (the op of that operator index); later entries override earlier ones.
`annotate` then writes, on a copy of the model (contract of issue 19):

- ``synap.calibrated_range`` on each op with float results: one f64 array
  ``[low, high]`` per result (empty for non-float results), and as an argument
  attribute of each float input of ``@main``;
- ``synap.quant_type`` (``uint8`` | ``int8`` | ``int16`` | ``float16``) on the same ops
  and arguments;
- under the ``perchannel_symmetric_affine`` scheme, ``synap.calibrated_channel_range``
  on the ops whose result the ``quantize`` pass may quantize per channel
  (`CHANNELWISE_PRODUCERS`): each channel's observed min / max.

Ranges come from `tensor_range` with the metafile's algorithm and options, for the
levels of the layer's type, symmetric where the type's scheme is (int16; int8 with the
dynamic fixed point scheme).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, StringAttr, f64
from xdsl.dialects.func import FuncOp

from synapc.backends.jax.observe import observed_values
from synapc.dialects.quant import f64_array
from synapc.errors import SynapcError
from synapc.io_attributes import set_io_attributes
from synapc.model import Model
from synapc.passes.layer_patterns import dataflow_graph, match_layers
from synapc.passes.quantize import CHANNEL_RANGE_ATTR, CHANNELWISE_PRODUCERS
from synapc.quantization.ranges import tensor_range
from synapc.quantization.statistics import TensorStatistics

__all__ = [
    "QUANT_TYPES",
    "RANGE_ATTR",
    "TYPE_ATTR",
    "LayerTypes",
    "annotate",
    "layer_types",
    "named_layers",
    "range_shape",
]

#: The op / argument attribute holding calibrated ranges.
RANGE_ATTR = "synap.calibrated_range"
#: The op / argument attribute holding the layer's quantized type.
TYPE_ATTR = "synap.quant_type"
#: Types a layer may be given.
QUANT_TYPES = ("uint8", "int8", "int16", "float16")
#: The map key of the model inputs.
INPUTS = "INPUTS"

DataType = str | Sequence[tuple[str, str]] | Mapping[str, str]


class LayerTypes:
    """The resolved type of every layer: `ops` by op position in ``@main``'s body (ops
    with float results only), `args` by argument index (float arguments only)."""

    def __init__(self, ops: dict[int, str], args: dict[int, str]) -> None:
        self.ops = ops
        self.args = args

    def __repr__(self) -> str:
        return f"LayerTypes(ops={self.ops}, args={self.args})"


def _float_positions(func: FuncOp) -> tuple[list[int], list[int]]:
    """Positions of the body's ops with observed (float) results, and float argument
    indices (keys of `observed_values`)."""
    ops: list[int] = []
    args: list[int] = []
    for key in observed_values(func):
        if key.startswith("arg"):
            args.append(int(key[3:]))
        else:
            position = int(key[2:].split(".")[0])
            if not ops or ops[-1] != position:
                ops.append(position)
    return ops, args


def _entries(data_type: DataType) -> list[tuple[str, str]]:
    if isinstance(data_type, Mapping):
        return [(str(k), str(v)) for k, v in data_type.items()]
    return [(str(k), str(v)) for k, v in data_type]


def layer_types(func: FuncOp, data_type: DataType, field: str) -> LayerTypes:
    """Each float layer's and float input's type under `data_type` (a type name or
    the per-layer map, see the module docstring); `field` names it in errors (e.g.
    ``model.yaml: quantization.data_type``). Layers a map does not reach get its int8
    or uint8 (whichever it uses; uint8 when neither) type."""
    positions, args = _float_positions(func)
    if isinstance(data_type, str):
        _check_type(data_type, field)
        return LayerTypes(
            dict.fromkeys(positions, data_type), dict.fromkeys(args, data_type)
        )
    entries = _entries(data_type)
    for _, value in entries:
        _check_type(value, field)
    used = {value for _, value in entries}
    if {"uint8", "int8"} <= used:
        raise SynapcError(f"{field}: 'uint8' and 'int8' cannot both appear in a map")
    default = "int8" if "int8" in used else "uint8"
    ops = list(func.body.block.ops)
    graph = dataflow_graph(ops)
    op_types = dict.fromkeys(positions, default)
    arg_types = dict.fromkeys(args, default)
    # '*' applies first, whatever its place in the map; then the rest in order
    ordered = [e for e in entries if e[0] == "*"] + [e for e in entries if e[0] != "*"]
    for pattern, value in ordered:
        if pattern == "*":
            op_types = dict.fromkeys(op_types, value)
            arg_types = dict.fromkeys(arg_types, value)
        elif pattern == INPUTS:
            arg_types = dict.fromkeys(arg_types, value)
        else:
            for p in match_layers(pattern, ops, graph, field):
                if p in op_types:
                    op_types[p] = value
    return LayerTypes(op_types, arg_types)


def named_layers(func: FuncOp, data_type: DataType, field: str) -> set[int]:
    """Positions of the ops a per-layer map names explicitly (a name, ``'name...'`` or
    ``'@id'``; not ``'*'`` nor ``INPUTS``): empty for a single type. Automatic mixed
    precision leaves these layers the type the map gives them."""
    if isinstance(data_type, str):
        return set()
    ops = list(func.body.block.ops)
    graph = dataflow_graph(ops)
    found: set[int] = set()
    for pattern, _ in _entries(data_type):
        if pattern not in ("*", INPUTS):
            found |= match_layers(pattern, ops, graph, field)
    return found


def _check_type(value: str, field: str) -> None:
    if value not in QUANT_TYPES:
        raise SynapcError(
            f"{field}: unknown data type '{value}' (expected one of "
            f"{', '.join(QUANT_TYPES)})"
        )


def levels_of(data_type: str) -> int:
    """Quantization levels of a layer type (float16 layers are ranged as 8-bit)."""
    return 65536 if data_type == "int16" else 256


def is_symmetric(data_type: str, scheme: str) -> bool:
    """Whether a layer's activations are quantized symmetrically: int16 always, int8
    under the dynamic fixed point scheme (also the ``default`` for int8)."""
    if data_type == "int16":
        return True
    return data_type == "int8" and scheme in ("default", "dynamic_fixed_point")


def _range(
    stats: TensorStatistics,
    data_type: str,
    scheme: str,
    algorithm: str,
    options: Mapping[str, Any] | None,
) -> DenseArrayBase:
    if stats.count == 0:  # every value non-finite: nothing to calibrate on
        low, high = 0.0, 0.0
    else:
        low, high = tensor_range(
            stats,
            algorithm,
            options,
            levels=levels_of(data_type),
            symmetric=is_symmetric(data_type, scheme),
        )
    return DenseArrayBase.from_list(f64, [float(low), float(high)])


def range_shape(attr: object) -> list[tuple[float, float] | None]:
    """The ``[low, high]`` pairs of a ``synap.calibrated_range`` op attribute (None for
    a non-float result)."""
    assert isinstance(attr, ArrayAttr)
    pairs: list[tuple[float, float] | None] = []
    for item in attr.data:
        values = item.get_values()  # type: ignore[union-attr]
        pairs.append((float(values[0]), float(values[1])) if values else None)
    return pairs


def annotate(
    model: Model,
    stats: Mapping[str, TensorStatistics],
    types: LayerTypes,
    *,
    scheme: str = "default",
    algorithm: str = "standard",
    options: Mapping[str, Any] | None = None,
) -> Model:
    """A copy of the optimized `model` carrying its calibration (see the module
    docstring): the range of each observed tensor in `stats` (keys of
    `observed_values`) and each layer's type from `types`."""
    module = model.module.clone()
    annotated = model.with_module(module)
    func = annotated.main
    ops = list(func.body.block.ops)
    empty = DenseArrayBase.from_list(f64, [])
    values = observed_values(func)
    for i, data_type in types.args.items():
        key = f"arg{i}"
        attrs: dict[str, Any] = {TYPE_ATTR: StringAttr(data_type)}
        if key in stats:
            attrs[RANGE_ATTR] = _range(stats[key], data_type, scheme, algorithm, options)
        set_io_attributes(func, "input", i, attrs)
    for p, data_type in types.ops.items():
        op = ops[p]
        ranges = [
            _range(stats[key], data_type, scheme, algorithm, options)
            if (key := f"op{p}.{j}") in values and key in stats
            else empty
            for j in range(len(op.results))
        ]
        op.attributes[RANGE_ATTR] = ArrayAttr(ranges)
        op.attributes[TYPE_ATTR] = StringAttr(data_type)
        key = f"op{p}.0"
        if (
            scheme == "perchannel_symmetric_affine"
            and isinstance(op, CHANNELWISE_PRODUCERS)
            and key in stats
            and stats[key].count
        ):
            op.attributes[CHANNEL_RANGE_ATTR] = _channel_ranges(stats[key])
    return annotated


def _channel_ranges(stats: TensorStatistics) -> DenseArrayBase:
    """The ``synap.calibrated_channel_range`` of a tensor: the observed min / max of
    each channel (last axis), as NNCF ranges per-channel activations too; channels
    without a finite value get ``[0, 0]``."""
    lows = np.where(np.isfinite(stats.channel_min), stats.channel_min, 0.0)
    highs = np.where(np.isfinite(stats.channel_max), stats.channel_max, 0.0)
    return f64_array(np.concatenate([lows, highs]))
