"""Constant evaluation with the JAX backend's kernels: the values an op computes from
constant operands, for `fold-constants` (which reaches this through the compilation
context, `synapc.context.evaluator_of`, so that passes never import a backend).

An op is evaluated by its own kernel (`lowering.kernel_for`: under ONNX integer semantics
a quantized op without an ONNX integer kernel runs dequantize -> float kernel ->
quantize), called exactly as `lowering.lower` calls it: float32 compute dtype, the
module's integer semantics, operands converted and laid out as the lowering does, and the
kernel jitted with the operands as arguments, so XLA compiles the same float arithmetic as
in the program (op-by-op eager calls may round differently where XLA fuses a multiply and
an add); only kernels that round nothing (plain integer arithmetic, data movement of
unquantized values) run eagerly, which saves a compilation. So a folded model computes
the integers the unfolded one computes.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Operation

from synapc.backends.jax import lowering
from synapc.backends.jax.lowering import LoweringContext
from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap.base import element_of, is_quantized
from synapc.dtypes import numpy_dtype
from synapc.passes.common import integer_semantics_of

#: Ops whose kernels only move values (see `_exact_eagerly`).
_DATA_MOVEMENT = (dm.ConcatOp, dm.SplitOp, dm.SliceOp, dm.StridedSliceOp, dm.ReshapeOp,
                  dm.TransposeOp, dm.PadOp, dm.TileOp, dm.BroadcastToOp, dm.GatherOp,
                  dm.DepthToSpaceOp, dm.SpaceToDepthOp)  # fmt: skip


def _exact_eagerly(op: Operation) -> bool:
    """Whether calling the kernel op by op gives what the jitted program computes: plain
    integer arithmetic, and moving float or integer values, round nothing that XLA could
    fuse differently. Everything else is jitted on its own (about 3x slower to fold)."""
    elements = [element_of(v) for v in (*op.operands, *op.results)]
    if any(is_quantized(e) for e in elements):
        return False
    return isinstance(op, _DATA_MOVEMENT) or all(
        isinstance(e, IntegerType) for e in elements
    )


def _traced(kernel: lowering.Kernel, op: Operation, ctx: LoweringContext):
    """`kernel` on `op` as a function of the operand arrays, for `jax.jit`."""

    def run(*args: jax.Array) -> list[jax.Array]:
        return list(kernel(op, list(args), ctx))

    return run


def evaluate(op: Operation, arrays: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The results of `op` on the constant operand values `arrays`, computed by the JAX
    backend's kernel and stored as the result types store them (the storage integers of
    quantized types); None when the backend has no kernel for the op or refuses it."""
    lowering.load_kernels()
    if type(op) not in lowering.KERNELS:
        return None
    ctx = LoweringContext(np.dtype(np.float32), integer_semantics_of(op))
    operands = [lowering.as_kernel_operand(array, ctx) for array in arrays]
    args = [jnp.asarray(arg) for arg in lowering.kernel_args(op, operands)]
    try:
        kernel = lowering.kernel_for(op, ctx)
        if _exact_eagerly(op):
            results = kernel(op, args, ctx)
        else:
            results = jax.jit(_traced(kernel, op, ctx))(*args)
    except NotImplementedError:  # UnsupportedOpError: the backend refuses this op
        return None
    arrays_out = []
    for value, result in zip(op.results, results, strict=True):
        assert isinstance(value.type, TensorType)
        array = np.asarray(result).astype(numpy_dtype(value.type.element_type))
        if array.shape != value.type.get_shape():
            return None
        arrays_out.append(array)
    return arrays_out
