"""Targets: what each SoC has (`descriptions`), which NPU engine runs each op or why
none does (`support`, from the vendor's table in `operator_table`)."""

from synapc.backends.targets.descriptions import (
    ALIASES,
    ASSUMED,
    ENGINES,
    PUBLISHED,
    TARGETS,
    Engine,
    Fact,
    Target,
    get_target,
)

__all__ = [
    "ALIASES",
    "ASSUMED",
    "ENGINES",
    "PUBLISHED",
    "TARGETS",
    "Engine",
    "Fact",
    "Target",
    "get_target",
]
