"""Every pass by its `-p` name, imported only when used so tools start fast.

`synapc-opt` and the pipeline builder both read `PASSES`; adding a pass is one line here
plus its module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

#: pass name -> (module under synapc.passes, or a full module path for the passes that
#: live with what they need, class name)
_LOCATIONS: dict[str, tuple[str, str]] = {
    "canonicalize": ("canonicalize", "CanonicalizePass"),
    "cse": ("cse", "CSEPass"),
    "dce": ("dce", "DCEPass"),
    "fold-constants": ("fold_constants", "FoldConstantsPass"),
    "fold-affine-into-conv": ("fold_affine_into_conv", "FoldAffineIntoConvPass"),
    "fold-pad": ("fold_pad", "FoldPadPass"),
    "fuse-activation": ("fuse_activation", "FuseActivationPass"),
    "fuse-conv-pool": ("fuse_conv_pool", "FuseConvPoolPass"),
    "canonicalize-layout": ("canonicalize_layout", "CanonicalizeLayoutPass"),
    "match-activations": ("match_activations", "MatchActivationsPass"),
    "optimize": ("optimize", "OptimizePass"),
    # the metafile's signature rewrites (synapc.convert.pipeline)
    "describe-io": ("describe_io", "DescribeIOPass"),
    "apply-layout": ("apply_layout", "ApplyLayoutPass"),
    "dequantize-outputs": ("dequantize_outputs", "DequantizeOutputsPass"),
    # the metafile's `preprocess` (issue 18)
    "insert-preprocess": ("insert_preprocess", "InsertPreprocessPass"),
    "fuse-yuv-resize": ("fuse_yuv_resize", "FuseYuvResizePass"),
    # post-training quantization (issue 19)
    "quantize": ("quantize", "QuantizePass"),
    "equalize-layers": ("equalize_layers", "EqualizeLayersPass"),
    # delegates and subgraphs (issue 20)
    "assign-delegates": ("assign_delegates", "AssignDelegatesPass"),
    "place-layers": ("synapc.backends.targets.place_layers", "PlaceLayersPass"),
    "partition": ("partition", "PartitionPass"),
    # memory planning (issue 21)
    "plan-memory": ("plan_memory", "PlanMemoryPass"),
}


#: alias -> the pass name it stands for (xDSL checks a pipeline name against the pass
#: class's `name`, so an alias loads a subclass that carries the alias as its name).
_ALIASES: dict[str, str] = {"fold-batchnorm": "fold-affine-into-conv"}


def _loader(
    module: str, cls: str, alias: str | None = None
) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        path = module if module.startswith("synapc.") else f"synapc.passes.{module}"
        pass_class = getattr(importlib.import_module(path), cls)
        if alias is None:
            return pass_class
        return type(pass_class.__name__, (pass_class,), {"name": alias})

    return load


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _loader(module, cls) for name, (module, cls) in _LOCATIONS.items()
} | {alias: _loader(*_LOCATIONS[name], alias) for alias, name in _ALIASES.items()}


def get_pass(name: str) -> type[ModulePass]:
    """The pass class registered under `name`."""
    try:
        return PASSES[name]()
    except KeyError:
        raise KeyError(
            f"unknown pass '{name}'; known passes: {', '.join(PASSES)}"
        ) from None
