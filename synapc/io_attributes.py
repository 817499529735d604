"""The I/O description of a model in its IR: attribute dictionaries on `@main`'s
arguments and results (func.func ``arg_attrs`` / ``res_attrs``).

A converted model's inputs and outputs carry what the user and the runtime need beside
their types, so that a module written by `synapc-opt` and read back keeps it and a pass
that rewrites the signature updates it in the same place:

- ``synap.name``: the user-visible tensor name (importers set it);
- ``synap.layout``: "nhwc", "nchw" or "none", the layout the user sees (importers set
  the source's; `apply-layout` changes it);
- ``synap.format``: the metafile's `format` string (`describe-io`);
- ``synap.means`` / ``synap.scale``: the normalization the runtime's assign() applies
  (`describe-io`);
- ``synap.preprocess``: set by `insert-preprocess` on a preprocessed input's first new
  argument.

Every key is optional: IR written by hand has none of them, and readers fall back
(``input_i`` names, 4-D tensors in the IR's own NHWC layout).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    StringAttr,
    TensorType,
    f64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

NAME = "synap.name"
LAYOUT = "synap.layout"
FORMAT = "synap.format"
MEANS = "synap.means"
SCALE = "synap.scale"
PREPROCESS = "synap.preprocess"

#: Which side of the signature: the arguments (inputs) or the results (outputs).
Side = Literal["input", "output"]


def _count(func: FuncOp, side: Side) -> int:
    signature = func.function_type
    return len(signature.inputs.data if side == "input" else signature.outputs.data)


def _dicts(func: FuncOp, side: Side) -> list[dict[str, Attribute]]:
    """The attribute dictionary of every argument or result (empty where none)."""
    attrs = func.arg_attrs if side == "input" else func.res_attrs
    count = _count(func, side)
    if attrs is None or len(attrs.data) != count:
        return [{} for _ in range(count)]
    return [dict(d.data) for d in attrs.data]


def io_attributes(func: FuncOp, side: Side, index: int) -> dict[str, Attribute]:
    """The attributes of input or output `index` of `func` (a copy)."""
    return _dicts(func, side)[index]


def set_io_attributes(
    func: FuncOp, side: Side, index: int, values: dict[str, Attribute | None]
) -> None:
    """Set (None: remove) attributes of input or output `index` of `func`."""
    dicts = _dicts(func, side)
    for key, value in values.items():
        if value is None:
            dicts[index].pop(key, None)
        else:
            dicts[index][key] = value
    array = ArrayAttr([DictionaryAttr(d) for d in dicts])
    if side == "input":
        func.arg_attrs = array
    else:
        func.res_attrs = array


def io_string(func: FuncOp, side: Side, index: int, key: str) -> str | None:
    """A string attribute of input or output `index` (None when absent)."""
    value = io_attributes(func, side, index).get(key)
    return value.data if isinstance(value, StringAttr) else None


def io_floats(func: FuncOp, side: Side, index: int, key: str) -> tuple[float, ...] | None:
    """An array-of-floats attribute of input or output `index` (None when absent)."""
    value = io_attributes(func, side, index).get(key)
    if not isinstance(value, ArrayAttr):
        return None
    return tuple(float(v.value.data) for v in value.data if isinstance(v, FloatAttr))


def io_float(func: FuncOp, side: Side, index: int, key: str) -> float | None:
    """A float attribute of input or output `index` (None when absent)."""
    value = io_attributes(func, side, index).get(key)
    return float(value.value.data) if isinstance(value, FloatAttr) else None


def float_array(values: Sequence[float]) -> ArrayAttr[FloatAttr]:
    """``[v0 : f64, ...]``, as ``synap.means`` holds them."""
    return ArrayAttr([FloatAttr(float(v), f64) for v in values])


def layout_of(func: FuncOp, side: Side, index: int) -> str:
    """The layout the user sees for input or output `index`: its ``synap.layout``, or
    for IR without one "nhwc" for a 4-D tensor (the IR's own layout), else "none"."""
    given = io_string(func, side, index, LAYOUT)
    if given is not None:
        return given
    signature = func.function_type
    t = (signature.inputs.data if side == "input" else signature.outputs.data)[index]
    return "nhwc" if isinstance(t, TensorType) and t.get_num_dims() == 4 else "none"


def describe_io(
    func: FuncOp,
    inputs: Sequence[str] | None = None,
    outputs: Sequence[str] | None = None,
    layout: str | None = None,
) -> None:
    """Record names (and, with `layout`, the source's layout of every 4-D tensor;
    "none" for the others) on `func`'s inputs and outputs, as importers do."""
    for side, names in (("input", inputs), ("output", outputs)):
        if names is None:
            continue
        signature = func.function_type
        types = signature.inputs.data if side == "input" else signature.outputs.data
        for index, (name, t) in enumerate(zip(names, types, strict=True)):
            values: dict[str, Attribute | None] = {NAME: StringAttr(name)}
            if layout is not None:
                four = isinstance(t, TensorType) and t.get_num_dims() == 4
                values[LAYOUT] = StringAttr(layout if four else "none")
            set_io_attributes(func, side, index, values)  # type: ignore[arg-type]
