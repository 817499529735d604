"""Quantized ops under ONNX semantics (`IntegerSemantics.ONNX`) run through their float
kernels.

ONNX defines a quantized op by its QDQ form: dequantize the inputs to float32, run the
float op, quantize the result rounding half to even. ONNX Runtime's quantized kernels
(QLinearAdd, QLinearMul, QLinearSigmoid's lookup table, QLinearAveragePool, ...) compute
that float formula, so every quantized op without an integer kernel of its own under ONNX
semantics (see `ONNX_INTEGER_KERNELS`) runs its float kernel on a float twin of the op:
the same op class, properties and attributes, with float32 tensor types in place of the
quantized ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax
import numpy as np
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Block, Operation

from synapc.backends.jax.lowering import Kernel, LoweringContext
from synapc.backends.jax.ops.quantized import dequantize_float32, qtype, quantize_half_even
from synapc.dialects.synap.base import is_quantized, tensor_type


def _float_type(t: Attribute) -> Attribute:
    tensor = tensor_type(t)
    if not is_quantized(tensor.element_type):
        return t
    return TensorType(f32, tensor.get_shape())


def float_twin(op: Operation) -> Operation:
    """A detached copy of `op` whose quantized tensor types are float32 (its operands are
    arguments of a block of their own; the module is not touched)."""
    block = Block(arg_types=[_float_type(v.type) for v in op.operands])
    return type(op).create(
        operands=list(block.args),
        result_types=[_float_type(r.type) for r in op.results],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )


def run_in_float(
    kernel: Kernel, op: Operation, args: list[jax.Array], ctx: LoweringContext
) -> Sequence[jax.Array]:
    """Run quantized `op` as dequantize -> `kernel` on its float twin -> quantize."""
    float_args = [
        dequantize_float32(a, qtype(v)) if is_quantized(tensor_type(v).element_type) else a
        for v, a in zip(op.operands, args, strict=True)
    ]
    float_ctx = dataclasses.replace(ctx, float_dtype=np.dtype(np.float32))
    results = kernel(float_twin(op), float_args, float_ctx)
    return [
        quantize_half_even(y, qtype(r)) if is_quantized(tensor_type(r).element_type) else y
        for r, y in zip(op.results, results, strict=True)
    ]
