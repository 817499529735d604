"""Kernel of `dialects/synap/bitcast.py`."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    takes_booleans,
)
from synapc.dialects.synap.base import element_of
from synapc.dialects.synap.bitcast import BitcastOp
from synapc.dtypes import numpy_dtype

takes_booleans(BitcastOp)


@op_check(BitcastOp)
def _check(op: BitcastOp) -> list[tuple[str, tuple[int, ...]]]:
    """64-bit values run as 32-bit ones on the device: their bits are not the model's."""
    for value in (op.input, op.output):
        if numpy_dtype(element_of(value)).itemsize > 4:
            raise UnsupportedOpError(
                f"{element_of(value)} values run as 32-bit ones on the target, so their "
                "bits cannot be reinterpreted"
            )
    return []


@kernel(BitcastOp)
def bitcast(op: BitcastOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """``lax.bitcast_convert_type`` between the model's own types (a float computed in
    another precision is first brought back to its type); booleans are the bytes 0 and
    1, and a byte read as a boolean is ``!= 0``."""
    x = args[0].astype(numpy_dtype(element_of(op.input)))
    target = np.dtype(numpy_dtype(element_of(op.output)))
    if target == np.bool_:
        return [x != 0]
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.uint8)
    result = lax.bitcast_convert_type(x, target)
    return [result.astype(ctx.dtype_of(op.output))]
