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

Everything is checked when lowering, never at the first run: `check_function` refuses
(with `UnsupportedOpError`, a `SynapcError` naming the layer) what the backend cannot run
before anything is allocated -- a type or constant beyond `synapc.limits`, an attribute
out of range, an op without a kernel, missing or mismatched weights -- and `lower` then
traces the program abstractly (shapes and dtypes only, no data), so every refusal a
kernel makes while tracing surfaces there too, with the op being lowered named, and no
intermediate of the program exceeds the tensor limits.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects.builtin import (
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue

from synapc.backends.targets import Target
from synapc.dialects.synap.attributes import IntegerSemantics
from synapc.dialects.synap.base import element_of, is_float, is_quantized, to_python
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import device_dtype, dtype_kind, numpy_dtype
from synapc.errors import SynapcError
from synapc.limits import check_tensor, limits
from synapc.passes.common import op_label
from synapc.passes.partition import float_bits
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
                   "detection", "fused", "logical", "indexing",
                   "recurrent", "sampling", "attention", "bitcast", "window_nd",
                   "linalg", "roi", "preprocess", "preprocess_fused")  # fmt: skip


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


#: One derived operand: (operand index, function of that operand).
Derived = tuple[int, Transform]
#: op class -> what its kernel wants derived from its operands (see `derived_operands`).
DERIVED_OPERANDS: dict[type[Operation], Callable[[Any], list[Derived]]] = {}


def derived_operands(
    *op_classes: type[Operation],
) -> Callable[[Callable[[Any], list[Derived]]], Callable[[Any], list[Derived]]]:
    """Register what a kernel wants derived from its operands: a function of the op
    giving (operand index, function) pairs. The kernel receives, after its operands,
    each function of its operand as the op holds it (before any layout): computed once
    on the host for a constant operand (a filter's per-channel sums, say), inside the
    program otherwise."""

    def register(
        function: Callable[[Any], list[Derived]],
    ) -> Callable[[Any], list[Derived]]:
        for op_class in op_classes:
            DERIVED_OPERANDS[op_class] = function
        return function

    return register


def kernel_args(op: Operation, operands: Sequence[Any]) -> list[Any]:
    """`operands` of `op` as its kernel receives them: laid out (`operand_layout`), then
    its derived operands (`derived_operands`). Numpy or JAX arrays alike."""
    layout = OPERAND_LAYOUTS.get(type(op))
    transforms = layout(op) if layout is not None else {}
    args = [
        operand if transforms.get(i) is None else transforms[i](operand)
        for i, operand in enumerate(operands)
    ]
    derived = DERIVED_OPERANDS.get(type(op))
    return args + [fn(operands[i]) for i, fn in (derived(op) if derived else [])]


def load_kernels() -> None:
    """Import every kernel module, filling `KERNELS` and `OPERAND_LAYOUTS`."""
    for name in _KERNEL_MODULES:
        importlib.import_module(f"synapc.backends.jax.ops.{name}")


class UnsupportedOpError(SynapcError, NotImplementedError):
    """What the JAX backend cannot run: an op without a kernel, or an op whose types,
    attributes, quantization or sizes its kernel refuses.

    `lower` raises it before anything runs, its message naming the layer (see
    `op_label`); `synapc.compile` and `synapc convert` prefix the model file. It is a
    `SynapcError` (bad input, reported in one line) and a `NotImplementedError`, which is
    how constant folding knows to leave such an op to the target.
    """


def _one_line(error: BaseException) -> str:
    """An exception's message on one line."""
    text = " ".join(str(error).split())
    return text[:500] if text else type(error).__name__


def as_kernel_operand(array: np.ndarray, ctx: LoweringContext) -> np.ndarray:
    """A constant's values as kernels receive them: floats in the compute dtype, 64-bit
    integers as their 32-bit device dtype. Float16 programs hold float constants as
    the float32 values of their float16 rounding: the values the NPU holds, without a
    conversion on every run (`layer_results` computes in float32)."""
    if dtype_kind(array.dtype) == "f":  # bfloat16 included
        array = array.astype(ctx.float_dtype)
        if ctx.float_dtype == np.float16:
            array = array.astype(np.float32)
    return array.astype(device_dtype(array.dtype))


def _on_device(array: np.ndarray | jax.Array) -> jax.Array:
    """A constant as a device array. A host array is copied as it is: `jnp.asarray`
    of a strided (transposed) one compiles a copy program per shape, which cost a
    100-layer model a third of a second."""
    if isinstance(array, np.ndarray):
        return jax.device_put(np.require(array, requirements="C"))  # 0-d stays 0-d
    return jnp.asarray(array)


def callee_of(func: FuncOp, call: CallOp) -> FuncOp:
    """The function of `func`'s module that `call` calls (an `UnsupportedOpError` when
    there is none: a function lowered outside its module cannot call)."""
    module = func.parent_op()
    name = call.callee.root_reference.data
    if isinstance(module, ModuleOp):
        for op in module.body.block.ops:
            if isinstance(op, FuncOp) and op.sym_name.data == name:
                return op
    raise UnsupportedOpError(f"func.call @{name}: no such function in the module")


def delegate_float_dtype(func: FuncOp, target: Target) -> np.dtype:
    """The float type a function computes in on its delegate (`partition.float_bits`;
    float32 everywhere on a target without an NPU)."""
    if not target.has_npu:
        return np.dtype(np.float32)
    npu_bits = 8 * target.npu_float_dtype.itemsize
    return np.dtype(f"float{float_bits(func, npu_bits)}")


def _is_quantized_value(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and is_quantized(value.type.element_type)


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


#: Op classes whose kernels compute real-valued functions (sigmoid, softmax, an average):
#: their values must be float or quantized, not plain integers (see `real_valued`).
REAL_VALUED: set[type[Operation]] = set()
#: Op classes whose kernels take booleans (i1): they move, compare or convert values.
BOOLEAN_KERNELS: set[type[Operation]] = set()


#: Op classes whose kernels compute float32 results whatever the float dtype (CPU ops of
#: a float16 program); `layer_results` runs them as they are.
FLOAT32_KERNELS: set[type[Operation]] = set()


def computes_float32(*op_classes: type[Operation]) -> None:
    """Declare that these ops' kernels compute float32 on every target (see
    `FLOAT32_KERNELS`)."""
    FLOAT32_KERNELS.update(op_classes)


def real_valued(*op_classes: type[Operation]) -> None:
    """Declare that these ops compute real-valued functions: `check_function` refuses
    plain integer (and boolean) operands and results, which their kernels cannot take."""
    REAL_VALUED.update(op_classes)


def takes_booleans(*op_classes: type[Operation]) -> None:
    """Declare that these ops take booleans (i1 values); `check_function` refuses them
    for every other op, whose kernels compute on numbers."""
    BOOLEAN_KERNELS.update(op_classes)


def _check_activation_storage(value: SSAValue, what: str) -> None:
    """Computed quantized values fit 32 bits: kernels compute stored integers in int32
    (64-bit storage is for constants only: 16x8 layers' int64 biases)."""
    element = element_of(value)
    if is_quantized(element) and element.bitwidth > 32:  # type: ignore[attr-defined]
        raise UnsupportedOpError(
            f"{what} is quantized with {element.storage.data} storage; the JAX backend "  # type: ignore[attr-defined]
            "computes quantized values in at most 32 bits (64-bit storage is for "
            "constants such as biases)"
        )


def _check_element_kinds(op: Operation, label: str) -> None:
    """Plain integer values only where the kernel computes on integers, booleans only
    where it moves, compares or converts values (see `real_valued`, `takes_booleans`)."""
    values = [(f"operand #{i}", v) for i, v in enumerate(op.operands)]
    values += [(f"result #{i}", v) for i, v in enumerate(op.results)]
    for what, value in values:
        element = element_of(value)
        if not isinstance(element, IntegerType):
            continue
        if type(op) in REAL_VALUED:
            raise UnsupportedOpError(
                f"{label}: {what} is {element}; it computes a real-valued function, of "
                "float or quantized values only"
            )
        if element.width.data == 1 and type(op) not in BOOLEAN_KERNELS:
            raise UnsupportedOpError(
                f"{label}: {what} is boolean (i1); its kernel computes on numbers"
            )


#: op class -> a check of its attributes against its operand shapes (see `op_check`).
OpCheck = Callable[[Any], list[tuple[str, tuple[int, ...]]]]
OP_CHECKS: dict[type[Operation], OpCheck] = {}


def op_check(*op_classes: type[Operation]) -> Callable[[OpCheck], OpCheck]:
    """Register a check that `check_function` runs on every op of these classes before
    anything is traced or allocated. It raises `UnsupportedOpError` (the reason; the
    layer is prefixed) for attributes its kernel cannot run, and returns the
    intermediates the kernel will build from them, as (what, shape) pairs checked
    against the tensor limits (a convolution's padded input: pads of 2**40 with a stride
    that keeps the result small must not reach XLA)."""

    def register(function: OpCheck) -> OpCheck:
        for op_class in op_classes:
            OP_CHECKS[op_class] = function
        return function

    return register


def _refuse_size(shape: Sequence[int], itemsize: int, what: str) -> None:
    """`synapc.limits.check_tensor`, refusing with an `UnsupportedOpError`."""
    try:
        check_tensor(tuple(shape), itemsize, what)
    except UnsupportedOpError:
        raise
    except SynapcError as error:
        raise UnsupportedOpError(str(error)) from None


def tensor_dtype(t: Attribute, what: str) -> np.dtype:
    """The numpy dtype of tensor type `t` (named `what` in messages), after checking that
    the backend can hold it: a ranked, static tensor of float, integer or quantized
    elements numpy can store, within the tensor limits (counted in Python integers, so a
    2**62 dimension cannot overflow)."""
    if not isinstance(t, TensorType):
        raise UnsupportedOpError(f"{what} has type {t}; the JAX backend runs tensors only")
    element = t.element_type
    try:  # float, integer, quantized and the storage-only types of synapc.dtypes
        dtype = numpy_dtype(element)
    except TypeError:
        dtype = None
    if dtype is None:
        raise UnsupportedOpError(
            f"{what} has element type {element}, which the JAX backend does not support"
        )
    if is_quantized(element):
        scales = element.scales.astype(np.float32)  # type: ignore[attr-defined]
        bad = ~(np.isfinite(scales) & (scales > 0))
        if bad.any():
            scale = float(element.scales[int(np.argmax(bad))])  # type: ignore[attr-defined]
            raise UnsupportedOpError(
                f"{what} has quantization scale {scale:g}, which is not a positive "
                "float32 (the type TFLite and ONNX store scales in)"
            )
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        raise UnsupportedOpError(
            f"{what} has a dynamic shape {t}; the JAX backend needs static shapes"
        )
    _refuse_size(shape, dtype.itemsize, what)
    return dtype


def _check_constant(op: ConstantOp, label: str, weights: WeightStore) -> None:
    """A constant's weights exist and are exactly what its type says."""
    handle = op.handle
    if handle not in weights:
        raise UnsupportedOpError(f"{label}: its weights '{handle}' are missing")
    array = weights[handle]
    t = op.result.type
    assert isinstance(t, TensorType)  # tensor_dtype checked it
    want = numpy_dtype(t.element_type)
    if tuple(array.shape) != tuple(t.get_shape()) or array.dtype != want:
        raise UnsupportedOpError(
            f"{label}: its weights '{handle}' are {array.dtype} {list(array.shape)}, "
            f"but its type is {t}"
        )


def _check_attributes(op: Operation, label: str) -> None:
    """Integer attributes (sizes, pads, strides, dilations, axes, counts) within the
    tensor element limit -- no size or offset a backend can run is larger -- and float
    attributes not NaN."""
    limit = limits().max_tensor_elements
    for name, attr in op.properties.items():
        value = to_python(attr)
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > limit:
                raise UnsupportedOpError(
                    f"{label}: attribute '{name}' holds {v}, beyond the limit of "
                    f"{limit:,} on sizes (SYNAPC_MAX_TENSOR_ELEMENTS raises it)"
                )
            if isinstance(v, float) and math.isnan(v):
                raise UnsupportedOpError(f"{label}: attribute '{name}' is NaN")


def check_function(func: FuncOp, weights: WeightStore) -> None:
    """Refuse what the backend cannot run, before anything is traced or allocated.

    Every input and op result is a static tensor of a supported element type within the
    tensor limits; every op has a kernel, integer attributes within the limits and
    attributes its kernel accepts (`OP_CHECKS`), whose intermediates are within the
    limits too; every constant has its weights, of its type's shape and dtype. Raises
    `UnsupportedOpError` naming the input or the layer (`op_label`)."""
    load_kernels()
    for i, arg in enumerate(func.body.block.args):
        tensor_dtype(arg.type, f"input #{i}")
        _check_activation_storage(arg, f"input #{i}")
    for position, op in enumerate(func.body.block.ops):
        if isinstance(op, ReturnOp):
            continue
        label = op_label(op, position)
        if isinstance(op, CallOp):
            callee_of(func, op)  # the callee is checked when it is lowered
            continue
        if not isinstance(op, ConstantOp) and type(op) not in KERNELS:
            raise UnsupportedOpError(f"{label}: the JAX backend has no kernel for it")
        for j, result in enumerate(op.results):
            tensor_dtype(result.type, f"{label}: result #{j}")
        if isinstance(op, ConstantOp):
            _check_constant(op, label, weights)
        else:
            _check_element_kinds(op, label)
            for j, result in enumerate(op.results):
                _check_activation_storage(result, f"{label}: result #{j}")
        _check_attributes(op, label)
        check = OP_CHECKS.get(type(op))
        if check is None:
            continue
        try:
            intermediates = check(op)
        except UnsupportedOpError as error:
            raise UnsupportedOpError(f"{label}: {error}") from None
        for what, shape in intermediates:
            # 32-bit compute types (float32, int32 accumulators); the traced program is
            # checked exactly afterwards
            _refuse_size(shape, 4, f"{label}: {what}")


def _scope(position: int) -> str:
    """The JAX name scope of the op at `position`: intermediates are traced to it."""
    return f"synap_op{position}"


def _run_kernel(
    kernel: Kernel, op: Operation, args: list[jax.Array], ctx: LoweringContext, label: str
) -> list[jax.Array]:
    """`kernel` on `op` (while tracing), any refusal or failure named by the op's
    `label`, its results checked against the op's result types."""
    try:
        results = list(kernel(op, args, ctx))
    except UnsupportedOpError as error:
        raise UnsupportedOpError(f"{label}: {error}") from None
    except (MemoryError, RecursionError):
        raise
    except Exception as error:
        raise UnsupportedOpError(
            f"{label}: the JAX backend cannot lower it "
            f"({type(error).__name__}: {_one_line(error)})"
        ) from error
    if len(results) != len(op.results):
        raise UnsupportedOpError(
            f"{label}: its kernel computes {len(results)} results, the op has "
            f"{len(op.results)}"
        )
    for j, (value, result) in enumerate(zip(op.results, results, strict=True)):
        want = tuple(value.type.get_shape())  # type: ignore[attr-defined]
        if tuple(result.shape) != want:
            raise UnsupportedOpError(
                f"{label}: its kernel computes result #{j} as {list(result.shape)}, "
                f"but its type is {value.type}"
            )
    return results


def layer_results(
    kernel: Kernel, op: Operation, args: list[jax.Array], ctx: LoweringContext, label: str
) -> list[jax.Array]:
    """What layer `op` computes from its laid-out `args`, as the program computes it:
    zeros for results with no values (no kernel has to cope with empty tensors), else
    its kernel (`_run_kernel`). The arena executor runs layers through this too.

    Float16 programs store float16 and compute in float32 within a layer, as the NPU's
    wide accumulators do: the kernel runs on its float16 operands widened to float32,
    and each float result is rounded to float16 once, at the layer's boundary, by one
    conversion (a single F16C instruction). XLA would otherwise widen and round around
    every float16 operation of the kernel. XLA keeps the float32 -> float16 -> float32
    conversion pairs between layers, so the excess precision ends at the boundary
    (tests/test_npu_float16.py fails if it did not); a `reduce_precision` to enforce it
    made float16 programs 1.4-3.9x slower."""
    shapes = [r.type.get_shape() for r in op.results]  # type: ignore[attr-defined]
    if all(0 in shape for shape in shapes):
        return [
            jnp.zeros(shape, ctx.dtype_of(r))
            for shape, r in zip(shapes, op.results, strict=True)
        ]
    if ctx.float_dtype != np.float16 or type(op) in FLOAT32_KERNELS:
        return _run_kernel(kernel, op, args, ctx, label)
    wide = dataclasses.replace(ctx, float_dtype=np.dtype(np.float32))
    args = [a.astype(jnp.float32) if a.dtype == jnp.float16 else a for a in args]
    results = _run_kernel(kernel, op, args, wide, label)
    return [
        r.astype(jnp.float16) if ctx.dtype_of(v) == np.float16 else r
        for r, v in zip(results, op.results, strict=True)
    ]


def _subjaxprs(param: Any) -> Iterator[Any]:
    """The jaxprs inside an equation parameter (loop bodies, branches, nested jits)."""
    if hasattr(param, "eqns"):
        yield param
    elif hasattr(param, "jaxpr") and hasattr(param.jaxpr, "eqns"):
        yield param.jaxpr
    elif isinstance(param, tuple | list):
        for item in param:
            yield from _subjaxprs(item)


def _check_intermediates(jaxpr: Any, labels: dict[str, str], label: str = "") -> None:
    """Every value the traced program computes within the tensor limits, refused with the
    layer whose kernel computes it."""
    for eqn in jaxpr.eqns:
        here = label
        if not here:
            for scope in str(eqn.source_info.name_stack).split("/"):
                if scope in labels:
                    here = labels[scope]
                    break
        for var in eqn.outvars:
            shape = getattr(var.aval, "shape", None)
            dtype = getattr(var.aval, "dtype", None)
            if shape is None or dtype is None:
                continue
            _refuse_size(
                [int(d) for d in shape],
                np.dtype(dtype).itemsize,
                f"{here or 'the lowered program'}: an intermediate {np.dtype(dtype)} "
                "tensor of its kernel",
            )
        for param in eqn.params.values():
            for sub in _subjaxprs(param):
                _check_intermediates(sub, labels, here)


def input_specs(func: FuncOp) -> list[jax.ShapeDtypeStruct]:
    """Shape and dtype of each argument of the lowered function, as `run` receives them
    (64-bit integers as their 32-bit device dtype)."""
    return [
        jax.ShapeDtypeStruct(
            tuple(t.get_shape()),  # type: ignore[attr-defined]
            device_dtype(numpy_dtype(t.element_type)),  # type: ignore[attr-defined]
        )
        for t in func.function_type.inputs.data
    ]


def lower(
    func: FuncOp,
    weights: WeightStore,
    target: Target,
    semantics: IntegerSemantics = IntegerSemantics.TFLITE,
    float_dtype: np.dtype | None = None,
):
    """The JAX function ``f(params, *inputs) -> outputs`` for `func`, and its params.

    Float tensors compute in `float_dtype`, by default the one `delegate_float_dtype`
    chooses for `func` (a part of a model lowered on its own passes the whole model's).
    Everything is checked here, never at the first run: `check_function` first, then an
    abstract trace of the program (shapes and dtypes only) that surfaces every refusal
    of a kernel and checks every intermediate against the tensor limits; each raises
    `UnsupportedOpError` naming the layer. The trace is JAX's own, so the first call
    does not trace again. Returns (jitted function, params dict of device arrays).
    """
    check_function(func, weights)
    if float_dtype is None:
        float_dtype = delegate_float_dtype(func, target)
    ctx = LoweringContext(np.dtype(float_dtype), semantics)
    ops = list(func.body.block.ops)
    labels = {op: op_label(op, position) for position, op in enumerate(ops)}
    constants: dict[SSAValue, np.ndarray] = {}
    for op in ops:
        if isinstance(op, ConstantOp):
            constants[op.results[0]] = as_kernel_operand(weights[op.handle], ctx)
    params: dict[str, jax.Array] = {}
    # (op, operand index) -> key of its transformed constant, or the in-program transform
    laid_out: dict[tuple[Operation, int], str | Transform] = {}
    # op -> its derived operands: (operand index, key of the derived constant or function)
    derived: dict[Operation, list[tuple[int, str | Transform]]] = {}
    used_as_is: set[SSAValue] = set()
    for position, op in enumerate(ops):
        try:
            layouts = OPERAND_LAYOUTS[type(op)](op) if type(op) in OPERAND_LAYOUTS else {}
            extras = DERIVED_OPERANDS[type(op)](op) if type(op) in DERIVED_OPERANDS else []
        except UnsupportedOpError as error:
            raise UnsupportedOpError(f"{labels[op]}: {error}") from None
        for j, (index, function) in enumerate(extras):
            value = op.operands[index]
            if value in constants:
                key = f"op{position}.derived{j}"
                params[key] = _on_device(function(constants[value]))
                derived.setdefault(op, []).append((index, key))
            else:
                derived.setdefault(op, []).append((index, function))
        for index, value in enumerate(op.operands):
            transform = layouts.get(index)
            if transform is None:
                used_as_is.add(value)
            elif value in constants:
                key = f"op{position}.{index}"
                params[key] = _on_device(transform(constants[value]))
                laid_out[(op, index)] = key
            else:
                laid_out[(op, index)] = transform
    handles = {v: v.owner.handle for v in constants}  # type: ignore[attr-defined]
    for value in [v for v in constants if v in used_as_is]:  # in op order: deterministic
        params[handles[value]] = _on_device(constants[value])
    output_dtypes = [
        device_dtype(numpy_dtype(t.element_type)) for t in func.function_type.outputs.data
    ]

    # a partitioned function calls its subgraphs: each lowered on its own, in its
    # delegate's float type, its params under "@name/"
    callees: dict[Operation, tuple[Callable, str, list[str]]] = {}
    for op in ops:
        if isinstance(op, CallOp):
            callee = callee_of(func, op)
            lowered, sub_params = lower(
                callee, weights, target, semantics, delegate_float_dtype(callee, target)
            )
            prefix = f"@{callee.sym_name.data}/"
            params.update({prefix + k: v for k, v in sub_params.items()})
            callees[op] = (lowered, prefix, list(sub_params))
    kernels = {
        op: kernel_for(op, ctx)
        for op in ops
        if not isinstance(op, ConstantOp | ReturnOp | CallOp)
    }

    def run(params: dict[str, jax.Array], *inputs: jax.Array) -> list[jax.Array]:
        env: dict[SSAValue, jax.Array] = {}
        for arg, x in zip(func.body.block.args, inputs, strict=True):
            env[arg] = x.astype(ctx.dtype_of(arg))
        for value, handle in handles.items():
            if handle in params:
                env[value] = params[handle]
        for position, op in enumerate(ops):
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
            for index, extra in derived.get(op, []):
                source = op.operands[index]
                args.append(params[extra] if isinstance(extra, str) else extra(env[source]))
            if op in callees:
                lowered, prefix, keys = callees[op]
                results = lowered({k: params[prefix + k] for k in keys}, *args)
                for value, result in zip(op.results, results, strict=True):
                    env[value] = result
                continue
            with jax.named_scope(_scope(position)):
                results = layer_results(kernels[op], op, args, ctx, labels[op])
            for value, result in zip(op.results, results, strict=True):
                env[value] = result
        raise UnsupportedOpError("the function has no return")

    function = jax.jit(run)
    specs = {k: jax.ShapeDtypeStruct(v.shape, v.dtype) for k, v in params.items()}
    try:
        traced = function.trace(specs, *input_specs(func))
    except (UnsupportedOpError, MemoryError, RecursionError):
        raise
    except Exception as error:
        raise UnsupportedOpError(
            f"the JAX backend cannot lower the function ({type(error).__name__}: "
            f"{_one_line(error)})"
        ) from error
    scopes = {_scope(position): labels[op] for position, op in enumerate(ops)}
    for jaxpr in _subjaxprs(traced.jaxpr):
        _check_intermediates(jaxpr, scopes)
    return function, params
