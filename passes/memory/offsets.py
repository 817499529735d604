"""Offsets of buffers in one arena: the dynamic storage allocation problem.

Each buffer has a size and a lifetime (the first and last step of the schedule that
touch it, both included); two buffers whose lifetimes meet must not share a byte. The
arena is the largest end offset. No arena can be smaller than the largest sum of the
sizes live at one step (`lower_bound`).

`plan_offsets` places buffers greedily by size, each at the best-fitting gap among the
buffers placed so far that it meets (Pisarchyk & Lee 2020, "greedy by size"), which
reaches the lower bound on most networks; when it does not, it also tries other orders
and then climbs (`_climb`): move one buffer earlier in the placement order, keep the
order when the arena shrinks. Placing a buffer at the lowest offset free of the
buffers placed before it can reach any optimum from some order (take an optimal
placement, place its buffers by increasing offset: each lands at or below its optimal
offset), so searching orders searches every placement worth having.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Buffer:
    """One block of the arena: `size` bytes live from step `first` to step `last`."""

    name: str
    size: int
    first: int
    last: int

    def meets(self, other: Buffer) -> bool:
        """Whether the two lifetimes share a step."""
        return self.first <= other.last and other.first <= self.last


def align(size: int, alignment: int) -> int:
    """`size` rounded up to a multiple of `alignment`."""
    return -(-size // alignment) * alignment


def live_bytes(buffers: Sequence[Buffer]) -> np.ndarray:
    """The sum of the sizes of the buffers live at each step."""
    if not buffers:
        return np.zeros(1, np.int64)
    change = np.zeros(max(b.last for b in buffers) + 2, np.int64)
    np.add.at(change, [b.first for b in buffers], [b.size for b in buffers])
    np.add.at(change, [b.last + 1 for b in buffers], [-b.size for b in buffers])
    return np.cumsum(change)


def lower_bound(buffers: Sequence[Buffer]) -> int:
    """The largest sum of sizes live at one step: no placement is smaller."""
    return int(live_bytes(buffers).max())


def peak_step(buffers: Sequence[Buffer]) -> int:
    """The first step at which the live sizes sum to `lower_bound`."""
    return int(np.argmax(live_bytes(buffers)))


def arena_size(buffers: Sequence[Buffer], offsets: dict[str, int]) -> int:
    """The largest end offset of a placement."""
    return max((offsets[b.name] + b.size for b in buffers), default=0)


def _place(
    buffer: Buffer, placed: list[tuple[Buffer, int]], alignment: int, best_fit: bool
) -> int:
    """The offset of `buffer` among `placed` (buffer, offset) pairs: the lowest gap it
    fits in, or with `best_fit` the smallest such gap (the end when none fits)."""
    taken = sorted((o, o + b.size) for b, o in placed if b.meets(buffer))
    best, best_gap = None, None
    cursor = 0
    for start, end in taken:
        gap = start - cursor
        if gap >= buffer.size:
            if not best_fit:
                return cursor
            if best_gap is None or gap < best_gap:
                best, best_gap = cursor, gap
        cursor = max(cursor, align(end, alignment))
    return cursor if best is None else best


def place_in_order(
    order: Sequence[Buffer], alignment: int = 1, best_fit: bool = False
) -> dict[str, int]:
    """Offsets of the buffers placed one after another in `order` (see `_place`)."""
    placed: list[tuple[Buffer, int]] = []
    offsets: dict[str, int] = {}
    for buffer in order:
        offset = _place(buffer, placed, alignment, best_fit)
        placed.append((buffer, offset))
        offsets[buffer.name] = offset
    return offsets


def greedy_by_size(buffers: Sequence[Buffer], alignment: int = 1) -> dict[str, int]:
    """Pisarchyk & Lee's greedy by size: largest first (longest lifetime, then earliest
    first step breaking ties), each in its best-fitting gap."""
    order = sorted(buffers, key=lambda b: (-b.size, b.first - b.last, b.first, b.name))
    return place_in_order(order, alignment, best_fit=True)


def _candidate_orders(buffers: Sequence[Buffer]) -> list[list[Buffer]]:
    """Placement orders worth trying after greedy by size: by size with the lowest
    fit, by first step, by lifetime length, by size times lifetime."""
    return [
        sorted(buffers, key=lambda b: (-b.size, b.first, b.name)),
        sorted(buffers, key=lambda b: (b.first, -b.size, b.name)),
        sorted(buffers, key=lambda b: (b.first - b.last, -b.size, b.name)),
        sorted(buffers, key=lambda b: (-b.size * (b.last - b.first + 1), b.name)),
    ]


#: The climb's budget: about this many buffer comparisons (a placement of n buffers
#: makes about n * n / 2), so that a large function does not climb for minutes.
CLIMB_COMPARISONS = 4_000_000
#: The climb tries at most this many orders.
CLIMB_STEPS = 2000


def plan_offsets(
    buffers: Sequence[Buffer],
    alignment: int = 1,
    climb_steps: int | None = None,
    seed: int = 0,
) -> dict[str, int]:
    """Offsets (multiples of `alignment`; sizes are expected aligned already) for
    `buffers`: greedy by size, then, while above `lower_bound`, other orders and a hill
    climb over the placement order of `climb_steps` trials (by default as many as
    `CLIMB_COMPARISONS` allows, at most `CLIMB_STEPS`). Deterministic: the same buffers
    give the same offsets on every machine."""
    bound = lower_bound(buffers)
    best = greedy_by_size(buffers, alignment)
    best_size = arena_size(buffers, best)
    if best_size <= bound:
        return best
    best_order: list[Buffer] = []
    for order in _candidate_orders(buffers):
        offsets = place_in_order(order, alignment)
        size = arena_size(buffers, offsets)
        if size < best_size or not best_order:
            best_order = order
            if size < best_size:
                best, best_size = offsets, size
        if best_size <= bound:
            return best
    if climb_steps is None:
        climb_steps = min(CLIMB_STEPS, CLIMB_COMPARISONS // max(len(buffers) ** 2, 1))
    offsets, size = _climb(buffers, best_order, alignment, bound, climb_steps, seed)
    return offsets if size < best_size else best


def _climb(
    buffers: Sequence[Buffer],
    order: list[Buffer],
    alignment: int,
    bound: int,
    steps: int,
    seed: int,
) -> tuple[dict[str, int], int]:
    """Hill climb over the placement order: move a random buffer to a random earlier
    place; keep the new order when the arena does not grow (sideways moves let the
    search cross plateaus). Stops at `bound` or after `steps` trials."""
    rng = random.Random(seed)
    offsets = place_in_order(order, alignment)
    size = arena_size(buffers, offsets)
    n = len(order)
    for _ in range(steps):
        if size <= bound or n < 2:
            break
        i = rng.randrange(1, n)
        j = rng.randrange(0, i)
        trial = [*order[:j], order[i], *order[j:i], *order[i + 1 :]]
        trial_offsets = place_in_order(trial, alignment)
        trial_size = arena_size(buffers, trial_offsets)
        if trial_size <= size:
            order, offsets, size = trial, trial_offsets, trial_size
    return offsets, size


def naive_linear(buffers: Sequence[Buffer], alignment: int = 1) -> dict[str, int]:
    """A linear allocator's offsets: buffers in order of their first step, each at the
    lowest offset above every live buffer's end (a bump pointer that resets only when
    everything below it is free): the baseline `benchmarks/memory_plan.py` reports."""
    offsets: dict[str, int] = {}
    live: list[Buffer] = []
    for buffer in sorted(buffers, key=lambda b: (b.first, b.name)):
        live = [b for b in live if b.last >= buffer.first]
        top = max((offsets[b.name] + b.size for b in live), default=0)
        offsets[buffer.name] = align(top, alignment)
        live.append(buffer)
    return offsets
