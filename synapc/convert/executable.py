"""Lower an optimized model for a target and export it as the package's executable(s).

The whole model becomes one `jax.export` program, or, once partitioned (``partition``),
one per subgraph, each computing in its delegate's float type (`build_subgraphs`). A
`--profiling` build also exports every layer as a program of its own (the layer op with
its constant operands, computing floats in the whole model's dtype), so the runtime can
time layers one by one, as the vendor's profiling builds do.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue

from synapc.backends.jax.export import export_program
from synapc.backends.jax.lowering import (
    UnsupportedOpError,
    callee_of,
    delegate_float_dtype,
    lower,
)
from synapc.backends.package import ProfiledLayer, Subgraph, TensorSpec
from synapc.backends.package.spec import MemoryPlan, PlannedTensor
from synapc.backends.targets import Target
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import device_dtype, numpy_dtype
from synapc.errors import SynapcError
from synapc.model import Model
from synapc.passes.memory.liveness import liveness, value_key
from synapc.passes.memory.placement import placement_of, plan_of
from synapc.passes.partition import DELEGATE
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
    """The unsplit model as one subgraph on its delegate (`whole_delegate`): its
    exported program, weights and, when `profiling`, one exported program per layer
    (`_exported`)."""
    func = model.main
    executable, weights, layers, layer_outputs = _exported(
        model, func, target, profiling, progress
    )
    return Subgraph(
        delegate=whole_delegate(func, target),
        executable=executable,
        weights=weights,
        inputs=inputs,
        outputs=outputs,
        input_refs=[(-1, i) for i in range(len(inputs))],
        layers=layers,
        layer_outputs=layer_outputs,
        memory_plan=memory_plan_of(func, target),
    )


def memory_plan_of(func: FuncOp, target: Target) -> MemoryPlan | None:
    """`func`'s plan (``plan-memory``) as the package stores it, or None when the
    function was not planned: each intermediate by layer (in `layer_ops` order) and
    result."""
    figures = plan_of(func)
    if figures is None:
        return None
    float_bytes = delegate_float_dtype(func, target).itemsize
    live = liveness(func, float_bytes, figures.get("alignment", 1))
    step_of = {op: k for k, op in enumerate(live.schedule)}
    tensors = []
    for k, op in enumerate(layer_ops(func)):
        for j, place in enumerate(placement_of(op) or []):
            if place is None or op not in step_of:
                continue
            tensor = live.tensors[value_key(op.results[j])]
            tensors.append(
                PlannedTensor(
                    k, j, place[0], place[1], tensor.size, tensor.first, tensor.last
                )
            )
    return MemoryPlan(dict(figures), tensors)


def _exported(
    model: Model,
    func: FuncOp,
    target: Target,
    profiling: bool,
    progress: Callable[[str], None] | None,
) -> tuple[bytes, list, list[ProfiledLayer] | None, list[tuple[int, int]] | None]:
    """`func` (`model`'s main function or one of its subgraphs) lowered in its
    delegate's float type and exported: program, weights and, when `profiling`, its
    layers' programs and where its outputs come from. The programs are registered as
    checked (`synapc.runtime.program_check`): synapc made them, they are no hostile
    bytes."""
    try:
        function, params = lower(
            func,
            model.weights,
            target,
            model.integer_semantics,
            delegate_float_dtype(func, target),
        )
    except UnsupportedOpError as error:
        raise SynapcError(f"{model.source or 'model'}: {error}") from None
    arg_types = list(func.function_type.inputs.data)
    executable, weights = export_program(function, params, _avals(arg_types))  # type: ignore[arg-type]
    layers = layer_outputs = None
    if profiling:
        layers, layer_outputs = _profiled_layers(model, func, target, progress)
    register_programs([executable, *(layer.executable for layer in layers or [])])
    return executable, weights, layers, layer_outputs


def whole_delegate(func: FuncOp, target: Target) -> str:
    """The delegate of an unsplit `@main`: the one ``partition`` left it on, else the
    target's first."""
    attr = func.attributes.get(DELEGATE)
    return attr.data if isinstance(attr, StringAttr) else target.delegates[0]


def subgraph_calls(func: FuncOp) -> list[CallOp]:
    """The calls of a partitioned `@main` to its subgraphs, in order (none before
    ``partition``)."""
    return [op for op in func.body.block.ops if isinstance(op, CallOp)]


def build_subgraphs(
    model: Model,
    target: Target,
    inputs: list[TensorSpec],
    outputs: list[TensorSpec],
    profiling: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Subgraph], list[tuple[int, int]]]:
    """The package's subgraphs and where each model output comes from: the whole model
    as one subgraph (`build_subgraph`), or each subgraph of a partitioned `@main`
    exported on its own, reading model inputs and earlier subgraphs' outputs."""
    calls = subgraph_calls(model.main)
    if not calls:
        subgraph = build_subgraph(model, target, inputs, outputs, profiling, progress)
        return [subgraph], [(0, j) for j in range(len(outputs))]
    where: dict[SSAValue, tuple[int, int]] = {
        arg: (-1, i) for i, arg in enumerate(model.main.body.block.args)
    }
    ret = model.main.body.block.last_op
    assert isinstance(ret, ReturnOp)
    # a subgraph result the model returns is described as that model output
    returned: dict[SSAValue, TensorSpec] = {}
    for j, value in enumerate(ret.operands):
        if value in where:
            raise SynapcError(
                f"{model.source or 'model'}: output #{j} is model input "
                f"#{where[value][1]} itself; a package output comes from a subgraph"
            )
        returned.setdefault(value, outputs[j])
    subgraphs = []
    for k, call in enumerate(calls):
        callee = callee_of(model.main, call)
        delegate = callee.attributes[DELEGATE].data  # type: ignore[attr-defined]
        if progress is not None:
            progress(f"subgraph {k + 1}/{len(calls)} ({delegate})")
        executable, weights, layers, layer_outputs = _exported(
            model, callee, target, profiling, progress
        )
        refs = [where[v] for v in call.operands]
        sub_inputs = [
            inputs[i] if source == -1 else subgraphs[source].outputs[i]
            for source, i in refs
        ]
        sub_outputs = [
            returned.get(result) or _intermediate_spec(f"subgraph{k}:{j}", result.type)  # type: ignore[arg-type]
            for j, result in enumerate(call.results)
        ]
        for j, result in enumerate(call.results):
            where[result] = (k, j)
        subgraphs.append(
            Subgraph(
                delegate, executable, weights, sub_inputs, sub_outputs, refs,
                layers, layer_outputs, memory_plan_of(callee, target),
            )
        )  # fmt: skip
    return subgraphs, [where[value] for value in ret.operands]


def package_functions(func: FuncOp, target: Target) -> list[tuple[FuncOp, str]]:
    """The functions the package runs, one per subgraph, each with its delegate: `@main`
    itself on `whole_delegate`, or each subgraph of a partitioned `@main`."""
    calls = subgraph_calls(func)
    if not calls:
        return [(func, whole_delegate(func, target))]
    callees = [callee_of(func, call) for call in calls]
    return [(f, f.attributes[DELEGATE].data) for f in callees]  # type: ignore[attr-defined]


def model_layers(func: FuncOp, target: Target) -> list[tuple[int, Operation, str]]:
    """Every layer the package runs as ``(subgraph, op, delegate)``, subgraph by
    subgraph (`package_functions`)."""
    return [
        (k, op, delegate)
        for k, (f, delegate) in enumerate(package_functions(func, target))
        for op in layer_ops(f)
    ]


def _intermediate_spec(name: str, t: TensorType) -> TensorSpec:
    """The package description of a tensor passed between subgraphs."""
    from synapc.convert.signature import quantization_of
    from synapc.model import TensorInfo

    info = TensorInfo(name, tuple(t.get_shape()), t.element_type)
    return TensorSpec(
        name=name,
        shape=info.shape,
        data_type=info.dtype.name,
        quantization=quantization_of(info),
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
    model: Model,
    func: FuncOp,
    target: Target,
    progress: Callable[[str], None] | None,
) -> tuple[list[ProfiledLayer], list[tuple[int, int]]]:
    """Every layer of `func` (`model`'s main function or one of its subgraphs)
    exported on its own, computing in the function's float type, its operands named
    by producer."""
    float_dtype = delegate_float_dtype(func, target)
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
                name=layer_name(op, k),
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


def layer_name(op: Operation, index: int) -> str:
    """The name a package gives layer `index`: its source layer name, else its op kind
    and index (``conv2d_3``)."""
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
