"""The memory plan's checker: every intermediate has a place, aligned, inside its
memory, and no two tensors live at the same step share a byte unless one is kept inside
the other by an alias rule (`liveness`) at the offset the rule gives.

It runs after ``plan-memory`` always, on plans read back from IR text too, and in the
property tests; a broken plan is a `MemoryPlanError` naming both tensors and the layer
where they collide.
"""

from __future__ import annotations

from xdsl.dialects.func import FuncOp

from synapc.errors import SynapcError
from synapc.passes.memory.liveness import Liveness, layer_label, liveness, value_key
from synapc.passes.memory.placement import placement_of, plan_of


class MemoryPlanError(SynapcError):
    """A memory plan that would let one tensor overwrite another."""


def _describe(live: Liveness, key: str, place: tuple[str, int]) -> str:
    tensor = live.tensors[key]
    producer = live.schedule[tensor.first]
    memory, offset = place
    return (
        f"tensor {key} of {layer_label(producer)}, {memory} bytes "
        f"[{offset}, {offset + tensor.size})"
    )


def verify_plan(func: FuncOp, float_bytes: int) -> None:
    """Check the plan written on `func` (see the module docstring); `float_bytes` sizes
    its float tensors as the plan did."""
    name = f"memory plan of @{func.sym_name.data}"
    figures = plan_of(func)
    if figures is None:
        raise MemoryPlanError(f"{name}: the function has no synap.memory_plan")
    alignment = max(figures.get("alignment", 1), 1)
    capacity = {"ddr": figures.get("arena", 0), "sram": figures.get("sram", 0)}
    live = liveness(func, float_bytes, alignment)
    places: dict[str, tuple[str, int]] = {}
    for op in live.schedule:
        placed = placement_of(op)
        if placed is None:
            raise MemoryPlanError(f"{name}: {layer_label(op)} has no valid synap.placement")
        for j, (value, place) in enumerate(zip(op.results, placed, strict=True)):
            key = value_key(value)
            if key not in live.tensors:
                if place is not None:
                    raise MemoryPlanError(
                        f"{name}: result #{j} of {layer_label(op)} is returned, so it is "
                        f"placed by rule, but the plan puts it at {place[0]}@{place[1]}"
                    )
                continue
            if place is None:
                raise MemoryPlanError(
                    f"{name}: tensor {key} of {layer_label(op)} is an intermediate "
                    "but the plan places it as an output"
                )
            places[key] = place
    for key, place in places.items():
        root, delta = live.root(key)
        memory, offset = place
        size = live.tensors[key].size
        if offset + size > capacity[memory]:
            raise MemoryPlanError(
                f"{name}: {_describe(live, key, place)} ends beyond the planned "
                f"{memory} extent of {capacity[memory]} bytes"
            )
        if root == key and offset % alignment:
            raise MemoryPlanError(
                f"{name}: {_describe(live, key, place)} is not aligned to {alignment} bytes"
            )
        if root != key and place != (places[root][0], places[root][1] + delta):
            raise MemoryPlanError(
                f"{name}: {_describe(live, key, place)} is kept inside tensor {root} by "
                f"an alias rule, so it belongs at {places[root][0]}@"
                f"{places[root][1] + delta}"
            )
    _check_overlaps(name, live, places)


def _check_overlaps(name: str, live: Liveness, places: dict[str, tuple[str, int]]) -> None:
    """Raise on two tensors of different buffers live at one step with shared bytes:
    each step's live tensors sorted by offset, each against the one reaching furthest
    so far."""
    steps = len(live.schedule)
    starting: list[list[str]] = [[] for _ in range(steps)]
    for key, tensor in live.tensors.items():
        starting[tensor.first].append(key)
    alive: list[str] = []
    for step in range(steps):
        alive = [k for k in alive if live.tensors[k].last >= step] + starting[step]
        for memory in ("ddr", "sram"):
            spans = sorted(
                (places[k][1], places[k][1] + live.tensors[k].size, k)
                for k in alive
                if places[k][0] == memory and live.tensors[k].size > 0
            )
            reach: tuple[int, str] | None = None
            for start, end, key in spans:
                if reach is not None and start < reach[0]:
                    other = reach[1]
                    if live.root(other)[0] != live.root(key)[0]:
                        raise MemoryPlanError(
                            f"{name}: {_describe(live, other, places[other])} and "
                            f"{_describe(live, key, places[key])} overlap while both are "
                            f"live at {layer_label(live.schedule[step])}"
                        )
                if reach is None or end > reach[0]:
                    reach = (end, key)
