"""synapc: an open MLIR-style model compiler for Synaptics VS680 / VS640 NPUs.

The front door of the library: `import_model(path) -> Model`, `compile(model, target) ->
Executable`, `Executable.run(inputs)`, `optimize(model)`, `quantize(model, dataset,
data_type, scheme, algorithm, options, mode)` (post-training quantization of a float
model on a calibration dataset: globs of .jpg/.png/.npy per input, or "random") and
`convert(model, target, out_dir, meta)`, which writes a deployable `model.synap`;
`Network(path)` loads and runs one. `WeightStore` holds the weights the IR refers to by
handle; `make_context` gives an xDSL context with synapc's dialects and a store;
`read_module` / `parse_module` and `write_module` / `print_module` move IR (with weight
blobs) between memory and MLIR text.

Names are imported on first use, so that a deployment that only loads and runs packages
(`synapc.Network`) never imports xDSL, the IR or the importers; `__version__` is the
installed package's version, read from its metadata.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from synapc.errors import SynapcError

if TYPE_CHECKING:
    __version__: str

    from synapc.compiler import Executable, compile, optimize
    from synapc.context import SynapContext, make_context
    from synapc.convert import convert
    from synapc.importers import import_model
    from synapc.mlir_io import parse_module, print_module, read_module, write_module
    from synapc.model import Model, TensorInfo
    from synapc.quantization.flow import quantize
    from synapc.runtime import Network
    from synapc.weights import WeightStore

#: Public name -> the module that defines it.
_LAZY = {
    "Executable": "synapc.compiler",
    "compile": "synapc.compiler",
    "optimize": "synapc.compiler",
    "SynapContext": "synapc.context",
    "make_context": "synapc.context",
    "convert": "synapc.convert",
    "import_model": "synapc.importers",
    "parse_module": "synapc.mlir_io",
    "print_module": "synapc.mlir_io",
    "read_module": "synapc.mlir_io",
    "write_module": "synapc.mlir_io",
    "Model": "synapc.model",
    "TensorInfo": "synapc.model",
    "quantize": "synapc.quantization.flow",
    "Network": "synapc.runtime",
    "WeightStore": "synapc.weights",
}

__all__ = [
    "Executable",
    "Model",
    "Network",
    "SynapContext",
    "SynapcError",
    "TensorInfo",
    "WeightStore",
    "compile",
    "convert",
    "import_model",
    "make_context",
    "optimize",
    "parse_module",
    "print_module",
    "quantize",
    "read_module",
    "write_module",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("synapc")
        except PackageNotFoundError:  # a source tree that was never installed
            value = "0+unknown"
        globals()[name] = value
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'synapc' has no attribute '{name}'")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
