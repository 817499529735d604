"""TFLite resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE) as
explicit state.

Streaming models (keyword spotters, streaming convolutions) keep ring buffers in resource
variables that live from one invocation to the next: subgraph 0 starts with CALL_ONCE,
which runs an initialization subgraph on the first invocation only (VAR_HANDLE plus
ASSIGN_VARIABLE of constants), then reads each variable, computes, and assigns the new
contents. synapc's programs are pure functions, so a variable becomes state:

- a variable (identified by VAR_HANDLE's container and shared_name) that subgraph 0 reads
  before it assigns it is an extra model input (its value before the run) and an extra
  model output (its value after the run: the last ASSIGN_VARIABLE, or the input
  unchanged); a variable subgraph 0 always assigns before reading carries nothing from
  one run to the next and stays internal;
- READ_VARIABLE gives the variable's current value in program order (the state input,
  or the value of the latest ASSIGN_VARIABLE before it);
- the initialization subgraph is evaluated at import: it may only assign constants, which
  become the state's initial values (`synapc.model.StateInfo.initial`), which the runtime
  feeds before the first run.

A variable holds bytes: READ_VARIABLE, ASSIGN_VARIABLE and the initial constant must
agree on the element type (quantization included) and shape; anything else is refused
with an error naming the operator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tflite
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from synapc.importers.cut import ancestors
from synapc.importers.tflite.reader import Importer, TfliteOp, converts
from synapc.importers.tflite.shape_rules import Shape, rule
from synapc.importers.tflite.subgraphs import read_subgraph, subgraph_view

#: The operators of resource variables.
VARIABLE_OPS = ("CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE")

Key = tuple[str, str]


@dataclass
class Variable:
    """One resource variable of subgraph 0: its key (container, shared_name), the IR
    type of its contents, its value before the first run (from CALL_ONCE) and, while
    converting, its current SSA value."""

    key: Key
    type: TensorType[Attribute] | None = None
    initial: np.ndarray | None = None
    #: whether subgraph 0 reads it before assigning it: then it is model state
    is_state: bool = False
    current: SSAValue | None = None

    @property
    def name(self) -> str:
        """`container/shared_name`, or the shared_name when the container is empty."""
        container, shared = self.key
        return f"{container}/{shared}" if container else shared


def _key(op: TfliteOp) -> Key:
    """The (container, shared_name) of a VAR_HANDLE operator."""
    options = op.options(tflite.VarHandleOptions, required=True)
    container, shared = options.Container(), options.SharedName()
    if not shared:
        raise op.fail("VarHandleOptions.shared_name is empty; it names the variable")
    return (
        (container or b"").decode("utf-8", "replace"),
        shared.decode("utf-8", "replace"),
    )


class Variables:
    """The resource variables of one import, worked out before any operator is
    converted (`Importer.run` needs the state inputs for @main's signature)."""

    def __init__(self, imp: Importer):
        self.imp = imp
        #: resource tensor (of subgraph 0) -> its variable's key
        self.handles: dict[int, Key] = {}
        self.variables: dict[Key, Variable] = {}
        self._scan()

    @property
    def states(self) -> list[Variable]:
        """The variables carried from one run to the next, in the order they first
        appear (in a CALL_ONCE initialization or a VAR_HANDLE of subgraph 0)."""
        return [v for v in self.variables.values() if v.is_state]

    def of(self, op: TfliteOp, t: int) -> Variable:
        """The variable resource tensor `t` (an input of `op`) refers to."""
        key = self.handles.get(t)
        if key is None:
            raise op.fail(
                f"{self.imp.label(t)} is not the output of a VAR_HANDLE operator; "
                "synapc follows resource variables only through VAR_HANDLE"
            )
        return self.variables[key]

    def _scan(self) -> None:
        """Walk subgraph 0 in program order: find the variables, evaluate CALL_ONCE
        initializations, and mark the variables read before they are assigned."""
        imp = self.imp
        assigned: set[Key] = set()
        for record in imp.graph.operators:
            op = TfliteOp(imp, record, imp.opcode_name(record))
            if op.name == "VAR_HANDLE" and len(op.outputs) == 1:
                key = _key(op)
                self.handles[op.outputs[0]] = key
                self.variables.setdefault(key, Variable(key))
            elif op.name == "CALL_ONCE":
                for key, value in _initial_values(imp, op).items():
                    self.variables.setdefault(key, Variable(key)).initial = value
            elif op.name == "READ_VARIABLE" and len(op.inputs) == 1 and op.outputs:
                variable = self.of(op, op.inputs[0])
                if variable.type is None:
                    variable.type = imp.tensor_type(op.outputs[0])
                if variable.key not in assigned:
                    self._make_state(op, variable)
            elif op.name == "ASSIGN_VARIABLE" and len(op.inputs) == 2:
                variable = self.of(op, op.inputs[0])
                assigned.add(variable.key)
                if variable.type is None and op.inputs[1] >= 0:
                    variable.type = imp.tensor_type(op.inputs[1])

    def _make_state(self, op: TfliteOp, variable: Variable) -> None:
        """Mark `variable`, which `op` reads before subgraph 0 assigns it, as state."""
        if variable.initial is None:
            raise op.fail(
                f"reads variable '{variable.name}' before any ASSIGN_VARIABLE, and no "
                "earlier CALL_ONCE initialization assigns it (LiteRT refuses to read an "
                "uninitialized variable)"
            )
        assert variable.type is not None
        shape = tuple(variable.type.get_shape())
        dtype = self.imp.numpy_dtype(op.outputs[0])
        if variable.initial.shape != shape or variable.initial.dtype != dtype:
            raise op.fail(
                f"reads variable '{variable.name}' as {list(shape)} {dtype}, but its "
                f"CALL_ONCE initialization assigns {list(variable.initial.shape)} "
                f"{variable.initial.dtype}"
            )
        variable.is_state = True

    def bind(self, args: list[SSAValue]) -> None:
        """Make the state inputs `args` (one per `states` entry) the variables' values
        at the start of the run."""
        for variable, arg in zip(self.states, args, strict=True):
            variable.current = arg

    def results(self) -> list[SSAValue]:
        """The state values at the end of the run, one per `states` entry."""
        return [v.current for v in self.states if v.current is not None]

    def operators_to_keep(self) -> set[int]:
        """Indices of the ASSIGN_VARIABLE operators of subgraph 0 and the operators they
        depend on: a cut graph must still update its state."""
        operators = self.imp.graph.operators
        producer = {t: op.index for op in operators for t in op.outputs}
        assigns = [
            op.index
            for op in operators
            if self.imp.opcode_name(op) in ("ASSIGN_VARIABLE", "CALL_ONCE")
        ]
        targets = [t for k in assigns for t in operators[k].inputs if t >= 0]
        kept = ancestors(
            targets, producer, lambda k: [t for t in operators[k].inputs if t >= 0]
        )
        return kept | set(assigns)


def _initial_values(imp: Importer, op: TfliteOp) -> dict[Key, np.ndarray]:
    """Evaluate the initialization subgraph of CALL_ONCE `op`: the constants it assigns
    to each variable (the last assignment wins, as it would at run time)."""
    index = op.options(tflite.CallOnceOptions, required=True).InitSubgraphIndex()
    graph = read_subgraph(imp, op, index, "init_subgraph_index")
    # an importer over the init subgraph: the same tensor, buffer and type checks
    where = f"initialization subgraph {index}"
    view = subgraph_view(imp, op, graph, where)
    handles: dict[int, Key] = {}
    values: dict[Key, np.ndarray] = {}
    for record in graph.operators:
        inner = TfliteOp(view, record, view.opcode_name(record))
        label = f"{where}, {inner.label}"
        if inner.name == "VAR_HANDLE" and len(inner.outputs) == 1:
            handles[inner.outputs[0]] = _key(inner)
            continue
        if inner.name != "ASSIGN_VARIABLE" or len(inner.inputs) != 2:
            raise op.fail(
                f"{label}: synapc evaluates initialization subgraphs at import and "
                "takes only VAR_HANDLE and ASSIGN_VARIABLE of constants"
            )
        key = handles.get(inner.inputs[0])
        if key is None:
            raise op.fail(f"{label}: input 0 is not the output of a VAR_HANDLE operator")
        value = view.constant_array(inner.inputs[1]) if inner.inputs[1] >= 0 else None
        if value is None:
            raise op.fail(
                f"{label}: the assigned value (input 1) is not a constant; synapc "
                "evaluates initialization subgraphs at import"
            )
        values[key] = np.array(value)  # a copy: the file bytes are read-only views
    return values


@converts("VAR_HANDLE", inputs=(0, 0), outputs=(1, 1))
@converts("CALL_ONCE", inputs=(0, 0), outputs=(0, 0))
def convert_declaration(imp: Importer, op: TfliteOp) -> None:
    """VAR_HANDLE and CALL_ONCE emit nothing: the variables and their initial values
    were worked out before conversion (`Variables`)."""


@converts("READ_VARIABLE", inputs=(1, 1))
def convert_read(imp: Importer, op: TfliteOp) -> None:
    """The variable's current value: the state input or the latest assigned value."""
    variable = imp.variables.of(op, op.inputs[0])
    if variable.current is None:
        raise op.fail(f"reads variable '{variable.name}' before it is assigned")
    want = imp.tensor_type(op.outputs[0])
    if variable.current.type != want:
        raise op.fail(
            f"reads variable '{variable.name}' as {want}, but it holds "
            f"{variable.current.type}; synapc needs one type per variable"
        )
    imp.values[op.outputs[0]] = variable.current


@converts("ASSIGN_VARIABLE", inputs=(2, 2), outputs=(0, 0))
def convert_assign(imp: Importer, op: TfliteOp) -> None:
    """The variable's value from here on is input 1."""
    variable = imp.variables.of(op, op.inputs[0])
    value = imp.value(op.inputs[1])
    if variable.type is not None and value.type != variable.type:
        raise op.fail(
            f"assigns {value.type} to variable '{variable.name}', which holds "
            f"{variable.type}; synapc needs one type per variable"
        )
    variable.current = value


@rule("VAR_HANDLE", "CALL_ONCE", "READ_VARIABLE", "ASSIGN_VARIABLE")
def variable_shapes(imp: Importer, op: TfliteOp) -> list[Shape]:
    """Output shapes: a resource handle is a scalar, a read has the variable's shape."""
    if op.name == "VAR_HANDLE":
        return [()]
    if op.name == "READ_VARIABLE":
        variable = imp.variables.of(op, op.inputs[0])
        assert variable.type is not None
        return [tuple(variable.type.get_shape())]
    return []
