"""`place-layers{target=VS680}`: mark where each layer of `@main` can run on a target's
NPU, before ``partition`` splits the model by delegate.

Every layer gets ``synap.engine`` (``NN``, ``TP`` or ``PPU``) when the target's NPU runs
it, or ``synap.fallback`` with the reason when it cannot (`support.layer_support`): the
``partition`` pass then keeps it on the CPU whatever delegate it asks for. Layers that
already ask for the CPU or the GPU (``synap.delegate``) are left as they are: the NPU's
rules do not concern them. The pass lives with the targets because the rules do; the
IR it leaves carries everything ``partition`` needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import ReturnOp
from xdsl.passes import ModulePass

from synapc.backends.targets.descriptions import get_target
from synapc.backends.targets.support import layer_support
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.apply_layout import main_function
from synapc.passes.partition import DELEGATE, FALLBACK

#: The attribute naming the NPU engine that runs a layer.
ENGINE = "synap.engine"


@dataclass(frozen=True)
class PlaceLayersPass(ModulePass):
    """Mark each layer of `@main` with its NPU engine or its fallback reason (see the
    module docstring)."""

    name = "place-layers"

    #: The target whose NPU rules apply (VS680, VS640, GENERIC or an alias).
    target: str = "VS680"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = get_target(self.target)
        for layer in main_function(op).body.block.ops:
            if isinstance(layer, ConstantOp | ReturnOp):
                continue
            asked = layer.attributes.get(DELEGATE)
            if isinstance(asked, StringAttr) and asked.data in ("cpu", "gpu"):
                continue
            support = layer_support(layer, target)
            if support.engine is None:
                layer.attributes[FALLBACK] = StringAttr(support.reason)
            else:
                layer.attributes[ENGINE] = StringAttr(support.engine)
