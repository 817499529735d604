"""The runtime: load a model.synap package and run it (no compiler needed).

`Network(path)` loads a package; its `inputs` / `outputs` are `Tensor`s (name, shape,
layout, data type, quantization) that `assign` and `to_numpy` / `as_float` move data in
and out of; `predict()` runs one inference and `statistics` times them. Only numpy, jax
and `synapc.backends.package` are imported, never xDSL or the importers.
"""

from synapc.runtime.network import LayerTiming, Network, Statistics
from synapc.runtime.tensor import Tensor

__all__ = ["LayerTiming", "Network", "Statistics", "Tensor"]
