"""Model importers: each reads one file format into a `synapc.Model` in the synap dialect.

`import_model` picks the importer by file extension.
"""

from __future__ import annotations

import os
from pathlib import Path

from synapc.errors import SynapcError
from synapc.model import Model


def import_model(path: str | os.PathLike[str]) -> Model:
    """Import a model file (`.tflite` for now) into the synap dialect."""
    path = Path(path)
    if not path.is_file():
        raise SynapcError(f"{path}: no such model file")
    suffix = path.suffix.lower()
    if suffix == ".tflite":
        from synapc.importers.tflite import import_tflite

        return import_tflite(path)
    raise SynapcError(f"{path}: unknown model format '{suffix}' (supported: .tflite)")
