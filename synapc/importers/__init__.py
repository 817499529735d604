"""Model importers: each reads one file format into a `synapc.Model` in the synap dialect.

`import_model` picks the importer by file extension. With `outputs` it cuts the model at
those tensors (a metafile's ``outputs[].name``): only what they depend on is imported.
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
    outputs: Sequence[str] | None = None,
) -> Model:
    """Import a model file (`.tflite`, `.onnx`, TorchScript `.torchscript` / `.pt` /
    `.pth`) into the synap dialect. `input_shapes` (by input name or in input order)
    fixes the dynamic dimensions of ONNX inputs and of TFLite inputs (the -1 dimensions
    of their shape_signature), and is required for TorchScript, which records no
    shapes.

    `outputs` cuts the model: its outputs become exactly these tensors, in this order
    (``model.outputs[i].name == outputs[i]``), and only the operators they depend on
    are imported, so unsupported operators after the cut do no harm. The names are the
    source's tensor names: ONNX value names, TFLite tensor names, and for TorchScript the
    value names of the frozen graph (``y.1``), a scripted forward's variable names
    (``y``) or the translated ONNX tensor names (see `import_torchscript`). A model
    input may be named (it is returned as is). Every model input stays an input, even
    one the cut no longer uses. A name that is no tensor of the model raises
    `SynapcError` listing the closest names."""
    path = Path(path)
    if not path.is_file():
        raise SynapcError(f"{path}: no such model file")
    suffix = path.suffix.lower()
    if suffix == ".tflite":
        from synapc.importers.tflite import import_tflite

        return import_tflite(path, outputs, input_shapes)
    if suffix == ".onnx":
        from synapc.importers.onnx import import_onnx

        return import_onnx(path, input_shapes, outputs=outputs)
    if suffix in (".torchscript", ".pt", ".pth"):
        from synapc.importers.torchscript import import_torchscript

        return import_torchscript(path, input_shapes, outputs)
    raise SynapcError(
        f"{path}: unknown model format '{suffix}' "
        "(supported: .tflite, .onnx, .torchscript, .pt, .pth)"
    )
