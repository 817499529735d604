"""TFLite importer: a `.tflite` flatbuffer becomes a `synapc.Model` in the synap dialect.

`reader` walks the flatbuffer and owns the converter registry; each sibling module
converts the TFLite operators of one synap op family (conv, pool, reduce, elementwise,
activation, data_movement, resize, conversion, logical) and registers them on import.
`inputs` resolves the input shapes; in a model with unknown (-1) dimensions
`shape_rules` works out every other tensor's shape and `folding` computes its shape
arithmetic. `variables` turns resource variables (streaming models) into model state, and
`control_flow` inlines the subgraphs of IF and WHILE.
"""

from synapc.importers.tflite import (  # noqa: F401  (registers the converters)
    activation,
    control_flow,
    conv,
    conversion,
    data_movement,
    detection,
    elementwise,
    logical,
    pool,
    reduce,
    resize,
    variables,
)
from synapc.importers.tflite.inputs import input_dims
from synapc.importers.tflite.reader import CONVERTERS, import_tflite

__all__ = ["CONVERTERS", "import_tflite", "input_dims"]
