"""`cse`: merge ops that compute the same value (same op, operands, properties and
attributes). Synap ops are pure, so two identical layers become one; ops from different
source layers differ in `layer_name` and are kept apart."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse


@dataclass(frozen=True)
class CSEPass(ModulePass):
    """Common subexpression elimination over every region of the module."""

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cse(op)
