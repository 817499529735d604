"""Every intermediate tensor of a synap function as outputs of one jitted JAX function.

Calibration for post-training quantization needs the value of every tensor a float model
computes. `lower_observed` lowers a copy of the function whose return lists all of them
(through `lowering.lower`, so the kernels, checks and layouts are exactly the program's),
in float32: the statistics describe the float32 model, the reference a quantized model is
measured against, whatever float type the target's NPU computes in.

Observed tensors are keyed by their place in the function (see `observed_values`):
``"arg{i}"`` for argument ``i`` of the function and ``"op{p}.{j}"`` for result ``j`` of
the op at position ``p`` of the body. The key is stable for a given IR (the quantize pass
walks the same function) and unique, where a layer name is not (an importer may lower
one source layer to several ops, all carrying its `layer_name`); `observed_labels` gives
the human-readable name of each key.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np
from xdsl.dialects.builtin import FunctionType, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import SSAValue

from synapc.backends.jax.lowering import lower
from synapc.backends.targets import get_target
from synapc.dialects.synap.attributes import IntegerSemantics
from synapc.dialects.synap.base import is_float
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.common import op_label
from synapc.weights import WeightStore

#: Calibration computes in float32 (see the module docstring).
FLOAT32 = np.dtype(np.float32)


def _is_observed(value: SSAValue) -> bool:
    """Float tensors only: integer tensors (indices, shapes, masks) are not quantized."""
    return isinstance(value.type, TensorType) and is_float(value.type.element_type)


def observed_values(func: FuncOp) -> dict[str, SSAValue]:
    """Key -> SSA value of every float tensor `func` computes, in program order: its
    arguments (``"arg{i}"``) and the results of its non-constant ops (``"op{p}.{j}"``,
    ``p`` the op's position in the body, ``j`` the result index). Constants (weights)
    are left out: they are quantized from their values, not calibrated."""
    values: dict[str, SSAValue] = {}
    for i, arg in enumerate(func.body.block.args):
        if _is_observed(arg):
            values[f"arg{i}"] = arg
    for position, op in enumerate(func.body.block.ops):
        if isinstance(op, ConstantOp | ReturnOp):
            continue
        for j, result in enumerate(op.results):
            if _is_observed(result):
                values[f"op{position}.{j}"] = result
    return values


def observed_labels(func: FuncOp) -> dict[str, str]:
    """Key -> how messages and reports name the tensor: ``input #i`` for arguments, the
    op's `op_label` (its layer name, index, position and op name) for op results, with
    ``result #j`` added for ops with several results."""
    ops = list(func.body.block.ops)
    labels: dict[str, str] = {}
    for key in observed_values(func):
        if key.startswith("arg"):
            labels[key] = f"input #{key[3:]}"
            continue
        position, j = (int(part) for part in key[2:].split("."))
        label = op_label(ops[position], position)
        labels[key] = label if len(ops[position].results) == 1 else f"{label} result #{j}"
    return labels


def _observing_copy(func: FuncOp) -> tuple[FuncOp, list[str]]:
    """A detached copy of `func` returning every observed value (in `observed_values`
    order) instead of its results, and the keys of those values."""
    copy = func.clone()
    values = observed_values(copy)
    ret = copy.body.block.last_op
    assert isinstance(ret, ReturnOp)
    copy.body.block.erase_op(ret)
    copy.body.block.add_op(ReturnOp(*values.values()))
    copy.function_type = FunctionType.from_lists(
        list(copy.function_type.inputs.data), [v.type for v in values.values()]
    )
    copy.res_attrs = None
    return copy, list(values)


def lower_observed(
    func: FuncOp,
    weights: WeightStore,
    *,
    semantics: IntegerSemantics = IntegerSemantics.TFLITE,
    float_dtype: np.dtype = FLOAT32,
) -> tuple[Callable[..., list[jax.Array]], dict[str, jax.Array], list[str]]:
    """``(f, params, keys)``: ``f(params, *inputs)`` computes, for one inference of
    `func` (inputs of its argument shapes), the list of every observed tensor, in the
    order of `keys` (see `observed_values`). Lowered and checked like the program
    itself (`lowering.lower`, under the module's integer `semantics`); float tensors
    compute in `float_dtype`."""
    copy, keys = _observing_copy(func)
    function, params = lower(
        copy, weights, get_target("GENERIC"), semantics, float_dtype=float_dtype
    )
    return function, params, keys
