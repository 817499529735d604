"""`synapc.convert`: model file + metafile -> `model.synap`, `model_info.txt` and
`cache/`, as the vendor's `synap convert` writes them (see `synapc/convert/convert.py`)."""

from synapc.convert.convert import Conversion, convert

__all__ = ["Conversion", "convert"]
