"""`apply-layout{layout=nhwc|nchw}`: the metafile's `data_layout`, i.e. the layout the
user sees at every 4-D model input and output.

Each 4-D input or output whose ``synap.layout`` (see `synapc.io_attributes`; IR without
one is in its own NHWC layout) differs from `layout` gets a transpose at the boundary:
the argument takes the new layout and is transposed back to what the body expects, the
result is transposed into the new layout; ``synap.layout`` then records `layout`. Other
tensors (not 4-D, or already in `layout`, or with layout "none") are unchanged.
`optimize` later cancels these transposes against the importer's own boundary
transposes, so an ONNX model converted with ``layout=nhwc`` runs without any.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from synapc.dialects.synap.data_movement import TransposeOp
from synapc.io_attributes import LAYOUT, Side, layout_of, set_io_attributes

#: The permutation that takes a 4-D tensor from one layout to the other.
_PERMUTATIONS = {("nchw", "nhwc"): (0, 2, 3, 1), ("nhwc", "nchw"): (0, 3, 1, 2)}

#: The layouts `apply-layout` offers.
LAYOUTS = ("nhwc", "nchw")


def main_function(module: ModuleOp) -> FuncOp:
    """The module's `@main`, whose boundary the signature passes rewrite."""
    for op in module.body.block.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == "main":
            return op
    raise ValueError("the module has no @main function")


def return_of(func: FuncOp) -> ReturnOp:
    """The `func.return` that ends a single-block function."""
    last = func.body.block.last_op
    if not isinstance(last, ReturnOp):
        raise ValueError(f"@{func.sym_name.data} does not end with func.return")
    return last


@dataclass(frozen=True)
class ApplyLayoutPass(ModulePass):
    """Give every 4-D input and output of `@main` the layout `layout` (see the module
    docstring)."""

    name = "apply-layout"

    #: "nhwc" or "nchw".
    layout: str

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(
                f"apply-layout: layout={self.layout}: expected one of {', '.join(LAYOUTS)}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        func = main_function(op)
        block = func.body.block
        recorded: dict[str, Attribute | None] = {LAYOUT: StringAttr(self.layout)}
        for index, arg in enumerate(list(block.args)):
            t = arg.type
            perm = self._permutation(func, "input", index, t)
            if perm is None:
                continue
            assert isinstance(t, TensorType)
            shape = [t.get_shape()[axis] for axis in perm]
            new_arg = block.insert_arg(TensorType(t.element_type, shape), index)
            back = TransposeOp.make(new_arg, perm=[perm.index(axis) for axis in range(4)])
            first = block.first_op
            block.insert_op_before(back, first) if first else block.add_op(back)
            arg.replace_all_uses_with(back.results[0])
            block.erase_arg(arg)
            set_io_attributes(func, "input", index, dict(recorded))
        ret = return_of(func)
        for index, value in enumerate(list(ret.operands)):
            perm = self._permutation(func, "output", index, value.type)
            if perm is None:
                continue
            out = TransposeOp.make(value, perm=list(perm))
            block.insert_op_before(out, ret)
            ret.operands[index] = out.results[0]
            set_io_attributes(func, "output", index, dict(recorded))
        func.function_type = FunctionType.from_lists(
            [a.type for a in block.args], [v.type for v in ret.operands]
        )

    def _permutation(
        self, func: FuncOp, side: Side, index: int, t: Attribute
    ) -> tuple[int, ...] | None:
        """The permutation from the tensor's current layout to `layout` (None: the
        tensor is not 4-D, its layout is "none" or already `layout`)."""
        if not isinstance(t, TensorType) or t.get_num_dims() != 4:
            return None
        return _PERMUTATIONS.get((layout_of(func, side, index), self.layout))
