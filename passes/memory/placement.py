"""How a memory plan is written in the IR.

Each layer carries ``synap.placement``, one string per result: ``"ddr@<offset>"`` (a
byte offset in the function's arena in DDR), ``"sram@<offset>"`` (in the on-chip SRAM)
or ``"output"`` (a result of the function, placed by rule in a buffer of its own, as
its arguments and weights are). Each planned function carries ``synap.memory_plan``, a
dictionary of byte counts: ``arena`` (planned), ``lower_bound`` (the largest sum of
buffers live at one step), ``no_reuse`` (every buffer apart), ``sram`` (the SRAM's
planned extent), ``sram_resident`` (bytes of the buffers in it), ``weights``,
``inputs``, ``outputs``, and ``alignment`` and ``peak_step`` (the schedule step at the
lower bound).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

#: The attribute of a layer: where each of its results lives.
PLACEMENT = "synap.placement"
#: The attribute of a function: its plan's figures.
PLAN = "synap.memory_plan"
#: Memories a tensor may be placed in, and the mark of a function result.
MEMORIES = ("ddr", "sram")
OUTPUT = "output"


def set_placement(op: Operation, places: Sequence[tuple[str, int] | None]) -> None:
    """Write ``synap.placement`` on `op`: (memory, offset) per result, None for a
    result of the function."""
    op.attributes[PLACEMENT] = ArrayAttr(
        [StringAttr(OUTPUT if p is None else f"{p[0]}@{p[1]}") for p in places]
    )


def placement_of(op: Operation) -> list[tuple[str, int] | None] | None:
    """The (memory, offset) of each result of `op` (None for a function result), or
    None when `op` has no placement or a malformed one."""
    attr = op.attributes.get(PLACEMENT)
    if not isinstance(attr, ArrayAttr) or len(attr.data) != len(op.results):
        return None
    places: list[tuple[str, int] | None] = []
    for item in attr.data:
        if not isinstance(item, StringAttr):
            return None
        if item.data == OUTPUT:
            places.append(None)
            continue
        memory, _, offset = item.data.partition("@")
        if memory not in MEMORIES or not offset.isdigit():
            return None
        places.append((memory, int(offset)))
    return places


def set_plan(func: FuncOp, figures: dict[str, int]) -> None:
    """Write ``synap.memory_plan`` on `func`."""
    func.attributes[PLAN] = DictionaryAttr(
        {k: IntegerAttr(v, i64) for k, v in figures.items()}
    )


def plan_of(func: FuncOp) -> dict[str, int] | None:
    """The figures of `func`'s plan, or None when it has none."""
    attr = func.attributes.get(PLAN)
    if not isinstance(attr, DictionaryAttr):
        return None
    return {k: v.value.data for k, v in attr.data.items() if isinstance(v, IntegerAttr)}
