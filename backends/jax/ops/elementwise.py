"""Kernels of `dialects/synap/elementwise.py` (broadcasting binary ops, prelu)."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from synapc.backends.jax.lowering import LoweringContext, kernel
from synapc.backends.jax.ops.common import activate, float_only
from synapc.dialects.synap import elementwise as ew

_FLOAT: dict[type, Callable[[jax.Array, jax.Array], jax.Array]] = {
    ew.AddOp: jnp.add,
    ew.SubOp: jnp.subtract,
    ew.MulOp: jnp.multiply,
    ew.DivOp: jnp.divide,
    ew.MaximumOp: jnp.maximum,
    ew.MinimumOp: jnp.minimum,
    ew.PowOp: jnp.power,
    ew.SquaredDifferenceOp: lambda a, b: jnp.square(a - b),
}


@kernel(*_FLOAT)
def binary(op: ew._Binary, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Float binary op with NumPy broadcasting and an optional fused activation."""
    float_only(op)
    y = _FLOAT[type(op)](args[0], args[1])
    activation = op.props().get("activation")
    return [y if activation is None else activate(y, activation)]


@kernel(ew.PReluOp)
def prelu(op: ew.PReluOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Float ``x if x >= 0 else slope * x``."""
    float_only(op)
    x, slope = args
    return [jnp.where(x >= 0, x, slope * x)]
