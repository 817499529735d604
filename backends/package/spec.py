"""What a `model.synap` package describes: tensors, quantization, subgraphs, layers.

Plain frozen dataclasses with a JSON form (`to_json` / `from_json`), and the small
explicit validator the reader checks every JSON field with. A package is untrusted input:
`from_json` checks each field's type, range and size (shapes against
`synapc.limits.limits()`) before anything uses it, and a bad field raises `FieldError`
with the field's path (``inputs[1].shape[2]``), which the reader turns into a one-line
`PackageError` naming the package and the member.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes  # noqa: F401 (numpy resolves ml_dtypes' names once it is imported)
import numpy as np

from synapc.errors import SynapcError
from synapc.limits import limits

#: Data types a tensor or a weight may have (numpy dtype names, and ml_dtypes' for
#: bfloat16 and the storage-only types; no object dtypes).
DATA_TYPES = frozenset(
    {
        "bfloat16",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
        "float4_e2m1fn",
        "int4",
        "uint4",
        "int2",
        "uint2",
        "bool",
        "uint8",
        "int8",
        "uint16",
        "int16",
        "uint32",
        "int32",
        "uint64",
        "int64",
        "float16",
        "float32",
        "float64",
    }
)
#: Layouts of a tensor: 4-D channels-last, 4-D channels-first, or none / unknown.
LAYOUTS = ("nhwc", "nchw", "none")
#: Where a subgraph runs.
DELEGATES = ("npu", "gpu", "cpu")
#: Largest magnitude of a JSON integer that is an index, offset or size (int64's range).
MAX_INT = (1 << 63) - 1


class PackageError(SynapcError):
    """A `model.synap` that cannot be used: "<path>: <member>: <problem>" on one line."""


class FieldError(ValueError):
    """A JSON value that breaks the package format. `at` is the value's path inside its
    document (``inputs[1].shape[2]``, "" for the document itself); the message is
    ``"<at>: <problem>"``, for the reader to prefix with the package and member."""

    def __init__(self, at: str, problem: str):
        super().__init__(f"{at}: {problem}" if at else problem)
        self.at = at
        self.problem = problem


def key_path(at: str, key: str) -> str:
    """The path of field `key` of the object at `at`."""
    return f"{at}.{key}" if at else key


def item_path(at: str, index: int) -> str:
    """The path of item `index` of the list at `at`."""
    return f"{at}[{index}]"


def quote(text: str, limit: int = 80) -> str:
    """`text` quoted for a one-line message: control characters escaped, long text cut."""
    short = text if len(text) <= limit else text[:limit] + "..."
    return f"'{short}'" if short.isprintable() else ascii(short)


def kind_of(value: Any) -> str:
    """A JSON value's kind in words, for messages ("a string", "null", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def describe(value: Any) -> str:
    """A JSON value shown briefly for a message (never a multi-kilobyte number)."""
    if isinstance(value, bool) or value is None:
        return kind_of(value)
    if isinstance(value, int):
        digits = len(str(abs(value))) if abs(value) < 10**30 else 31
        return str(value) if digits <= 30 else "an integer of more than 30 digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return quote(value, 40)
    return kind_of(value)


def obj(
    value: Any, at: str, required: Sequence[str], optional: Sequence[str] = ()
) -> dict[str, Any]:
    """`value` as an object that has every `required` field and no field outside
    `required` and `optional`."""
    if not isinstance(value, dict):
        raise FieldError(at, f"expected an object, got {kind_of(value)}")
    for key in required:
        if key not in value:
            raise FieldError(at, f"field '{key}' is missing")
    for key in value:
        if key not in required and key not in optional:
            raise FieldError(at, f"unknown field {quote(key)}")
    return value


def mapping(value: Any, at: str) -> dict[str, Any]:
    """`value` as an object with any keys."""
    if not isinstance(value, dict):
        raise FieldError(at, f"expected an object, got {kind_of(value)}")
    return value


def integer(value: Any, at: str, low: int = -MAX_INT, high: int = MAX_INT) -> int:
    """`value` as an integer from `low` to `high` (booleans are not integers)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise FieldError(at, f"expected an integer, got {kind_of(value)}")
    if not low <= value <= high:
        raise FieldError(
            at, f"{describe(value)} is out of range (expected {low} to {high})"
        )
    return value


def number(value: Any, at: str) -> float:
    """`value` (an integer or a number) as a finite float."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise FieldError(at, f"expected a number, got {kind_of(value)}")
    if isinstance(value, int) and abs(value) > MAX_INT:
        raise FieldError(at, f"{describe(value)} is out of range")
    result = float(value)
    if not math.isfinite(result):
        raise FieldError(at, f"{describe(value)} is not a finite number")
    return result


def string(value: Any, at: str) -> str:
    """`value` as a string (valid Unicode: no lone surrogates)."""
    if not isinstance(value, str):
        raise FieldError(at, f"expected a string, got {kind_of(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FieldError(at, "the string is not valid Unicode") from None
    return value


def choice(value: Any, at: str, choices: Sequence[str] | frozenset[str], what: str) -> str:
    """`value` as one of `choices` (`what` names the kind of value in the message)."""
    text = string(value, at)
    if text not in choices:
        raise FieldError(at, f"unknown {what} {quote(text)}")
    return text


def array(value: Any, at: str) -> list[Any]:
    """`value` as a list."""
    if not isinstance(value, list):
        raise FieldError(at, f"expected a list, got {kind_of(value)}")
    return value


def shape_of(value: Any, at: str, itemsize: int) -> tuple[int, ...]:
    """`value` as a tensor shape: at most `limits().max_tensor_rank` non-negative
    dimensions whose element and byte counts stay within the tensor limits."""
    dims = array(value, at)
    current = limits()
    if len(dims) > current.max_tensor_rank:
        raise FieldError(
            at,
            f"{len(dims):,} dimensions exceed the limit of {current.max_tensor_rank:,}"
            " (SYNAPC_MAX_TENSOR_RANK raises it)",
        )
    result = tuple(
        integer(d, item_path(at, i), 0, current.max_tensor_elements)
        for i, d in enumerate(dims)
    )
    elements = math.prod(result)
    if elements > current.max_tensor_elements:
        raise FieldError(
            at,
            f"{elements:,} elements exceed the limit of {current.max_tensor_elements:,}"
            " (SYNAPC_MAX_TENSOR_ELEMENTS raises it)",
        )
    if elements * itemsize > current.max_tensor_bytes:
        raise FieldError(
            at,
            f"{elements * itemsize:,} bytes exceed the limit of "
            f"{current.max_tensor_bytes:,} (SYNAPC_MAX_TENSOR_BYTES raises it)",
        )
    return result


def ref_pair(value: Any, first: str, at: str) -> tuple[int, int]:
    """A JSON reference ``{first: k, "out": j}`` as ``(k, j)`` (k may be -1)."""
    d = obj(value, at, (first, "out"))
    k = integer(d[first], key_path(at, first), -1, MAX_INT)
    j = integer(d["out"], key_path(at, "out"), 0, MAX_INT)
    return (k, j)


def channel_count(shape: tuple[int, ...], layout: str) -> int | None:
    """The channel count of a tensor (axis 1 for NCHW, the last one otherwise; None for
    a scalar)."""
    if not shape:
        return None
    return shape[1 if layout == "nchw" and len(shape) >= 2 else len(shape) - 1]


@dataclass(frozen=True)
class Quantization:
    """Affine quantization of a tensor: ``real = (q - zero_point) * scale``.

    One scale / zero point for the whole tensor (`axis` None), or one per channel along
    `axis`.
    """

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON form stored in bundle.json and model.json."""
        return {
            "scale": [float(s) for s in self.scale],
            "zero_point": [int(z) for z in self.zero_point],
            "axis": self.axis,
        }

    @classmethod
    def from_json(cls, d: Any, at: str = "quantization") -> Quantization:
        """Parse and check the JSON form (`FieldError` naming the bad field): positive
        finite scales, as many integer zero points, an integer or null axis (required
        with several scales)."""
        d = obj(d, at, ("scale", "zero_point"), ("axis",))
        scales = array(d["scale"], key_path(at, "scale"))
        scale = tuple(
            number(v, item_path(key_path(at, "scale"), i)) for i, v in enumerate(scales)
        )
        for i, v in enumerate(scale):
            if v <= 0.0:
                raise FieldError(
                    item_path(key_path(at, "scale"), i), f"scale {v!r} is not positive"
                )
        points = array(d["zero_point"], key_path(at, "zero_point"))
        zero_point = tuple(
            integer(v, item_path(key_path(at, "zero_point"), i))
            for i, v in enumerate(points)
        )
        axis = d.get("axis")
        if axis is not None:
            rank = limits().max_tensor_rank
            axis = integer(axis, key_path(at, "axis"), -rank, rank)
        if not scale:
            raise FieldError(key_path(at, "scale"), "no scale")
        if len(scale) != len(zero_point):
            raise FieldError(at, f"{len(scale)} scales but {len(zero_point)} zero points")
        if len(scale) > 1 and axis is None:
            raise FieldError(key_path(at, "axis"), "several scales but no axis")
        return cls(scale, zero_point, axis)


@dataclass(frozen=True)
class TensorSpec:
    """A model, subgraph or layer tensor as the user sees it.

    `data_type` is the numpy dtype name of the values the user reads and writes (the
    storage type when quantized). `means` / `scale` are the metafile's normalization that
    `Tensor.assign` applies to data of another type: ``(x - means[c]) / scale``.
    """

    name: str
    shape: tuple[int, ...]
    data_type: str
    layout: str = "none"
    format: str = ""
    quantization: Quantization | None = None
    means: tuple[float, ...] | None = None
    scale: float | None = None

    def __post_init__(self) -> None:
        if self.data_type not in DATA_TYPES:  # a package the reader would refuse
            raise ValueError(f"tensor '{self.name}': no package data type {self.data_type}")

    def to_json(self) -> dict[str, Any]:
        """The JSON form stored in bundle.json and model.json."""
        return {
            "name": self.name,
            "shape": [int(d) for d in self.shape],
            "data_type": self.data_type,
            "layout": self.layout,
            "format": self.format,
            "quantization": None
            if self.quantization is None
            else self.quantization.to_json(),
            "means": None if self.means is None else [float(m) for m in self.means],
            "scale": None if self.scale is None else float(self.scale),
        }

    @classmethod
    def from_json(cls, d: Any, at: str = "") -> TensorSpec:
        """Parse and check the JSON form (`FieldError` naming the bad field by its path
        below `at`): types, a shape within the tensor limits, known data type and
        layout, quantization that fits the shape and the data type, one mean or one per
        channel, a finite non-zero scale."""
        d = obj(
            d,
            at,
            ("name", "shape", "data_type", "layout", "format"),
            ("quantization", "means", "scale"),
        )
        name = string(d["name"], key_path(at, "name"))
        data_type = choice(
            d["data_type"], key_path(at, "data_type"), DATA_TYPES, "data_type"
        )
        dtype = np.dtype(data_type)
        shape = shape_of(d["shape"], key_path(at, "shape"), dtype.itemsize)
        layout = choice(d["layout"], key_path(at, "layout"), LAYOUTS, "layout")
        fmt = string(d["format"], key_path(at, "format"))
        quant = d.get("quantization")
        quantization = None
        if quant is not None:
            where = key_path(at, "quantization")
            quantization = Quantization.from_json(quant, where)
            _check_quantization(quantization, shape, dtype, where)
        means = d.get("means")
        if means is not None:
            where = key_path(at, "means")
            means = tuple(
                number(m, item_path(where, i)) for i, m in enumerate(array(means, where))
            )
            channels = channel_count(shape, layout)
            if len(means) != 1 and len(means) != channels:
                expected = "1" if channels is None else f"1 or {channels} (one per channel)"
                raise FieldError(where, f"{len(means)} means, expected {expected}")
        scale = d.get("scale")
        if scale is not None:
            scale = number(scale, key_path(at, "scale"))
            if scale == 0.0:
                raise FieldError(key_path(at, "scale"), "scale is zero")
        return cls(
            name=name,
            shape=shape,
            data_type=data_type,
            layout=layout,
            format=fmt,
            quantization=quantization,
            means=means,
            scale=scale,
        )


def _check_quantization(
    quant: Quantization, shape: tuple[int, ...], dtype: np.dtype, at: str
) -> None:
    """Zero points within the storage type's range; per-channel parameters along an
    axis of the shape, one per channel."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        for i, z in enumerate(quant.zero_point):
            if not info.min <= z <= info.max:
                raise FieldError(
                    item_path(key_path(at, "zero_point"), i),
                    f"{describe(z)} is outside the range of {dtype.name}",
                )
    if len(quant.scale) > 1:
        rank = len(shape)
        axis = quant.axis
        if axis is None or not -rank <= axis < rank:
            raise FieldError(
                key_path(at, "axis"), f"axis {axis} is not an axis of shape {list(shape)}"
            )
        if shape[axis] != len(quant.scale):
            raise FieldError(
                key_path(at, "scale"),
                f"{len(quant.scale)} scales for {shape[axis]} channels along axis {axis}",
            )


@dataclass(frozen=True)
class ProfiledLayer:
    """One layer of a profiling build: its own exported program.

    `operands` says where each operand comes from: ``(-1, i)`` is input i of the subgraph,
    ``(k, j)`` result j of layer k (an earlier layer).
    """

    name: str
    type: str
    executable: bytes
    weights: list[np.ndarray]
    operands: list[tuple[int, int]]


#: The byte figures of a subgraph's memory plan (`passes/memory/placement.py`).
PLAN_FIGURES = (
    "arena", "lower_bound", "no_reuse", "sram", "sram_resident", "weights", "inputs",
    "outputs", "alignment", "peak_step",
)  # fmt: skip
#: Memories a planned tensor lives in.
PLAN_MEMORIES = ("ddr", "sram")
_PLANNED_FIELDS = ("layer", "out", "memory", "offset", "size", "first", "last")


@dataclass(frozen=True)
class PlannedTensor:
    """Where result `out` of layer `layer` (in the subgraph's layer order) lives:
    `size` bytes at `offset` of `memory` (``ddr``: the arena; ``sram``: on chip), from
    schedule step `first` to step `last`."""

    layer: int
    out: int
    memory: str
    offset: int
    size: int
    first: int
    last: int


@dataclass(frozen=True)
class MemoryPlan:
    """A subgraph's memory plan (the ``plan-memory`` pass): its byte figures
    (`PLAN_FIGURES`) and every intermediate tensor's place. Results of the subgraph,
    its inputs and weights are placed by rule and not listed."""

    figures: dict[str, int]
    tensors: list[PlannedTensor]

    def to_json(self) -> dict[str, Any]:
        """The JSON form: ``{"figures": {...}, "tensors": [{...}, ...]}``."""
        return {
            "figures": {k: self.figures[k] for k in PLAN_FIGURES},
            "tensors": [{k: getattr(t, k) for k in _PLANNED_FIELDS} for t in self.tensors],
        }

    @classmethod
    def from_json(cls, d: Any, at: str = "memory_plan") -> MemoryPlan:
        """A checked plan: every figure a non-negative integer, every tensor inside
        the extent of its memory, its lifetime in order."""
        d = obj(d, at, ("figures", "tensors"))
        raw = obj(d["figures"], key_path(at, "figures"), PLAN_FIGURES)
        figures = {
            k: integer(raw[k], key_path(key_path(at, "figures"), k), 0)
            for k in PLAN_FIGURES
        }
        extent = {"ddr": figures["arena"], "sram": figures["sram"]}
        tensors = []
        for i, item in enumerate(array(d["tensors"], key_path(at, "tensors"))):
            where = item_path(key_path(at, "tensors"), i)
            item = obj(item, where, _PLANNED_FIELDS)
            memory = choice(
                item["memory"], key_path(where, "memory"), PLAN_MEMORIES, "memory"
            )
            values = {
                k: integer(item[k], key_path(where, k), 0)
                for k in _PLANNED_FIELDS
                if k != "memory"
            }
            if values["offset"] + values["size"] > extent[memory]:
                raise FieldError(
                    where,
                    f"bytes [{values['offset']}, {values['offset'] + values['size']}) "
                    f"lie beyond the {memory} extent of {extent[memory]}",
                )
            if values["first"] > values["last"]:
                raise FieldError(where, "its first step comes after its last")
            tensors.append(PlannedTensor(memory=memory, **values))
        return cls(figures, tensors)


@dataclass(frozen=True)
class StateSpec:
    """A value the package carries from one prediction to the next (a streaming model's
    resource variable): model input `input` takes it before a run, model output `output`
    gives it after, `initial` holds it before the first run. `synapc.Network` feeds and
    keeps it; users see the other inputs and outputs only."""

    name: str
    input: int
    output: int
    initial: np.ndarray


@dataclass(frozen=True)
class Subgraph:
    """One delegate region: its exported program ``f(weights, *inputs)`` and tensors.

    `input_refs` says where each input comes from: ``(-1, i)`` is model input i,
    ``(k, j)`` output j of subgraph k (an earlier one). Profiling builds also carry
    `layers` and, per subgraph output, the ``(layer, result)`` that computes it;
    `memory_plan` is where its tensors live (a runtime's arena layout).
    """

    delegate: str
    executable: bytes
    weights: list[np.ndarray]
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    input_refs: list[tuple[int, int]]
    layers: list[ProfiledLayer] | None = None
    layer_outputs: list[tuple[int, int]] | None = None
    memory_plan: MemoryPlan | None = None
