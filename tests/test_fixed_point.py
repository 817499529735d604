"""backends/jax/fixed_point.py against the C++ it reproduces.

Every device-side function runs under ``jax.jit`` (with ``jax_enable_x64`` off) on edge
values and on 200,000 random values (int16 formats: on every int16 value) and must give the
same int32 results as a "spec": a straightforward numpy int64 transcription of the TFLite /
gemmlowp code written here (C-style truncating division, explicit wrap-around, the original
nudge and mask formulations). Host-side functions are checked against values from TFLite's
own unit tests and an exact rational-arithmetic spec. When ``ai_edge_litert`` is installed,
one-op models run by LiteRT's reference kernels (``OpResolverType.BUILTIN_REF``) check the
rounding build and the composed softmax / logistic / tanh paths end to end.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

import jax
import numpy as np
import pytest

from synapc.backends.jax import fixed_point as fp

N_RANDOM = 200_000
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
EXP_BARREL = [(-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
              (2, 39332535), (3, 720401), (4, 242)]  # fmt: skip


@pytest.fixture(autouse=True)
def _x64_is_off() -> None:
    """The backend must be exact without 64-bit JAX types."""
    assert not jax.config.jax_enable_x64


# ---------------------------------------------------------------------------------------
# Inputs and comparison
# ---------------------------------------------------------------------------------------


def edge_values(bits: int = 32) -> np.ndarray:
    """0, +-1, the extremes, and +-2**k, +-(2**k - 1), +-(2**k + 1) within ``bits``."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    vals = {0, 1, -1, lo, lo + 1, hi, hi - 1}
    for k in range(bits - 1):
        p = 1 << k
        vals |= {p, -p, p - 1, 1 - p, p + 1, -p - 1}
    return np.array(sorted(v for v in vals if lo <= v <= hi), np.int64)


def random_values(rng: np.random.Generator, n: int, bits: int = 32) -> np.ndarray:
    """Half uniform over the whole range, half with log-uniform magnitudes (random bit
    lengths), so that small values and every scale between are well covered."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    uniform = rng.integers(lo, hi, size=n // 2, endpoint=True)
    lengths = rng.integers(0, bits, size=n - n // 2)
    mags = (rng.random(n - n // 2) * (2.0**lengths)).astype(np.int64)
    signs = rng.choice(np.array([-1, 1]), size=n - n // 2)
    return np.clip(np.concatenate([uniform, mags * signs]), lo, hi)


def pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All combinations of two value sets, flattened."""
    x, y = np.meshgrid(a, b, indexing="ij")
    return x.ravel(), y.ravel()


@functools.cache
def jitted(fn: Callable, **static: object) -> Callable:
    """``jax.jit`` of ``fn`` with its static keyword arguments bound (compiled once)."""
    return jax.jit(functools.partial(fn, **static))


def assert_same(got: object, want: np.ndarray, *inputs: np.ndarray) -> None:
    """int32 results identical to the spec; on failure, name the first differing inputs."""
    got = np.asarray(got)
    assert got.dtype == np.int32, got.dtype
    want = np.asarray(want, np.int64)
    got64 = np.broadcast_to(got.astype(np.int64), want.shape)
    bad = np.flatnonzero(got64 != want)
    if bad.size:
        i = bad[0]
        args = [np.broadcast_to(np.asarray(a), want.shape).ravel()[i] for a in inputs]
        pytest.fail(
            f"{bad.size} of {want.size} differ; first at inputs {args}: "
            f"got {got64.ravel()[i]}, want {want.ravel()[i]}"
        )


# ---------------------------------------------------------------------------------------
# Specs: int64 numpy transcriptions of the C++
# ---------------------------------------------------------------------------------------


def wrap(v: np.ndarray, bits: int = 32) -> np.ndarray:
    """What a C++ cast of an int64 value to int{bits}_t gives (two's complement)."""
    half = 1 << (bits - 1)
    return ((np.asarray(v, np.int64) + half) & ((1 << bits) - 1)) - half


def c_div(n: np.ndarray, d: int) -> np.ndarray:
    """C++ integer division: truncates toward zero."""
    q = np.abs(n) // d
    return np.where(n < 0, -q, q)


def spec_srdhm(a: np.ndarray, b: np.ndarray, bits: int = 32) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul: wide product, nudge, truncating
    division."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << (bits - 2), 1 - (1 << (bits - 2)))
    res = c_div(ab + nudge, 1 << (bits - 1))
    lo = -(1 << (bits - 1))
    return np.where((a == b) & (a == lo), -lo - 1, res)


def spec_rdbpot(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """RoundingDivideByPOT as arithmetic: x / 2**e to nearest, ties away from zero."""
    x, e = np.broadcast_arrays(np.asarray(x, np.int64), np.asarray(e, np.int64))
    half = np.where(e > 0, np.left_shift(1, np.maximum(e - 1, 0)), 0)
    q = (np.abs(x) + half) >> e
    return np.where(x < 0, -q, q)


def spec_mbqm_double(x: np.ndarray, m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """MultiplyByQuantizedMultiplier, default build: SRDHM(x * 2**left, m) then RDBPOT."""
    x, m, s = (np.asarray(v, np.int64) for v in (x, m, s))
    shifted = wrap(np.left_shift(x, np.maximum(s, 0)))
    return spec_rdbpot(spec_srdhm(shifted, m), np.maximum(-s, 0))


def spec_mbqm_single(x: np.ndarray, m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """MultiplyByQuantizedMultiplier, TFLITE_SINGLE_ROUNDING: (x*m + round) >> (31-s)."""
    x, m, s = (np.asarray(v, np.int64) for v in (x, m, s))
    t = 31 - s
    return wrap((x * m + np.left_shift(1, t - 1)) >> t)


def spec_mbqm_int64(x: np.ndarray, m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """MultiplyByQuantizedMultiplier(int64_t x, ...): 16-bit reduced multiplier, one
    rounding shift."""
    x, m, s = (np.asarray(v, np.int64) for v in (x, m, s))
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    t = 15 - s
    return wrap((x * reduced + np.left_shift(1, t - 1)) >> t)


class FixedPointSpec:
    """gemmlowp ``FixedPoint<int{bits}_t, N>`` raw arithmetic on int64 arrays: ``+ - neg``
    cast back to the raw type (wrapping), ``*`` is SaturatingRoundingDoublingHighMul."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.max = (1 << (bits - 1)) - 1
        self.min = -(1 << (bits - 1))

    def wrap(self, v: np.ndarray) -> np.ndarray:
        return wrap(v, self.bits)

    def mul(self, a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
        return spec_srdhm(a, b, self.bits)

    def rdbpot(self, x: np.ndarray, e: int) -> np.ndarray:
        """gemmlowp's mask / threshold formulation, literally."""
        mask = (1 << e) - 1
        remainder = x & mask
        threshold = (mask >> 1) + (x < 0)
        return (x >> e) + (remainder > threshold)

    def pot(self, x: np.ndarray, e: int) -> np.ndarray:
        """SaturatingRoundingMultiplyByPOT<e>."""
        if e == 0:
            return x
        if e < 0:
            return self.rdbpot(x, -e)
        threshold = (1 << (self.bits - 1 - e)) - 1
        res = self.wrap(x * (1 << e))
        res = np.where(x > threshold, self.max, res)
        return np.where(x < -threshold, self.min, res)

    def const(self, raw32: int) -> int:
        """RescaleConstantInitializer: int32 constant, rounding-shifted for int16."""
        if self.bits == 32:
            return raw32
        return int(self.rdbpot(np.int64(raw32), 16))

    def one(self, integer_bits: int) -> int:
        return self.max if integer_bits == 0 else 1 << (self.bits - 1 - integer_bits)

    def half_sum(self, a: np.ndarray, b: int) -> np.ndarray:
        total = a + b
        return c_div(total + np.where(total >= 0, 1, -1), 2)

    def exp_quarter(self, a: np.ndarray) -> np.ndarray:
        c, third = self.const(1895147668), self.const(715827883)
        x = self.wrap(a + (1 << (self.bits - 4)))
        x2 = self.mul(x, x)
        x3 = self.mul(x2, x)
        x4 = self.mul(x2, x2)
        x4_over_4 = self.pot(x4, -2)
        poly = self.pot(self.wrap(self.mul(self.wrap(x4_over_4 + x3), third) + x2), -1)
        t = self.mul(c, self.wrap(x + poly))
        return np.clip(c + t, self.min, self.max) if self.bits == 16 else self.wrap(c + t)

    def exp_neg(self, a: np.ndarray, ib: int) -> np.ndarray:
        fb = self.bits - 1 - ib
        quarter = 1 << (fb - 2)
        amq = self.wrap((a & (quarter - 1)) - quarter)
        result = self.exp_quarter(self.pot(amq, ib))
        remainder = self.wrap(amq - a)
        for exponent, raw in EXP_BARREL:
            if ib > exponent:
                hit = (remainder & (1 << (fb + exponent))) != 0
                result = np.where(hit, self.mul(result, self.const(raw)), result)
        if ib > 5:
            result = np.where(a < self.const(-(1 << (36 - ib))), 0, result)
        return np.where(a == 0, self.one(0), result)

    def _newton(self, half_den: np.ndarray) -> np.ndarray:
        x = self.wrap(self.const(1515870810) + self.mul(half_den, self.const(-1010580540)))
        for _ in range(3):
            omx = self.wrap(self.one(2) - self.mul(half_den, x))
            x = self.wrap(x + self.pot(self.mul(x, omx), 2))
        return x

    def one_over_one_plus_x(self, a: np.ndarray) -> np.ndarray:
        return self.pot(self._newton(self.half_sum(a, self.one(0))), 1)

    def one_minus_x_over_one_plus_x(self, a: np.ndarray) -> np.ndarray:
        x = self._newton(self.half_sum(a, self.one(0)))
        return self.pot(self.wrap(x - self.one(2)), 2)

    def logistic(self, a: np.ndarray, ib: int) -> np.ndarray:
        positive = a > 0
        abs_in = np.where(positive, a, self.wrap(-a))
        r = self.one_over_one_plus_x(self.exp_neg(self.wrap(-abs_in), ib))
        out = np.where(positive, r, self.wrap(self.one(0) - r))
        return np.where(a == 0, self.const(1 << 30), out)

    def tanh(self, a: np.ndarray, ib: int) -> np.ndarray:
        negative = a < 0
        n = np.where(negative, a, self.wrap(-a))
        t = self.one_minus_x_over_one_plus_x(self.exp_neg(n, ib + 1))
        return np.where(a == 0, 0, np.where(negative, self.wrap(-t), t))


def bit_length(u: np.ndarray) -> np.ndarray:
    """Bits needed for non-negative integers below 2**53 (exact through frexp)."""
    return np.frexp(np.asarray(u, np.float64))[1].astype(np.int64)


def spec_get_reciprocal(x: np.ndarray, digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite GetReciprocal: count leading zeros, normalise, 1 / (1 + f)."""
    u = np.asarray(x, np.int64) & 0xFFFFFFFF
    clz = 32 - bit_length(u)
    shifted = wrap(((u << clz) & 0xFFFFFFFF) - (1 << 31))
    return FixedPointSpec(32).one_over_one_plus_x(shifted), digits - clz


# ---------------------------------------------------------------------------------------
# gemmlowp primitives
# ---------------------------------------------------------------------------------------


def test_saturating_rounding_doubling_high_mul_int32() -> None:
    rng = np.random.default_rng(1)
    edges = edge_values()
    a, b = pairs(edges, edges)
    a = np.concatenate([a, random_values(rng, N_RANDOM)])
    b = np.concatenate([b, random_values(rng, N_RANDOM)])
    got = jitted(fp.saturating_rounding_doubling_high_mul)(a, b)
    assert_same(got, spec_srdhm(a, b), a, b)
    # The saturating case and a tie in each direction.
    assert int(fp.saturating_rounding_doubling_high_mul(I32_MIN, I32_MIN)) == I32_MAX
    assert int(fp.saturating_rounding_doubling_high_mul(3, 1 << 30)) == 2  # 1.5 -> 2
    assert int(fp.saturating_rounding_doubling_high_mul(-3, 1 << 30)) == -1  # -1.5 -> -1


def test_saturating_rounding_doubling_high_mul_int16() -> None:
    rng = np.random.default_rng(2)
    edges = edge_values(16)
    a, b = pairs(edges, edges)
    a = np.concatenate([a, random_values(rng, N_RANDOM, 16)])
    b = np.concatenate([b, random_values(rng, N_RANDOM, 16)])
    got = jitted(fp.saturating_rounding_doubling_high_mul, raw_bits=16)(a, b)
    assert_same(got, spec_srdhm(a, b, 16), a, b)


def test_rounding_divide_by_pot() -> None:
    rng = np.random.default_rng(3)
    x, e = pairs(edge_values(), np.arange(32))
    x = np.concatenate([x, random_values(rng, N_RANDOM)])
    e = np.concatenate([e, rng.integers(0, 32, N_RANDOM)])
    got = jitted(fp.rounding_divide_by_pot)(x, e)
    assert_same(got, spec_rdbpot(x, e), x, e)
    assert_same(got, FixedPointSpec(32).rdbpot(x, e), x, e)  # the mask formulation too
    assert [int(fp.rounding_divide_by_pot(v, 1)) for v in (3, -3, 5, -5)] == [2, -2, 3, -3]


@pytest.mark.parametrize("exponent", [-31, -20, -3, -1, 0, 1, 2, 7, 19, 30, 31])
def test_saturating_rounding_multiply_by_pot_int32(exponent: int) -> None:
    rng = np.random.default_rng(40 + exponent)
    x = np.concatenate([edge_values(), random_values(rng, N_RANDOM // 10)])
    got = jitted(fp.saturating_rounding_multiply_by_pot, exponent=exponent)(x)
    assert_same(got, FixedPointSpec(32).pot(x, exponent), x)


@pytest.mark.parametrize("exponent", [-15, -2, 1, 3, 15])
def test_saturating_rounding_multiply_by_pot_int16(exponent: int) -> None:
    x = np.arange(-32768, 32768)
    got = jitted(fp.saturating_rounding_multiply_by_pot, exponent=exponent, raw_bits=16)(x)
    assert_same(got, FixedPointSpec(16).pot(x, exponent), x)


def test_saturating_rounding_multiply_by_pot_param() -> None:
    rng = np.random.default_rng(5)
    x, e = pairs(edge_values(), np.arange(32))
    x = np.concatenate([x, random_values(rng, N_RANDOM)])
    e = np.concatenate([e, rng.integers(0, 32, N_RANDOM)])
    spec = FixedPointSpec(32)
    want = np.empty_like(x)
    for k in range(32):
        sel = e == k
        want[sel] = spec.pot(x[sel], k)
    assert_same(jitted(fp.saturating_rounding_multiply_by_pot_param)(x, e), want, x, e)


def test_rescale_is_a_pot_multiply() -> None:
    x = np.concatenate([edge_values(), random_values(np.random.default_rng(6), N_RANDOM)])
    spec = FixedPointSpec(32)
    assert_same(
        jitted(fp.rescale, src_integer_bits=0, dst_integer_bits=12)(x), spec.pot(x, -12)
    )
    assert_same(
        jitted(fp.rescale, src_integer_bits=5, dst_integer_bits=0)(x), spec.pot(x, 5)
    )


def test_rounding_half_sum() -> None:
    rng = np.random.default_rng(7)
    a, b = pairs(edge_values(), edge_values())
    a = np.concatenate([a, random_values(rng, N_RANDOM)])
    b = np.concatenate([b, random_values(rng, N_RANDOM)])
    total = a + b
    want = c_div(total + np.where(total >= 0, 1, -1), 2)
    assert_same(jitted(fp.rounding_half_sum)(a, b), want, a, b)


# ---------------------------------------------------------------------------------------
# MultiplyByQuantizedMultiplier
# ---------------------------------------------------------------------------------------

MULTIPLIER_EDGES = np.array(
    [
        0,
        1,
        2,
        3,
        (1 << 15) - 1,
        1 << 15,
        1 << 29,
        (1 << 30) - 1,
        1 << 30,
        (1 << 30) + 1,
        1518500250,
        (1 << 31) - 3,
        (1 << 31) - 2,
        (1 << 31) - 1,
    ]
)


def mbqm_cases(
    rng: np.random.Generator, shifts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (edge x, edge multiplier, shift) plus random triples with the given shifts."""
    grid = np.meshgrid(edge_values(), MULTIPLIER_EDGES, shifts, indexing="ij")
    x, m, s = (g.ravel() for g in grid)
    rx = random_values(rng, N_RANDOM)
    rm = np.where(
        rng.random(N_RANDOM) < 0.75,
        rng.integers(1 << 30, 1 << 31, N_RANDOM),  # what QuantizeMultiplier produces
        rng.integers(0, 1 << 31, N_RANDOM),
    )
    rs = rng.choice(shifts, N_RANDOM)
    return np.concatenate([x, rx]), np.concatenate([m, rm]), np.concatenate([s, rs])


def test_mbqm_double_rounding() -> None:
    x, m, s = mbqm_cases(np.random.default_rng(10), np.arange(-31, 31))
    got = jitted(fp.multiply_by_quantized_multiplier_double_rounding)(x, m, s)
    assert_same(got, spec_mbqm_double(x, m, s), x, m, s)
    got = jitted(fp.multiply_by_quantized_multiplier, rounding="double")(x, m, s)
    assert_same(got, spec_mbqm_double(x, m, s), x, m, s)


def test_mbqm_single_rounding() -> None:
    x, m, s = mbqm_cases(np.random.default_rng(11), np.arange(-31, 31))
    got = jitted(fp.multiply_by_quantized_multiplier_single_rounding)(x, m, s)
    assert_same(got, spec_mbqm_single(x, m, s), x, m, s)
    got = jitted(fp.multiply_by_quantized_multiplier, rounding="single")(x, m, s)
    assert_same(got, spec_mbqm_single(x, m, s), x, m, s)


def test_mbqm_builds_differ_only_in_rounding() -> None:
    """-10 * 1/4 = -2.5: single rounding sends ties up, double rounding's final shift away
    from zero. With shift >= 0 both round ties up (the doubling high multiply does)."""
    quarter, shift = fp.quantize_multiplier(0.25)
    assert (
        int(fp.multiply_by_quantized_multiplier_single_rounding(-10, quarter, shift)) == -2
    )
    assert (
        int(fp.multiply_by_quantized_multiplier_double_rounding(-10, quarter, shift)) == -3
    )
    assert int(fp.multiply_by_quantized_multiplier(10, quarter, shift)) == 3
    half, shift = fp.quantize_multiplier(0.5)
    assert int(fp.multiply_by_quantized_multiplier_double_rounding(-5, half, shift)) == -2
    assert fp.DEFAULT_ROUNDING == "double"


@pytest.mark.parametrize("rounding", ["double", "single"])
def test_mbqm_smaller_than_one_exp(rounding: str) -> None:
    x, m, s = mbqm_cases(np.random.default_rng(12), np.arange(-31, 1))
    fn = jitted(fp.multiply_by_quantized_multiplier_smaller_than_one_exp, rounding=rounding)
    if rounding == "double":  # RDBPOT(SRDHM(x, m), -shift), literally
        want = spec_rdbpot(spec_srdhm(x, m), -s)
    else:
        want = spec_mbqm_single(x, m, s)
    assert_same(fn(x, m, s), want, x, m, s)


@pytest.mark.parametrize("rounding", ["double", "single"])
def test_mbqm_greater_than_one(rounding: str) -> None:
    x, m, s = mbqm_cases(np.random.default_rng(13), np.arange(0, 31))
    fn = jitted(fp.multiply_by_quantized_multiplier_greater_than_one, rounding=rounding)
    if rounding == "double":  # SRDHM(x * 2**shift, m), literally
        want = spec_srdhm(wrap(np.left_shift(x, s)), m)
    else:
        want = spec_mbqm_single(x, m, s)
    assert_same(fn(x, m, s), want, x, m, s)


def test_mbqm_per_channel_broadcasting() -> None:
    rng = np.random.default_rng(14)
    x = random_values(rng, 4096).reshape(512, 8)
    m = rng.integers(1 << 30, 1 << 31, 8)
    s = rng.integers(-20, 5, 8)
    got = jitted(fp.multiply_by_quantized_multiplier)(x, m, s)
    assert got.shape == (512, 8)
    assert_same(got, spec_mbqm_double(x, m[None, :], s[None, :]))


def test_mbqm_int64() -> None:
    rng = np.random.default_rng(15)
    big = [0, 1, -1, 2**31, -(2**31), 2**32 - 1, 2**32, -(2**32), 2**47 - 1, -(2**47),
           12345678901234, -98765432109876]  # fmt: skip
    x64 = np.array(sorted(set(big) | set(edge_values().tolist())), np.int64)
    grid = np.meshgrid(x64, MULTIPLIER_EDGES, np.arange(-31, 8), indexing="ij")
    x, m, s = (g.ravel() for g in grid)
    m = np.concatenate([m, [0x7FFEFFFF, 0x7FFF0000, 0x7FFF8000]])  # reduction boundary
    x = np.concatenate([x, [3 << 40, -(3 << 40), 2**47 - 1]])
    s = np.concatenate([s, [-10, -20, 0]])
    rx = np.where(
        rng.random(N_RANDOM) < 0.5,
        rng.integers(-(2**47), 2**47, N_RANDOM),
        rng.integers(-(2**31), 2**31, N_RANDOM),
    )
    x = np.concatenate([x, rx])
    m = np.concatenate([m, rng.integers(0, 1 << 31, N_RANDOM)])
    s = np.concatenate([s, rng.integers(-31, 8, N_RANDOM)])
    hi, lo = fp.split_int64(x)
    got = jitted(fp.multiply_by_quantized_multiplier_int64)(hi, lo, m, s)
    assert_same(got, spec_mbqm_int64(x, m, s), x, m, s)


def test_int64_pairs() -> None:
    rng = np.random.default_rng(16)
    a = rng.integers(-(2**62), 2**62, N_RANDOM)
    b = rng.integers(-(2**62), 2**62, N_RANDOM)
    hi, lo = jitted(fp.int64_pair_add)(*fp.split_int64(a), *fp.split_int64(b))
    want_hi, want_lo = fp.split_int64(a + b)
    np.testing.assert_array_equal(np.asarray(hi), want_hi)
    np.testing.assert_array_equal(np.asarray(lo), want_lo)
    v = random_values(rng, N_RANDOM)
    hi, lo = jitted(fp.int64_pair_from_int32)(v)
    want_hi, want_lo = fp.split_int64(v)
    np.testing.assert_array_equal(np.asarray(hi), want_hi)
    np.testing.assert_array_equal(np.asarray(lo), want_lo)


# ---------------------------------------------------------------------------------------
# gemmlowp fixed-point math
# ---------------------------------------------------------------------------------------


def fixed_point_inputs(seed: int, bits: int = 32) -> np.ndarray:
    """Every int16 value, or int32 edges plus random values (half of them <= 0)."""
    if bits == 16:
        return np.arange(-32768, 32768, dtype=np.int64)
    rng = np.random.default_rng(seed)
    r = random_values(rng, N_RANDOM)
    r[: N_RANDOM // 2] = -np.abs(r[: N_RANDOM // 2])
    return np.concatenate([edge_values(), r])


def test_exp_barrel_constants_are_exp_of_minus_powers_of_two() -> None:
    """The raw Q0.31 constants are exp(-2**k) (what GEMMLOWP_CHECKED_FIXEDPOINT_CONSTANT
    asserts), and the module uses the same ones as this spec."""
    assert [(e, r) for e, r in fp._EXP_BARREL] == EXP_BARREL
    for exponent, raw in EXP_BARREL:
        assert abs(raw - math.exp(-(2.0**exponent)) * 2**31) <= 1


EXP_FORMATS = [(32, 0), (32, 1), (32, 4), (32, 5), (32, 6), (32, 12), (32, 29), (16, 3),
               (16, 4), (16, 6)]  # fmt: skip


@pytest.mark.parametrize(("bits", "integer_bits"), EXP_FORMATS)
def test_exp_on_negative_values(bits: int, integer_bits: int) -> None:
    a = fixed_point_inputs(100 + integer_bits, bits)
    fn = jitted(fp.exp_on_negative_values, integer_bits=integer_bits, raw_bits=bits)
    assert_same(fn(a), FixedPointSpec(bits).exp_neg(a, integer_bits), a)


@pytest.mark.parametrize("bits", [32, 16])
def test_exp_on_interval_between_negative_one_quarter_and_0_excl(bits: int) -> None:
    a = fixed_point_inputs(200, bits)
    fn = jitted(fp.exp_on_interval_between_negative_one_quarter_and_0_excl, raw_bits=bits)
    assert_same(fn(a), FixedPointSpec(bits).exp_quarter(a), a)


@pytest.mark.parametrize("bits", [32, 16])
def test_one_over_one_plus_x_for_x_in_0_1(bits: int) -> None:
    a = fixed_point_inputs(300, bits)
    fn = jitted(fp.one_over_one_plus_x_for_x_in_0_1, raw_bits=bits)
    assert_same(fn(a), FixedPointSpec(bits).one_over_one_plus_x(a), a)


@pytest.mark.parametrize("bits", [32, 16])
def test_one_minus_x_over_one_plus_x_for_x_in_0_1(bits: int) -> None:
    a = fixed_point_inputs(400, bits)
    fn = jitted(fp.one_minus_x_over_one_plus_x_for_x_in_0_1, raw_bits=bits)
    assert_same(fn(a), FixedPointSpec(bits).one_minus_x_over_one_plus_x(a), a)


@pytest.mark.parametrize(("bits", "integer_bits"), [(32, 0), (32, 4), (32, 8), (16, 3)])
def test_logistic(bits: int, integer_bits: int) -> None:
    a = fixed_point_inputs(500 + integer_bits, bits)
    fn = jitted(fp.logistic, integer_bits=integer_bits, raw_bits=bits)
    assert_same(fn(a), FixedPointSpec(bits).logistic(a, integer_bits), a)


@pytest.mark.parametrize(("bits", "integer_bits"), [(32, 0), (32, 4), (32, 8), (16, 3)])
def test_tanh(bits: int, integer_bits: int) -> None:
    a = fixed_point_inputs(600 + integer_bits, bits)
    fn = jitted(fp.tanh, integer_bits=integer_bits, raw_bits=bits)
    assert_same(fn(a), FixedPointSpec(bits).tanh(a, integer_bits), a)


def test_fixed_point_math_is_accurate() -> None:
    """Sanity against float math: the specs above are transcriptions, this is the
    meaning."""
    x = np.linspace(-7.9, 7.9, 1001)
    raw = np.round(x * 2**27).astype(np.int64)  # Q4.27
    logistic = np.asarray(jitted(fp.logistic, integer_bits=4)(raw)) / 2**31
    tanh = np.asarray(jitted(fp.tanh, integer_bits=4)(raw)) / 2**31
    np.testing.assert_allclose(logistic, 1 / (1 + np.exp(-raw / 2**27)), atol=2e-6)
    np.testing.assert_allclose(tanh, np.tanh(raw / 2**27), atol=4e-6)
    neg = -np.abs(raw)
    exp = np.asarray(jitted(fp.exp_on_negative_values, integer_bits=4)(neg)) / 2**31
    np.testing.assert_allclose(exp, np.exp(neg / 2**27), atol=2e-6)


def test_get_reciprocal() -> None:
    rng = np.random.default_rng(700)
    edges = edge_values()
    x = np.concatenate([edges[edges > 0], rng.integers(1, 1 << 31, N_RANDOM)])
    scale, bits = jitted(fp.get_reciprocal, x_integer_digits=12)(x)
    want_scale, want_bits = spec_get_reciprocal(x, 12)
    assert_same(scale, want_scale, x)
    assert_same(bits, want_bits, x)
    # Meaning: 1 / (x / 2**19) ~ scale / 2**31 / 2**bits (Q12.19 input).
    approx = np.asarray(scale, np.float64) / 2**31 / 2.0 ** np.asarray(bits, np.float64)
    np.testing.assert_allclose(approx, 2**19 / x, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# Lookup tables and the int16 LOGISTIC / TANH kernels
# ---------------------------------------------------------------------------------------


def test_lut_lookup_int16_interpolates_with_int16_wrap() -> None:
    rng = np.random.default_rng(800)
    lut = rng.integers(-32768, 32768, 513)
    v = np.arange(-32768, 32768, dtype=np.int64)
    index = 256 + (v >> 7)
    base = lut[index]
    slope = wrap(lut[index + 1] - base, 16)
    want = wrap(base + ((slope * (v & 0x7F) + 64) >> 7), 16)
    assert_same(jitted(fp.lut_lookup_int16)(v, lut), want, v)


def test_lut_lookup_int8_indexes_by_uint8_bits() -> None:
    lut = np.arange(256) * 3 - 300
    v = np.arange(-128, 128)
    assert_same(jitted(fp.lut_lookup_int8)(v, lut), lut[v & 0xFF], v)


def spec_int16_lut_input(x: np.ndarray, im: int, ls: int) -> np.ndarray:
    if im == 0:
        im, ls = 3 << ls, 0
    return (x * im + ((1 << (ls - 1)) if ls > 0 else 0)) >> ls


def spec_logistic_int16(x: np.ndarray, im: int, ls: int) -> np.ndarray:
    """reference_integer_ops::Logistic(int16) in uint32 arithmetic (masked int64)."""
    d = spec_int16_lut_input(x, im, ls)
    a = np.abs(d)
    uh = a >> 9
    t = fp.SIGMOID_TABLE_UINT16.astype(np.int64)
    idx = np.minimum(uh, 254)
    ua, ub = t[idx], t[idx + 1]
    result = np.where(uh >= 255, 0x7FFF << 10, (ua << 9) + (a & 0x1FF) * (ub - ua))
    result = np.where(d >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1)
    return wrap((result & 0xFFFFFFFF) >> 10, 16)


def spec_tanh_int16(x: np.ndarray, im: int, ls: int) -> np.ndarray:
    """reference_integer_ops::Tanh(int16), with the same integer types as the C++."""
    d = spec_int16_lut_input(x, im, ls)
    a = np.abs(d)
    uh = a >> 8
    t = fp.SIGMOID_TABLE_UINT16.astype(np.int64)
    idx = np.minimum(uh, 254)
    ua, ub = t[idx], t[idx + 1]
    result = np.where(uh >= 255, 0xFFFF << 8, (ua << 8) + (a & 0xFF) * (ub - ua))
    result = np.where(
        d >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1
    )
    return wrap(result >> 8, 16)


INT16_ACTIVATION_SCALES = [2.0**-12, 2.0**-11, 2.0**-13, 1 / 3000, 1e-4, 3.7e-4, 0.01, 1e-6]


@pytest.mark.parametrize("scale", INT16_ACTIVATION_SCALES)
def test_logistic_and_tanh_int16(scale: float) -> None:
    x = np.arange(-32768, 32768, dtype=np.int64)
    im, ls = fp.int16_logistic_tanh_params(scale, tanh=False)
    got = jitted(fp.logistic_int16, input_multiplier=im, input_left_shift=ls)(x)
    assert_same(got, spec_logistic_int16(x, im, ls), x)
    im, ls = fp.int16_logistic_tanh_params(scale, tanh=True)
    got = jitted(fp.tanh_int16, input_multiplier=im, input_left_shift=ls)(x)
    assert_same(got, spec_tanh_int16(x, im, ls), x)


def test_int16_logistic_tanh_params() -> None:
    """Prepare-time parameters (values checked against LiteRT below and in development)."""
    params = fp.int16_logistic_tanh_params
    assert params(2.0**-12, tanh=False) == (0, 0)
    assert params(2.0**-12, tanh=True) == (0, 0)
    assert params(2.0**-11, tanh=True) == (0, 1)
    assert params(2.0**-11, tanh=False) == (24576, 12)
    assert params(2.0**-13, tanh=True) == (24576, 14)
    assert params(float(np.float32(1 / 3000)), tanh=True) == (16777, 12)
    assert params(float(np.float32(1e-4)), tanh=False) == (20132, 14)
    assert params(float(np.float32(1e-6)), tanh=False) == (25769, 21)
    assert fp.checked_log2(0.5) == (-1, True)
    assert fp.checked_log2(0.3) == (-2, False)
    assert fp.checked_log2(0.0) == (0, False)


def test_sigmoid_table() -> None:
    t = fp.SIGMOID_TABLE_UINT16
    assert t.shape == (256,) and t[0] == 32768 and t[-1] == 65535
    assert np.all(np.diff(t) >= 0)
    i = np.arange(256)
    assert np.max(np.abs(t - 65536 / (1 + np.exp(-i / 24)))) < 1.5


def spec_lut_populate_int16(
    s_in: float, zp_in: int, s_out: float, zp_out: int, f: Callable, ft: type
) -> np.ndarray:
    """LUTPopulateInt16, one entry at a time with numpy scalars of the C++ FloatT."""

    def rnd(v: object) -> object:  # std::round, exactly
        exact = Fraction(float(v))
        return ft(math.floor(abs(exact) + Fraction(1, 2)) * (1 if exact >= 0 else -1))

    input_min = ft(s_in) * ft(-32768 - zp_in)
    input_max = ft(s_in) * ft(32767 - zp_in)
    output_min = ft(s_out) * ft(-32768 - zp_out)
    output_max = ft(s_out) * ft(32767 - zp_out)
    step = (input_max - input_min) / ft(512)
    half_step = step / ft(2)
    inv = ft(65536) / (output_max - output_min)
    out = []
    for i in range(512):
        val = f(input_min + ft(i) * step)
        val_mid = f(input_min + ft(i) * step + half_step)
        val_next = f(input_min + ft(i + 1) * step)
        sample = rnd(val * inv)
        interp = rnd((val_next * inv + rnd(val * inv)) / ft(2))
        bias = rnd((interp - rnd(val_mid * inv)) / ft(2))
        out.append(min(max(sample - bias, -32768), 32767))
    out.append(min(max(rnd(f(input_max) * inv), -32768), 32767))
    return np.array(out, np.int64)


def test_lut_populate_int16_matches_scalar_transcription() -> None:
    def exp64(v: np.float64) -> np.float64:
        return np.float64(math.exp(v))

    want = spec_lut_populate_int16(10.0 / 65535, 32767, 2.0 / 65535, 0, exp64, np.float64)
    got = fp.lut_populate_int16(
        10.0 / 65535,
        32767,
        2.0 / 65535,
        0,
        fp.exp_lut_transform_f64,
        float_dtype=np.float64,
    )
    np.testing.assert_array_equal(got, want)

    def logistic32(v: np.float32) -> np.float32:
        return np.float32(1) / (np.float32(1) + fp.expf(np.float32(-v)))

    want = spec_lut_populate_int16(0.0003, 0, 1 / 32768, 0, logistic32, np.float32)
    got = fp.lut_populate_int16(0.0003, 0, 1 / 32768, 0, fp.logistic_lut_transform)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------
# Host side: QuantizeMultiplier and friends
# ---------------------------------------------------------------------------------------


def spec_quantize_multiplier(real: float, rounding: str) -> tuple[int, int]:
    """QuantizeMultiplier in exact rational arithmetic (frexp, round half away)."""
    if real == 0:
        return 0, 0
    q, shift = math.frexp(real)
    scaled = Fraction(q) * 2**31
    q_fixed = math.floor(abs(scaled) + Fraction(1, 2)) * (1 if q > 0 else -1)
    if q_fixed == 2**31:
        q_fixed, shift = q_fixed // 2, shift + 1
    if shift < -31:
        q_fixed, shift = 0, 0
    if rounding == "single" and shift > 30:
        q_fixed, shift = 2**31 - 1, 30
    return q_fixed, shift


def as_pair(result: tuple[np.ndarray, np.ndarray]) -> tuple[int, int]:
    return int(result[0]), int(result[1])


@pytest.mark.parametrize(
    ("real", "expected"),
    [
        (0.5, (1073741824, 0)),
        (1.0, (1073741824, 1)),
        (0.25, (1073741824, -1)),
        (0.75, (1610612736, 0)),
        (3.0, (1610612736, 2)),
        (0.1, (1717986918, -3)),
        (-0.5, (-1073741824, 0)),
        (0.0, (0, 0)),
        (1 - 2.0**-40, (1073741824, 1)),  # the mantissa rounds up to 2**31
        # From TFLite's quantization_util_test.cc (QuantizeMultiplierUnderflow):
        (2.0**-31, (1073741824, -30)),
        (2.0**-32, (1073741824, -31)),
        (float(np.float32(0.99)) * 2.0**-32, (0, 0)),
        (2.0**-33, (0, 0)),
    ],
)
def test_quantize_multiplier_known_values(real: float, expected: tuple[int, int]) -> None:
    for rounding in ("double", "single"):
        assert as_pair(fp.quantize_multiplier(real, rounding=rounding)) == expected


def test_quantize_multiplier_large_shift_depends_on_build() -> None:
    assert as_pair(fp.quantize_multiplier(2.0**31, rounding="double")) == (1 << 30, 32)
    assert as_pair(fp.quantize_multiplier(2.0**31, rounding="single")) == (2**31 - 1, 30)
    assert as_pair(fp.quantize_multiplier(2.0**29, rounding="single")) == (1 << 30, 30)


def test_quantize_multiplier_smaller_than_one_exp_tflite_values() -> None:
    """The expectations of TFLite's QuantizeMultiplierSmallerThanOneExp test."""
    q = fp.quantize_multiplier_smaller_than_one_exp
    assert as_pair(q(0.25)) == (1073741824, -1)
    assert as_pair(q(0.50 - 5e-9)) == (2147483627, -1)
    assert as_pair(q(0.50 - 1e-10)) == (1073741824, 0)
    assert as_pair(q(0.50)) == (1073741824, 0)
    assert as_pair(q(0.75)) == (1610612736, 0)
    assert as_pair(q(1 - 1e-9)) == (2147483646, 0)
    for bad in (-0.1, 1 - 1e-15, 1.0):
        with pytest.raises(ValueError):
            q(bad)


def test_quantize_multiplier_greater_than_one_tflite_values() -> None:
    """The expectations of TFLite's QuantizeMultiplierGreaterThanOne test."""
    q = fp.quantize_multiplier_greater_than_one
    assert as_pair(q(1 + 1e-11)) == (1073741824, 1)
    assert as_pair(q(1.25)) == (1342177280, 1)
    assert as_pair(q(1.50)) == (1610612736, 1)
    assert as_pair(q(1.75)) == (1879048192, 1)
    assert as_pair(q(2 - 1e-9)) == (2147483647, 1)
    assert as_pair(q(2 - 1e-11)) == (1073741824, 2)
    assert as_pair(q(2)) == (1073741824, 2)
    with pytest.raises(ValueError):
        q(1 + 1e-16)


@pytest.mark.parametrize("rounding", ["double", "single"])
def test_quantize_multiplier_vectorized_against_exact_spec(rounding: str) -> None:
    rng = np.random.default_rng(900)
    reals = np.exp2(rng.uniform(-40, 40, 20_000)) * rng.choice([-1.0, 1.0], 20_000)
    reals[:4] = [0.0, 2.0**-32, 2.0**-33, 1 - 2.0**-53]
    m, s = fp.quantize_multiplier(reals.reshape(100, 200), rounding=rounding)
    assert m.shape == s.shape == (100, 200) and m.dtype == s.dtype == np.int32
    want = [spec_quantize_multiplier(float(r), rounding) for r in reals]
    assert list(zip(m.ravel().tolist(), s.ravel().tolist(), strict=True)) == want


def test_quantize_multiplier_per_channel() -> None:
    scales = np.array([0.5, 1.0, 0.0, 0.1, 3.0])
    m, s = fp.quantize_multiplier(scales)
    np.testing.assert_array_equal(m, [1073741824, 1073741824, 0, 1717986918, 1610612736])
    np.testing.assert_array_equal(s, [0, 1, 0, -3, 2])
    with pytest.raises(ValueError):
        fp.quantize_multiplier(np.array([1.0, np.nan]))


def test_preprocess_softmax_scaling() -> None:
    assert fp.preprocess_softmax_scaling(1.0, 1.0, 5) == (1 << 30, 27)  # 2**26
    s = float(np.float32(0.02))
    want = spec_quantize_multiplier(1.0 * s * 2**26, "double")
    assert fp.preprocess_softmax_scaling(1.0, s, 5) == want
    # Large input scales hit the cap, which differs between the builds.
    assert fp.preprocess_softmax_scaling(1.0, 100.0, 5, rounding="double") == (
        2**31 - 1,
        31,
    )
    assert fp.preprocess_softmax_scaling(1.0, 100.0, 5, rounding="single") == (
        2**31 - 2,
        30,
    )


def test_preprocess_log_softmax_scaling_exp() -> None:
    m, s, rm, rs = fp.preprocess_log_softmax_scaling_exp(1.0, float(np.float32(0.05)), 5)
    assert (m, s) == fp.preprocess_softmax_scaling(1.0, float(np.float32(0.05)), 5)
    assert (rm, rs) == spec_quantize_multiplier(2.0 ** (31 - s) / m, "double")
    assert rs <= 0


def test_calculate_input_radius() -> None:
    for iib in (1, 3, 4, 5, 8):
        for shift in range(0, 32):
            want = math.floor(
                1.0 * ((1 << iib) - 1) * (1 << (31 - iib)) / (1 << shift)
            )  # TFLite's double expression
            assert fp.calculate_input_radius(iib, shift) == want
    assert fp.calculate_input_radius(5, 27) == 15
    assert fp.calculate_input_radius(4, 20, 15) == 0


def test_rounding_argument_is_checked() -> None:
    with pytest.raises(ValueError):
        fp.quantize_multiplier(0.5, rounding="nearest")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        fp.multiply_by_quantized_multiplier(1, 1, 0, rounding="up")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# LiteRT reference kernels (skipped without ai_edge_litert)
# ---------------------------------------------------------------------------------------


def litert_run(
    op: str, inputs: list[dict], outputs: list[dict], options: object = None
) -> np.ndarray:
    """Run a one-op model with LiteRT's reference kernels. Tensors are dicts with shape,
    dtype, scale, zp and, for constants, data; returns the first output."""
    schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
    interp = pytest.importorskip("ai_edge_litert.interpreter")
    flatbuffers = pytest.importorskip("flatbuffers")
    types = {np.int8: "INT8", np.int16: "INT16", np.int32: "INT32", np.int64: "INT64"}
    code = getattr(schema.BuiltinOperator, op)
    model = schema.ModelT()
    model.version = 3
    opcode = schema.OperatorCodeT()
    opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = (
        code,
        min(code, 127),
        1,
    )
    model.operatorCodes, model.buffers = [opcode], [schema.BufferT()]
    graph = schema.SubGraphT()
    graph.tensors, feeds = [], []
    for index, spec in enumerate(inputs + outputs):
        tensor = schema.TensorT()
        tensor.shape, tensor.name = list(spec["shape"]), f"t{len(graph.tensors)}"
        tensor.type = getattr(schema.TensorType, types[spec["dtype"]])
        buffer = schema.BufferT()
        if "data" in spec:
            buffer.data = (
                np.asarray(spec["data"], spec["dtype"]).view(np.uint8).ravel().tolist()
            )
        elif index < len(inputs):
            feeds.append(index)
        model.buffers.append(buffer)
        tensor.buffer = len(model.buffers) - 1
        q = schema.QuantizationParametersT()
        q.scale = np.atleast_1d(np.float32(spec["scale"])).tolist()
        q.zeroPoint = np.atleast_1d(spec.get("zp", 0)).astype(np.int64).tolist()
        q.quantizedDimension = spec.get("axis", 0)
        tensor.quantization = q
        graph.tensors.append(tensor)
    operator = schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs = list(range(len(inputs)))
    operator.outputs = list(range(len(inputs), len(inputs) + len(outputs)))
    if options is not None:
        operator.builtinOptionsType = getattr(
            schema.BuiltinOptions, type(options).__name__[:-1]
        )
        operator.builtinOptions = options
    graph.operators, graph.inputs, graph.outputs = [operator], feeds, operator.outputs
    model.subgraphs = [graph]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    runner = interp.Interpreter(
        model_content=bytes(builder.Output()),
        experimental_op_resolver_type=interp.OpResolverType.BUILTIN_REF,
    )
    runner.allocate_tensors()
    fed = [spec for spec in inputs if "data" not in spec]
    for detail, spec in zip(runner.get_input_details(), fed, strict=True):
        runner.set_tensor(detail["index"], np.asarray(spec["value"], spec["dtype"]))
    runner.invoke()
    return runner.get_tensor(runner.get_output_details()[0]["index"])


def test_litert_reference_kernels_are_a_double_rounding_build() -> None:
    """ADD with power-of-two scales makes exact ties (x1 + x2) / 2: double rounding sends
    negative ties away from zero, single rounding toward +inf."""
    a, b = (v.ravel() for v in np.meshgrid(np.arange(-128, 128), np.arange(-128, 128)))
    schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
    got = litert_run(
        "ADD",
        [
            dict(shape=[a.size], dtype=np.int8, scale=1 / 16, value=a),
            dict(shape=[b.size], dtype=np.int8, scale=1 / 16, value=b),
        ],
        [dict(shape=[a.size], dtype=np.int8, scale=1 / 8)],
        schema.AddOptionsT(),
    )

    def reference_add(rounding: str) -> np.ndarray:
        m_in, s_in = fp.quantize_multiplier_smaller_than_one_exp(0.5, rounding=rounding)
        m_out, s_out = fp.quantize_multiplier_smaller_than_one_exp(2 / 16 / 2**20 * 8)
        scale = functools.partial(
            fp.multiply_by_quantized_multiplier_smaller_than_one_exp, rounding=rounding
        )
        raw = scale(a * 2**20, m_in, s_in) + scale(b * 2**20, m_in, s_in)
        return np.clip(np.asarray(scale(raw, m_out, s_out)), -128, 127)

    np.testing.assert_array_equal(got, reference_add("double"))
    assert np.count_nonzero(got != reference_add("single")) > 1000


def test_litert_conv_uses_mbqm_and_fully_connected_float64() -> None:
    """A 1x1 CONV_2D rescales with the double-rounding MBQM; FULLY_CONNECTED (same data)
    with round(double(acc) * double scale) in this wheel. Biases spread the accumulators
    over [-2**16, 2**16); the output scale 2**10 makes exact ties."""
    schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
    x = np.arange(-128, 128)
    bias = np.arange(256) * 512 - 65536
    acc = x[:, None] + bias[None, :]
    ones = dict(dtype=np.int8, scale=1.0)
    b = dict(shape=[256], dtype=np.int32, scale=1.0, data=bias)
    out = dict(dtype=np.int8, scale=1024.0)
    options = schema.Conv2DOptionsT()
    options.strideH = options.strideW = 1
    conv = litert_run(
        "CONV_2D",
        [dict(shape=[1, 256, 1, 1], value=x.reshape(1, 256, 1, 1), **ones),
         dict(shape=[256, 1, 1, 1], data=np.ones((256, 1, 1, 1)), **ones), b],
        [dict(shape=[1, 256, 1, 256], **out)],
        options,
    ).reshape(256, 256)  # fmt: skip
    fc = litert_run(
        "FULLY_CONNECTED",
        [dict(shape=[256, 1], value=x.reshape(256, 1), **ones),
         dict(shape=[256, 1], data=np.ones((256, 1)), **ones), b],
        [dict(shape=[256, 256], **out)],
        schema.FullyConnectedOptionsT(),
    )  # fmt: skip
    m, s = fp.quantize_multiplier(1 / 1024)
    mbqm = np.clip(np.asarray(fp.multiply_by_quantized_multiplier(acc, m, s)), -128, 127)
    v = acc / 1024.0
    float64 = np.clip(
        np.trunc(v) + np.sign(v) * (np.abs(v - np.trunc(v)) >= 0.5), -128, 127
    )
    np.testing.assert_array_equal(conv, mbqm)
    np.testing.assert_array_equal(fc, float64)
    assert np.count_nonzero(mbqm != float64) > 0


def reference_softmax_int8(x: np.ndarray, beta: float, scale: float) -> np.ndarray:
    """reference_ops::Softmax (int8 in, int8 out) composed from the module's primitives."""
    m, shift = fp.preprocess_softmax_scaling(beta, scale, 5)
    diff_min = -fp.calculate_input_radius(5, shift)

    @jax.jit
    def softmax(x: jax.Array) -> jax.Array:
        diff = x - x.max(axis=-1, keepdims=True)
        inside = diff >= diff_min
        scaled = fp.multiply_by_quantized_multiplier_greater_than_one(diff, m, shift)
        exps = fp.exp_on_negative_values(scaled, 5)
        accumulated = jax.numpy.where(inside, fp.rescale(exps, 0, 12), 0)
        total = accumulated.sum(axis=-1, keepdims=True)  # int32, wrapping like the C++
        recip, bits_over_unit = fp.get_reciprocal(total, 12)
        prod = fp.saturating_rounding_doubling_high_mul(recip, exps)
        out = fp.rounding_divide_by_pot(prod, bits_over_unit + 31 - 8)
        return jax.numpy.where(inside, jax.numpy.clip(out - 128, -128, 127), -128)

    return np.asarray(softmax(x.astype(np.int32)))


@pytest.mark.parametrize(("depth", "scale", "beta"), [(10, 0.1, 1.0), (300, 0.03, 1.5)])
def test_litert_softmax_int8(depth: int, scale: float, beta: float) -> None:
    schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
    scale = float(np.float32(scale))
    x = np.random.default_rng(depth).integers(-128, 128, (16, depth))
    options = schema.SoftmaxOptionsT()
    options.beta = beta
    got = litert_run(
        "SOFTMAX",
        [dict(shape=list(x.shape), dtype=np.int8, scale=scale, zp=3, value=x)],
        [dict(shape=list(x.shape), dtype=np.int8, scale=1 / 256, zp=-128)],
        options,
    )
    np.testing.assert_array_equal(got, reference_softmax_int8(x, beta, scale))


def test_litert_softmax_int16() -> None:
    """reference_ops::SoftmaxInt16: exp and 1/(1+x) tables (double), interpolated
    lookups."""
    schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
    scale, beta = float(np.float32(0.0007)), 1.0
    x = np.random.default_rng(17).integers(-32768, 32768, (8, 100))
    options = schema.SoftmaxOptionsT()
    options.beta = beta
    got = litert_run(
        "SOFTMAX",
        [dict(shape=list(x.shape), dtype=np.int16, scale=scale, value=x)],
        [dict(shape=list(x.shape), dtype=np.int16, scale=1 / 32768)],
        options,
    )
    exp_lut, recip_lut = fp.int16_softmax_tables()
    m, s = fp.quantize_multiplier(scale * beta / (10.0 / 65535.0))
    diff = x - x.max(axis=-1, keepdims=True)
    scaled = np.asarray(jitted(fp.multiply_by_quantized_multiplier)(diff, m, s))
    lookup = jitted(fp.lut_lookup_int16)
    exps = np.asarray(lookup(np.clip(scaled + 32767, -32768, 32767), exp_lut))
    total = exps.astype(np.int64).sum(axis=-1, keepdims=True)
    headroom_plus_one = 32 - bit_length(total)
    shifted = ((total << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    recip = np.asarray(
        lookup(np.clip(shifted - (1 << 15) - (1 << 16), -32768, 32767), recip_lut)
    ).astype(np.int64)
    right = 31 - headroom_plus_one
    want = np.clip((exps * recip + (1 << (right - 1))) >> right, 0, 32767)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_litert_logistic_tanh_int8_tables(op: str) -> None:
    x = np.arange(-128, 128)
    scale, zp = float(np.float32(0.07)), 5
    out_scale, out_zp = (1 / 256, -128) if op == "LOGISTIC" else (1 / 128, 0)
    got = litert_run(
        op,
        [dict(shape=[256], dtype=np.int8, scale=scale, zp=zp, value=x)],
        [dict(shape=[256], dtype=np.int8, scale=out_scale, zp=out_zp)],
    )
    transform = fp.logistic_lut_transform if op == "LOGISTIC" else fp.tanh_lut_transform
    lut = fp.lut_populate_int8(scale, zp, out_scale, out_zp, transform)
    np.testing.assert_array_equal(got, np.asarray(fp.lut_lookup_int8(x, lut)))


@pytest.mark.parametrize("scale", [2.0**-12, 2.0**-11, 1 / 3000])
def test_litert_logistic_tanh_int16(scale: float) -> None:
    x = np.arange(-32768, 32768)
    scale = float(np.float32(scale))
    for op, fn, is_tanh in (
        ("LOGISTIC", fp.logistic_int16, False),
        ("TANH", fp.tanh_int16, True),
    ):
        got = litert_run(
            op,
            [dict(shape=[x.size], dtype=np.int16, scale=scale, value=x)],
            [dict(shape=[x.size], dtype=np.int16, scale=1 / 32768)],
        )
        im, ls = fp.int16_logistic_tanh_params(scale, tanh=is_tanh)
        want = jitted(fn, input_multiplier=im, input_left_shift=ls)(x)
        np.testing.assert_array_equal(got, np.asarray(want), err_msg=op)


def test_litert_conv_16x8_uses_int64_mbqm() -> None:
    """16-bit activations, int64 bias: MultiplyByQuantizedMultiplier(int64_t, ...)."""
    schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
    x = np.arange(256) * 255 - 32768
    bias = (np.arange(64) * 3 - 96) * 2**33
    out_scale = float(np.float32(777.7 * 2**15))
    options = schema.Conv2DOptionsT()
    options.strideH = options.strideW = 1
    got = litert_run(
        "CONV_2D",
        [dict(shape=[1, 256, 1, 1], dtype=np.int16, scale=1, value=x.reshape(1, -1, 1, 1)),
         dict(shape=[64, 1, 1, 1], dtype=np.int8, scale=np.ones(64), zp=np.zeros(64),
              data=np.ones((64, 1, 1, 1))),
         dict(shape=[64], dtype=np.int64, scale=np.ones(64), zp=np.zeros(64), data=bias)],
        [dict(shape=[1, 256, 1, 64], dtype=np.int16, scale=out_scale)],
        options,
    ).reshape(256, 64)  # fmt: skip
    acc = x[:, None].astype(np.int64) + bias[None, :]
    m, s = fp.quantize_multiplier(1.0 / out_scale)
    want = fp.multiply_by_quantized_multiplier_int64(*fp.split_int64(acc), m, s)
    np.testing.assert_array_equal(got, np.clip(np.asarray(want), -32768, 32767))
