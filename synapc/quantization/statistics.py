"""Calibration statistics of every tensor of a float model, one jitted call per batch.

A batch is one array per model input, stacked on a new leading axis: shape
``(B, *input.shape)``. The model runs on each sample (`jax.vmap` of the lowered program,
`synapc.backends.jax.observe`), and the same jitted function reduces every observed
tensor to its statistics (`TensorStatistics`): per-tensor and per-channel (last axis,
NHWC) min / max, and a histogram over a range fixed beforehand (`jnp` scatter-add; no
Python loop over data). Calibration takes two passes, as TensorRT's and onnxruntime's
entropy calibrators do: the first gives each tensor's range (`Observer.ranges`), the
second the statistics with histograms over those ranges (`Observer.statistics`);
`collect_statistics` runs both over a dataset and merges the batches
(`merge_statistics`).

Batches are sharded over the JAX devices: a `NamedSharding` over a 1-D mesh ``batch`` of
the devices splits the batch axis (a batch is padded to a multiple of the device count
with masked samples, which count nowhere), XLA reduces across devices. On several hosts,
call `jax.distributed.initialize()` first in every process: `jax.devices()` then lists
every host's devices, each process feeds the same global batches (or its part of them,
through `jax.make_array_from_process_local_data`), and the statistics come back
replicated on every host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from synapc.backends.jax.observe import lower_observed, observed_labels
from synapc.dialects.quant_ranges import Histogram, zero_aligned_edges
from synapc.errors import SynapcError
from synapc.model import Model
from synapc.runtime.cache import configure as configure_compilation_cache

#: Histogram bins per tensor (TensorRT's and onnxruntime's entropy calibrators use 2048).
DEFAULT_BINS = 2048

Batch = Sequence[np.ndarray]


@dataclass(frozen=True)
class TensorStatistics:
    """What calibration saw of one tensor over the batches merged so far.

    `channel_min` / `channel_max` are per last axis (a rank-0 tensor has one channel);
    `batch_min` / `batch_max` hold each batch's min / max in batch order (for
    ``moving_average``); `histogram` (counts over `hist_start` + `hist_width` * k, zero
    on an edge) is None after a range pass."""

    count: int
    minimum: float
    maximum: float
    channel_min: np.ndarray
    channel_max: np.ndarray
    batch_min: np.ndarray
    batch_max: np.ndarray
    histogram: np.ndarray | None = None
    hist_start: float = 0.0
    hist_width: float = 1.0
    #: per last axis: the sum of the finite values (float64 over batches)
    channel_sum: np.ndarray | None = None

    @property
    def channel_mean(self) -> np.ndarray:
        """The mean of each channel (last axis) over everything observed (what bias
        correction needs of a layer's input)."""
        assert self.channel_sum is not None
        per_channel = max(self.count // max(self.channel_sum.size, 1), 1)
        return self.channel_sum / per_channel

    @property
    def hist(self) -> Histogram:
        """The histogram for `synapc.dialects.quant_ranges`."""
        if self.histogram is None:
            raise SynapcError("these statistics have no histogram (a range pass only)")
        return Histogram(self.histogram, self.hist_start, self.hist_width)


def _merge_one(a: TensorStatistics, b: TensorStatistics) -> TensorStatistics:
    """The statistics of `a`'s batches followed by `b`'s."""
    if (a.histogram is None) != (b.histogram is None) or (
        a.histogram is not None
        and (a.hist_start, a.hist_width, a.histogram.size)
        != (b.hist_start, b.hist_width, b.histogram.size)  # type: ignore[union-attr]
    ):
        raise SynapcError("cannot merge statistics whose histograms have different bins")
    return replace(
        a,
        count=a.count + b.count,
        minimum=min(a.minimum, b.minimum),
        maximum=max(a.maximum, b.maximum),
        channel_min=np.minimum(a.channel_min, b.channel_min),
        channel_max=np.maximum(a.channel_max, b.channel_max),
        batch_min=np.concatenate([a.batch_min, b.batch_min]),
        batch_max=np.concatenate([a.batch_max, b.batch_max]),
        histogram=None if a.histogram is None else a.histogram + b.histogram,
        channel_sum=None
        if a.channel_sum is None or b.channel_sum is None
        else a.channel_sum + b.channel_sum,
    )


def merge_statistics(
    a: Mapping[str, TensorStatistics], b: Mapping[str, TensorStatistics]
) -> dict[str, TensorStatistics]:
    """Statistics of two runs over the same tensors merged (`a`'s batches first)."""
    if a.keys() != b.keys():
        raise SynapcError("cannot merge statistics of different tensors")
    return {key: _merge_one(a[key], b[key]) for key in a}


def _reduce(x: jax.Array, valid: jax.Array, start: jax.Array, width: jax.Array, bins: int):
    """Statistics of one observed tensor ``x`` of shape ``(B, ...)``; `valid` (B,) masks
    padding samples out, and non-finite values are left out too."""
    keep = jnp.reshape(valid, (-1,) + (1,) * (x.ndim - 1)) & jnp.isfinite(x)
    x = x.astype(jnp.float32)
    channels = x.reshape(-1, x.shape[-1] if x.ndim > 1 else 1)
    keep_c = jnp.broadcast_to(keep, x.shape).reshape(channels.shape)
    low = jnp.where(keep_c, channels, jnp.inf).min(0)
    high = jnp.where(keep_c, channels, -jnp.inf).max(0)
    out = {
        "count": keep_c.sum(dtype=jnp.int32),
        "channel_min": low,
        "channel_max": high,
        "channel_sum": jnp.where(keep_c, channels, 0.0).sum(0),
    }
    if bins:
        index = jnp.clip(jnp.floor((channels - start) / width), 0, bins - 1).astype(
            jnp.int32
        )
        out["histogram"] = jax.ops.segment_sum(
            keep_c.astype(jnp.int32).ravel(), index.ravel(), num_segments=bins
        )
    return out


@dataclass
class Observer:
    """The calibration program of a float model (see the module docstring): `ranges`
    and `statistics` run one jitted call per batch, of one program (with histograms
    when `histograms`: the range pass then ignores them, so the model is compiled once,
    not once per pass); `traces` counts how often JAX traced it (once; batches are
    padded to the largest size seen, so only a larger batch traces again)."""

    model: Model
    bins: int = DEFAULT_BINS
    devices: Sequence[jax.Device] | None = None
    histograms: bool = True
    traces: int = 0
    keys: list[str] = field(init=False)
    labels: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.bins, int) or self.bins < 2:
            raise SynapcError(
                f"calibration: bins must be an integer >= 2, got {self.bins!r}"
            )
        # the calibration program is most of PTQ's time; with the runtime's persistent
        # compilation cache a later conversion of the same model skips compiling it
        configure_compilation_cache()
        func = self.model.main
        self._run, self._params, self.keys = lower_observed(
            func, self.model.weights, semantics=self.model.integer_semantics
        )
        labels = observed_labels(func)
        self.labels = {key: labels[key] for key in self.keys}
        devices = list(self.devices or jax.devices())
        self._mesh = Mesh(np.array(devices), ("batch",))
        self._split = NamedSharding(self._mesh, PartitionSpec("batch"))
        self._replicated = NamedSharding(self._mesh, PartitionSpec())
        self._params = jax.device_put(self._params, self._replicated)
        self._program_jit = jax.jit(self._program(self.bins if self.histograms else 0))
        # batches are padded to the largest seen: a short one does not retrace
        self._size = 0

    def _program(self, bins: int) -> Callable:
        """The per-batch function: run every sample, reduce every observed tensor."""

        def program(params, valid, starts, widths, *inputs):
            self.traces += 1  # runs while tracing only
            outputs = jax.vmap(lambda *xs: self._run(params, *xs))(*inputs)
            return [
                _reduce(x, valid, starts[k], widths[k], bins) for k, x in enumerate(outputs)
            ]

        return program

    def _inputs(self, batch: Batch) -> tuple[jax.Array, list[jax.Array]]:
        """The batch padded to a multiple of the device count, split over the devices,
        and the mask of its real samples."""
        infos = self.model.inputs
        if len(batch) != len(infos):
            raise SynapcError(
                f"calibration: a batch has {len(batch)} arrays, the model "
                f"has {len(infos)} inputs"
            )
        arrays = [np.asarray(a) for a in batch]
        size = arrays[0].shape[0] if arrays and arrays[0].ndim else 0
        for info, array in zip(infos, arrays, strict=True):
            if array.shape[1:] != info.shape or array.shape[0] != size or size == 0:
                raise SynapcError(
                    f"calibration: input '{info.name}' has a batch of shape "
                    f"{list(array.shape)}; expected [B, {', '.join(map(str, info.shape))}] "
                    "with the same B > 0 for every input"
                )
        devices = self._mesh.devices.size
        self._size = max(self._size, -(-size // devices) * devices)
        padded = self._size
        valid = np.arange(padded) < size
        out = []
        for info, array in zip(infos, arrays, strict=True):
            array = array.astype(info.dtype, copy=False)
            if padded > size:
                array = np.concatenate([array, np.repeat(array[:1], padded - size, 0)])
            out.append(jax.device_put(array, self._split))
        return jax.device_put(valid, self._split), out

    def _call(
        self, function: Callable, batch: Batch, starts: np.ndarray, widths: np.ndarray
    ):
        valid, inputs = self._inputs(batch)
        starts, widths = (
            jax.device_put(np.asarray(a, np.float32), self._replicated)
            for a in (starts, widths)
        )
        return jax.device_get(function(self._params, valid, starts, widths, *inputs))

    def _collect(
        self, results: list[dict], ranges: Mapping[str, tuple[float, float]] | None
    ):
        stats = {}
        for key, result in zip(self.keys, results, strict=True):
            low, high = result["channel_min"], result["channel_max"]
            minimum, maximum = float(low.min()), float(high.max())
            histogram, start, width = None, 0.0, 1.0
            if ranges is not None:
                histogram = np.asarray(result["histogram"], np.int64)
                start, width = ranges[key]
            stats[key] = TensorStatistics(
                int(result["count"]),
                minimum,
                maximum,
                np.asarray(low),
                np.asarray(high),
                np.array([minimum]),
                np.array([maximum]),
                histogram,
                start,
                width,
                np.asarray(result["channel_sum"], np.float64),
            )
        return stats

    def ranges(self, batch: Batch) -> dict[str, TensorStatistics]:
        """First pass: min / max statistics (no histograms) of one batch."""
        zeros = np.zeros(len(self.keys), np.float32)
        return self._collect(self._call(self._program_jit, batch, zeros, zeros + 1), None)

    def histogram_bins(
        self, stats: Mapping[str, TensorStatistics]
    ) -> dict[str, tuple[float, float]]:
        """Each tensor's histogram ``(start, width)`` from first-pass statistics: `bins`
        bins over its range widened to include zero, zero on an edge (float32 values,
        as the program computes them)."""
        bins = {}
        for key in self.keys:
            start, width = zero_aligned_edges(
                stats[key].minimum, stats[key].maximum, self.bins
            )
            bins[key] = (float(np.float32(start)), float(np.float32(width)))
        return bins

    def statistics(
        self, batch: Batch, bins: Mapping[str, tuple[float, float]]
    ) -> dict[str, TensorStatistics]:
        """Second pass: full statistics of one batch, histograms over `bins` (from
        `histogram_bins`; values outside fall into the end bins)."""
        if not self.histograms:
            raise SynapcError("calibration: this observer was made without histograms")
        starts = np.array([bins[key][0] for key in self.keys], np.float32)
        widths = np.array([bins[key][1] for key in self.keys], np.float32)
        return self._collect(self._call(self._program_jit, batch, starts, widths), bins)


def _merged(batches: Iterable[dict[str, TensorStatistics]]) -> dict[str, TensorStatistics]:
    total: dict[str, TensorStatistics] | None = None
    for stats in batches:
        total = stats if total is None else merge_statistics(total, stats)
    if total is None:
        raise SynapcError("calibration: the dataset has no batches")
    return total


def collect_statistics(
    model: Model,
    batches: Callable[[], Iterable[Batch]] | Sequence[Batch],
    *,
    bins: int = DEFAULT_BINS,
    histograms: bool = True,
    devices: Sequence[jax.Device] | None = None,
) -> dict[str, TensorStatistics]:
    """Statistics of every observed tensor of the float `model` (after
    `synapc.optimize`) over the dataset `batches`, keyed as
    `synapc.backends.jax.observe.observed_values` keys them: a sequence of batches, or a
    function returning a fresh iterable of them (the dataset is read twice when
    `histograms` are wanted: ranges first, then histograms)."""
    observer = Observer(model, bins, devices, histograms)

    def dataset() -> Iterable[Batch]:
        return batches() if callable(batches) else batches

    ranges = _merged(observer.ranges(batch) for batch in dataset())
    if not histograms:
        return ranges
    edges = observer.histogram_bins(ranges)
    return _merged(observer.statistics(batch, edges) for batch in dataset())
