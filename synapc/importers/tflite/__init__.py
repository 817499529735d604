"""TFLite importer: a `.tflite` flatbuffer becomes a `synapc.Model` in the synap dialect.

`reader` walks the flatbuffer and owns the converter registry; each sibling module
converts the TFLite operators of one synap op family (conv, pool, reduce, elementwise,
activation, data_movement, resize, conversion) and registers them on import.
"""

from synapc.importers.tflite import (  # noqa: F401  (registers the converters)
    activation,
    conv,
    conversion,
    data_movement,
    detection,
    elementwise,
    pool,
    reduce,
    resize,
)
from synapc.importers.tflite.reader import CONVERTERS, import_tflite

__all__ = ["CONVERTERS", "import_tflite"]
