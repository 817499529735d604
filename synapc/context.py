"""The compilation context: xDSL's dialect registry plus the module's WeightStore and the
constant evaluator passes use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import import_module

import numpy as np
from xdsl.context import Context
from xdsl.ir import Operation

from synapc.weights import WeightStore

#: Computes an op's results from constant operand values, or None when it cannot.
Evaluator = Callable[[Operation, Sequence[np.ndarray]], "list[np.ndarray] | None"]


def jax_evaluator(op: Operation, arrays: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The JAX backend's kernels as the constant evaluator (loaded on first use: the
    context, not a pass, names the backend, so passes stay below backends)."""
    evaluate: Evaluator = import_module("synapc.backends.jax.evaluate").evaluate
    return evaluate(op, arrays)


@dataclass
class SynapContext(Context):
    """An xDSL context that also carries the WeightStore the IR's handles refer to.

    Passes receive the context, so a pass that reads or creates weights finds them with
    `weights_of(ctx)`, and one that computes values from constants (`fold-constants`)
    uses `evaluator_of(ctx)`: the backend's own kernels by default. Cloning shares both.
    """

    weights: WeightStore = field(default_factory=WeightStore)
    evaluator: Evaluator = jax_evaluator

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
            evaluator=self.evaluator,
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


def evaluator_of(ctx: Context) -> Evaluator:
    """The constant evaluator of a context made by `make_context`."""
    if not isinstance(ctx, SynapContext):
        raise TypeError("this pass evaluates constants: run it with synapc.make_context()")
    return ctx.evaluator


def weights_of(ctx: Context) -> WeightStore:
    """The WeightStore of a context made by `make_context`."""
    if not isinstance(ctx, SynapContext):
        raise TypeError("this pass needs weights: run it with synapc.make_context()")
    return ctx.weights
