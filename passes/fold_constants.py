"""`fold-constants`: evaluate ops whose operands are all `synap.constant`s.

Importers leave computations on constants in the graph: shape arithmetic from ONNX
exports, reshapes / transposes / casts / quantizes of weights, arithmetic between
constants. Computing them once at compile time removes layers that would otherwise run
on every inference and lets the other passes see plain weights (a transposed filter
becomes a filter). Each such op is replaced by new `synap.constant`s whose values go into
the WeightStore.

The values come from the compilation context's evaluator (`synapc.context.evaluator_of`):
by default the JAX backend's own kernels, called exactly as the lowering calls them
(`backends/jax/evaluate.py`), so a folded model computes the integers the unfolded one
computes. The pass itself names no backend.

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

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from synapc.context import Evaluator, evaluator_of, weights_of
from synapc.dialects.synap.base import SynapOp
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.common import constant_array, new_constant
from synapc.weights import WeightStore

#: Attributes that name the source layer; the folded constants keep them.
_SOURCE_ATTRIBUTES = ("layer_name", "layer_index")


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
    evaluate: Evaluator

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
        values = self.evaluate(op, arrays)  # type: ignore[arg-type]
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
    evaluated by the context's evaluator (the backend's kernels); erase the constants
    left unused."""

    name = "fold-constants"

    max_elements: int = 1 << 24
    """Fold no op whose results hold more elements than this in all."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = FoldConstantOp(weights_of(ctx), self.max_elements, evaluator_of(ctx))
        PatternRewriteWalker(pattern).rewrite_module(op)
