"""Lower an optimized model for a target and export it as the package's executable(s).

The whole model becomes one `jax.export` program. A `--profiling` build also exports every
layer as a program of its own (the layer op with its constant operands, computing floats
in the whole model's dtype), so the runtime can time layers one by one, as the vendor's
profiling builds do.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue

from synapc.backends.jax.export import export_program
from synapc.backends.jax.lowering import UnsupportedOpError, compute_float_dtype, lower
from synapc.backends.package import ProfiledLayer, Subgraph, TensorSpec
from synapc.backends.targets import Target
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import device_dtype, numpy_dtype
from synapc.errors import SynapcError
from synapc.model import Model
from synapc.runtime.program_check import register_programs


def _avals(types: list[TensorType]) -> list[jax.ShapeDtypeStruct]:
    return [
        jax.ShapeDtypeStruct(
            tuple(t.get_shape()), device_dtype(numpy_dtype(t.element_type))
        )
        for t in types
    ]


def build_subgraph(
    model: Model,
    target: Target,
    inputs: list[TensorSpec],
    outputs: list[TensorSpec],
    profiling: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Subgraph:
    """The model as one subgraph on the target's first delegate (heterogeneous splitting
    comes with partitioning): its exported program, weights and, when `profiling`, one
    exported program per layer. The programs are registered as checked
    (`synapc.runtime.program_check`): synapc made them, they are no hostile bytes."""
    func = model.main
    try:
        function, params = lower(func, model.weights, target, model.integer_semantics)
    except UnsupportedOpError as error:
        raise SynapcError(f"{model.source or 'model'}: {error}") from None
    arg_types = list(func.function_type.inputs.data)
    executable, weights = export_program(function, params, _avals(arg_types))  # type: ignore[arg-type]
    layers = layer_outputs = None
    if profiling:
        layers, layer_outputs = _profiled_layers(model, target, progress)
    # programs exported here need no checking process when this machine loads them
    register_programs([executable, *(layer.executable for layer in layers or [])])
    return Subgraph(
        delegate=target.delegates[0],
        executable=executable,
        weights=weights,
        inputs=inputs,
        outputs=outputs,
        input_refs=[(-1, i) for i in range(len(inputs))],
        layers=layers,
        layer_outputs=layer_outputs,
    )


def layer_ops(func: FuncOp) -> list[Operation]:
    """The ops of `func` that are layers: everything but constants and the return, plus
    constants returned as outputs."""
    ret = func.body.block.last_op
    assert isinstance(ret, ReturnOp)
    returned = {v.owner for v in ret.operands if isinstance(v.owner, ConstantOp)}
    return [
        op
        for op in func.body.block.ops
        if not isinstance(op, ReturnOp)
        and (not isinstance(op, ConstantOp) or op in returned)
    ]


def _profiled_layers(
    model: Model, target: Target, progress: Callable[[str], None] | None
) -> tuple[list[ProfiledLayer], list[tuple[int, int]]]:
    """Every layer exported on its own, its operands named by producer."""
    func = model.main
    float_dtype = compute_float_dtype(func, target)
    where: dict[SSAValue, tuple[int, int]] = {
        arg: (-1, i) for i, arg in enumerate(func.body.block.args)
    }
    layers = []
    ops = layer_ops(func)
    for k, op in enumerate(ops):
        if progress is not None:
            progress(f"profiling layer {k + 1}/{len(ops)}")
        layer_func, operands = _layer_function(op)
        function, params = lower(
            layer_func, model.weights, target, model.integer_semantics, float_dtype
        )
        arg_types = list(layer_func.function_type.inputs.data)
        executable, weights = export_program(function, params, _avals(arg_types))  # type: ignore[arg-type]
        layers.append(
            ProfiledLayer(
                name=_layer_name(op, k),
                type=op.name,
                executable=executable,
                weights=weights,
                operands=[where[v] for v in operands],
            )
        )
        for j, result in enumerate(op.results):
            where[result] = (k, j)
    ret = func.body.block.last_op
    assert isinstance(ret, ReturnOp)
    return layers, [where[v] for v in ret.operands]


def _layer_name(op: Operation, index: int) -> str:
    name = op.attributes.get("layer_name")
    return name.data if name is not None else f"{op.name.split('.')[-1]}_{index}"  # type: ignore[attr-defined]


def _layer_function(op: Operation) -> tuple[FuncOp, list[SSAValue]]:
    """A function computing `op` alone: its non-constant operands become arguments,
    its constant operands are cloned in; and those operands, in argument order."""
    operands: list[SSAValue] = []
    for v in op.operands:
        if not isinstance(v.owner, ConstantOp) and v not in operands:
            operands.append(v)
    block = Block(arg_types=[v.type for v in operands])
    mapping: dict[SSAValue, SSAValue] = dict(zip(operands, block.args, strict=True))
    for v in op.operands:
        if v not in mapping:
            constant = v.owner.clone()  # type: ignore[union-attr]
            block.add_op(constant)
            mapping[v] = constant.results[0]
    clone = op.clone(value_mapper=mapping)
    block.add_op(clone)
    block.add_op(ReturnOp(*clone.results))
    func = FuncOp.from_region(
        "main",
        [v.type for v in operands],
        [r.type for r in clone.results],
        Region(block),
    )
    return func, operands
