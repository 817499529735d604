"""The memory planner's parts: tensor lifetimes on a schedule (`liveness`), offsets in
an arena (`offsets`), on-chip SRAM placement (`sram`) and the plan's checker
(`verify`). The `plan-memory` pass (`passes/plan_memory.py`) puts them together."""
