"""Activation range algorithms of post-training quantization: pure numpy arithmetic.

Each algorithm turns calibration statistics of one tensor into the real range
``(low, high)`` its quantization must cover; a symmetric range is ``(-t, t)``. The range
is what the data says: making it contain zero exactly (nudging a zero point) is the
quantizer's job. Algorithms (the metafile's ``algorithm`` names):

- ``standard``: the observed min / max.
- ``moving_average``: an exponential moving average of the per-batch min / max, started
  at the first batch: ``r <- (1 - momentum) * r + momentum * batch`` (`momentum`
  default 0.01, TensorFlow's ``ema_decay`` 0.99).
- ``percentile``: the `percentile` (default 99.99) of the values (of their magnitudes
  when symmetric; the ``100 - p`` and ``p`` percentiles otherwise), interpolated
  linearly within a histogram bin.
- ``kl_divergence``: TensorRT's entropy calibration: the clipping threshold whose
  clipped distribution (outliers added to the last kept bin) is closest, in
  Kullback-Leibler divergence, to itself quantized to the type's levels.
- ``mse``: the range minimizing the expected squared quantization error: rounding noise
  ``step**2 / 12`` for values inside, squared distance to the bound for values clipped.

Histogram-based algorithms take a `Histogram` whose bin edges put zero on an edge
(`zero_aligned_edges`), so that the histogram of magnitudes is an exact fold of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from synapc.errors import SynapcError

Range = tuple[float, float]


@dataclass(frozen=True)
class Histogram:
    """Counts of values in `counts.size` bins of equal `width` from `start`."""

    counts: np.ndarray
    start: float
    width: float

    @property
    def edges(self) -> np.ndarray:
        """The bin edges (one more than bins)."""
        return self.start + self.width * np.arange(self.counts.size + 1, dtype=np.float64)

    def magnitudes(self) -> Histogram:
        """The histogram of |x| from 0: bins below zero folded onto those above (exact
        since zero is an edge)."""
        below = round(-self.start / self.width) if self.start < 0 else 0
        n = max(below, self.counts.size - below)
        counts = np.zeros(n, np.float64)
        counts[: self.counts.size - below] += self.counts[below:]
        counts[:below] += self.counts[:below][::-1]
        return Histogram(counts, 0.0, self.width)


def zero_aligned_edges(low: float, high: float, bins: int) -> tuple[float, float]:
    """``(start, width)`` of `bins` equal bins covering ``[min(low, 0), max(high, 0)]``
    with zero on a bin edge (a degenerate range gets width 1)."""
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    if not high > low:
        return 0.0, 1.0
    width = (high - low) / (bins - 1)
    return -math.ceil(-low / width) * width, width


def _symmetric(low: float, high: float) -> Range:
    bound = max(abs(low), abs(high))
    return -bound, bound


def minmax_range(minimum: float, maximum: float, symmetric: bool = False) -> Range:
    """``standard``: the observed range (its larger magnitude both ways if symmetric)."""
    return _symmetric(minimum, maximum) if symmetric else (float(minimum), float(maximum))


def moving_average_range(
    batch_minima: np.ndarray,
    batch_maxima: np.ndarray,
    momentum: float = 0.01,
    symmetric: bool = False,
) -> Range:
    """``moving_average``: the EMA of the per-batch min and max, in batch order, started
    at the first batch: ``r_k = (1 - momentum) * r_{k-1} + momentum * b_k``. Closed form
    ``r_n = (1-m)**(n-1) b_1 + sum_k m (1-m)**(n-k) b_k`` (no loop over batches)."""
    lows, highs = np.asarray(batch_minima, np.float64), np.asarray(batch_maxima, np.float64)
    n = lows.size
    weights = momentum * (1.0 - momentum) ** (n - 1 - np.arange(n, dtype=np.float64))
    weights[0] = (1.0 - momentum) ** (n - 1)
    return minmax_range(float(weights @ lows), float(weights @ highs), symmetric)


def _quantile(hist: Histogram, fraction: float) -> float:
    """The value below which `fraction` of the histogram's count lies (linear within a
    bin)."""
    cdf = np.concatenate([[0.0], np.cumsum(hist.counts, dtype=np.float64)])
    return float(np.interp(fraction * cdf[-1], cdf, hist.edges))


def percentile_range(
    hist: Histogram, percentile: float = 99.99, symmetric: bool = False
) -> Range:
    """``percentile``: the `percentile` of |x| both ways if symmetric, else the
    ``100 - percentile`` and ``percentile`` percentiles of x."""
    if symmetric:
        bound = _quantile(hist.magnitudes(), percentile / 100.0)
        return -bound, bound
    return _quantile(hist, 1.0 - percentile / 100.0), _quantile(hist, percentile / 100.0)


def _kl_threshold(counts: np.ndarray, levels: int, chunk: int = 128) -> int:
    """The number of bins ``i`` (``levels <= i <= n``) of a magnitude histogram whose
    clipping is best in TensorRT's entropy sense: ``P`` = the first ``i`` bins with the
    outliers added to the last, ``Q`` = the first ``i`` bins merged into `levels` groups
    (the last takes the remainder) and spread back uniformly over each group's non-empty
    bins; minimize KL(P || Q). Candidates are evaluated `chunk` at a time as 2-D arrays."""
    n = counts.size
    counts = counts.astype(np.float64)
    tail = np.concatenate([np.cumsum(counts[::-1])[::-1], [0.0]])  # tail[i] = sum(h[i:])
    j = np.arange(n)
    best, best_kl = n, np.inf
    for first in range(levels, n + 1, chunk):
        cands = np.arange(first, min(first + chunk, n + 1))
        inside = j[None, :] < cands[:, None]
        p = np.where(inside, counts[None, :], 0.0)
        p[np.arange(cands.size), cands - 1] += tail[cands]
        group = np.minimum(j[None, :] // (cands[:, None] // levels), levels - 1)
        flat = (group + levels * np.arange(cands.size)[:, None])[inside]
        shape = cands.size * levels
        sums = np.bincount(
            flat, weights=counts[None, :].repeat(cands.size, 0)[inside], minlength=shape
        )
        nonzero = np.bincount(
            flat,
            weights=(counts[None, :] > 0).repeat(cands.size, 0)[inside].astype(np.float64),
            minlength=shape,
        )
        per_bin = np.divide(sums, nonzero, out=np.zeros(shape), where=nonzero > 0)
        q = np.zeros_like(p)
        q[inside] = per_bin[flat]
        q = np.where(inside & (counts[None, :] > 0), q, 0.0)
        p /= np.maximum(p.sum(1, keepdims=True), 1e-300)
        q_total = q.sum(1, keepdims=True)
        q = q / np.maximum(q_total, 1e-300)
        q = np.where((p > 0) & (q == 0), 1e-10, q)  # smoothing: no infinite divergence
        ratio = np.where(p > 0, p, 1.0) / np.where(q > 0, q, 1.0)
        terms = np.where(p > 0, p * np.log(ratio), 0.0)
        kl = terms.sum(1)
        k = int(np.argmin(kl))
        if kl[k] < best_kl:
            best, best_kl = int(cands[k]), float(kl[k])
    return best


def kl_divergence_range(
    hist: Histogram, levels: int = 256, symmetric: bool = True
) -> Range:
    """``kl_divergence`` (TensorRT's entropy calibration, see `_kl_threshold`) for a type
    of `levels` levels (256 for 8 bits). Symmetric: the threshold ``t`` of the magnitude
    histogram with ``levels // 2`` levels (TensorRT's 128 for int8), range ``(-t, t)``.
    Asymmetric: one-signed data search their side with all `levels`; data of both signs
    keep the symmetric threshold's clipping of their own range. A histogram with fewer
    bins than the levels searched keeps the full range."""
    edges = hist.edges
    low, high = float(edges[0]), float(edges[-1])
    if symmetric or (low < 0 < high):
        magnitudes = hist.magnitudes()
        half = levels // 2
        if magnitudes.counts.size < half or magnitudes.counts.sum() == 0:
            bound = max(-low, high)
        else:
            bound = _kl_threshold(magnitudes.counts, half) * hist.width
        return (-bound, bound) if symmetric else (max(low, -bound), min(high, bound))
    counts = hist.counts if low >= 0 else hist.counts[::-1]
    if counts.size < levels or counts.sum() == 0:
        return low, high
    reach = _kl_threshold(counts, levels) * hist.width
    return (0.0, low + reach) if low >= 0 else (high - reach, 0.0)


def _expected_error(
    centers: np.ndarray,
    counts: np.ndarray,
    width: float,
    lows: np.ndarray,
    highs: np.ndarray,
    levels: int,
) -> np.ndarray:
    """Mean squared quantization error of the histogram for each candidate range
    ``[lows[k], highs[k]]`` of `levels` levels: ``step**2 / 12`` inside, the squared
    distance to the nearer bound plus the bin's own ``width**2 / 12`` outside."""
    step = (highs - lows) / (levels - 1)
    below = np.maximum(lows[:, None] - centers[None, :], 0.0)
    above = np.maximum(centers[None, :] - highs[:, None], 0.0)
    clipped = (below + above) > 0
    error = np.where(clipped, (below + above) ** 2 + width**2 / 12, (step**2 / 12)[:, None])
    return (error * counts[None, :]).sum(1) / max(counts.sum(), 1e-300)


def mse_range(
    hist: Histogram, levels: int = 256, symmetric: bool = False, candidates: int = 512
) -> Range:
    """``mse``: the range minimizing `_expected_error` for a type of `levels` levels.
    Symmetric: thresholds ``t`` over `candidates` evenly spaced magnitudes up to the
    largest, range ``(-t, t)`` with ``levels - 1`` levels. Asymmetric: the observed range
    scaled by ``k / candidates`` (same zero point)."""
    counts = hist.counts.astype(np.float64)
    centers = hist.edges[:-1] + hist.width / 2
    fractions = np.arange(1, candidates + 1, dtype=np.float64) / candidates
    edges = hist.edges
    if symmetric:
        top = max(-float(edges[0]), float(edges[-1]))
        bounds = top * fractions
        errors = _expected_error(centers, counts, hist.width, -bounds, bounds, levels - 1)
        bound = float(bounds[int(np.argmin(errors))])
        return -bound, bound
    lows, highs = float(edges[0]) * fractions, float(edges[-1]) * fractions
    errors = _expected_error(centers, counts, hist.width, lows, highs, levels)
    k = int(np.argmin(errors))
    return float(lows[k]), float(highs[k])


#: algorithm -> option name -> (default, check of a value, what the check requires).
OPTIONS: dict[str, dict[str, tuple[Any, Any, str]]] = {
    "standard": {},
    "moving_average": {
        "momentum": (0.01, lambda v: 0 < v <= 1, "a number in (0, 1]"),
    },
    "percentile": {
        "percentile": (99.99, lambda v: 50 < v <= 100, "a number in (50, 100]"),
    },
    "kl_divergence": {},
    "mse": {
        "candidates": (
            512,
            lambda v: isinstance(v, int) and 2 <= v <= 65536,
            "an integer in [2, 65536]",
        ),
    },
}
#: Options every histogram algorithm takes (the histogram is collected before them).
HISTOGRAM_ALGORITHMS = ("percentile", "kl_divergence", "mse")


def check_options(algorithm: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options of `algorithm` with defaults filled in; an unknown algorithm, an
    unknown option or a bad value is refused with a `SynapcError` naming it (options
    ``bins`` and ``symmetric`` belong to the caller: the histogram and the scheme)."""
    if algorithm not in OPTIONS:
        raise SynapcError(
            f"quantization algorithm '{algorithm}' is unknown; expected one of "
            f"{', '.join(OPTIONS)}"
        )
    known = OPTIONS[algorithm]
    given = dict(options or {})
    result = {}
    for name, value in given.items():
        if name not in known:
            names = ", ".join(known) or "none"
            raise SynapcError(
                f"quantization options: '{name}' is not an option of algorithm "
                f"'{algorithm}' (its options: {names})"
            )
        _, check, need = known[name]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not check(value):
            raise SynapcError(
                f"quantization options: '{name}' of algorithm '{algorithm}' "
                f"must be {need}, got {value!r}"
            )
        result[name] = value
    for name, (default, _, _) in known.items():
        result.setdefault(name, default)
    return result
