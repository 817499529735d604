"""`describe-io{input=0 format="rgb" means=123.675,116.28,103.53 scale=58.4}`: record what
a metafile says about one model input (or, with ``output=k``, one output) in the IR.

The runtime needs, beside each tensor's type, the metafile's `format` string and, for
an input, the normalization its assign() applies to data it is given (`means` per
channel, or one for all, and `scale`: ``(x - means) / scale``). This pass writes them as
``synap.format`` / ``synap.means`` / ``synap.scale`` on `@main`'s argument or result
(see `synapc.io_attributes`), so that they travel with the IR through `synapc-opt` and
the package descriptions read them from there. It changes no op and no type. Options
not given leave the attribute as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, ModuleOp, StringAttr, f64
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from synapc.io_attributes import FORMAT, MEANS, SCALE, Side, float_array, set_io_attributes
from synapc.passes.apply_layout import main_function


@dataclass(frozen=True)
class DescribeIOPass(ModulePass):
    """Set ``synap.format`` / ``synap.means`` / ``synap.scale`` of input `input` or
    output `output` of `@main` (exactly one of the two)."""

    name = "describe-io"

    #: Index of the input to describe (in `@main`'s argument order).
    input: int | None = None
    #: Index of the output to describe (in `@main`'s result order).
    output: int | None = None
    #: The metafile's `format` string.
    format: str | None = None
    #: Per-channel means (one value: every channel); inputs only.
    means: tuple[int | float, ...] | None = None
    #: The divisor after subtracting the means; inputs only.
    scale: int | float | None = None

    def __post_init__(self) -> None:
        if (self.input is None) == (self.output is None):
            raise ValueError("describe-io: give exactly one of input=INDEX, output=INDEX")
        if self.output is not None and (self.means is not None or self.scale is not None):
            raise ValueError("describe-io: means and scale describe inputs only")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        func = main_function(op)
        side: Side = "input" if self.input is not None else "output"
        index = self.input if self.input is not None else self.output
        assert index is not None
        signature = func.function_type
        count = len(signature.inputs.data if side == "input" else signature.outputs.data)
        if not 0 <= index < count:
            raise ValueError(f"describe-io: {side}={index}: @main has {count} {side}s")
        values: dict[str, Attribute | None] = {}
        if self.format is not None:
            values[FORMAT] = StringAttr(self.format)
        if self.means is not None:
            values[MEANS] = float_array([float(m) for m in self.means])
        if self.scale is not None:
            values[SCALE] = FloatAttr(float(self.scale), f64)
        if values:
            set_io_attributes(func, side, index, values)
