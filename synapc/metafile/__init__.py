"""The conversion metafile (YAML): parsed, substituted and validated.

`load_metafile(path)` / `parse_metafile(text)` give a `Metafile` of frozen dataclasses
(`InputSpec`, `OutputSpec`, `PreprocessSpec`, `QuantizationSpec`); every problem is a
one-line `MetafileError` naming the file and the field. `model_anchors(model)` gives the
text of `${ANCHORS}`. Only the standard library, PyYAML and numpy are imported here (the
`tflite` schema package when anchors are read), never xDSL or the importers.
"""

from __future__ import annotations

from synapc.metafile.anchors import model_anchors
from synapc.metafile.model import (
    InputSpec,
    Metafile,
    MetafileError,
    OutputSpec,
    PreprocessSpec,
    QuantizationSpec,
)
from synapc.metafile.parse import load_metafile, parse_metafile

__all__ = [
    "InputSpec",
    "Metafile",
    "MetafileError",
    "OutputSpec",
    "PreprocessSpec",
    "QuantizationSpec",
    "load_metafile",
    "model_anchors",
    "parse_metafile",
]
