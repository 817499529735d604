"""Post-training quantization: calibration statistics of every tensor of a float model
(`collect_statistics`, `Observer`, `merge_statistics`; keys as
`synapc.backends.jax.observe.observed_values`) and their calibrated ranges
(`tensor_range`, over the algorithms of `synapc.dialects.quant_ranges`).

This package sits at the top layer (it imports the JAX backend), beside
`synapc.convert`; the pure range arithmetic lives in the dialect layer so that passes
may use it too.
"""

from __future__ import annotations

from synapc.quantization.ranges import tensor_range
from synapc.quantization.statistics import (
    DEFAULT_BINS,
    Observer,
    TensorStatistics,
    collect_statistics,
    merge_statistics,
)

__all__ = [
    "DEFAULT_BINS",
    "Observer",
    "TensorStatistics",
    "collect_statistics",
    "merge_statistics",
    "tensor_range",
]
