"""Lowering of a synap function to one jitted JAX function.

Each synap op class maps to a kernel (`KERNELS`, filled by the modules of
`backends/jax/ops/`, one per synap op module). A function becomes a Python function that
runs its kernels in program order; `jax.jit` traces and compiles it as a whole. Weights
are passed in as a parameter dict rather than baked into the program, so compilation stays
fast and the exported program stays small.

Float tensors of float models are computed in the target's float dtype (float16 on the
NPU, float32 on GENERIC). In a model with quantized tensors the float ones are the host's
quantize/dequantize edges and the float islands that fall back to the CPU, so they are
float32 on every target. Quantized tensors carry their stored integers; the kernels
reproduce the arithmetic the module's `IntegerSemantics` names: TFLite's reference
integer kernels, or ONNX's float definition (`float_emulation`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from synapc.backends.targets import Target
from synapc.dialects.synap.attributes import IntegerSemantics
from synapc.dialects.synap.base import element_of, is_float, is_quantized
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import device_dtype, numpy_dtype
from synapc.weights import WeightStore


@dataclass(frozen=True)
class LoweringContext:
    """What kernels need to know beyond their operands: the float compute dtype and the
    arithmetic of quantized ops."""

    float_dtype: np.dtype
    semantics: IntegerSemantics = IntegerSemantics.TFLITE

    def dtype_of(self, value: SSAValue) -> np.dtype:
        """The dtype a value is computed in (float values use the compute dtype)."""
        element = element_of(value)
        return self.float_dtype if is_float(element) else device_dtype(numpy_dtype(element))


Kernel = Callable[[Any, list[jax.Array], LoweringContext], Sequence[jax.Array]]
KERNELS: dict[type[Operation], Kernel] = {}
#: Op classes whose kernels implement `IntegerSemantics.ONNX` themselves; quantized
#: instances of the others run through their float kernel under ONNX semantics.
ONNX_INTEGER_KERNELS: set[type[Operation]] = set()
_KERNEL_MODULES = ("activation", "conv", "conversion", "data_movement", "elementwise",
                   "normalization", "pool", "reduce", "resize",
                   "detection", "fused")  # fmt: skip


def kernel(
    *op_classes: type[Operation], onnx_integer: bool = False
) -> Callable[[Kernel], Kernel]:
    """Register a kernel for synap op classes; `onnx_integer` says that it computes
    quantized ops under `IntegerSemantics.ONNX` itself (see `ONNX_INTEGER_KERNELS`)."""

    def register(function: Kernel) -> Kernel:
        for op_class in op_classes:
            KERNELS[op_class] = function
            if onnx_integer:
                ONNX_INTEGER_KERNELS.add(op_class)
        return function

    return register


#: A host transform of one operand (works on numpy arrays and, under jit, JAX arrays).
Transform = Callable[[Any], Any]
#: The operand transforms an op wants, by operand index.
Layout = Callable[[Any], dict[int, Transform]]
#: op class -> its kernel's `Layout` (see `operand_layout`).
OPERAND_LAYOUTS: dict[type[Operation], Layout] = {}


def operand_layout(*op_classes: type[Operation]) -> Callable[[Layout], Layout]:
    """Register the operand layout a kernel wants: a function of the op giving, per
    operand index, a transform (e.g. a filter transposed to XLA's HWIO). The kernel then
    receives those operands transformed: constant operands once on the host at lowering
    time (so a program never spends time re-laying out its weights), computed operands
    by the same transform inside the program."""

    def register(function: Layout) -> Layout:
        for op_class in op_classes:
            OPERAND_LAYOUTS[op_class] = function
        return function

    return register


def load_kernels() -> None:
    """Import every kernel module, filling `KERNELS` and `OPERAND_LAYOUTS`."""
    for name in _KERNEL_MODULES:
        importlib.import_module(f"synapc.backends.jax.ops.{name}")


class UnsupportedOpError(NotImplementedError):
    """An op (or an op with these types) that the JAX backend cannot run."""


def as_kernel_operand(array: np.ndarray, ctx: LoweringContext) -> np.ndarray:
    """A constant's values as kernels receive them: floats in the compute dtype, 64-bit
    integers as their 32-bit device dtype."""
    if array.dtype.kind == "f":
        array = array.astype(ctx.float_dtype)
    return array.astype(device_dtype(array.dtype))


def _is_quantized_value(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and is_quantized(value.type.element_type)


def _has_quantized_tensors(func: FuncOp) -> bool:
    return any(
        _is_quantized_value(v) for op in func.body.block.ops for v in op.results
    ) or any(_is_quantized_value(a) for a in func.body.block.args)


def compute_float_dtype(func: FuncOp, target: Target) -> np.dtype:
    """The dtype float tensors of `func` compute in: the target's NPU float type, but
    float32 in a model with quantized tensors (its float tensors are the host's quantize /
    dequantize edges or CPU islands)."""
    return np.dtype(np.float32 if _has_quantized_tensors(func) else target.npu_float_dtype)


def kernel_for(op: Operation, ctx: LoweringContext) -> Kernel:
    """The kernel that runs `op` under the context's integer semantics."""
    kernel = KERNELS[type(op)]
    if (
        ctx.semantics is IntegerSemantics.ONNX
        and type(op) not in ONNX_INTEGER_KERNELS
        and any(_is_quantized_value(v) for v in (*op.operands, *op.results))
    ):
        from synapc.backends.jax.float_emulation import run_in_float

        return functools.partial(run_in_float, kernel)
    return kernel


def lower(
    func: FuncOp,
    weights: WeightStore,
    target: Target,
    semantics: IntegerSemantics = IntegerSemantics.TFLITE,
    float_dtype: np.dtype | None = None,
):
    """The JAX function ``f(params, *inputs) -> outputs`` for `func`, and its params.

    Float tensors compute in `float_dtype`, by default the one `compute_float_dtype`
    chooses for `func` (a part of a model lowered on its own passes the whole model's).
    Returns (jitted function, params dict of device arrays).
    """
    load_kernels()
    if float_dtype is None:
        float_dtype = compute_float_dtype(func, target)
    ctx = LoweringContext(np.dtype(float_dtype), semantics)
    constants: dict[SSAValue, np.ndarray] = {}
    for op in func.body.block.ops:
        if isinstance(op, ConstantOp):
            constants[op.results[0]] = as_kernel_operand(weights[op.handle], ctx)
        elif not isinstance(op, ReturnOp) and type(op) not in KERNELS:
            raise UnsupportedOpError(f"{op.name} has no JAX kernel")
    params: dict[str, jax.Array] = {}
    # (op, operand index) -> key of its transformed constant, or the in-program transform
    laid_out: dict[tuple[Operation, int], str | Transform] = {}
    used_as_is: set[SSAValue] = set()
    for position, op in enumerate(func.body.block.ops):
        layouts = OPERAND_LAYOUTS[type(op)](op) if type(op) in OPERAND_LAYOUTS else {}
        for index, value in enumerate(op.operands):
            transform = layouts.get(index)
            if transform is None:
                used_as_is.add(value)
            elif value in constants:
                key = f"op{position}.{index}"
                params[key] = jnp.asarray(transform(constants[value]))
                laid_out[(op, index)] = key
            else:
                laid_out[(op, index)] = transform
    handles = {v: v.owner.handle for v in constants}  # type: ignore[attr-defined]
    for value in [v for v in constants if v in used_as_is]:  # in op order: deterministic
        params[handles[value]] = jnp.asarray(constants[value])
    output_dtypes = [
        device_dtype(numpy_dtype(t.element_type)) for t in func.function_type.outputs.data
    ]

    kernels = {
        op: kernel_for(op, ctx)
        for op in func.body.block.ops
        if not isinstance(op, ConstantOp | ReturnOp)
    }

    def run(params: dict[str, jax.Array], *inputs: jax.Array) -> list[jax.Array]:
        env: dict[SSAValue, jax.Array] = {}
        for arg, x in zip(func.body.block.args, inputs, strict=True):
            env[arg] = x.astype(ctx.dtype_of(arg))
        for value, handle in handles.items():
            if handle in params:
                env[value] = params[handle]
        for op in func.body.block.ops:
            if isinstance(op, ReturnOp):
                return [env[v].astype(d) for v, d in zip(op.operands, output_dtypes,
                                                          strict=True)]  # fmt: skip
            if isinstance(op, ConstantOp):
                continue
            args = []
            for index, value in enumerate(op.operands):
                layout = laid_out.get((op, index))
                if layout is None:
                    args.append(env[value])
                elif isinstance(layout, str):
                    args.append(params[layout])
                else:
                    args.append(layout(env[value]))
            results = kernels[op](op, args, ctx)
            for value, result in zip(op.results, results, strict=True):
                env[value] = result
        raise ValueError("function has no return")

    return jax.jit(run), params
