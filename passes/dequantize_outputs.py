"""`dequantize-outputs{outputs=0,2}`: the metafile's `dequantize_outputs` and
``outputs[k].dequantize``, i.e. quantized model outputs the user receives as float32.

Each listed output of `@main` (all of them when `outputs` is not given) whose type is
quantized gets a `synap.dequantize` to float32 before `func.return`; float and plain
integer outputs are left as they are, so the runtime describes the output as float32
without quantization. The output's attributes (name, format, layout) stay.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
from xdsl.passes import ModulePass

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.conversion import DequantizeOp
from synapc.passes.apply_layout import main_function, return_of


@dataclass(frozen=True)
class DequantizeOutputsPass(ModulePass):
    """Dequantize the quantized outputs of `@main` listed in `outputs` (None: all)."""

    name = "dequantize-outputs"

    #: Indices of the outputs to dequantize, in `@main`'s result order (None: all).
    outputs: tuple[int, ...] | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        func = main_function(op)
        ret = return_of(func)
        count = len(ret.operands)
        chosen = range(count) if self.outputs is None else self.outputs
        for index in chosen:
            if not 0 <= index < count:
                raise ValueError(
                    f"dequantize-outputs: outputs={index}: @main has {count} outputs"
                )
            value = ret.operands[index]
            t = value.type
            if isinstance(t, TensorType) and isinstance(
                t.element_type, UniformQuantizedType
            ):
                dequantize = DequantizeOp.make(
                    value, result_types=[TensorType(f32, t.get_shape())]
                )
                func.body.block.insert_op_before(dequantize, ret)
                ret.operands[index] = dequantize.results[0]
        func.function_type = FunctionType.from_lists(
            list(func.function_type.inputs.data), [v.type for v in ret.operands]
        )
