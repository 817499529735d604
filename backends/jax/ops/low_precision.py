"""Casts to and from the storage-only element types (float8, float4, 2- and 4-bit
integers) with ONNX's Cast semantics, for the `synap.cast` kernel.

- float8 e4m3fn / e4m3fnuz / e5m2 / e5m2fnuz: round to nearest even; with `saturate`,
  values beyond the largest finite value (infinities too) become it, otherwise they
  become infinity or NaN as the type has them.
- float4 e2m1fn: round to nearest even, saturating (the type has no infinity or NaN).
- float8 e8m0fnu (a power of two): float32's exponent, rounded up, down or to nearest
  (ties to even) by its mantissa; NaN and infinity become NaN; with `saturate`, rounding
  up never passes the largest exponent.
- 2- and 4-bit integers: a float is truncated toward zero, then the value wraps into
  the type's bits (two's complement), as numpy casts do.

Everything is computed in float32 / int32 and converted exactly at the end.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from synapc.dialects.synap.attributes import ExponentRounding
from synapc.dtypes import is_low_precision

#: The float8 kinds whose `saturate` clamps to the largest finite value.
_SATURATING = frozenset(
    {"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"}
)


def widened(x: jax.Array) -> jax.Array:
    """A storage-only array as float32 (floats, exactly) or int32 (integers)."""
    if not is_low_precision(np.dtype(x.dtype)):
        return x
    if np.dtype(x.dtype).name in ("int2", "int4", "uint2", "uint4"):
        return x.astype(jnp.int32)
    return x.astype(jnp.float32)


def cast_to_low_precision(
    x: jax.Array, dtype: np.dtype, saturate: bool, rounding: ExponentRounding
) -> jax.Array:
    """`x` (not itself storage-only) cast to the storage-only `dtype`."""
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.int32)
    name = dtype.name
    if name in ("int2", "int4", "uint2", "uint4"):
        return _wrapped(x, dtype)
    x = x.astype(jnp.float32)
    if name == "float8_e8m0fnu":
        return _to_e8m0(x, saturate, rounding)
    if name in _SATURATING and saturate:
        info = ml_dtypes.finfo(dtype)
        x = jnp.clip(x, float(info.min), float(info.max))  # NaN stays NaN
    return x.astype(dtype)


def _wrapped(x: jax.Array, dtype: np.dtype) -> jax.Array:
    """Truncate toward zero and keep the low bits of the two's-complement value."""
    if jnp.issubdtype(x.dtype, jnp.floating):
        t = jnp.trunc(x.astype(jnp.float32))
        # int32's range in float32 (2**31 - 128 is its largest float32 below 2**31);
        # NaN becomes 0 as ml_dtypes gives
        t = jnp.where(jnp.isnan(t), 0.0, jnp.clip(t, -(2.0**31), 2.0**31 - 128))
        x = t.astype(jnp.int32)
    bits = ml_dtypes.iinfo(dtype).bits
    low = x.astype(jnp.int32) & ((1 << bits) - 1)
    if ml_dtypes.iinfo(dtype).min < 0:  # signed: the top bit is the sign
        low = jnp.where(low >= 1 << (bits - 1), low - (1 << bits), low)
    return low.astype(dtype)


def _to_e8m0(x: jax.Array, saturate: bool, rounding: ExponentRounding) -> jax.Array:
    """float32 to float8_e8m0fnu: the biased exponent, rounded by the mantissa."""
    bits = jax.lax.bitcast_convert_type(x, jnp.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(jnp.int32)
    special = exponent == 0xFF  # NaN and infinity
    if rounding == ExponentRounding.UP:
        up = (bits & 0x7FFFFF) != 0
    elif rounding == ExponentRounding.NEAREST:
        guard = (bits & 0x400000) != 0
        rest = (bits & 0x3FFFFF) != 0
        up = guard & (rest | (exponent > 0))
    else:
        up = jnp.zeros_like(special)
    if saturate:
        up = up & (exponent != 0xFE)
    exponent = (exponent + up.astype(jnp.int32)) & 0xFF
    code = jnp.where(special, 0xFF, exponent).astype(jnp.uint8)
    return jax.lax.bitcast_convert_type(code, ml_dtypes.float8_e8m0fnu)
