"""Kernel of `dialects/synap/linalg.py`: `synap.det` (float only)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from synapc.backends.jax.lowering import LoweringContext, kernel, real_valued
from synapc.dialects.synap.linalg import DetOp

real_valued(DetOp)


@kernel(DetOp)
def det(op: DetOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """``jnp.linalg.det`` (LU with partial pivoting) in at least float32; an empty
    matrix has determinant 1."""
    x = args[0]
    wide = x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x
    return [jnp.linalg.det(wide).astype(ctx.dtype_of(op.output))]
