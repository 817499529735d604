"""ONNX importer: an `.onnx` model becomes a `synapc.Model` in the synap dialect.

`reader` walks the graph, tracks each tensor's layout and owns the converter registry;
each sibling module converts one family of ONNX operators and registers them on import.
"""

from synapc.importers.onnx import (  # noqa: F401  (registers the converters)
    activation,
    attention,
    control_flow,
    conv,
    conversion,
    data_movement,
    elementwise,
    indexing,
    integer_linear,
    linalg,
    logical,
    loops,
    losses,
    misc,
    normalization,
    pool,
    quantized,
    recurrent,
    reduce,
    resize,
    roi,
    sampling,
    scattering,
    sequence_mixing,
    shape,
    spectral,
    transformer,
    unpool,
)
from synapc.importers.onnx.reader import CONVERTERS, import_onnx, load_onnx

__all__ = ["CONVERTERS", "import_onnx", "load_onnx"]
