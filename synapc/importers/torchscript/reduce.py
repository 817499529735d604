"""Reductions over axes: mean, sum, amax and amin."""

from __future__ import annotations

from typing import Any

from synapc.importers.torchscript.translator import (
    Slot,
    Translator,
    aten,
    normalize_axis,
    onnx_dtype,
    rank_of,
)

_REDUCE = {
    "mean": "ReduceMean",
    "sum": "ReduceSum",
    "amax": "ReduceMax",
    "amin": "ReduceMin",
}


@aten(*_REDUCE)
def _reduce(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    short = node.kind().removeprefix("aten::")
    named = _by_name(t, node, args)
    x = args[0]
    rank = rank_of(x)
    dims = named["dim"].concrete if "dim" in named else None
    if dims is None or (isinstance(dims, list | tuple) and not dims):
        dims, keep = list(range(rank)), False  # all axes (sum() / mean() overloads)
    else:
        keep = bool(named["keepdim"].concrete) if "keepdim" in named else False
    axes = [
        normalize_axis(int(d), rank) for d in ([dims] if isinstance(dims, int) else dims)
    ]
    result = t.emit(_REDUCE[short], [t.tensor(x), t.ints(axes, "axes")], keepdims=int(keep))
    if outs[0].dtype != x.concrete.dtype:
        result = t.emit("Cast", [result], to=onnx_dtype(outs[0]))
    return [result]


def _by_name(t: Translator, node: Any, args: list[Slot]) -> dict[str, Slot]:
    """The arguments of aten `node` by their names in its schema (ops whose overloads
    put different arguments at one position)."""
    schema = t.torch._C.parse_schema(node.schema())
    return {a.name: slot for a, slot in zip(schema.arguments, args, strict=False)}
