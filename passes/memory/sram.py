"""Which buffers live in the on-chip SRAM: those that move the most bytes per byte of
space they take, while everything placed there fits at every moment.

A buffer's traffic is its size times its accesses (every write and every read of a
tensor inside it), so its bytes moved per byte of space is its access count. Buffers
are taken by that count (the smaller first among equals) while the SRAM's live bytes
stay within its capacity at every step; their offsets in the SRAM are then planned like
the arena's, and the last taken are given back until the plan fits.
"""

from __future__ import annotations

from collections.abc import Sequence

from synapc.passes.memory.offsets import Buffer, arena_size, lower_bound, plan_offsets


def choose_sram(
    buffers: Sequence[Buffer],
    accesses: dict[str, int],
    capacity: int,
    alignment: int,
) -> dict[str, int]:
    """SRAM offsets of the buffers chosen to live there (by name); the others stay in
    the DDR arena."""
    if capacity <= 0:
        return {}
    ranked = sorted(
        (b for b in buffers if b.size <= capacity),
        key=lambda b: (-accesses.get(b.name, 0), b.size, b.name),
    )
    chosen: list[Buffer] = []
    for buffer in ranked:
        if lower_bound([*chosen, buffer]) <= capacity:
            chosen.append(buffer)
    while chosen:
        offsets = plan_offsets(chosen, alignment)
        if arena_size(chosen, offsets) <= capacity:
            return offsets
        chosen.pop()
    return {}
