"""Helpers the kernels share: fused activations and the float/quantized dispatch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from xdsl.ir import Operation

from synapc.backends.jax.lowering import UnsupportedOpError
from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.base import element_of, is_quantized


def any_quantized(op: Operation) -> bool:
    """Whether any operand or result of `op` is quantized."""
    return any(is_quantized(element_of(v)) for v in (*op.operands, *op.results))


def float_only(op: Operation) -> None:
    """Raise UnsupportedOpError for a quantized instance of a float-only kernel."""
    if any_quantized(op):
        raise UnsupportedOpError(f"quantized {op.name} is not supported by the JAX backend")


def activate(x: jax.Array, activation: Activation) -> jax.Array:
    """Apply a fused activation to a float result."""
    low, high = activation.bounds
    if low is None and high is None:
        return x
    return jnp.clip(x, low, high)


def widen(x: jax.Array) -> jax.Array:
    """`x` in float32 when it is a narrower float: sums and dot products accumulate in
    float32, as the NPU's accumulators do, so float16 layers do not overflow mid-sum."""
    return x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x
