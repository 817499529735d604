"""What the rewrite passes share: reading constant operands, adding constants to the
WeightStore, use counts, and carrying the source layers of the ops a rewrite replaces or
absorbs onto the op that computes them afterwards.

Provenance: a replacement keeps the `layer_name` / `layer_index` of the op it replaces;
the layers of ops whose computation another op takes over (a folded batch-norm or pad, a
fused activation or pool, a matched activation chain, a merged duplicate, a cancelled
transpose) go into that op's `fused_layers`, so `model_info.txt` can map every source
layer to the op that runs it. Layers folded into constants are not tracked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, TensorType
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
    # ascontiguousarray makes a rank-0 array rank 1: keep the shape
    contiguous = np.ascontiguousarray(array).reshape(np.shape(array))
    return weights.constant(contiguous, hint, result_type)


def has_one_use(value: SSAValue) -> bool:
    """Whether exactly one operand reads `value` (so its producer may be rewritten)."""
    return value.has_one_use()


FUSED_LAYERS = "fused_layers"
"""The attribute listing the source layers an op computes besides its own."""

PROVENANCE_ATTRIBUTES = ("layer_name", "layer_index", FUSED_LAYERS)
"""The attributes that say where an op comes from, not what it computes."""


def fused_layers_of(op: Operation) -> list[str]:
    """The `fused_layers` of `op` (empty when it has none)."""
    attr = op.attributes.get(FUSED_LAYERS)
    if not isinstance(attr, ArrayAttr):
        return []
    return [s.data for s in attr.data if isinstance(s, StringAttr)]


def layers_of(op: Operation) -> list[str]:
    """Every source layer `op` computes: its `layer_name` (when set), then its
    `fused_layers`."""
    own = op.attributes.get("layer_name")
    return ([own.data] if isinstance(own, StringAttr) else []) + fused_layers_of(op)


def in_block_order(ops: Sequence[Operation]) -> list[Operation]:
    """`ops` without repeats, those of the first op's block in block order, the others
    (detached or elsewhere) after them in the order given."""
    unique = list(dict.fromkeys(ops))
    block = unique[0].parent_block() if unique else None
    if block is None:
        return unique
    inside = [op for op in unique if op.parent_block() is block]
    if len(inside) > 1:
        position = {op: i for i, op in enumerate(block.ops) if op in inside}
        inside.sort(key=position.__getitem__)
    return inside + [op for op in unique if op.parent_block() is not block]


def merged_fused_layers(kept: Operation, absorbed: Iterable[Operation]) -> list[str]:
    """The `fused_layers` of `kept` once it also computes the `absorbed` ops: every
    layer of the absorbed ops and of `kept`'s own list, in graph order (the block order
    of the ops; an absorbed op's own name before the layers it had absorbed), without
    repeats and without `kept`'s `layer_name`. Constants are never absorbed: what was
    folded into them is not tracked."""
    others = [op for op in absorbed if op is not kept and not isinstance(op, ConstantOp)]
    names: list[str] = []
    for op in in_block_order([kept, *others]):
        names += fused_layers_of(kept) if op is kept else layers_of(op)
    own = kept.attributes.get("layer_name")
    skip = own.data if isinstance(own, StringAttr) else None
    return [n for n in dict.fromkeys(names) if n != skip]


def source_of(op: Operation, *absorbed: Operation) -> dict[str, Any]:
    """Keyword arguments for `SynapOp.make` so that a replacement of `op` keeps naming
    its source layer (`layer_name`, `layer_index`) and the layers `op` had absorbed,
    plus those of the `absorbed` ops it now computes too (`fused_layers`)."""
    source: dict[str, Any] = {}
    if isinstance(op, SynapOp):
        if op.layer_name is not None:
            source["layer_name"] = op.layer_name.data
        if op.layer_index is not None:
            source["layer_index"] = op.layer_index.value.data
    fused = merged_fused_layers(op, absorbed)
    if fused:
        source["fused_layers"] = fused
    return source


def attributes_of(op: Operation, *absorbed: Operation) -> dict[str, Attribute]:
    """The attributes of `op` for an `Operation.create` of its replacement, with the
    layers of the `absorbed` ops merged into `fused_layers` (see `source_of`)."""
    attributes = dict(op.attributes)
    fused = merged_fused_layers(op, absorbed)
    if fused:
        attributes[FUSED_LAYERS] = ArrayAttr([StringAttr(n) for n in fused])
    else:
        attributes.pop(FUSED_LAYERS, None)
    return attributes


def absorb_into(kept: Operation, *absorbed: Operation) -> None:
    """Record in place that `kept` now also computes the `absorbed` ops (which the
    caller removes), by merging their layers into its `fused_layers`."""
    fused = merged_fused_layers(kept, absorbed)
    if fused:
        kept.attributes[FUSED_LAYERS] = ArrayAttr([StringAttr(n) for n in fused])


def absorb_removed(op: Operation, value: SSAValue) -> None:
    """Record the layers of `op`, about to be removed because it computes nothing (its
    result is `value` as it is, e.g. an identity reshape or a transpose that cancels
    another), on the op producing `value`, or when that is a block argument or a
    constant, on the first synap op reading `op`'s results. The layers are dropped
    when neither exists (nothing else runs them)."""
    if not layers_of(op):
        return
    producer = value.owner
    if isinstance(producer, SynapOp) and not isinstance(producer, ConstantOp):
        absorb_into(producer, op)
        return
    readers = [
        use.operation
        for result in op.results
        for use in result.uses
        if isinstance(use.operation, SynapOp)
        and use.operation.parent_block() is op.parent_block()
    ]
    if readers:
        absorb_into(in_block_order(readers)[0], op)


def layer_order(module: Operation) -> dict[str, int]:
    """The position of each source layer in `module` as it stands (importers emit layers
    in source order): the first op naming it in walk order, an op's `layer_name` before
    its `fused_layers`."""
    order: dict[str, int] = {}
    for op in module.walk():
        for name in layers_of(op):
            order.setdefault(name, len(order))
    return order


def sort_fused_layers(module: Operation, order: dict[str, int]) -> None:
    """Put the `fused_layers` of every op of `module` in the source order `order` (from
    `layer_order` before the rewrites): rewrites that move ops (a transpose sunk past an
    activation) can absorb layers in another order than the source's. Names `order`
    does not know keep their relative place after the known ones."""
    for op in module.walk():
        fused = fused_layers_of(op)
        if len(fused) < 2:
            continue
        ranked = sorted(fused, key=lambda n: order.get(n, len(order)))
        if ranked != fused:
            op.attributes[FUSED_LAYERS] = ArrayAttr([StringAttr(n) for n in ranked])


def only_read_by(op: Operation, reader: Operation) -> bool:
    """Whether every use of `op`'s results is by `reader` (so `op` dies with it)."""
    return all(use.operation is reader for r in op.results for use in r.uses)


def integer_semantics_of(op: Operation) -> IntegerSemantics:
    """The integer semantics of the module that holds `op` (TFLite's when unstated)."""
    module = op
    while module is not None and not isinstance(module, ModuleOp):
        module = module.parent_op()
    if module is None or INTEGER_SEMANTICS_ATTR not in module.attributes:
        return IntegerSemantics.TFLITE
    return IntegerSemantics(module.attributes[INTEGER_SEMANTICS_ATTR].data)


def op_label(op: Operation, position: int) -> str:
    """How messages name an op: its source layer (`layer_name`, else `layer_index`), its
    position in the function body and its name, e.g. ``layer "conv1" (op #3,
    synap.conv2d)`` or ``op #5 (synap.reshape)``."""
    name = op.attributes.get("layer_name")
    if isinstance(name, StringAttr):
        return f'layer "{name.data}" (op #{position}, {op.name})'
    index = op.attributes.get("layer_index")
    if isinstance(index, IntegerAttr):
        return f"layer @{index.value.data} (op #{position}, {op.name})"
    return f"op #{position} ({op.name})"
