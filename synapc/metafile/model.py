"""The parsed conversion metafile: frozen dataclasses, one per section of METAFILE.md.

Every value here has been substituted (`${ENV:..}`, `${FILE:..}`, `${ANCHORS}`),
type-checked and defaulted by `synapc.metafile.parse`, so the compiler reads plain Python
values and never the YAML. `Metafile.unsupported()` names each field whose feature synapc
does not have yet, so such a field is refused with a message instead of being silently
ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from synapc.errors import SynapcError

__all__ = [
    "ALGORITHMS",
    "DATA_LAYOUTS",
    "DATA_TYPES",
    "DELEGATES",
    "INPUT_FORMATS",
    "InputSpec",
    "Metafile",
    "MetafileError",
    "MixedPrecisionSpec",
    "OutputSpec",
    "PreprocessSpec",
    "QuantizationSpec",
]

#: Allowed values of the enumerated fields (METAFILE.md; extensions included).
DELEGATES = ("default", "npu", "gpu", "cpu", "auto")
DATA_LAYOUTS = ("default", "nchw", "nhwc")
INPUT_FORMATS = ("rgb", "bgr")
DATA_TYPES = ("uint8", "int8", "int16", "float16")
ALGORITHMS = ("standard", "kl_divergence", "moving_average", "percentile", "mse")

_SECURITY_WARNING = "recorded; synapc does not encrypt models"


class MetafileError(SynapcError):
    """A metafile problem the user can fix, on one line:
    "<metafile path>: <field path>: <problem>" (field path like "inputs[1].means")."""


@dataclass(frozen=True)
class PreprocessSpec:
    """`inputs[i].preprocess`: the conversion inserted in front of one input (colour
    format, optional crop, resize to the tensor's size, normalisation, quantization)."""

    type: str
    size: tuple[int, int] | None = None  # [H, W] of the incoming image
    crop: bool = False
    color_range: str = "limited"
    color_matrix: str = "bt601"
    resize: str = "bilinear"


@dataclass(frozen=True)
class InputSpec:
    """One `inputs[i]` entry: which tensor (by name or position) and how the runtime or the
    NPU normalises the data fed to it. `shape` is None when not given (the model's own
    shape stands; the conversion requires it only where that is not static). `format` is
    the resolved string ("" when neither the entry nor `input_format` gives one);
    `format_name` its colour order, `format_attrs` its `key=value` words."""

    name: str | None
    shape: tuple[int, ...] | None
    means: tuple[float, ...] | None
    scale: float | None
    format: str
    format_name: str
    format_attrs: dict[str, str] = field(hash=False)
    security: str | None
    preprocess: PreprocessSpec | None


@dataclass(frozen=True)
class OutputSpec:
    """One `outputs[i]` entry: where the graph is cut (`name`), whether the output is
    dequantized on the NPU (`dequantize`, also true when `dequantize_outputs` is set), and
    the postprocessing `format` kept verbatim as metadata ("" when not given)."""

    name: str | None
    dequantize: bool
    format: str
    shape: tuple[int, ...] | None
    security: str | None


@dataclass(frozen=True)
class MixedPrecisionSpec:
    """`quantization.mixed_precision` (extension): raise the most sensitive layers to
    `data_type` one at a time until the output SQNR reaches `target_sqnr_db` or
    `max_fraction` of the layers are raised."""

    data_type: str = "int16"
    target_sqnr_db: float = 30.0
    max_fraction: float = 0.1


@dataclass(frozen=True)
class QuantizationSpec:
    """The `quantization` section. `dataset` holds one glob per input resolved against the
    metafile's folder (not expanded), or "random"; empty when not given (no quantization).
    `data_type` is a type name or the per-layer map as ordered (pattern, type) pairs."""

    dataset: tuple[str, ...]
    data_type: str | tuple[tuple[str, str], ...]
    scheme: str
    mode: str
    algorithm: str
    options: dict[str, Any] = field(hash=False)
    #: the ``mixed_precision`` extension: ``{data_type, target_sqnr_db, max_fraction}``
    #: with defaults filled in, or None when absent
    mixed_precision: MixedPrecisionSpec | None = None


@dataclass(frozen=True)
class Metafile:
    """A whole metafile after substitution and validation; defaults filled in.

    `delegate` is a delegate name or the per-layer map as ordered (pattern, delegate) pairs.
    `path` is the file it was read from (None for text parsed without one).
    """

    path: Path | None
    delegate: str | tuple[tuple[str, str], ...]
    data_layout: str
    input_format: str | None
    output_format: str | None
    dequantize_outputs: bool
    security: dict[str, Any] | None = field(hash=False)
    inputs: tuple[InputSpec, ...]
    outputs: tuple[OutputSpec, ...]
    quantization: QuantizationSpec | None
    custom: Any = field(hash=False)

    def canonical(self) -> str:
        """Deterministic JSON of every parsed field (sorted keys, no whitespace), so that
        a compilation cache keyed by it changes exactly when the metafile's meaning does.
        The metafile's own location is left out; relative paths are already resolved."""
        data = {f.name: _jsonable(getattr(self, f.name)) for f in fields(self)}
        del data["path"]
        return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)

    def unsupported(self) -> list[str]:
        """One message per field whose feature synapc does not implement yet, with its
        field path; `require_supported` turns the first into an error (none today:
        every field is implemented)."""
        return []

    def warnings(self) -> list[str]:
        """One message per accepted field that has no effect yet (the `security` fields:
        recorded in the model, no encryption is done)."""
        messages: list[str] = []
        if self.security is not None:
            messages.append(f"security: {_SECURITY_WARNING}")
        for kind, specs in (("inputs", self.inputs), ("outputs", self.outputs)):
            for i, spec in enumerate(specs):
                if spec.security is not None:
                    messages.append(f"{kind}[{i}].security: {_SECURITY_WARNING}")
        return messages

    def require_supported(self) -> None:
        """Raise `MetafileError` for the first unsupported field (see `unsupported`)."""
        problems = self.unsupported()
        if problems:
            label = str(self.path) if self.path is not None else "metafile"
            raise MetafileError(f"{label}: {problems[0]}")


def _jsonable(value: Any) -> Any:
    """`value` as JSON-ready data with a deterministic order (dataclasses by field, dict
    keys as strings, sets sorted); anything else YAML can produce becomes its str()."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields(value)}
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_jsonable(v) for v in value), key=repr)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)
