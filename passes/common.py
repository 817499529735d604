"""What the rewrite passes share: reading constant operands, adding constants to the
WeightStore, use counts, and carrying a layer's source name onto its replacement."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from synapc.dialects.synap.attributes import INTEGER_SEMANTICS_ATTR, IntegerSemantics
from synapc.dialects.synap.base import SynapOp
from synapc.dialects.synap.constant import ConstantOp
from synapc.weights import WeightStore


def constant_array(value: SSAValue, weights: WeightStore) -> np.ndarray | None:
    """The values of `value` if a `synap.constant` produces it (stored integers for
    quantized types), else None."""
    owner = value.owner
    if isinstance(owner, ConstantOp) and owner.handle in weights:
        return weights[owner.handle]
    return None


def new_constant(
    weights: WeightStore,
    array: np.ndarray,
    result_type: TensorType[Attribute] | None = None,
    hint: str = "w",
) -> ConstantOp:
    """A `synap.constant` for `array`, stored under a fresh handle derived from `hint`
    (`result_type` is needed for quantized tensors)."""
    return weights.constant(np.ascontiguousarray(array), hint, result_type)


def has_one_use(value: SSAValue) -> bool:
    """Whether exactly one operand reads `value` (so its producer may be rewritten)."""
    return value.has_one_use()


def source_of(op: Operation) -> dict[str, Any]:
    """`layer_name` / `layer_index` of `op` as keyword arguments for `SynapOp.make`, so a
    replacement keeps naming the source layer."""
    source: dict[str, Any] = {}
    if isinstance(op, SynapOp):
        if op.layer_name is not None:
            source["layer_name"] = op.layer_name.data
        if op.layer_index is not None:
            source["layer_index"] = op.layer_index.value.data
    return source


def integer_semantics_of(op: Operation) -> IntegerSemantics:
    """The integer semantics of the module that holds `op` (TFLite's when unstated)."""
    module = op
    while module is not None and not isinstance(module, ModuleOp):
        module = module.parent_op()
    if module is None or INTEGER_SEMANTICS_ATTR not in module.attributes:
        return IntegerSemantics.TFLITE
    return IntegerSemantics(module.attributes[INTEGER_SEMANTICS_ATTR].data)
