"""Kernels of `dialects/synap/reduce.py`."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from synapc.backends.jax.lowering import LoweringContext, kernel
from synapc.backends.jax.ops.common import float_only, widen
from synapc.dialects.synap import reduce

_FLOAT = {
    reduce.ReduceMeanOp: jnp.mean,
    reduce.ReduceSumOp: jnp.sum,
    reduce.ReduceMaxOp: jnp.max,
    reduce.ReduceMinOp: jnp.min,
}


@kernel(*_FLOAT)
def reduction(
    op: reduce._Reduce, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float reduction over axes."""
    float_only(op)
    p = op.props()
    result = _FLOAT[type(op)](widen(args[0]), axis=p["axes"], keepdims=p["keep_dims"])
    return [result.astype(args[0].dtype)]


@kernel(reduce.ArgMaxOp, reduce.ArgMinOp)
def arg_reduction(
    op: reduce._ArgReduce, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Index of the first extreme value along the axis (works on any element type)."""
    p = op.props()
    find = jnp.argmax if isinstance(op, reduce.ArgMaxOp) else jnp.argmin
    index = find(args[0], axis=p["axis"], keepdims=p["keep_dims"])
    return [index.astype(ctx.dtype_of(op.output))]
