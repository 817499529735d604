"""Lowering of a synap function to one jitted JAX function.

Each synap op class maps to a kernel (`KERNELS`, filled by the modules of
`backends/jax/ops/`, one per synap op module). A function becomes a Python function that
runs its kernels in program order; `jax.jit` traces and compiles it as a whole. Weights
are passed in as a parameter dict rather than baked into the program, so compilation stays
fast and the exported program stays small.

Float tensors are computed in the target's float dtype (float16 on the NPU, float32 on
GENERIC); quantized tensors carry their stored integers and the kernels reproduce TFLite's
reference integer arithmetic.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from synapc.backends.targets import Target
from synapc.dialects.synap.base import element_of, is_float
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import device_dtype, numpy_dtype
from synapc.weights import WeightStore


@dataclass(frozen=True)
class LoweringContext:
    """What kernels need to know beyond their operands: the float compute dtype."""

    float_dtype: np.dtype

    def dtype_of(self, value: SSAValue) -> np.dtype:
        """The dtype a value is computed in (float values use the compute dtype)."""
        element = element_of(value)
        return self.float_dtype if is_float(element) else device_dtype(numpy_dtype(element))


Kernel = Callable[[Any, list[jax.Array], LoweringContext], Sequence[jax.Array]]
KERNELS: dict[type[Operation], Kernel] = {}
_KERNEL_MODULES = ("activation", "conv", "conversion", "data_movement", "elementwise",
                   "normalization", "pool", "reduce", "resize",
                   "detection")  # fmt: skip


def kernel(*op_classes: type[Operation]) -> Callable[[Kernel], Kernel]:
    """Register a kernel for synap op classes."""

    def register(function: Kernel) -> Kernel:
        for op_class in op_classes:
            KERNELS[op_class] = function
        return function

    return register


def _load_kernels() -> None:
    for name in _KERNEL_MODULES:
        importlib.import_module(f"synapc.backends.jax.ops.{name}")


class UnsupportedOpError(NotImplementedError):
    """An op (or an op with these types) that the JAX backend cannot run."""


def lower(func: FuncOp, weights: WeightStore, target: Target):
    """The JAX function ``f(params, *inputs) -> outputs`` for `func`, and its params.

    Returns (jitted function, params dict of device arrays).
    """
    _load_kernels()
    ctx = LoweringContext(np.dtype(target.npu_float_dtype))
    params: dict[str, jax.Array] = {}
    for op in func.body.block.ops:
        if isinstance(op, ConstantOp):
            array = weights[op.handle]
            if array.dtype.kind == "f":
                array = array.astype(ctx.float_dtype)
            params[op.handle] = jnp.asarray(array.astype(device_dtype(array.dtype)))
        elif not isinstance(op, ReturnOp) and type(op) not in KERNELS:
            raise UnsupportedOpError(f"{op.name} has no JAX kernel")
    output_dtypes = [
        device_dtype(numpy_dtype(t.element_type)) for t in func.function_type.outputs.data
    ]

    def run(params: dict[str, jax.Array], *inputs: jax.Array) -> list[jax.Array]:
        env: dict[SSAValue, jax.Array] = {}
        for arg, x in zip(func.body.block.args, inputs, strict=True):
            env[arg] = x.astype(ctx.dtype_of(arg))
        for op in func.body.block.ops:
            if isinstance(op, ReturnOp):
                return [env[v].astype(d) for v, d in zip(op.operands, output_dtypes,
                                                          strict=True)]  # fmt: skip
            if isinstance(op, ConstantOp):
                env[op.results[0]] = params[op.handle]
                continue
            results = KERNELS[type(op)](op, [env[v] for v in op.operands], ctx)
            for value, result in zip(op.results, results, strict=True):
                env[value] = result
        raise ValueError("function has no return")

    return jax.jit(run), params
