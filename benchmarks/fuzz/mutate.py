"""Byte-level mutations shared by the structure-aware fuzzers: what a damaged download
or a hostile file looks like below the format's structure."""

from __future__ import annotations

import numpy as np

#: Values that break size arithmetic when they land in a length, count or dimension.
INTERESTING_INTS = (
    0,
    1,
    -1,
    2,
    255,
    256,
    65535,
    65536,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**62,
    2**63 - 1,
    -(2**31),
    -(2**63),
)


def mutate_bytes(data: bytes, rng: np.random.Generator, edits: int = 4) -> bytes:
    """`data` with a few random edits: byte flips, interesting 32-bit values written
    over it, inserted or deleted runs, a truncation or a duplicated chunk."""
    out = bytearray(data)
    for _ in range(edits):
        if not out:
            out += bytes(rng.integers(0, 256, 8, dtype=np.uint8))
        kind = int(rng.integers(0, 6))
        at = int(rng.integers(0, len(out)))
        if kind == 0:
            out[at] ^= 1 << int(rng.integers(0, 8))
        elif kind == 1:
            value = int(rng.choice(INTERESTING_INTS)) & 0xFFFFFFFF
            out[at : at + 4] = value.to_bytes(4, "little")
        elif kind == 2:
            out[at:at] = bytes(
                rng.integers(0, 256, int(rng.integers(1, 16)), dtype=np.uint8)
            )
        elif kind == 3:
            del out[at : at + int(rng.integers(1, 64))]
        elif kind == 4:
            del out[int(rng.integers(len(out) // 2, len(out) + 1)) :]
        else:
            size = int(rng.integers(1, 256))
            out[at:at] = out[at : at + size]
    return bytes(out)
