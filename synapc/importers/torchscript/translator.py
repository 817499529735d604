"""The walk of a frozen TorchScript graph: executes every node once on zeros of the
input shapes and translates the nodes that compute on input data into ONNX nodes.

`Translator` holds the state of one translation and dispatches each aten node to the
translation registered for it with `aten` (in the family modules of this package);
`Slot` is one TorchScript value, concrete and (when data-dependent) symbolic. The
generic helpers at the end are shared by the translations.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from synapc.errors import SynapcError
from synapc.importers.cut import ancestors, check_requested, unknown_output
from synapc.importers.torchscript.loader import (
    first_line,
    frozen_graph,
    load_torchscript,
    require_torch,
)
from synapc.io_attributes import describe_io
from synapc.model import Model

if TYPE_CHECKING:
    import torch

#: Static input shapes, by forward-argument name or in argument order.
InputShapes = Mapping[str, Sequence[int]] | Sequence[Sequence[int]] | None

#: The ONNX opset of the generated graph (20: Gelu is a standard op).
OPSET = 20
#: The ONNX IR version of the generated model (the one opset 20 came with).
IR_VERSION = 9


def import_torchscript(
    path: str | os.PathLike[str],
    input_shapes: InputShapes = None,
    outputs: Sequence[str] | None = None,
) -> Model:
    """Import a TorchScript archive. `input_shapes` (by forward-argument name or in
    argument order) is required: TorchScript records no shapes.

    `outputs` cuts the model at these tensors. A name is looked up, in this order, as
    a value name of the frozen TorchScript graph (what `frozen_graph(path, module)`
    prints without the ``%``: ``y.1``, ``input.2``, ``28``; the model's results are
    ``output`` / ``output_k``), as a tensor name of the translated ONNX graph
    (``<layer>:<OpType>``, see `torchscript_to_onnx`; the inputs are the forward
    argument names) and as a variable of a scripted forward (``y``: the last value
    named ``y.<n>``). Tensors the requested ones do not depend on may come from aten
    ops the importer cannot translate; untranslatable ops whose results are not
    tensors (numbers read from data, data-dependent control flow) still fail."""
    path = Path(path)
    module = load_torchscript(path)
    translator = Translator(path, frozen_graph(path, module), input_shapes, outputs)
    proto = translator.run()
    from synapc.importers.onnx import import_onnx

    if outputs is None:
        model = import_onnx(path, None, proto=proto)
    else:
        model = import_onnx(path, None, proto=proto, outputs=translator.output_syms)
        model.outputs = [
            replace(info, name=name)
            for info, name in zip(model.outputs, translator.requested or [], strict=True)
        ]
        describe_io(model.main, outputs=[info.name for info in model.outputs])
    model.artifacts[f"{path.stem}.translated.onnx"] = proto.SerializeToString()
    return model


def torchscript_to_onnx(
    path: str | os.PathLike[str],
    module: torch.jit.ScriptModule,
    input_shapes: InputShapes,
    outputs: Sequence[str] | None = None,
) -> onnx.ModelProto:
    """The frozen graph of `module` as an in-memory ONNX model with static shapes.
    With `outputs` (names as in `import_torchscript`) the graph outputs are the ONNX
    tensors those names resolve to, in order; nodes they do not depend on may read
    tensors of untranslatable ops (no node writes them), so import the result with
    ``import_onnx(..., outputs=[o.name for o in proto.graph.output])``."""
    path = Path(path)
    return Translator(path, frozen_graph(path, module), input_shapes, outputs).run()


# -- the walk ------------------------------------------------------------------------


@dataclass
class Slot:
    """One TorchScript value: its `concrete` value from the execution on zeros, and
    `sym` when it depends on the input data: the ONNX tensor name of a tensor, or for a
    list / tuple a list holding each element's `sym` (None for static elements)."""

    concrete: Any
    sym: Any = None

    @property
    def static(self) -> bool:
        """Whether the value does not depend on the input data (no symbolic part)."""
        return self.sym is None


#: Ops whose results depend only on the shape / type of a tensor input, not its data.
_SHAPE_QUERIES = {
    "aten::size",
    "aten::dim",
    "aten::numel",
    "aten::len",
    "aten::sym_size",
    "aten::sym_numel",
    "aten::__is__",
    "aten::__isnot__",
    "aten::is_floating_point",
    "aten::zeros_like",
    "aten::ones_like",
    "aten::full_like",
    "aten::new_zeros",
    "aten::new_ones",
    "aten::new_full",
    "prim::shape",
    "prim::dtype",
    "prim::device",
    "prim::layout",
    "prim::is_cuda",
    "prim::requires_grad",
}
#: Ops that turn tensor data into numbers: static only when the tensor is.
_DATA_TO_NUMBER = {
    "aten::Int",
    "aten::Float",
    "aten::Bool",
    "aten::item",
    "aten::ScalarImplicit",
    "aten::IntImplicit",
    "aten::FloatImplicit",
    "aten::is_nonzero",
}
#: Control-flow-free prim ops that only pass values through.
_PASS_THROUGH = {"prim::unchecked_cast", "prim::unchecked_unwrap_optional"}

#: A translation gets the translator, the TorchScript node, its argument slots and the
#: concrete results, and returns the symbolic result of each output.
Translation = Callable[["Translator", Any, list[Slot], list[Any]], list[Any]]
ATEN: dict[str, Translation] = {}


def aten(*names: str) -> Callable[[Translation], Translation]:
    """Register the ONNX translation of the aten ops `names` (without ``aten::``; the
    in-place variant ``name_`` shares it)."""

    def register(function: Translation) -> Translation:
        for name in names:
            ATEN[name] = function
        return function

    return register


class Translator:
    """State of one translation: the concrete and symbolic value of every TorchScript
    value, and the ONNX nodes and initializers emitted so far."""

    def __init__(
        self,
        path: Path,
        graph: torch._C.Graph,
        input_shapes: InputShapes,
        outputs: Sequence[str] | None = None,
    ):
        self.torch = require_torch()
        self.path = path
        self.graph = graph
        self.input_shapes = input_shapes
        self.slots: dict[int, Slot] = {}
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        #: (id of a torch tensor, dtype) -> (initializer name, the tensor, kept alive
        #: so that its id is not reused)
        self._const_cache: dict[tuple[int, str], tuple[str, Any]] = {}
        self._names: set[str] = set()
        self._layer_names: set[str] = set()
        self.node: Any = None  # the TorchScript node being translated
        self.layer = ""
        #: the requested output names of a cut (None: the whole model)
        self.requested = None if outputs is None else check_requested(path, outputs)
        #: the ONNX tensor each requested output resolves to (set by `run`)
        self.output_syms: list[str] = []
        #: a cut's lookups: TorchScript value name / ONNX tensor name -> tensor slot
        self._by_value: dict[str, Slot] = {}
        self._by_sym: dict[str, Slot] = {}
        #: a cut's lookup by variable: ``y`` -> the last value named ``y.<n>``
        self._by_variable: dict[str, Slot] = {}
        #: a cut's stand-in tensor names for results of untranslatable nodes -> the error
        self._poison: dict[str, SynapcError] = {}
        self._value_infos: list[onnx.ValueInfoProto] = []

    # -- names and constants -------------------------------------------------------
    def fresh(self, base: str) -> str:
        """A tensor name not used yet, derived from `base`."""
        base = re.sub(r"[^A-Za-z0-9_.#/:-]", "_", base) or "t"
        name, k = base, 1
        while name in self._names:
            name = f"{base}_{k}"
            k += 1
        self._names.add(name)
        return name

    def constant(self, array: Any, dtype: Any = None, base: str = "const") -> str:
        """An initializer holding `array` (a tensor, number or array; cast to `dtype`)."""
        key, source = None, array
        if isinstance(array, self.torch.Tensor):
            key = (id(array), str(dtype))
            if key in self._const_cache:
                return self._const_cache[key][0]
            array = array.detach().cpu().contiguous().numpy()
        array = np.asarray(array)
        if dtype is not None:
            array = array.astype(dtype)
        elif array.dtype == np.float64:
            array = array.astype(np.float32)
        name = self.fresh(base)
        # (not np.ascontiguousarray: it turns 0-d scalars into 1-d arrays)
        array = np.array(array, order="C", copy=True)
        self.initializers.append(numpy_helper.from_array(array, name))
        if key is not None:
            self._const_cache[key] = (name, source)
        return name

    def ints(self, values: Sequence[int], base: str = "shape") -> str:
        """An int64 initializer of `values` (shapes, axes, sizes)."""
        return self.constant(np.asarray(list(values), np.int64), base=base)

    def tensor(self, slot: Slot, dtype: Any = None) -> str:
        """The ONNX name of tensor `slot` (static tensors and numbers become
        initializers of `dtype`, the dtype they have by default)."""
        if isinstance(slot.sym, str):
            return slot.sym
        if slot.sym is not None:
            raise self.fail("a list of tensors is used where one tensor is expected")
        return self.constant(slot.concrete, dtype)

    def emit(self, op_type: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any):
        """Append an ONNX node; returns its output name (a list when `n_out` > 1)."""
        base = self.layer or op_type
        outputs = [self.fresh(f"{base}:{op_type}") for _ in range(n_out)]
        name, k = base, 1
        while name in self._layer_names:
            name = f"{base}_{k}"
            k += 1
        self._layer_names.add(name)
        self.nodes.append(
            helper.make_node(op_type, list(inputs), outputs, name=name, **attrs)
        )
        return outputs[0] if n_out == 1 else outputs

    def fail(self, message: str) -> SynapcError:
        """A one-line error naming the current aten node and its source line."""
        where = ""
        if self.node is not None:
            where = f"{self.node.kind()}{_source_of(self.node)}: "
        return SynapcError(f"{self.path}: {where}{message}")

    # -- the walk ------------------------------------------------------------------
    def run(self) -> onnx.ModelProto:
        """Execute and translate the whole graph; returns the ONNX model."""
        inputs = list(self.graph.inputs())
        if inputs and inputs[0].type().kind() == "ClassType":
            inputs = inputs[1:]  # the frozen module itself, unused
        names = _argument_names(inputs)
        shapes = self._shapes(names)
        value_infos = []
        for value, name, shape in zip(inputs, names, shapes, strict=True):
            if value.type().kind() != "TensorType":
                raise SynapcError(
                    f"{self.path}: input '{name}' is a {value.type()}, not a tensor; only "
                    "tensor inputs are supported"
                )
            self._names.add(name)
            zeros = self.torch.zeros(shape, dtype=self.torch.float32)
            self._set(value, Slot(zeros, name))
            value_infos.append(
                helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
            )
        self._value_infos = value_infos
        self._block(self.graph.nodes())
        self.node = None
        self.layer = ""
        results: list[Slot] = []
        for value in self.graph.outputs():
            results.extend(_flatten(self.slots[value.unique()]))
        if self.requested is not None:
            return self._model(self._cut_outputs(results))
        outputs = []
        for k, slot in enumerate(results):
            if not isinstance(slot.concrete, self.torch.Tensor):
                raise SynapcError(
                    f"{self.path}: output {k} is a {type(slot.concrete).__name__}, not a "
                    "tensor"
                )
            name = "output" if len(results) == 1 else f"output_{k}"
            self._names.add(name)
            self.nodes.append(
                helper.make_node("Identity", [self.tensor(slot)], [name], name=name)
            )
            outputs.append(
                helper.make_tensor_value_info(
                    name, onnx_dtype(slot.concrete), list(slot.concrete.shape)
                )
            )
        return self._model(outputs)

    def _model(self, outputs: list[onnx.ValueInfoProto]) -> onnx.ModelProto:
        """The ONNX model of the nodes and initializers emitted, with `outputs`."""
        graph = helper.make_graph(
            self.nodes, "torchscript", self._value_infos, outputs, self.initializers
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="synapc.torchscript",
        )
        model.ir_version = IR_VERSION
        return model

    # -- cutting -------------------------------------------------------------------
    def _cut_outputs(self, results: list[Slot]) -> list[onnx.ValueInfoProto]:
        """Resolve the requested names to ONNX tensors (`output_syms`) and return their
        value infos; a requested tensor that depends on an untranslatable node raises
        that node's error."""
        assert self.requested is not None
        for k, slot in enumerate(results):
            name = "output" if len(results) == 1 else f"output_{k}"
            if isinstance(slot.sym, str):
                self._by_value.setdefault(name, slot)
        infos, chosen = [], {}
        for name in self.requested:
            slot = (
                self._by_value.get(name)
                or self._by_sym.get(name)
                or self._by_variable.get(name)
            )
            if slot is None:
                known = [*self._by_value, *self._by_sym, *self._by_variable]
                raise unknown_output(self.path, name, known)
            if slot.sym in chosen:
                raise SynapcError(
                    f"{self.path}: outputs '{chosen[slot.sym]}' and '{name}' are the same "
                    "tensor"
                )
            chosen[slot.sym] = name
            self.output_syms.append(slot.sym)
            infos.append(
                helper.make_tensor_value_info(
                    slot.sym, onnx_dtype(slot.concrete), list(slot.concrete.shape)
                )
            )
        producer = {o: k for k, node in enumerate(self.nodes) for o in node.output}
        kept = ancestors(self.output_syms, producer, lambda k: self.nodes[k].input)
        for name in [*self.output_syms, *(i for k in kept for i in self.nodes[k].input)]:
            if name in self._poison:
                raise self._poison[name]
        return infos

    def _poisoned(self, outs: list[Any], concrete: list[Any], error: SynapcError) -> None:
        """In a cut, bind the results of a node that cannot be translated to stand-in
        tensor names that remember `error`: only a requested output that depends on
        them fails. Results that are not tensors (or lists of them) re-raise `error`."""
        for out, value in zip(outs, concrete, strict=True):
            if isinstance(value, self.torch.Tensor):
                sym: Any = self._poison_name(error)
            elif isinstance(value, list | tuple) and all(
                isinstance(v, self.torch.Tensor) for v in value
            ):
                sym = [self._poison_name(error) for _ in value]
            else:
                raise error
            self._set(out, Slot(value, sym))

    def _poison_name(self, error: SynapcError) -> str:
        """A fresh stand-in tensor name (no node writes it) that remembers `error`."""
        name = self.fresh(f"{self.layer or 'untranslated'}:untranslated")
        self._poison[name] = error
        return name

    def _shapes(self, names: list[str]) -> list[list[int]]:
        """The static shape of each input from `input_shapes`."""
        shapes = self.input_shapes
        example = ", ".join(f"'{n}': [1, 3, 224, 224]" for n in names)
        if shapes is None:
            raise SynapcError(
                f"{self.path}: TorchScript records no input shapes; pass "
                f"input_shapes={{{example}}} (one static shape per forward argument)"
            )
        if isinstance(shapes, Mapping):
            unknown = sorted(set(shapes) - set(names))
            missing = [n for n in names if n not in shapes]
            if unknown or missing:
                raise SynapcError(
                    f"{self.path}: input_shapes names {sorted(shapes)}, the forward "
                    f"arguments are {names}"
                )
            given = [shapes[n] for n in names]
        else:
            given = list(shapes)
            if len(given) != len(names):
                raise SynapcError(
                    f"{self.path}: input_shapes gives {len(given)} shapes for "
                    f"{len(names)} forward arguments {names}"
                )
        result = []
        for name, shape in zip(names, given, strict=True):
            dims = [int(d) for d in shape]
            if any(d <= 0 for d in dims):
                raise SynapcError(f"{self.path}: input '{name}' has shape {dims}")
            result.append(dims)
        return result

    def _block(self, nodes: Any) -> None:
        for node in nodes:
            self.node = node
            self.layer = _layer_name(node)
            self._node(node)

    def _node(self, node: Any) -> None:
        kind = node.kind()
        outs = list(node.outputs())
        if kind == "prim::If":
            self._if(node)
            return
        if kind == "prim::Loop":
            self._loop(node)
            return
        args = [self.slots[v.unique()] for v in node.inputs()]
        if kind == "prim::Constant":
            self._set(outs[0], Slot(_constant_value(node)))
            return
        if kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            values = [a.concrete for a in args]
            concrete = values if kind == "prim::ListConstruct" else tuple(values)
            syms = None if all(a.static for a in args) else [a.sym for a in args]
            self._set(outs[0], Slot(concrete, syms))
            return
        if kind in ("prim::ListUnpack", "prim::TupleUnpack"):
            items = flatten_one(args[0])
            if len(items) != len(outs):
                raise self.fail(f"unpacks {len(items)} values into {len(outs)}")
            for out, item in zip(outs, items, strict=True):
                self._set(out, item)
            return
        if kind in ("prim::TupleIndex", "aten::__getitem__") and not args[0].static:
            index = args[1].concrete
            self._set(outs[0], flatten_one(args[0])[int(index)])
            return
        if kind == "aten::append":
            lst, item = args
            lst.concrete.append(item.concrete)
            if not (lst.static and item.static):
                if lst.sym is None:
                    lst.sym = [None] * (len(lst.concrete) - 1)
                lst.sym.append(item.sym)
            self._set(outs[0], lst)
            return
        if kind in _PASS_THROUGH:
            self._set(outs[0], args[0])
            return
        if kind == "prim::RaiseException":
            message = args[0].concrete if args else "an exception"
            raise self.fail(f"the model raises for these input shapes: {message}")
        if kind == "prim::Uninitialized":
            self._set(outs[0], Slot(None))
            return
        if list(node.blocks()):
            raise self.fail("control flow of this kind is not supported")
        dynamic = [a for a in args if not a.static]
        if not dynamic:
            self._execute(node, args, outs)
            return
        if kind in _SHAPE_QUERIES:
            self._execute(node, [Slot(a.concrete) for a in args], outs)
            return
        short = kind.removeprefix("aten::")
        if short.endswith("_") and not short.endswith("__"):
            short = short[:-1]
        translation = ATEN.get(short) if kind.startswith("aten::") else None
        if translation is None and self.requested is None:
            raise self._untranslatable(kind)
        concrete = self._execute(node, args, outs, bind=False)
        try:
            if translation is None:
                raise self._untranslatable(kind)
            syms = translation(self, node, args, concrete)
        except SynapcError as error:
            if self.requested is None:
                raise
            self._poisoned(outs, concrete, error)
            if kind.endswith("_") and not kind.endswith("__") and args and outs:
                args[0].sym = self.slots[outs[0].unique()].sym
            return
        for out, value, sym in zip(outs, concrete, syms, strict=True):
            self._set(out, Slot(value, sym))
        if kind.endswith("_") and not kind.endswith("__") and args:
            args[0].sym = syms[0]  # in-place: later uses of the input see the result
            args[0].concrete = concrete[0]

    def _untranslatable(self, kind: str) -> SynapcError:
        """The error for a data-dependent node of `kind` that has no translation."""
        if kind in _DATA_TO_NUMBER:
            return self.fail("a value computed from the input data is used as a number")
        return self.fail(
            "operator is not supported by the TorchScript importer"
            if kind.startswith("aten::")
            else "is not supported by the TorchScript importer"
        )

    def _set(self, value: Any, slot: Slot) -> None:
        self.slots[value.unique()] = slot
        if self.requested is not None and isinstance(slot.sym, str):
            # a snapshot: in-place ops later rebind the slot's symbol
            snapshot = Slot(slot.concrete, slot.sym)
            self._by_value[value.debugName()] = snapshot
            self._by_sym.setdefault(slot.sym, snapshot)
            variable = re.sub(r"\.\d+$", "", value.debugName())
            if variable != value.debugName():
                self._by_variable[variable] = snapshot

    def _execute(
        self, node: Any, args: list[Slot], outs: list[Any], bind: bool = True
    ) -> list[Any]:
        """Run `node` on the concrete values of `args` as a one-node TorchScript
        function; binds (static) or returns the concrete results."""
        graph = self.torch._C.Graph()
        mapping = {}
        for value in node.inputs():
            if value.unique() not in mapping:
                arg = graph.addInput()
                arg.setType(value.type())
                mapping[value.unique()] = arg
        clone = graph.createClone(node, lambda v: mapping[v.unique()])
        graph.insertNode(clone)
        for out in clone.outputs():
            graph.registerOutput(out)
        if len(outs) > 1:  # functions return one value
            graph.makeMultiOutputIntoTuple()
        feeds, seen = [], set()
        for value, arg in zip(node.inputs(), args, strict=True):
            if value.unique() not in seen:
                seen.add(value.unique())
                feeds.append(arg.concrete)
        try:
            function = self.torch._C._create_function_from_graph("synapc_node", graph)
            result = function(*feeds)
        except Exception as error:
            raise self.fail(f"cannot be evaluated: {first_line(error)}") from None
        results = list(result) if len(outs) > 1 else [result]
        if len(outs) == 0:
            results = []
        if bind:
            for out, value in zip(outs, results, strict=True):
                self._set(out, Slot(value))
        return results

    def _if(self, node: Any) -> None:
        condition = self.slots[node.inputsAt(0).unique()]
        if not condition.static:
            raise self.fail("the branch condition depends on the input data")
        blocks = list(node.blocks())
        block = blocks[0] if bool(condition.concrete) else blocks[1]
        self._block(block.nodes())
        self.node = node
        for out, value in zip(node.outputs(), block.outputs(), strict=True):
            self._set(out, self.slots[value.unique()])

    def _loop(self, node: Any) -> None:
        args = [self.slots[v.unique()] for v in node.inputs()]
        trip, condition, carried = args[0], args[1], args[2:]
        if not (trip.static and condition.static):
            raise self.fail("the loop bound depends on the input data")
        block = next(iter(node.blocks()))
        params = list(block.inputs())
        results = list(block.outputs())
        keep_going = bool(condition.concrete)
        count = 0
        while keep_going and count < int(trip.concrete):
            self._set(params[0], Slot(count))
            for param, slot in zip(params[1:], carried, strict=True):
                self._set(param, slot)
            self._block(block.nodes())
            self.node = node
            cond = self.slots[results[0].unique()]
            if not cond.static:
                raise self.fail("the loop condition depends on the input data")
            keep_going = bool(cond.concrete)
            carried = [self.slots[r.unique()] for r in results[1:]]
            count += 1
        for out, slot in zip(node.outputs(), carried, strict=True):
            self._set(out, slot)


# -- helpers -------------------------------------------------------------------------


def _constant_value(node: Any) -> Any:
    """The value of a prim::Constant node."""
    out = node.output()
    if node.hasAttribute("value") and node.kindOf("value") == "t":
        return node.t("value")
    return out.toIValue()


def _flatten(slot: Slot) -> list[Slot]:
    """The tensors of a (nested) list / tuple slot, or the slot itself."""
    if isinstance(slot.concrete, list | tuple):
        return [s for item in flatten_one(slot) for s in _flatten(item)]
    return [slot]


def flatten_one(slot: Slot) -> list[Slot]:
    """The element slots of a list / tuple slot."""
    syms = slot.sym if slot.sym is not None else [None] * len(slot.concrete)
    return [Slot(c, s) for c, s in zip(slot.concrete, syms, strict=True)]


def _argument_names(inputs: list[Any]) -> list[str]:
    """Forward-argument names of the graph inputs (``x.1`` -> ``x``), unique."""
    names: list[str] = []
    for k, value in enumerate(inputs):
        name = re.sub(r"\.\d+$", "", value.debugName()) or f"input_{k}"
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) or name in names:
            name = f"input_{k}"
        names.append(name)
    return names


def _layer_name(node: Any) -> str:
    """A readable layer name: the module path of a traced node, else its result."""
    scope = node.scopeName()
    if scope:
        return scope.split("/")[-1].removeprefix("__module.")
    outs = list(node.outputs())
    return re.sub(r"\.\d+$", "", outs[0].debugName()) if outs else node.kind()


def _source_of(node: Any) -> str:
    """`` at file:line (code)`` for `node`, when TorchScript recorded it."""
    text = node.sourceRange() or ""
    match = re.search(r'File "([^"]+)", line (\d+)', text)
    if match:
        lines = text.splitlines()
        code = ""
        for k, line in enumerate(lines):
            if "<--- HERE" in line and k > 0:
                code = lines[k - 1].strip()
        where = f"{match.group(1)}:{match.group(2)}"
        return f" at {where} ({code})" if code else f" at {where}"
    match = re.match(r"(.+)\((\d+)\): ", text)
    if match:
        return f" at {match.group(1)}:{match.group(2)}"
    return ""


def onnx_dtype(tensor: Any) -> int:
    """The ONNX element type of a torch tensor."""
    return helper.np_dtype_to_tensor_dtype(np_dtype(tensor))


def np_dtype(tensor: Any) -> np.dtype:
    """The numpy dtype of a torch tensor (initializers of its type are built from it)."""
    import torch

    return torch.empty((), dtype=tensor.dtype).numpy().dtype


def rank_of(slot: Slot) -> int:
    """The rank of tensor `slot`, from its concrete value."""
    return slot.concrete.dim()


def normalize_axis(axis: int, rank: int) -> int:
    """A torch axis (negative counts from the end) as a non-negative axis of `rank`."""
    return axis + rank if axis < 0 else axis


def static_args(t: Translator, args: list[Slot], first: int) -> list[Any]:
    """Concrete values of the arguments from `first` on, which must not depend on the
    input data."""
    for a in args[first:]:
        if not a.static:
            raise t.fail("a weight or parameter computed from the input data")
    return [a.concrete for a in args[first:]]
