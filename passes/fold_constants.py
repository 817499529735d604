"""`fold-constants`: evaluate ops whose operands are all `synap.constant`s.

Importers leave computations on constants in the graph: shape arithmetic from ONNX
exports, reshapes / transposes / casts / quantizes of weights, arithmetic between
constants. Computing them once at compile time removes layers that would otherwise run
on every inference and lets the other passes see plain weights (a transposed filter
becomes a filter). Each such op is replaced by new `synap.constant`s whose values go into
the WeightStore.

The values come from the JAX backend's own kernel for the op (`lowering.kernel_for`:
under ONNX integer semantics a quantized op without an ONNX integer kernel runs
dequantize -> float kernel -> quantize), called exactly as `lowering.lower` calls it:
float32 compute dtype, the module's integer semantics, operands converted and laid out
as the lowering does, and the kernel jitted with the operands as arguments, so XLA
compiles the same float arithmetic as in the program (op-by-op eager calls may round
differently where XLA fuses a multiply and an add); only kernels that round nothing
(plain integer arithmetic, data movement of unquantized values) run eagerly, which saves
a compilation. So a folded model computes the integers the unfolded one computes.

Not folded: ops with an operand that is not a constant (or a constant without values in
the WeightStore), ops without a kernel, ops the kernel refuses, and ops whose results
hold more than `max-elements` elements in all (a folded result is stored in full, while
e.g. a broadcast of a constant costs nothing at run time). Constants that nothing reads
any more are erased; their WeightStore entries stay, because the store is shared with the
unoptimized model and clones of the module (`compiler.optimize` shares it) that may still
name them; `write_module` only writes the blobs the module uses.

Float results are computed in float32. On a target that runs float models in float16
the unfolded op would have run in float16, so the folded value is the more accurate one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from synapc.backends.jax import lowering
from synapc.backends.jax.lowering import LoweringContext
from synapc.context import weights_of
from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap.base import SynapOp, element_of, is_quantized
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import numpy_dtype
from synapc.passes.common import constant_array, integer_semantics_of, new_constant
from synapc.weights import WeightStore

#: Ops whose kernels only move values (see `_exact_eagerly`).
_DATA_MOVEMENT = (dm.ConcatOp, dm.SplitOp, dm.SliceOp, dm.StridedSliceOp, dm.ReshapeOp,
                  dm.TransposeOp, dm.PadOp, dm.TileOp, dm.BroadcastToOp, dm.GatherOp,
                  dm.DepthToSpaceOp, dm.SpaceToDepthOp)  # fmt: skip
#: Attributes that name the source layer; the folded constants keep them.
_SOURCE_ATTRIBUTES = ("layer_name", "layer_index")


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
    if type(op) not in lowering.KERNELS:
        return None
    ctx = LoweringContext(np.dtype(np.float32), integer_semantics_of(op))
    layout = lowering.OPERAND_LAYOUTS.get(type(op))
    transforms = layout(op) if layout is not None else {}
    args = []
    for index, array in enumerate(arrays):
        array = lowering.as_kernel_operand(array, ctx)
        transform = transforms.get(index)
        args.append(jnp.asarray(array if transform is None else transform(array)))
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


def _result_elements(op: Operation) -> int:
    """How many elements the results of `op` hold in all."""
    return sum(
        prod(r.type.get_shape()) for r in op.results if isinstance(r.type, TensorType)
    )


@dataclass
class FoldConstantOp(RewritePattern):
    """Replace an op whose operands are all constants by constants of its results."""

    weights: WeightStore
    max_elements: int

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, ConstantOp) or not isinstance(op, SynapOp) or not op.operands:
            return
        if not all(isinstance(r.type, TensorType) for r in op.results):
            return
        if _result_elements(op) > self.max_elements:
            return
        arrays = [constant_array(v, self.weights) for v in op.operands]
        if any(a is None for a in arrays):
            return
        values = evaluate(op, arrays)  # type: ignore[arg-type]
        if values is None:
            return
        hint = op.layer_name.data if op.layer_name is not None else "folded"
        constants = []
        for result, array in zip(op.results, values, strict=True):
            result_type: TensorType[Attribute] = result.type  # type: ignore[assignment]
            constant = new_constant(self.weights, array, result_type, hint)
            for name in _SOURCE_ATTRIBUTES:
                if name in op.attributes:
                    constant.attributes[name] = op.attributes[name]
            constants.append(constant)
        producers = {v.owner for v in op.operands}
        rewriter.replace(op, constants, [c.result for c in constants])
        for producer in producers:
            if isinstance(producer, ConstantOp) and not producer.result.uses:
                rewriter.erase(producer)


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Replace ops computed from constants only by the constants of their results,
    evaluated with the JAX backend's kernels; erase the constants left unused."""

    name = "fold-constants"

    max_elements: int = 1 << 24
    """Fold no op whose results hold more elements than this in all."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowering.load_kernels()
        pattern = FoldConstantOp(weights_of(ctx), self.max_elements)
        PatternRewriteWalker(pattern).rewrite_module(op)
