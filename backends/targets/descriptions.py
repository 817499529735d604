"""Target descriptions: what each SoC has (delegates, engines, data types, throughputs,
bandwidth, on-chip memory), in one place.

Every number says where it comes from. `PUBLISHED` ones cite the vendor's documentation
or SoC brief (as collected in ``TARGETS.md``); `ASSUMED` ones are not published and are
this project's estimates, kept here so that they can be corrected in one place. The
latency model fits a few per-target constants of its own on top of these
(`synapc.backends.targets.latency`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from synapc.errors import SynapcError

#: Where a number comes from: published by the vendor, or assumed here.
PUBLISHED = "published"
ASSUMED = "assumed"

#: The NPU's engines (``TARGETS.md``): NN = convolution cores, TP = tensor processors,
#: PPU = the programmable shader; and the SoC's other delegates.
ENGINES = ("NN", "TP", "PPU", "GPU", "CPU")


@dataclass(frozen=True)
class Fact:
    """A number and where it comes from (`PUBLISHED` with the source, or `ASSUMED`
    with the reasoning)."""

    value: float
    origin: str
    source: str

    def __post_init__(self) -> None:
        if self.origin not in (PUBLISHED, ASSUMED):
            raise ValueError(f"origin must be {PUBLISHED!r} or {ASSUMED!r}")


def published(value: float, source: str) -> Fact:
    """A number the vendor publishes (`source` says where)."""
    return Fact(value, PUBLISHED, source)


def assumed(value: float, reason: str) -> Fact:
    """A number not published: this project's estimate (`reason` says why)."""
    return Fact(value, ASSUMED, reason)


@dataclass(frozen=True)
class Engine:
    """One engine of a target: `count` units and its peak throughput in operations
    (a multiply-accumulate is two) per second per data type class (``"8bit"``,
    ``"16bit"``, ``"float16"``, ``"float32"``)."""

    name: str
    count: Fact
    ops_per_second: dict[str, Fact] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    """A compilation target.

    `delegates` are in the target's default order (the first is `delegate: default`);
    `npu_float_dtype` is the dtype float tensors are computed in on the NPU (the VS680 /
    VS640 NPUs run float models as float16); GENERIC has no NPU and computes float32.
    `engines` maps an engine name of `ENGINES` to its description; `ddr_bandwidth` is in
    bytes per second, `sram_bytes` the on-chip memory the memory planner may use and
    `arena_alignment` the byte multiple every planned buffer starts at.
    """

    name: str
    delegates: tuple[str, ...]
    npu_float_dtype: np.dtype
    cpu: str
    engines: dict[str, Engine] = field(default_factory=dict)
    ddr_bandwidth: Fact | None = None
    sram_bytes: Fact | None = None
    arena_alignment: Fact | None = None

    @property
    def has_npu(self) -> bool:
        """Whether the target has an NPU delegate."""
        return "npu" in self.delegates

    @property
    def convolution_cores(self) -> int:
        """The NPU's convolution cores (0 without an NPU)."""
        return int(self.engines["NN"].count.value) if "NN" in self.engines else 0

    @property
    def tensor_processors(self) -> int:
        """The NPU's tensor processors (0 without an NPU)."""
        return int(self.engines["TP"].count.value) if "TP" in self.engines else 0

    def facts(self) -> list[tuple[str, Fact]]:
        """Every number of the target with its name, for reports and for checking
        that each one says where it comes from."""
        out = []
        for engine in self.engines.values():
            out.append((f"{engine.name} count", engine.count))
            out += [
                (f"{engine.name} {kind} ops/s", fact)
                for kind, fact in engine.ops_per_second.items()
            ]
        out += [
            (name, fact)
            for name, fact in (
                ("DDR bandwidth B/s", self.ddr_bandwidth),
                ("SRAM bytes", self.sram_bytes),
                ("arena alignment B", self.arena_alignment),
            )
            if fact is not None
        ]
        return out


#: Where planned buffers start (not published): a 64-byte multiple, a cache line of the
#: Cortex-A CPUs that hand buffers to the NPU and a burst of its DMA.
_ALIGNMENT = assumed(64, "not published; 64 bytes: a CPU cache line and a DMA burst")
_BRIEF = "TARGETS.md (vendor SoC brief and NPU documentation)"
_MEASURED_PEAK = "TARGETS.md: measured 8-bit / 16-bit peak of the NPU"


def _npu_engines(
    cores: int,
    processors: int,
    peak_8bit: float,
    peak_16bit: float,
    cpu_flops: Fact,
    gpu_flops: Fact,
) -> dict[str, Engine]:
    """The engines of a VIP9000-class NPU SoC: the measured peaks belong to the
    convolution cores; the tensor processors' and shader's shares are assumed."""
    return {
        "NN": Engine(
            "NN",
            published(cores, _BRIEF),
            {
                "8bit": published(peak_8bit, _MEASURED_PEAK),
                "16bit": published(peak_16bit, _MEASURED_PEAK),
                # float16 runs on the shader, not the cores (npu_operator_support.csv)
            },
        ),
        "TP": Engine(
            "TP",
            published(processors, _BRIEF),
            {
                "8bit": assumed(
                    peak_8bit / 16,
                    "a tensor processor is a vector unit: a sixteenth of the cores' "
                    "peak (TARGETS.md: convolutions off the cores run 'much slower')",
                ),
                "16bit": assumed(peak_16bit / 16, "as 8-bit, the cores' 16-bit share"),
                "float16": assumed(peak_16bit / 16, "as 16-bit: float16 is a 16-bit type"),
            },
        ),
        "PPU": Engine(
            "PPU",
            published(1, _BRIEF),
            {
                kind: assumed(
                    peak_16bit / 32,
                    "one programmable shader: half a tensor processor's rate",
                )
                for kind in ("8bit", "16bit", "float16", "float32")
            },
        ),
        "GPU": Engine("GPU", published(1, _BRIEF), {"float16": gpu_flops}),
        "CPU": Engine("CPU", published(4, _BRIEF), {"float32": cpu_flops}),
    }


TARGETS: dict[str, Target] = {
    "VS680": Target(
        "VS680",
        ("npu", "gpu", "cpu"),
        np.dtype(np.float16),
        "4x Cortex-A73 2.1 GHz",
        _npu_engines(
            22,
            8,
            7.65e12,
            1.7e12,
            assumed(
                4 * 2.1e9 * 8,
                "4 Cortex-A73 at 2.1 GHz, one 128-bit NEON FMA per cycle (8 flop)",
            ),
            assumed(
                90e9 * 1.5,
                "PowerVR class GPU; VS640's GE9920 publishes 90 GFLOPS fp16, VS680's "
                "is a larger part of the same family",
            ),
        ),
        ddr_bandwidth=assumed(
            8.5e9,
            "LPDDR4 at the vendor compiler's bandwidth setting 22 (TARGETS.md); half "
            "of a 32-bit LPDDR4-3200 channel pair's 17 GB/s is available to the NPU",
        ),
        sram_bytes=assumed(
            1 << 20, "on-chip SRAM is present but its size is not published: 1 MiB"
        ),
        arena_alignment=_ALIGNMENT,
    ),
    "VS640": Target(
        "VS640",
        ("npu", "gpu", "cpu"),
        np.dtype(np.float16),
        "4x Cortex-A55 2.0 GHz",
        _npu_engines(
            4,
            6,
            1.6e12,
            0.45e12,
            assumed(
                4 * 2.0e9 * 4,
                "4 Cortex-A55 at 2.0 GHz, one 64-bit NEON FMA per cycle (4 flop)",
            ),
            published(90e9, "TARGETS.md: PowerVR GE9920, 90 GFLOPS fp16"),
        ),
        ddr_bandwidth=assumed(
            3.9e9,
            "the vendor compiler's bandwidth setting 10 against VS680's 22 "
            "(TARGETS.md), scaled from VS680's assumed 8.5 GB/s",
        ),
        sram_bytes=assumed(512 << 10, "not published; a smaller NPU than VS680's: 512 KiB"),
        arena_alignment=_ALIGNMENT,
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
