"""The fast exact paths of quantized convolutions and products, at their limits.

`backends/jax/ops/conv.py` sums quantized layers on the fastest path that is provably
exact (`_exact_accumulator`): int8 products on stored integers with the input's zero
point corrected afterwards, else float32 sums split into chunks of input channels that
keep every partial sum below 2**24. Here each path runs on inputs at the extremes of
their storage range (every product as large as the types allow), with reductions long
enough to need the chunks, against LiteRT's reference kernels (`BUILTIN_REF`): the
stored integers must be identical, on GENERIC and on VS680.

* int8 FULLY_CONNECTED with K = 4096 and CONV_2D 3x3 with SAME padding (the padding
  takes the input's zero point): int8 products, ``|sum| <= 4096 * 255 * 127``;
* uint8 FULLY_CONNECTED with K = 2048: float32 in 8 chunks (255 * 255 per product,
  258 products per chunk);
* uint8 CONV_2D 3x3 on 64 channels: float32 in 3 chunks of at most 28 channels;
* uint8 and int8 DEPTHWISE_CONV_2D: 9 taps, one float32 sum or int8 products.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synapc.testing.oracle import CaseGraph, check_case
from synapc.testing.tflite_builder import Quant

pytest.importorskip("ai_edge_litert.interpreter")


def _extremes(g: CaseGraph, shape: list[int], dtype: type) -> np.ndarray:
    """Stored integers at the two ends of `dtype`'s range, drawn at random."""
    info = np.iinfo(dtype)
    return g.rng.choice(np.array([info.min, info.max]), size=shape)


def _input(g: CaseGraph, shape: list[int], dtype: type, quant: Quant) -> int:
    q = _extremes(g, shape, dtype)
    return g.input(
        shape, dtype=dtype, value=quant.scale * (q - quant.zero_point), quant=quant
    )


def _case(op: str, dtype: type, x_shape: list[int], w_shape: list[int], **options):
    """One `op` layer with stored inputs and weights at their range's ends."""
    unsigned = dtype == np.uint8
    x_quant = Quant(0.02, 3 if unsigned else -128)
    w_quant = Quant(0.01, 251) if unsigned else Quant(0.01, 0)
    out_quant = Quant(4.0, 128 if unsigned else 0)

    def case(g: CaseGraph) -> None:
        x = _input(g, x_shape, dtype, x_quant)
        q = _extremes(g, w_shape, dtype)
        w = g.const(w_quant.scale * (q - w_quant.zero_point), dtype, w_quant)
        channels = w_shape[3] if op == "DEPTHWISE_CONV_2D" else w_shape[0]
        bias = g.const(g.rng.integers(-1000, 1000, channels), np.int32,
                       Quant(0.02 * 0.01, 0))  # fmt: skip
        g.output(g.op(op, [x, w, bias], dtype=dtype, quant=out_quant, **options))

    return case


_WINDOW = {"padding": "SAME", "stride_h": 1, "stride_w": 1}
CASES = {
    "fc-int8-k4096": _case("FULLY_CONNECTED", np.int8, [2, 4096], [16, 4096]),
    "conv-int8-3x3-same": _case(
        "CONV_2D", np.int8, [1, 6, 6, 200], [8, 3, 3, 200], **_WINDOW
    ),
    "fc-uint8-k2048": _case("FULLY_CONNECTED", np.uint8, [2, 2048], [16, 2048]),
    "conv-uint8-3x3-c64": _case(
        "CONV_2D", np.uint8, [1, 6, 6, 64], [8, 3, 3, 64], **_WINDOW
    ),
    **{
        f"depthwise-{np.dtype(dtype).name}": _case(
            "DEPTHWISE_CONV_2D",
            dtype,
            [1, 6, 6, 16],
            [1, 3, 3, 16],
            depth_multiplier=1,
            **_WINDOW,
        )
        for dtype in (np.uint8, np.int8)
    },
}


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
@pytest.mark.parametrize("name", list(CASES))
def test_exact_at_the_limits(tmp_path: Path, name: str, target: str) -> None:
    """Identical integers to LiteRT's reference kernels."""
    check_case(tmp_path, CASES[name], target=target)


# -- the accumulator itself, against int64 sums ------------------------------------------


def _worst_case(dtype: str, k: int, zp_x: int, zp_w: int) -> tuple[np.ndarray, ...]:
    """(x, w) stored integers whose products all have the largest magnitude, one sign
    and odd values: a float32 sum of them loses bits as soon as it passes 2**24."""
    info = np.iinfo(dtype)
    x = np.full((2, k), info.max, dtype)
    w = np.full((k, 3), info.min, dtype)
    w[:, 1] = info.max  # a second sign, and a column left as it is
    w[::7, 2] = zp_w
    return x, w


@pytest.mark.parametrize(
    ("storage", "zp_x", "zp_w", "k", "weight_zero_point"),
    [("u8", 2, 251, 2048, True), ("i8", -127, 0, 4096, False), ("i8", 3, 1, 1000, True)],
)
def test_accumulator_equals_int64_sums(
    storage: str, zp_x: int, zp_w: int, k: int, weight_zero_point: bool, monkeypatch
) -> None:
    """`_exact_accumulator` of a fully connected product equals numpy's int64 sum at the
    worst case; with the 2**24 bound lifted (one float32 sum), the uint8 case does not,
    which shows that the chunks are what keeps it exact."""
    import jax.numpy as jnp

    from synapc.backends.jax.ops import conv
    from synapc.dialects.quant import UniformQuantizedType

    qx = UniformQuantizedType.per_tensor(storage, 0.02, zp_x)
    qw = UniformQuantizedType.per_tensor(storage, 0.01, zp_w)
    x, w = _worst_case(np.dtype(np.uint8 if storage == "u8" else np.int8), k, zp_x, zp_w)
    wz = zp_w if weight_zero_point else 0
    want = (x.astype(np.int64) - zp_x) @ (w.astype(np.int64) - wz)
    reduction = conv.Reduction(1, k, conv._k_split)

    def linear(x: jnp.ndarray, w: jnp.ndarray, acc: type, pad_value: int = 0):
        return conv._matmul(x, w, acc)

    # int8 weights get their per-channel sums from the lowering (conv._weight_sums)
    sums = jnp.asarray(w.astype(np.int32).sum(axis=0)) if storage == "i8" else None

    def accumulate() -> np.ndarray:
        got = conv._exact_accumulator(
            linear,
            reduction,
            jnp.asarray(x),
            qx,
            jnp.asarray(w),
            qw,
            weight_zero_point,
            sums,
        )
        return np.asarray(got, np.int64)

    assert np.array_equal(accumulate(), want % 2**32 - (want % 2**32 >= 2**31) * 2**32)
    if storage == "u8":
        monkeypatch.setattr(conv, "_FLOAT32_EXACT", 1 << 40)
        assert not np.array_equal(accumulate(), want)
