"""The calibrated range of a tensor: its statistics through a range algorithm of
`synapc.dialects.quant_ranges`, chosen by the metafile's ``algorithm`` and ``options``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synapc.dialects import quant_ranges as qr
from synapc.quantization.statistics import TensorStatistics


def tensor_range(
    stats: TensorStatistics,
    algorithm: str = "standard",
    options: Mapping[str, Any] | None = None,
    *,
    levels: int = 256,
    symmetric: bool = False,
) -> qr.Range:
    """``(low, high)`` of the tensor for a type of `levels` levels (256 for 8 bits,
    65536 for 16), symmetric (``(-t, t)``) or not. `options` are checked
    (`quant_ranges.check_options`): a bad algorithm, option name or value raises a
    `SynapcError` naming it. Histogram algorithms need second-pass statistics."""
    opts = qr.check_options(algorithm, options)
    if algorithm == "standard":
        return qr.minmax_range(stats.minimum, stats.maximum, symmetric)
    if algorithm == "moving_average":
        return qr.moving_average_range(
            stats.batch_min, stats.batch_max, opts["momentum"], symmetric
        )
    if algorithm == "percentile":
        return qr.percentile_range(stats.hist, opts["percentile"], symmetric)
    if algorithm == "kl_divergence":
        return qr.kl_divergence_range(stats.hist, levels, symmetric)
    return qr.mse_range(stats.hist, levels, symmetric, opts["candidates"])
