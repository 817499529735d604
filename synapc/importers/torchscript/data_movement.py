"""Aten ops that move data without computing on it: reshapes, permutes and
transposes, concatenation and stacking, slicing, selecting, splitting, padding,
broadcasting and tiling."""

from __future__ import annotations

from typing import Any

import numpy as np

from synapc.importers.torchscript.translator import (
    Slot,
    Translator,
    aten,
    flatten_one,
    normalize_axis,
    np_dtype,
    rank_of,
    static_args,
)


@aten(
    "flatten",
    "view",
    "reshape",
    "_reshape_alias",
    "view_as",
    "reshape_as",
    "squeeze",
    "unsqueeze",
    "unflatten",
)
def _reshape(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    """All reshapes become one Reshape to the concrete result shape."""
    shape = list(outs[0].shape)
    if list(args[0].concrete.shape) == shape:
        return [t.tensor(args[0])]
    return [t.emit("Reshape", [t.tensor(args[0]), t.ints(shape)])]


@aten("permute")
def _permute(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    rank = rank_of(args[0])
    perm = [normalize_axis(int(a), rank) for a in args[1].concrete]
    return [t.emit("Transpose", [t.tensor(args[0])], perm=perm)]


@aten("transpose", "swapaxes", "t")
def _transpose(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    rank = rank_of(args[0])
    if rank < 2:
        return [t.tensor(args[0])]
    if node.kind() == "aten::t":
        a, b = 0, 1
    else:
        a, b = (normalize_axis(int(s.concrete), rank) for s in args[1:3])
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return [t.emit("Transpose", [t.tensor(args[0])], perm=perm)]


def _list_items(t: Translator, slot: Slot) -> list[str]:
    return [t.tensor(item) for item in flatten_one(slot)]


@aten("cat", "concat", "concatenate")
def _cat(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    rank = outs[0].dim()
    axis = normalize_axis(int(args[1].concrete), rank)
    return [t.emit("Concat", _list_items(t, args[0]), axis=axis)]


@aten("stack")
def _stack(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    rank = outs[0].dim()
    axis = normalize_axis(int(args[1].concrete), rank)
    items = []
    for item in flatten_one(args[0]):
        shape = list(item.concrete.shape)
        shape.insert(axis, 1)
        items.append(t.emit("Reshape", [t.tensor(item), t.ints(shape)]))
    return [t.emit("Concat", items, axis=axis)]


@aten("slice")
def _slice(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    dim, start, end, step = static_args(t, args, 1)
    rank = rank_of(x)
    dim = normalize_axis(int(dim), rank)
    size = x.concrete.shape[dim]
    first, last, step = slice(start, end, step).indices(size)
    if (first, last, step) == (0, size, 1):
        return [t.tensor(x)]
    return [
        t.emit(
            "Slice",
            [
                t.tensor(x),
                t.ints([first], "starts"),
                t.ints([last], "ends"),
                t.ints([dim], "axes"),
                t.ints([step], "steps"),
            ],
        )
    ]


@aten("narrow")
def _narrow(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    dim, start, length = static_args(t, args, 1)
    dim = normalize_axis(int(dim), rank_of(x))
    start = normalize_axis(int(start), x.concrete.shape[dim])
    return [
        t.emit(
            "Slice",
            [
                t.tensor(x),
                t.ints([start], "starts"),
                t.ints([start + int(length)], "ends"),
                t.ints([dim], "axes"),
            ],
        )
    ]


@aten("select")
def _select(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    dim, index = static_args(t, args, 1)
    dim = normalize_axis(int(dim), rank_of(x))
    index = normalize_axis(int(index), x.concrete.shape[dim])
    indices = t.constant(np.asarray(index, np.int64), base="index")
    return [t.emit("Gather", [t.tensor(x), indices], axis=dim)]


@aten("split", "split_with_sizes", "chunk", "unbind", "unsafe_split")
def _split(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    pieces = outs[0]
    rank = rank_of(x)
    short = node.kind().removeprefix("aten::")
    dim = normalize_axis(
        int(args[1].concrete if short == "unbind" else args[2].concrete), rank
    )
    sizes = [p.shape[dim] for p in pieces] if short != "unbind" else [1] * len(pieces)
    names = t.emit("Split", [t.tensor(x), t.ints(sizes, "split")], len(pieces), axis=dim)
    names = [names] if isinstance(names, str) else names
    if short == "unbind":
        names = [
            t.emit("Reshape", [n, t.ints(list(p.shape))])
            for n, p in zip(names, pieces, strict=True)
        ]
    return [names]


@aten("constant_pad_nd", "pad")
def _pad(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    rank = rank_of(x)
    pad = [int(p) for p in args[1].concrete]
    if node.kind() == "aten::pad":
        mode = args[2].concrete
        value = args[3].concrete if len(args) > 3 else None
    else:
        mode, value = "constant", args[2].concrete
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}
    if mode not in modes:
        raise t.fail(f"pad mode '{mode}' is not supported")
    begins, ends = [0] * rank, [0] * rank
    for k in range(len(pad) // 2):  # torch pads the last dimension first
        begins[rank - 1 - k], ends[rank - 1 - k] = pad[2 * k], pad[2 * k + 1]
    inputs = [t.tensor(x), t.ints(begins + ends, "pads")]
    if mode == "constant":
        inputs.append(t.constant(float(value or 0.0), np_dtype(outs[0])))
    return [t.emit("Pad", inputs, mode=modes[mode])]


@aten("expand", "expand_as", "broadcast_to")
def _expand_to(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    shape = list(outs[0].shape)
    if list(args[0].concrete.shape) == shape:
        return [t.tensor(args[0])]
    return [t.emit("Expand", [t.tensor(args[0]), t.ints(shape)])]


@aten("repeat")
def _repeat(t: Translator, node: Any, args: list[Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    repeats = [int(r) for r in args[1].concrete]
    name = t.tensor(x)
    shape = list(x.concrete.shape)
    if len(repeats) > len(shape):
        shape = [1] * (len(repeats) - len(shape)) + shape
        name = t.emit("Reshape", [name, t.ints(shape)])
    return [t.emit("Tile", [name, t.ints(repeats, "repeats")])]
