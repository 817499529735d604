"""Model importers: each reads one file format into a `synapc.Model` in the synap dialect.

`import_model` picks the importer by file extension.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from synapc.errors import SynapcError
from synapc.model import Model


def import_model(
    path: str | os.PathLike[str],
    input_shapes: Mapping[str, Sequence[int]] | Sequence[Sequence[int]] | None = None,
) -> Model:
    """Import a model file (`.tflite`, `.onnx`, TorchScript `.torchscript` / `.pt` /
    `.pth`) into the synap dialect. `input_shapes` (by input name or in input order)
    fixes the dynamic dimensions of ONNX inputs and is required for TorchScript, which
    records no shapes."""
    path = Path(path)
    if not path.is_file():
        raise SynapcError(f"{path}: no such model file")
    suffix = path.suffix.lower()
    if suffix == ".tflite":
        from synapc.importers.tflite import import_tflite

        if input_shapes is not None:
            raise SynapcError(
                f"{path}: TFLite models have static shapes; drop input_shapes"
            )
        return import_tflite(path)
    if suffix == ".onnx":
        from synapc.importers.onnx import import_onnx

        return import_onnx(path, input_shapes)
    if suffix in (".torchscript", ".pt", ".pth"):
        from synapc.importers.torchscript import import_torchscript

        return import_torchscript(path, input_shapes)
    raise SynapcError(
        f"{path}: unknown model format '{suffix}' "
        "(supported: .tflite, .onnx, .torchscript, .pt, .pth)"
    )
