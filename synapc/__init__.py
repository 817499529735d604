"""synapc: an open MLIR-style model compiler for Synaptics VS680 / VS640 NPUs.

The front door of the library: `import_model(path) -> Model`, `compile(model, target) ->
Executable`, `Executable.run(inputs)` and `optimize(model)`. `WeightStore` holds the
weights the IR refers to by handle; `make_context` gives an xDSL context with synapc's
dialects and a store; `read_module` / `parse_module` and `write_module` / `print_module`
move IR (with weight blobs) between memory and MLIR text.
"""

from synapc.compiler import Executable, compile, optimize
from synapc.context import SynapContext, make_context
from synapc.errors import SynapcError
from synapc.importers import import_model
from synapc.mlir_io import parse_module, print_module, read_module, write_module
from synapc.model import Model, TensorInfo
from synapc.weights import WeightStore

__all__ = [
    "Executable",
    "Model",
    "SynapContext",
    "SynapcError",
    "TensorInfo",
    "WeightStore",
    "compile",
    "import_model",
    "make_context",
    "optimize",
    "parse_module",
    "print_module",
    "read_module",
    "write_module",
]
