"""What a `model.synap` package describes: tensors, quantization, subgraphs, layers.

Plain frozen dataclasses with a JSON form (`to_json` / `from_json`). `from_json` checks
every field's type, because a package is untrusted input: a bad field raises `ValueError`
with the field's name, which the reader turns into a one-line `PackageError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from synapc.errors import SynapcError

#: Data types a tensor or a weight may have (numpy dtype names; no object dtypes).
DATA_TYPES = frozenset(
    {
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


class PackageError(SynapcError):
    """A `model.synap` that cannot be used: "<path>: <problem>" on one line."""


def _field(d: Any, key: str, kind: type, what: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise ValueError(f"{what}: missing field '{key}'")
    value = d[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{what}: field '{key}' has the wrong type")
    return value


def _ints(values: Any, key: str, what: str) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        raise ValueError(f"{what}: field '{key}' must be a list of integers")
    return tuple(values)


def _floats(values: Any, key: str, what: str) -> tuple[float, ...]:
    if not isinstance(values, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        for v in values
    ):
        raise ValueError(f"{what}: field '{key}' must be a list of finite numbers")
    return tuple(float(v) for v in values)


def ref_pair(value: Any, first: str, what: str) -> tuple[int, int]:
    """A JSON reference ``{first: k, "out": j}`` as ``(k, j)``."""
    k = _field(value, first, int, what)
    j = _field(value, "out", int, what)
    return (k, j)


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
    def from_json(cls, d: Any) -> Quantization:
        """Parse and check the JSON form (`ValueError` naming the bad field)."""
        what = "quantization"
        scale = _floats(_field(d, "scale", list, what), "scale", what)
        zero_point = _ints(_field(d, "zero_point", list, what), "zero_point", what)
        axis = d.get("axis")
        if axis is not None and (not isinstance(axis, int) or isinstance(axis, bool)):
            raise ValueError(f"{what}: field 'axis' must be an integer or null")
        if not scale or len(scale) != len(zero_point):
            raise ValueError(f"{what}: 'scale' and 'zero_point' differ in length")
        if len(scale) > 1 and axis is None:
            raise ValueError(f"{what}: several scales but no 'axis'")
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
    def from_json(cls, d: Any) -> TensorSpec:
        """Parse and check the JSON form (`ValueError` naming the bad field)."""
        name = _field(d, "name", str, "tensor")
        what = f"tensor '{name}'"
        shape = _ints(_field(d, "shape", list, what), "shape", what)
        if any(s < 0 for s in shape):
            raise ValueError(f"{what}: negative dimension in 'shape'")
        data_type = _field(d, "data_type", str, what)
        if data_type not in DATA_TYPES:
            raise ValueError(f"{what}: unknown data_type '{data_type}'")
        layout = _field(d, "layout", str, what)
        if layout not in LAYOUTS:
            raise ValueError(f"{what}: unknown layout '{layout}'")
        fmt = _field(d, "format", str, what)
        quant = d.get("quantization")
        means = d.get("means")
        scale = d.get("scale")
        if scale is not None and _floats([scale], "scale", what)[0] == 0.0:
            raise ValueError(f"{what}: field 'scale' is zero")
        return cls(
            name=name,
            shape=shape,
            data_type=data_type,
            layout=layout,
            format=fmt,
            quantization=None if quant is None else Quantization.from_json(quant),
            means=None if means is None else _floats(means, "means", what),
            scale=None if scale is None else float(scale),
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


@dataclass(frozen=True)
class Subgraph:
    """One delegate region: its exported program ``f(weights, *inputs)`` and tensors.

    `input_refs` says where each input comes from: ``(-1, i)`` is model input i,
    ``(k, j)`` output j of subgraph k (an earlier one). Profiling builds also carry
    `layers` and, per subgraph output, the ``(layer, result)`` that computes it.
    """

    delegate: str
    executable: bytes
    weights: list[np.ndarray]
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    input_refs: list[tuple[int, int]]
    layers: list[ProfiledLayer] | None = None
    layer_outputs: list[tuple[int, int]] | None = None
