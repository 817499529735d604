"""Calibration statistics of every tensor of a float model, one jitted call per batch.

A batch is one array per model input, stacked on a new leading axis: shape
``(B, *input.shape)``. The model runs on each sample (`jax.vmap` of the lowered program,
`synapc.backends.jax.observe`), and the same jitted function reduces every observed
tensor to its statistics (`TensorStatistics`): per-tensor and per-channel (last axis,
NHWC) min / max / sum, and a histogram over a range fixed beforehand (`jnp` scatter-add;
no Python loop over data). Tensors of one shape are reduced together and samples are
reduced one by one, then masked on the host: XLA's compile time, most of PTQ's time,
grows with every operation of the program (`_reduce`). Calibration takes two passes, as
TensorRT's and onnxruntime's entropy calibrators do: the first gives each tensor's range
(`Observer.ranges`), the second the statistics with histograms over those ranges
(`Observer.statistics`); `collect_statistics` runs both over a dataset and merges the
batches (`merge_statistics`).

Batches are sharded over the JAX devices: on several, a `NamedSharding` over a 1-D mesh
``batch`` of the devices splits the batch axis (a batch is padded to a multiple of the
device count with masked samples, which count nowhere). On several hosts,
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
from jax.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
)

from synapc.backends.jax.observe import (
    lower_observed,
    observed_labels,
    observed_values,
)
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


def _reduce(
    x: jax.Array,
    valid: jax.Array,
    start: jax.Array,
    width: jax.Array,
    bins: int,
    finite_only: bool,
) -> dict[str, jax.Array]:
    """Statistics of ``G`` observed tensors of one shape stacked, ``x`` of shape
    ``(G, B, ...)``: per tensor, sample and channel (last axis) min, max and sum, and
    per tensor a histogram (`bins` bins from `start` by `width`, both ``(G,)``) of the
    `valid` (B,) samples. With `finite_only`, non-finite values are left out and
    counted per tensor and sample.

    XLA's compile time grows with every operation of the program, so the statistics
    are shaped to keep them few: tensors of one shape share each operation (stacked,
    not reduced one by one), and samples are masked by the caller, on the small
    per-sample results (an element-wise mask makes the program compile about three
    times slower). So the program without `finite_only` (the one that runs unless a
    tensor holds an infinity or a NaN, see `Observer`) masks nothing element-wise but
    the histogram's weights."""
    x = x.astype(jnp.float32)
    g, b = x.shape[:2]
    samples = x.reshape(g, b, -1, x.shape[-1] if x.ndim > 2 else 1)  # (G, B, N, C)
    weight = valid.astype(jnp.int32)[None, :, None, None]
    if finite_only:
        finite = jnp.isfinite(samples)
        out = {
            "low": jnp.where(finite, samples, jnp.inf).min(2),
            "high": jnp.where(finite, samples, -jnp.inf).max(2),
            "total": jnp.where(finite, samples, 0.0).sum(2),
            "count": finite.sum((2, 3), dtype=jnp.int32),
        }
        weight = weight * finite.astype(jnp.int32)
    else:
        out = {"low": samples.min(2), "high": samples.max(2), "total": samples.sum(2)}
    if bins:
        per_tensor = (-1, 1, 1, 1)
        index = jnp.clip(
            jnp.floor((samples - start.reshape(per_tensor)) / width.reshape(per_tensor)),
            0,
            bins - 1,
        ).astype(jnp.int32) + (jnp.arange(g, dtype=jnp.int32) * bins).reshape(per_tensor)
        weights = jnp.broadcast_to(weight, samples.shape)
        out["histogram"] = jax.ops.segment_sum(
            weights.ravel(), index.ravel(), num_segments=g * bins
        ).reshape(g, bins)
    return out


@dataclass
class Observer:
    """The calibration program of a float model (see the module docstring): `ranges`
    and `statistics` run one jitted call per batch, of one program (with histograms
    when `histograms`: the range pass then ignores them, so the model is compiled once,
    not once per pass); `traces` counts how often JAX traced it (once; batches are
    padded to the largest size seen, so only a larger batch traces again).

    The program first assumes every value is finite; the first batch in which a tensor
    holds an infinity or a NaN switches the observer (`finite_only`) to the program
    that leaves them out, element by element, and that batch is reduced again."""

    model: Model
    bins: int = DEFAULT_BINS
    devices: Sequence[jax.Device] | None = None
    histograms: bool = True
    traces: int = 0
    finite_only: bool = False
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
        values = observed_values(func)
        shapes = [tuple(values[key].type.get_shape()) for key in self.keys]
        #: elements per sample of each observed tensor
        self._sizes = [int(np.prod(shape)) for shape in shapes]
        #: the observed tensors of one shape and type, reduced together (positions
        #: in `keys`)
        groups: dict[tuple, list[int]] = {}
        for k, (key, shape) in enumerate(zip(self.keys, shapes, strict=True)):
            groups.setdefault((shape, values[key].type.element_type), []).append(k)
        self._groups = list(groups.values())
        devices = list(self.devices or jax.devices())
        self._device_count = len(devices)
        self._split: Sharding = SingleDeviceSharding(devices[0])
        self._replicated: Sharding = self._split
        if len(devices) > 1:
            mesh = Mesh(np.array(devices), ("batch",))
            self._split = NamedSharding(mesh, PartitionSpec("batch"))
            self._replicated = NamedSharding(mesh, PartitionSpec())
        # (one device: no mesh, so the program reuses the check trace of the model
        # `lower_observed` made, which a mesh's axis types would make JAX redo)
        self._params = jax.device_put(self._params, self._replicated)
        bins = self.bins if self.histograms else 0
        # per-sample results come back replicated: every host reads all of them
        self._programs = {
            finite_only: jax.jit(
                self._program(bins, finite_only), out_shardings=self._replicated
            )
            for finite_only in (False, True)
        }
        # batches are padded to the largest seen: a short one does not retrace
        self._size = 0

    def _program(self, bins: int, finite_only: bool) -> Callable:
        """The per-batch function: run every sample, reduce every observed tensor
        (`starts` and `widths`: one array per group of tensors of one shape)."""

        def program(params, valid, starts, widths, *inputs):
            self.traces += 1  # runs while tracing only
            outputs = jax.vmap(lambda *xs: self._run(params, *xs))(*inputs)
            return [
                _reduce(
                    jnp.stack([outputs[k] for k in members]),
                    valid,
                    start,
                    width,
                    bins,
                    finite_only,
                )
                for members, start, width in zip(self._groups, starts, widths, strict=True)
            ]

        return program

    def _inputs(self, batch: Batch) -> tuple[np.ndarray, list[jax.Array]]:
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
        devices = self._device_count
        self._size = max(self._size, -(-size // devices) * devices)
        padded = self._size
        valid = np.arange(padded) < size
        out = []
        for info, array in zip(infos, arrays, strict=True):
            array = array.astype(info.dtype, copy=False)
            if padded > size:
                array = np.concatenate([array, np.repeat(array[:1], padded - size, 0)])
            out.append(jax.device_put(array, self._split))
        return valid, out

    def _call(
        self, batch: Batch, starts: np.ndarray, widths: np.ndarray
    ) -> tuple[list[dict], np.ndarray]:
        """The program's per-sample results for one batch (see the class docstring on
        `finite_only`) and the mask of the batch's real samples."""
        valid, inputs = self._inputs(batch)
        on_devices = [
            jax.device_put(valid, self._split),
            *(jax.device_put([np.asarray(a, np.float32)[m] for m in self._groups],
                             self._replicated)
              for a in (starts, widths)),
        ]  # fmt: skip
        while True:
            program = self._programs[self.finite_only]
            results = jax.device_get(program(self._params, *on_devices, *inputs))
            if self.finite_only or all(
                np.isfinite(r["low"][:, valid]).all()
                and np.isfinite(r["high"][:, valid]).all()
                for r in results
            ):
                return results, valid
            self.finite_only = True

    def _collect(
        self,
        results: list[dict],
        valid: np.ndarray,
        ranges: Mapping[str, tuple[float, float]] | None,
    ) -> dict[str, TensorStatistics]:
        """`TensorStatistics` of one batch from the program's per-sample results."""
        stats = {}
        for members, result in zip(self._groups, results, strict=True):
            for g, k in enumerate(members):
                key = self.keys[k]
                low = result["low"][g, valid].min(0)
                high = result["high"][g, valid].max(0)
                minimum, maximum = float(low.min()), float(high.max())
                count = (
                    int(result["count"][g, valid].sum())
                    if "count" in result
                    else int(valid.sum()) * self._sizes[k]
                )
                histogram, start, width = None, 0.0, 1.0
                if ranges is not None:
                    histogram = np.asarray(result["histogram"][g], np.int64)
                    start, width = ranges[key]
                stats[key] = TensorStatistics(
                    count,
                    minimum,
                    maximum,
                    low,
                    high,
                    np.array([minimum]),
                    np.array([maximum]),
                    histogram,
                    start,
                    width,
                    result["total"][g, valid].sum(0, dtype=np.float64),
                )
        return {key: stats[key] for key in self.keys}

    def ranges(self, batch: Batch) -> dict[str, TensorStatistics]:
        """First pass: min / max statistics (no histograms) of one batch."""
        zeros = np.zeros(len(self.keys), np.float32)
        return self._collect(*self._call(batch, zeros, zeros + 1), None)

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
        return self._collect(*self._call(batch, starts, widths), bins)


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
