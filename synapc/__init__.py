"""synapc: an open MLIR-style model compiler for Synaptics VS680 / VS640 NPUs.

The front door of the library. `WeightStore` holds the weights the IR refers to by
handle; `make_context` gives an xDSL context with synapc's dialects and a store;
`read_module` / `parse_module` and `write_module` / `print_module` move IR (with weight
blobs) between memory and MLIR text.
"""

from synapc.context import SynapContext, make_context
from synapc.mlir_io import parse_module, print_module, read_module, write_module
from synapc.weights import WeightStore

__all__ = [
    "SynapContext",
    "WeightStore",
    "make_context",
    "parse_module",
    "print_module",
    "read_module",
    "write_module",
]
