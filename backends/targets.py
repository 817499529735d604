"""Target descriptions: what each SoC runs and how, in one place.

Numbers marked ASSUMED are not published by the vendor; correct them here when known.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synapc.errors import SynapcError


@dataclass(frozen=True)
class Target:
    """A compilation target.

    `npu_float_dtype` is the dtype float tensors are computed in on the NPU (the VS680 /
    VS640 NPUs run float models as float16); GENERIC has no NPU and computes float32.
    """

    name: str
    delegates: tuple[str, ...]
    npu_float_dtype: np.dtype
    cpu: str
    convolution_cores: int = 0
    tensor_processors: int = 0

    @property
    def has_npu(self) -> bool:
        """Whether the target has an NPU delegate."""
        return "npu" in self.delegates


TARGETS: dict[str, Target] = {
    "VS680": Target(
        "VS680",
        ("npu", "gpu", "cpu"),
        np.dtype(np.float16),
        "4x Cortex-A73 2.1 GHz",
        convolution_cores=22,
        tensor_processors=8,
    ),
    "VS640": Target(
        "VS640",
        ("npu", "gpu", "cpu"),
        np.dtype(np.float16),
        "4x Cortex-A55 2.0 GHz",
        convolution_cores=4,
        tensor_processors=6,
    ),
    "GENERIC": Target("GENERIC", ("cpu",), np.dtype(np.float32), "host"),
}
ALIASES = {"VS680A0": "VS680", "DOLPHIN": "VS680", "VS640A0": "VS640", "PLATYPUS": "VS640"}


def get_target(name: str) -> Target:
    """The target named `name` (case-insensitive; vendor aliases accepted)."""
    key = name.upper()
    key = ALIASES.get(key, key)
    if key not in TARGETS:
        known = ", ".join([*TARGETS, *ALIASES])
        raise SynapcError(f"unknown target '{name}' (known: {known})")
    return TARGETS[key]
