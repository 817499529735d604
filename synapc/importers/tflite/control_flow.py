"""TFLite control flow (IF, WHILE) inlined at import.

synapc's programs are straight-line, so the subgraphs IF and WHILE call are converted
in place (through a `subgraphs.subgraph_view`, which emits into the calling function):

- IF whose condition is a constant at import (a constant of the file, or integer
  arithmetic `folding` computed) becomes the chosen branch. A condition computed at run
  time inlines both branches and picks each output with `synap.select`; both branches
  must then give every output the same shape and element type.
- WHILE is unrolled: the condition subgraph is evaluated at import on the loop-carried
  values, which works when what it reads folds to constants at each iteration (a
  counter compared with a trip count, the form TF's converter gives `for i in range(n)`);
  the body is inlined once per iteration, at most `max_loop_iterations` times. A
  condition that depends on run-time data is refused.

Loop-carried integer and boolean constants without quantization stay numpy arrays from
one subgraph to the next (bound as folded tensors, so counters keep folding); every other
value is an SSA value.
"""

from __future__ import annotations

import numpy as np
import tflite
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import logical
from synapc.dialects.synap.base import shape_of
from synapc.dialects.synap.data_movement import ReshapeOp
from synapc.dtypes import element_type_for
from synapc.errors import SynapcError
from synapc.importers.tflite import flatbuffer
from synapc.importers.tflite.folding import fold
from synapc.importers.tflite.reader import Importer, TfliteOp, converts
from synapc.importers.tflite.shape_rules import Shape, record_shape, rule
from synapc.importers.tflite.subgraphs import read_subgraph, subgraph_view
from synapc.importers.tflite.variables import VARIABLE_OPS
from synapc.limits import check_count

#: a value passed into or out of a subgraph: a constant kept at import, or an SSA value
Carried = SSAValue | np.ndarray


def _carried(imp: Importer, t: int) -> Carried:
    """Tensor `t` of `imp` as a value to pass to a subgraph: plain integer and boolean
    constants as arrays (so they keep folding), everything else as an SSA value."""
    array = imp.constant_array(t)
    plain = not isinstance(imp.element_type(t), UniformQuantizedType)
    if array is not None and array.dtype.kind in "iub" and plain:
        return np.array(array)  # a copy: constants of the file are read-only views
    return imp.value(t)


def _shape(value: Carried) -> Shape:
    """The shape of a carried value."""
    return tuple(value.shape) if isinstance(value, np.ndarray) else tuple(shape_of(value))


def _element(value: Carried) -> Attribute:
    """The IR element type of a carried value."""
    if isinstance(value, np.ndarray):
        return element_type_for(value.dtype)
    assert isinstance(value.type, TensorType)
    return value.type.element_type


def _bind(view: Importer, t: int, value: Carried, what: str) -> None:
    """Make `value` subgraph input tensor `t` of `view` (called `what` in messages),
    after checking that its element type and shape are the tensor's."""
    shape = _shape(value)
    if isinstance(value, np.ndarray):
        want = view.numpy_dtype(t)
        if value.dtype != want or isinstance(view.element_type(t), UniformQuantizedType):
            raise view.fail(
                f"{what} {view.label(t)} is {view.element_type(t)}, given {value.dtype}"
            )
    else:
        element = _element(value)
        if element != view.element_type(t):
            raise view.fail(
                f"{what} {view.label(t)} is {view.element_type(t)}, given {element}"
            )
    signature = view.tensor(t).shape_signature
    fixed = signature if view.resolving and signature else view.tensor(t).shape
    if len(fixed) != len(shape) or any(
        f >= 0 and f != d for f, d in zip(fixed, shape, strict=False)
    ):
        raise view.fail(
            f"{what} {view.label(t)} has shape {list(fixed)}, given {list(shape)}"
        )
    view.shapes[t] = shape
    if isinstance(value, np.ndarray):
        view.folded[t] = value
    else:
        view.values[t] = value


def _run(
    imp: Importer,
    op: TfliteOp,
    graph: flatbuffer.Subgraph,
    where: str,
    args: list[Carried],
    *,
    evaluate: bool,
    layers: str = "",
) -> list[Carried | None]:
    """Subgraph `graph` (`where` in messages) of `op` applied to `args`: its outputs,
    None for an output that nothing computes.

    Converted into `imp`'s function, its layer names prefixed with `op`'s and `layers`;
    with `evaluate`, only folded at import (nothing is emitted)."""
    if len(graph.inputs) != len(args):
        raise op.fail(
            f"{where} takes {len(graph.inputs)} inputs, but {op.name} passes {len(args)}"
        )
    view = subgraph_view(imp, op, graph, where)
    source = op.source
    view.layer_prefix = f"{source['layer_name']}/{layers}/"
    view.caller_index = source["layer_index"]
    if evaluate:
        view.resolving = True  # fold every operator whose inputs are all constants
    try:
        for i, (t, arg) in enumerate(zip(graph.inputs, args, strict=True)):
            _bind(view, t, arg, f"input {i}")
        for record in graph.operators:
            inner = TfliteOp(view, record, view.opcode_name(record))
            if inner.name in VARIABLE_OPS:
                raise inner.fail("resource variables inside control flow are not supported")
            if not evaluate:
                view._convert(inner)
                continue
            view.current = inner
            try:
                fold(view, inner)
            finally:
                view.current = None
        results = [_result(view, t) for t in graph.outputs]
    except SynapcError as error:
        raise op.fail(f"{where}: {error}".replace(f"{imp.path}: ", "")) from None
    imp._constant_bytes = view._constant_bytes
    return results


def _inline(
    imp: Importer,
    op: TfliteOp,
    graph: flatbuffer.Subgraph,
    where: str,
    args: list[Carried],
    layers: str,
) -> list[Carried]:
    """Subgraph `graph` of `op` converted into `imp`'s function on `args` (see `_run`):
    its outputs."""
    results = []
    for i, value in enumerate(
        _run(imp, op, graph, where, args, evaluate=False, layers=layers)
    ):
        if value is None:
            raise op.fail(f"{where}: output {i} is not computed by any operator")
        results.append(value)
    return results


def _result(view: Importer, t: int) -> Carried | None:
    """Subgraph output tensor `t` of `view` (None if nothing computes it)."""
    if t in view.values:
        return view.values[t]
    array = view.constant_array(t)
    if array is None:
        return None
    if array.dtype.kind in "iub" and not isinstance(
        view.element_type(t), UniformQuantizedType
    ):
        return np.array(array)
    return view.value(t)


def _value(imp: Importer, value: Carried, name: str) -> SSAValue:
    """`value` as an SSA value of `imp`'s function (a constant op for an array)."""
    if isinstance(value, SSAValue):
        return value
    const = imp.weights.constant(
        value, name, TensorType(element_type_for(value.dtype), value.shape)
    )
    imp.ops.append(const)
    return const.results[0]


def _bind_outputs(imp: Importer, op: TfliteOp, results: list[Carried]) -> None:
    """Make `results` the values of `op`'s output tensors, after checking their types."""
    if len(results) != len(op.outputs):
        raise op.fail(
            f"has {len(op.outputs)} outputs, but its subgraph gives {len(results)}"
        )
    for i, (t, value) in enumerate(zip(op.outputs, results, strict=True)):
        element = _element(value)
        if element != imp.element_type(t):
            raise op.fail(
                f"output {i} {imp.label(t)} is {imp.element_type(t)}, but its subgraph "
                f"gives {element}"
            )
        record_shape(imp, op, t, _shape(value))
        if isinstance(value, np.ndarray):
            imp.folded[t] = value
        else:
            imp.values[t] = value


def _condition(op: TfliteOp, value: Carried | None, what: str) -> np.ndarray | None:
    """`value`, a one-element boolean condition, as an array (None if not constant)."""
    if value is None:
        return None
    element = _element(value)
    if not logical.is_bool(element) or int(np.prod(_shape(value))) != 1:
        raise op.fail(f"{what} must be one boolean, got {list(_shape(value))} {element}")
    return value if isinstance(value, np.ndarray) else None


@converts("IF", inputs=(1, None), outputs=(0, None))
def convert_if(imp: Importer, op: TfliteOp) -> None:
    """The chosen branch when the condition is a constant, else both branches with each
    output picked by `synap.select`."""
    o = op.options(tflite.IfOptions, required=True)
    if min(op.inputs) < 0:
        raise op.fail("an input is absent (-1); IF passes every input to its branches")
    cond = _carried(imp, op.inputs[0])
    constant = _condition(op, cond, f"the condition {imp.label(op.inputs[0])} (input 0)")
    args = [_carried(imp, t) for t in op.inputs[1:]]
    fields = (
        ("then_subgraph_index", o.ThenSubgraphIndex()),
        ("else_subgraph_index", o.ElseSubgraphIndex()),
    )
    branches = [
        (f"{field.split('_')[0]} subgraph {index}", read_subgraph(imp, op, index, field))
        for field, index in fields
    ]
    if constant is not None:
        where, graph = branches[0] if bool(constant.reshape(-1)[0]) else branches[1]
        layers = where.split()[0]
        _bind_outputs(imp, op, _inline(imp, op, graph, where, args, layers=layers))
        return
    then, other = (
        _inline(imp, op, graph, where, args, layers=where.split()[0])
        for where, graph in branches
    )
    if not len(then) == len(other) == len(op.outputs):
        raise op.fail(
            f"has {len(op.outputs)} outputs, but its branches give {len(then)} and "
            f"{len(other)}"
        )
    assert isinstance(cond, SSAValue)
    condition = cond
    if shape_of(cond):  # one element: a scalar condition broadcasts against any output
        scalar = TensorType(_element(cond), [])
        condition = imp.emit(
            ReshapeOp.make(cond, result_types=[scalar], **op.source)
        ).results[0]
    results: list[Carried] = []
    for i, (a, b) in enumerate(zip(then, other, strict=True)):
        name = imp.tensor_name(op.outputs[i])
        first, second = _value(imp, a, name), _value(imp, b, name)
        if first.type != second.type:
            raise op.fail(
                f"output {i} ({imp.label(op.outputs[i])}) is {first.type} in the then "
                f"branch but {second.type} in the else branch; a condition computed at "
                "run time needs both alike"
            )
        select = logical.SelectOp.make(
            condition, first, second, result_types=[first.type], **op.source
        )
        results.append(imp.emit(select).results[0])
    _bind_outputs(imp, op, results)


@converts("WHILE", inputs=(0, None), outputs=(0, None))
def convert_while(imp: Importer, op: TfliteOp) -> None:
    """Unrolled: the body inlined once per iteration while the condition, evaluated at
    import, holds."""
    o = op.options(tflite.WhileOptions, required=True)
    if len(op.inputs) != len(op.outputs):
        raise op.fail(
            f"has {len(op.inputs)} inputs but {len(op.outputs)} outputs; WHILE carries "
            "each input to its output"
        )
    if op.inputs and min(op.inputs) < 0:
        raise op.fail("an input is absent (-1); WHILE carries every input")
    cond_index, body_index = o.CondSubgraphIndex(), o.BodySubgraphIndex()
    cond_where, body_where = f"cond subgraph {cond_index}", f"body subgraph {body_index}"
    cond = read_subgraph(imp, op, cond_index, "cond_subgraph_index")
    body = read_subgraph(imp, op, body_index, "body_subgraph_index")
    if len(cond.outputs) != 1:
        raise op.fail(
            f"{cond_where} has {len(cond.outputs)} outputs; it must give one boolean"
        )
    values = [_carried(imp, t) for t in op.inputs]
    iterations = 0
    while True:
        (go,) = _run(imp, op, cond, cond_where, values, evaluate=True)
        flag = _condition(op, go, f"the output of {cond_where}")
        if flag is None:
            raise op.fail(
                f"the loop condition ({cond_where}) depends on data computed at run time; "
                "synapc unrolls WHILE only when the values its condition reads fold to "
                "constants at import (a counter compared with a constant trip count)"
            )
        if not bool(flag.reshape(-1)[0]):
            break
        iterations += 1
        check_count(
            iterations,
            "max_loop_iterations",
            f"{imp.path}: {op.label}: iterations unrolled",
        )
        values = _inline(imp, op, body, body_where, values, f"iteration_{iterations}")
        if len(values) != len(op.inputs):
            raise op.fail(
                f"{body_where} gives {len(values)} outputs for {len(op.inputs)} "
                "loop-carried values"
            )
    _bind_outputs(imp, op, values)


@rule("IF", "WHILE")
def control_flow_shapes(imp: Importer, op: TfliteOp) -> list[Shape]:
    """The file's shapes, as placeholders: the converter inlines the subgraphs and
    records the shapes they give (`_bind_outputs`)."""
    return [imp.tensor(t).shape for t in op.outputs]
