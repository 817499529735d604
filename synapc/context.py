"""The compilation context: xDSL's dialect registry plus the module's WeightStore."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context

from synapc.weights import WeightStore


@dataclass
class SynapContext(Context):
    """An xDSL context that also carries the WeightStore the IR's handles refer to.

    Passes receive the context, so a pass that reads or creates weights finds them with
    `weights_of(ctx)`. Cloning shares the store (handles stay valid in the clone).
    """

    weights: WeightStore = field(default_factory=WeightStore)

    def clone(self) -> SynapContext:
        base = super().clone()
        return SynapContext(
            base.allow_unregistered,
            base._loaded_dialects,
            base._loaded_ops,
            base._loaded_attrs,
            base._loaded_types,
            base._registered_dialects,
            weights=self.weights,
        )


def make_context(weights: WeightStore | None = None) -> SynapContext:
    """A context with every dialect synap IR uses (builtin, func, quant, synap)."""
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    from synapc.dialects.quant import Quant
    from synapc.dialects.synap import Synap

    ctx = SynapContext(weights=weights if weights is not None else WeightStore())
    for dialect in (Builtin, Func, Quant, Synap):
        ctx.load_dialect(dialect)
    return ctx


def weights_of(ctx: Context) -> WeightStore:
    """The WeightStore of a context made by `make_context`."""
    if not isinstance(ctx, SynapContext):
        raise TypeError("this pass needs weights: run it with synapc.make_context()")
    return ctx.weights
