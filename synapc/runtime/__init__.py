"""The runtime: load a model.synap package and run it (no compiler needed).

`Network(path)` loads a package; its `inputs` / `outputs` are `Tensor`s (name, shape,
layout, data type, quantization) that `assign` and `to_numpy` / `as_float` move data in
and out of; `predict()` runs one inference and `statistics` times them. Only numpy, jax
and `synapc.backends.package` are imported, never xDSL or the importers.

Names are imported on first use, so that the process that checks a package's programs
(``python -m synapc.runtime.program_check``) can set its limits before anything imports
JAX.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synapc.runtime.network import LayerTiming, Network, Statistics
    from synapc.runtime.tensor import Tensor

#: Public name -> the module that defines it.
_LAZY = {
    "LayerTiming": "synapc.runtime.network",
    "Network": "synapc.runtime.network",
    "Statistics": "synapc.runtime.network",
    "Tensor": "synapc.runtime.tensor",
}

__all__ = ["LayerTiming", "Network", "Statistics", "Tensor"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'synapc.runtime' has no attribute '{name}'")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
