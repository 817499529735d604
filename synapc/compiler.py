"""`synapc.compile`: optimize a model for a target and make it runnable.

The default pipeline runs on a copy of the module (the caller's model is left as it was);
the JAX backend lowers the result to one jitted function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from synapc.backends.targets import Target, get_target
from synapc.context import make_context
from synapc.dtypes import device_dtype
from synapc.errors import SynapcError
from synapc.model import Model, TensorInfo

#: The default pipeline: the `optimize` pass (`synapc/passes/optimize.py`) runs the graph
#: optimization and fusion passes to a fixed point.
DEFAULT_PIPELINE = ("optimize",)


def optimize(model: Model, pipeline: Sequence[str] = DEFAULT_PIPELINE) -> Model:
    """A copy of `model` with the passes of `pipeline` applied: by default the graph
    optimization and fusion passes, run to a fixed point, i.e. the IR `compile` lowers
    (for inspection and golden tests). Weights are shared; passes add new ones."""
    from synapc.passes.registry import get_pass

    module: ModuleOp = model.module.clone()
    ctx = make_context(model.weights)
    for name in pipeline:
        get_pass(name)().apply(ctx, module)
    module.verify()
    return Model(module, model.weights, model.inputs, model.outputs, model.source,
                 dict(model.metadata))  # fmt: skip


class Executable:
    """A compiled model: `run(inputs)` takes and returns numpy arrays in model order."""

    def __init__(self, model: Model, target: Target):
        from synapc.backends.jax.lowering import UnsupportedOpError, lower

        self.model = model
        self.target = target
        try:
            self._function, self._params = lower(
                model.main, model.weights, target, model.integer_semantics
            )
        except UnsupportedOpError as error:
            raise SynapcError(f"{model.source or 'model'}: {error}") from None

    @property
    def inputs(self) -> list[TensorInfo]:
        """The model inputs, in order."""
        return self.model.inputs

    @property
    def outputs(self) -> list[TensorInfo]:
        """The model outputs, in order."""
        return self.model.outputs

    def run(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
        """Run one inference; `inputs` is a list in model order or a dict by input name."""
        if isinstance(inputs, Mapping):
            missing = [i.name for i in self.inputs if i.name not in inputs]
            if missing:
                raise SynapcError(f"missing inputs: {', '.join(missing)}")
            inputs = [inputs[i.name] for i in self.inputs]
        if len(inputs) != len(self.inputs):
            raise SynapcError(f"expected {len(self.inputs)} inputs, got {len(inputs)}")
        arrays = []
        for info, value in zip(self.inputs, inputs, strict=True):
            array = np.asarray(value)
            if array.shape != info.shape:
                raise SynapcError(f"input '{info.name}' has shape {list(array.shape)}, "
                                  f"expected {list(info.shape)}")  # fmt: skip
            arrays.append(array.astype(device_dtype(info.dtype), copy=False))
        outputs = self._function(self._params, *arrays)
        # JAX runs without 64-bit mode: int64 results come back as int32 (same values).
        return [
            np.asarray(o).astype(info.dtype, copy=False)
            for o, info in zip(outputs, self.outputs, strict=True)
        ]


def compile(model: Model, target: str = "VS680") -> Executable:
    """Optimize `model` with the default pipeline and lower it for `target`."""
    return Executable(optimize(model), get_target(target))
