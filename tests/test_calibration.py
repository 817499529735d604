"""Calibration for post-training quantization: statistics of every tensor of a float
model in one jitted call per batch (sharded over devices), and the range algorithms."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.backends.jax.observe import lower_observed
from synapc.dialects import quant_ranges as qr
from synapc.errors import SynapcError
from synapc.quantization import (
    Observer,
    collect_statistics,
    merge_statistics,
    tensor_range,
)

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny_classifier.onnx"


@pytest.fixture(scope="module")
def model() -> synapc.Model:
    return synapc.optimize(synapc.import_model(str(MODEL)))


def _batches(sizes: tuple[int, ...] = (4, 4, 3)) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(7)
    return [[rng.normal(0, 1.5, (n, 1, 3, 64, 64)).astype(np.float32)] for n in sizes]


def test_statistics_equal_numpy_over_every_intermediate(model: synapc.Model) -> None:
    batches = _batches()
    observer = Observer(model, bins=256)
    ranges = merge_statistics(
        merge_statistics(*(observer.ranges(b) for b in batches[:2])),
        observer.ranges(batches[2]),
    )
    bins = observer.histogram_bins(ranges)
    per_batch = [observer.statistics(b, bins) for b in batches]
    stats = merge_statistics(merge_statistics(per_batch[0], per_batch[1]), per_batch[2])
    assert observer.traces == 1  # one program for both passes, the short batch padded

    # reference: every intermediate of every sample, reduced by numpy
    run, params, keys = lower_observed(model.main, model.weights)
    assert keys == observer.keys and len(keys) == 9
    samples = [[np.asarray(v) for v in run(params, x)] for b in batches for x in b[0]]
    for k, key in enumerate(keys):
        values = np.stack([s[k] for s in samples])
        s = stats[key]
        assert s.count == values.size
        # per sample vs batched (vmapped) matmuls may round the last bit differently
        close = {"rtol": 1e-5, "atol": 1e-6}
        np.testing.assert_allclose(
            [s.minimum, s.maximum], [values.min(), values.max()], **close
        )
        channels = values.reshape(-1, values.shape[-1])
        np.testing.assert_allclose(s.channel_min, channels.min(0), **close)
        np.testing.assert_allclose(s.channel_max, channels.max(0), **close)
        np.testing.assert_allclose(
            s.channel_mean, channels.mean(0), rtol=1e-4, atol=1e-5 * np.abs(channels).max()
        )
        per = [
            np.stack([smp[k] for smp in samples[i:j]]) for i, j in ((0, 4), (4, 8), (8, 11))
        ]
        np.testing.assert_allclose(s.batch_min, [p.min() for p in per], **close)
        np.testing.assert_allclose(s.batch_max, [p.max() for p in per], **close)
        start, width = np.float32(s.hist_start), np.float32(s.hist_width)
        index = np.clip(np.floor((values.astype(np.float32) - start) / width), 0, 255)
        expected = np.bincount(index.astype(np.int64).ravel(), minlength=256)
        assert np.abs(s.histogram - expected).sum() <= 2, key  # float rounding at edges
        assert s.histogram.sum() == values.size
        assert s.hist_start <= s.minimum and s.hist_start + 256 * s.hist_width >= s.maximum
        assert round(-s.hist_start / s.hist_width) * s.hist_width == pytest.approx(
            -s.hist_start
        )  # zero on an edge


def test_collect_statistics_two_passes(model: synapc.Model) -> None:
    batches = _batches((2, 2))
    stats = collect_statistics(model, batches, bins=64)
    ranges = collect_statistics(model, lambda: iter(batches), histograms=False)
    assert stats.keys() == ranges.keys()
    for key in stats:
        assert stats[key].minimum == ranges[key].minimum
        assert stats[key].histogram is not None and ranges[key].histogram is None
    with pytest.raises(SynapcError, match="input 'image'"):
        collect_statistics(model, [[np.zeros((2, 3, 64, 64), np.float32)]])
    with pytest.raises(SynapcError, match="no batches"):
        collect_statistics(model, [])


_SHARDED = textwrap.dedent(
    """
    import jax, numpy as np, synapc
    from synapc.quantization import collect_statistics
    assert len(jax.devices()) == 2
    model = synapc.optimize(synapc.import_model({model!r}))
    rng = np.random.default_rng(3)
    batches = [[rng.normal(size=(n, 1, 3, 64, 64)).astype(np.float32)] for n in (4, 3)]
    one = collect_statistics(model, batches, bins=128, devices=jax.devices()[:1])
    two = collect_statistics(model, batches, bins=128)
    for key in one:
        a, b = one[key], two[key]
        assert (a.count, a.minimum, a.maximum) == (b.count, b.minimum, b.maximum), key
        assert np.array_equal(a.channel_min, b.channel_min), key
        assert np.array_equal(a.channel_max, b.channel_max), key
        assert np.abs(a.histogram - b.histogram).sum() <= 2, key
    print("SHARDED OK")
    """
)


def test_sharded_over_two_devices_gives_the_same_statistics() -> None:
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", _SHARDED.format(model=str(MODEL))],
        capture_output=True, text=True, timeout=300, env=env, cwd=REPO,
    )  # fmt: skip
    assert "SHARDED OK" in result.stdout, result.stderr[-3000:]


def _histogram(x: np.ndarray, bins: int = 2048) -> qr.Histogram:
    start, width = qr.zero_aligned_edges(x.min(), x.max(), bins)
    index = np.clip(np.floor((x - start) / width), 0, bins - 1).astype(np.int64)
    return qr.Histogram(np.bincount(index, minlength=bins), start, width)


def _fake_quant_error(x: np.ndarray, low: float, high: float, levels: int) -> float:
    step = (high - low) / (levels - 1)
    q = np.clip(np.round((x - low) / step), 0, levels - 1) * step + low
    return float(np.mean((x - q) ** 2))


def test_uniform_ranges_reach_its_bounds() -> None:
    x = np.random.default_rng(0).uniform(-1.0, 3.0, 400_000)
    hist = _histogram(x)
    assert qr.minmax_range(x.min(), x.max()) == (x.min(), x.max())
    low, high = qr.percentile_range(hist, 99.99)
    assert low == pytest.approx(-1.0, abs=0.01) and high == pytest.approx(3.0, abs=0.01)
    low, high = qr.mse_range(hist, 256)
    assert low == pytest.approx(-1.0, rel=0.03) and high == pytest.approx(3.0, rel=0.03)
    low, high = qr.kl_divergence_range(_histogram(x[x > 0]), 256, symmetric=False)
    assert low == 0.0 and high > 2.7
    bound = qr.kl_divergence_range(hist, 256, symmetric=True)[1]
    assert 2.7 < bound <= 3.01


def test_outliers_are_clipped_and_mse_beats_minmax() -> None:
    rng = np.random.default_rng(1)
    # rare outliers: clipping them costs less squared error than the coarser steps
    x = np.concatenate([rng.normal(0, 1, 1_000_000), [30.0, -22.0, 25.0]])
    hist = _histogram(x)
    assert qr.minmax_range(x.min(), x.max(), symmetric=True) == (-30.0, 30.0)
    for low, high in (
        qr.percentile_range(hist, 99.99, symmetric=True),
        qr.percentile_range(hist, 99.99),
        qr.kl_divergence_range(hist, 256, symmetric=True),
        qr.mse_range(hist, 256, symmetric=True),
        qr.mse_range(hist, 256),
    ):
        assert 2.0 < high < 12.0 and -12.0 < low < -2.0
    mse = qr.mse_range(hist, 256)
    assert _fake_quant_error(x, *mse, 256) < 0.5 * _fake_quant_error(
        x, x.min(), x.max(), 256
    )


def test_magnitude_histogram_is_an_exact_fold() -> None:
    x = np.random.default_rng(2).normal(0.5, 1, 10_000)
    hist = _histogram(x, 512)
    folded = hist.magnitudes()
    direct = np.histogram(np.abs(x), bins=folded.counts.size, range=(0, folded.edges[-1]))[
        0
    ]
    assert folded.counts.sum() == x.size
    assert np.abs(folded.counts - direct).sum() <= 4  # values on an edge


def test_moving_average_formula() -> None:
    lows, highs = np.array([-1.0, -3.0, -2.0, -0.5]), np.array([1.0, 4.0, 2.0, 8.0])
    for momentum in (0.01, 0.5):
        ema = np.array([lows[0], highs[0]])
        for k in range(1, 4):
            ema = (1 - momentum) * ema + momentum * np.array([lows[k], highs[k]])
        got = qr.moving_average_range(lows, highs, momentum)
        np.testing.assert_allclose(got, ema)
    assert qr.moving_average_range(lows, highs, 0.5, symmetric=True)[0] < 0


def test_tensor_range_and_bad_options(model: synapc.Model) -> None:
    stats = collect_statistics(model, _batches((2,)), bins=512)
    relu = stats["op9.0"]  # pw3: conv + relu
    for algorithm in ("standard", "moving_average", "percentile", "kl_divergence", "mse"):
        low, high = tensor_range(relu, algorithm)
        assert low >= 0.0 and 0 < high <= relu.maximum + relu.hist_width
    assert tensor_range(relu, "percentile", {"percentile": 100})[1] >= relu.maximum
    bad = [
        ("histogram", None, "algorithm 'histogram' is unknown"),
        ("percentile", {"percentil": 99}, "'percentil' is not an option"),
        ("percentile", {"percentile": 150}, "must be a number in"),
        ("moving_average", {"momentum": 0}, "'momentum'"),
        ("moving_average", {"momentum": True}, "'momentum'"),
        ("mse", {"candidates": 1.5}, "'candidates'"),
        ("standard", {"bins": 10}, "'bins' is not an option"),
    ]
    for algorithm, options, message in bad:
        with pytest.raises(SynapcError, match=message):
            tensor_range(relu, algorithm, options)
    ranges = collect_statistics(model, _batches((1,)), histograms=False)
    with pytest.raises(SynapcError, match="no histogram"):
        tensor_range(ranges["op9.0"], "mse")


def test_non_finite_values_are_left_out(tmp_path: Path) -> None:
    """A tensor that holds infinities or NaNs (log of a ReLU's zeros, 0 * inf) switches
    the observer to its finite-only program; the statistics equal numpy's over the
    finite values, and the batch that revealed them is not counted twice."""
    from onnx import TensorProto, helper, save

    shape = [1, 8, 4, 4]
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("Log", ["r"], ["l"]),  # -inf where x <= 0
            helper.make_node("Mul", ["l", "r"], ["y"]),  # NaN there: -inf * 0
        ],
        "non_finite",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    path = tmp_path / "non_finite.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    model = synapc.optimize(synapc.import_model(str(path)))
    rng = np.random.default_rng(5)
    finite = [rng.uniform(0.5, 2.0, (3, *shape)).astype(np.float32)]
    mixed = [rng.normal(0, 1, (3, *shape)).astype(np.float32)]
    observer = Observer(model, bins=64)
    first = observer.ranges(finite)
    assert not observer.finite_only
    second = observer.ranges(mixed)
    assert observer.finite_only and observer.traces == 2
    stats = merge_statistics(first, second)
    run, params, keys = lower_observed(model.main, model.weights)
    samples = [
        [np.asarray(v) for v in run(params, x)] for b in (finite, mixed) for x in b[0]
    ]
    left_out = 0
    for k, key in enumerate(keys):
        values = np.stack([s[k] for s in samples])
        kept = values[np.isfinite(values)]
        left_out += values.size - kept.size
        s = stats[key]
        assert s.count == kept.size, key
        assert (s.minimum, s.maximum) == (kept.min(), kept.max()), key
        channels = np.moveaxis(values, -1, 0).reshape(values.shape[-1], -1)
        expected = [c[np.isfinite(c)].min() for c in channels]
        np.testing.assert_array_equal(s.channel_min, expected)
    assert left_out > 0  # the log's -inf and the product's NaN
