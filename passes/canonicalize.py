"""`canonicalize`: remove ops that do nothing and collapse trivial chains.

Importers emit framework noise such as reshapes to the same shape, identity transposes,
zero pads, single-input concats and transpose/reshape chains. Folding these away gives the
later passes (fusion, layout, partitioning) one canonical form to match. The pass also
runs the canonicalization patterns that ops declare through xDSL's trait, and removes
dead pure ops, as MLIR's canonicalizer does.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.dead_code_elimination import region_dce

from synapc.dialects.synap.conversion import CastOp, QuantizeOp
from synapc.dialects.synap.data_movement import (
    BroadcastToOp,
    ConcatOp,
    PadOp,
    ReshapeOp,
    SliceOp,
    TileOp,
    TransposeOp,
)
from synapc.passes.common import absorb_removed, only_read_by, source_of


def _forward(
    rewriter: PatternRewriter, op: Operation, value: SSAValue, *dying: Operation
) -> None:
    """Replace `op` by an existing value of exactly its result type. Its source layer
    (and those of the `dying` ops, which only fed `op`) are recorded on the op that
    produces `value` (see `absorb_removed`)."""
    for removed in (*dying, op):
        absorb_removed(removed, value)
    rewriter.replace(op, [], [value])


class RemoveIdentity(RewritePattern):
    """An op whose result type equals its input type and that moves no element."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if len(op.operands) != 1 or len(op.results) != 1:
            return
        source = op.operands[0]
        if source.type != op.results[0].type:
            return
        props = getattr(op, "props", lambda: {})()
        identity = (
            isinstance(op, ReshapeOp | CastOp | QuantizeOp | BroadcastToOp)
            or (
                isinstance(op, TransposeOp)
                and props["perm"] == tuple(range(len(props["perm"])))
            )
            or (isinstance(op, PadOp) and not any(props["pads"]))
            or (isinstance(op, SliceOp) and not any(props["start"]))
            or (isinstance(op, TileOp) and all(m == 1 for m in props["multiples"]))
            or (isinstance(op, ConcatOp))
        )
        if identity:
            _forward(rewriter, op, source)


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p o q) (or x when it is identity)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, TransposeOp):
            return
        first, second = inner.props()["perm"], op.props()["perm"]
        perm = tuple(first[i] for i in second)
        dying = [inner] if only_read_by(inner, op) else []
        if perm == tuple(range(len(perm))) and inner.input.type == op.output.type:
            _forward(rewriter, op, inner.input, *dying)
            return
        rewriter.replace(
            op,
            TransposeOp.make(
                inner.input,
                perm=perm,
                result_types=[op.output.type],
                **source_of(op, *dying),
            ),
        )


class ComposeReshapes(RewritePattern):
    """reshape(reshape(x)) -> reshape(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, ReshapeOp):
            return
        dying = [inner] if only_read_by(inner, op) else []
        if inner.input.type == op.output.type:
            _forward(rewriter, op, inner.input, *dying)
            return
        rewriter.replace(
            op,
            ReshapeOp.make(
                inner.input, result_types=[op.output.type], **source_of(op, *dying)
            ),
        )


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    """Fold identities and trivial chains; run op canonicalizations; drop dead ops."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [
                RemoveIdentity(),
                ComposeTransposes(),
                ComposeReshapes(),
                CanonicalizationRewritePattern(),
            ],
            ctx=ctx,
            folding_enabled=True,
        )
        PatternRewriteWalker(patterns, post_walk_func=region_dce).rewrite_module(op)
