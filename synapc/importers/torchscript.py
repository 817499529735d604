"""TorchScript importer: a `.torchscript` / `.pt` / `.pth` archive saved by
`torch.jit.script(model).save(path)` or `torch.jit.trace(model, example).save(path)`
becomes a `synapc.Model` in the synap dialect. Needs the optional dependency
``torch==2.13.0`` (the `torch` extra).

Design: the module is loaded on the CPU, frozen (`torch.jit.freeze`: parameters and
attributes become constants, conv + batch-norm pairs are folded, ``if self.x is None``
branches disappear), inlined and cleaned of tensor mutation. The frozen aten graph is then
walked directly and every aten node is translated into equivalent in-memory ONNX nodes;
the resulting `onnx.ModelProto` goes to the ONNX importer (`import_onnx(path,
proto=...)`), so one layout machinery (NCHW tracked by a permutation, stored
channels-last) and one set of converters serve both formats. We do not go through
`torch.onnx.export`: in torch 2.13 it defaults to the dynamo exporter, which needs
`onnxscript` and cannot export ScriptModules, and the legacy TorchScript exporter is
deprecated. Walking aten keeps the dependency to torch alone.

TorchScript carries no shapes, so `input_shapes` is required. The graph is executed once,
node by node, on zeros of those shapes (each aten node runs as a one-node TorchScript
function, so every overload behaves exactly as in torch); this gives every value a
concrete counterpart. Values that do not depend on the input data are *static*: shape
arithmetic (``aten::size``, ``prim::ListConstruct`` of ints, ``aten::Int``), constant
subgraphs, and the conditions of ``prim::If`` / trip counts of ``prim::Loop`` (so the
control flow a scripted ``F.interpolate`` compiles into is resolved at import). Only
nodes that compute on input data become ONNX nodes; shapes they need (``view``,
``flatten``, ``interpolate`` sizes) are read from the concrete results. An aten op with
no translation, or a value that depends on input data where a static one is needed,
fails with one line naming the op and its source line.
"""

from __future__ import annotations

import os
import re
import warnings
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from synapc.errors import SynapcError
from synapc.model import Model

if TYPE_CHECKING:
    import torch

InputShapes = Mapping[str, Sequence[int]] | Sequence[Sequence[int]] | None

#: The ONNX opset of the generated graph (20: Gelu is a standard op).
OPSET = 20
#: The ONNX IR version of the generated model (the one opset 20 came with).
IR_VERSION = 9

_EXPORT_HINT = (
    "only TorchScript is supported — export with torch.jit.script(model).save(path) "
    "or torch.jit.trace(model, example).save(path)"
)


def _torch(path: Path | None = None) -> Any:
    """The torch module, or a one-line error saying how to install it."""
    try:
        import torch
    except ImportError:
        where = f"{path}: " if path is not None else ""
        raise SynapcError(
            f"{where}importing TorchScript needs PyTorch: pip install torch==2.13.0 "
            "(the 'torch' extra: pip install 'synapc[torch]')"
        ) from None
    return torch


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _check_archive(path: Path) -> None:
    """Reject files that are not TorchScript archives before torch parses them: a
    `torch.save` archive (state_dict or pickled module, zip or legacy pickle) gets the
    export hint, anything else is called corrupt."""
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, OSError) as error:
            raise SynapcError(
                f"{path}: corrupt TorchScript archive ({_first_line(error)})"
            ) from None
        scripted = any(n.endswith("/constants.pkl") or "/code/" in n for n in names)
        if not scripted:
            raise SynapcError(f"{path}: not a TorchScript archive; {_EXPORT_HINT}")
        return
    with open(path, "rb") as stream:
        head = stream.read(4)
    if head[:1] == b"\x80":  # a pickle: torch.save's legacy (non-zip) format
        raise SynapcError(f"{path}: not a TorchScript archive; {_EXPORT_HINT}")
    what = "truncated zip archive" if head[:2] == b"PK" else "not a zip archive"
    raise SynapcError(f"{path}: corrupt TorchScript archive ({what})")


def load_torchscript(path: str | os.PathLike[str]) -> torch.jit.ScriptModule:
    """Load a TorchScript archive on the CPU; a `torch.save` file or a corrupt file
    raises a one-line `SynapcError`."""
    path = Path(path)
    torch = _torch(path)
    _check_archive(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return torch.jit.load(str(path), map_location="cpu")
    except Exception as error:
        raise SynapcError(
            f"{path}: corrupt TorchScript archive ({_first_line(error)})"
        ) from None


def frozen_graph(path: Path, module: torch.jit.ScriptModule) -> torch._C.Graph:
    """The forward graph of `module` frozen for inference: parameters are constants,
    calls are inlined and tensor mutation is rewritten where it is safe."""
    torch = _torch()
    module.eval()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            frozen = torch.jit.freeze(module)
    except Exception as error:
        raise SynapcError(
            f"{path}: cannot freeze the TorchScript module ({_first_line(error)})"
        ) from None
    graph = frozen.graph
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_remove_mutation(graph)
    torch._C._jit_pass_constant_propagation(graph)
    torch._C._jit_pass_dce(graph)
    return graph


def import_torchscript(
    path: str | os.PathLike[str], input_shapes: InputShapes = None
) -> Model:
    """Import a TorchScript archive. `input_shapes` (by forward-argument name or in
    argument order) is required: TorchScript records no shapes."""
    path = Path(path)
    module = load_torchscript(path)
    proto = torchscript_to_onnx(path, module, input_shapes)
    from synapc.importers.onnx import import_onnx

    return import_onnx(path, None, proto=proto)


def torchscript_to_onnx(
    path: str | os.PathLike[str],
    module: torch.jit.ScriptModule,
    input_shapes: InputShapes,
) -> onnx.ModelProto:
    """The frozen graph of `module` as an in-memory ONNX model with static shapes."""
    path = Path(path)
    return _Translator(path, frozen_graph(path, module), input_shapes).run()


# -- the walk ------------------------------------------------------------------------


@dataclass
class _Slot:
    """One TorchScript value: its `concrete` value from the execution on zeros, and
    `sym` when it depends on the input data: the ONNX tensor name of a tensor, or for a
    list / tuple a list holding each element's `sym` (None for static elements)."""

    concrete: Any
    sym: Any = None

    @property
    def static(self) -> bool:
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

Translation = Callable[["_Translator", Any, list[_Slot], list[Any]], list[Any]]
_ATEN: dict[str, Translation] = {}


def _aten(*names: str) -> Callable[[Translation], Translation]:
    """Register the ONNX translation of the aten ops `names` (without ``aten::``; the
    in-place variant ``name_`` shares it)."""

    def register(function: Translation) -> Translation:
        for name in names:
            _ATEN[name] = function
        return function

    return register


class _Translator:
    """State of one translation: the concrete and symbolic value of every TorchScript
    value, and the ONNX nodes and initializers emitted so far."""

    def __init__(self, path: Path, graph: torch._C.Graph, input_shapes: InputShapes):
        self.torch = _torch()
        self.path = path
        self.graph = graph
        self.input_shapes = input_shapes
        self.slots: dict[int, _Slot] = {}
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        #: (id of a torch tensor, dtype) -> (initializer name, the tensor, kept alive
        #: so that its id is not reused)
        self._const_cache: dict[tuple[int, str], tuple[str, Any]] = {}
        self._names: set[str] = set()
        self._layer_names: set[str] = set()
        self.node: Any = None  # the TorchScript node being translated
        self.layer = ""

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

    def tensor(self, slot: _Slot, dtype: Any = None) -> str:
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
            self.slots[value.unique()] = _Slot(zeros, name)
            value_infos.append(
                helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
            )
        self._block(self.graph.nodes())
        self.node = None
        self.layer = ""
        results: list[_Slot] = []
        for value in self.graph.outputs():
            results.extend(_flatten(self.slots[value.unique()]))
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
                    name, _onnx_dtype(slot.concrete), list(slot.concrete.shape)
                )
            )
        graph = helper.make_graph(
            self.nodes, "torchscript", value_infos, outputs, self.initializers
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="synapc.torchscript",
        )
        model.ir_version = IR_VERSION
        return model

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
            self._set(outs[0], _Slot(_constant_value(node)))
            return
        if kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            values = [a.concrete for a in args]
            concrete = values if kind == "prim::ListConstruct" else tuple(values)
            syms = None if all(a.static for a in args) else [a.sym for a in args]
            self._set(outs[0], _Slot(concrete, syms))
            return
        if kind in ("prim::ListUnpack", "prim::TupleUnpack"):
            items = _flatten_one(args[0])
            if len(items) != len(outs):
                raise self.fail(f"unpacks {len(items)} values into {len(outs)}")
            for out, item in zip(outs, items, strict=True):
                self._set(out, item)
            return
        if kind in ("prim::TupleIndex", "aten::__getitem__") and not args[0].static:
            index = args[1].concrete
            self._set(outs[0], _flatten_one(args[0])[int(index)])
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
            self._set(outs[0], _Slot(None))
            return
        if list(node.blocks()):
            raise self.fail("control flow of this kind is not supported")
        dynamic = [a for a in args if not a.static]
        if not dynamic:
            self._execute(node, args, outs)
            return
        if kind in _SHAPE_QUERIES:
            self._execute(node, [_Slot(a.concrete) for a in args], outs)
            return
        short = kind.removeprefix("aten::")
        if short.endswith("_") and not short.endswith("__"):
            short = short[:-1]
        translation = _ATEN.get(short) if kind.startswith("aten::") else None
        if translation is None:
            if kind in _DATA_TO_NUMBER:
                raise self.fail("a value computed from the input data is used as a number")
            raise self.fail(
                "operator is not supported by the TorchScript importer"
                if kind.startswith("aten::")
                else "is not supported by the TorchScript importer"
            )
        concrete = self._execute(node, args, outs, bind=False)
        syms = translation(self, node, args, concrete)
        for out, value, sym in zip(outs, concrete, syms, strict=True):
            self._set(out, _Slot(value, sym))
        if kind.endswith("_") and not kind.endswith("__") and args:
            args[0].sym = syms[0]  # in-place: later uses of the input see the result
            args[0].concrete = concrete[0]

    def _set(self, value: Any, slot: _Slot) -> None:
        self.slots[value.unique()] = slot

    def _execute(
        self, node: Any, args: list[_Slot], outs: list[Any], bind: bool = True
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
            raise self.fail(f"cannot be evaluated: {_first_line(error)}") from None
        results = list(result) if len(outs) > 1 else [result]
        if len(outs) == 0:
            results = []
        if bind:
            for out, value in zip(outs, results, strict=True):
                self._set(out, _Slot(value))
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
            self._set(params[0], _Slot(count))
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


def _flatten(slot: _Slot) -> list[_Slot]:
    """The tensors of a (nested) list / tuple slot, or the slot itself."""
    if isinstance(slot.concrete, list | tuple):
        return [s for item in _flatten_one(slot) for s in _flatten(item)]
    return [slot]


def _flatten_one(slot: _Slot) -> list[_Slot]:
    """The element slots of a list / tuple slot."""
    syms = slot.sym if slot.sym is not None else [None] * len(slot.concrete)
    return [_Slot(c, s) for c, s in zip(slot.concrete, syms, strict=True)]


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


def _onnx_dtype(tensor: Any) -> int:
    """The ONNX element type of a torch tensor."""
    return helper.np_dtype_to_tensor_dtype(_np_dtype(tensor))


def _np_dtype(tensor: Any) -> np.dtype:
    import torch

    return torch.empty((), dtype=tensor.dtype).numpy().dtype


def _rank(slot: _Slot) -> int:
    return slot.concrete.dim()


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# -- translations ----------------------------------------------------------------------
# Each gets the translator, the TorchScript node, its argument slots and the concrete
# results, and returns the symbolic result of each output.


def _same(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    """The result is the input (or the input cast to the result's dtype)."""
    source, out = args[0], outs[0]
    if source.concrete.dtype == out.dtype:
        return [t.tensor(source)]
    return [t.emit("Cast", [t.tensor(source)], to=_onnx_dtype(out))]


_aten(
    "contiguous",
    "dropout",
    "feature_dropout",
    "alpha_dropout",
    "feature_alpha_dropout",
    "detach",
    "clone",
    "to",
    "type_as",
    "float",
    "alias",
    "lift_fresh",
)(_same)


def _operand(t: _Translator, slot: _Slot, out: Any) -> str:
    """Operand `slot` of an elementwise op in the dtype of the result `out`."""
    dtype = _np_dtype(out)
    if slot.static:
        return t.constant(slot.concrete, dtype)
    if slot.concrete.dtype != out.dtype:
        return t.emit("Cast", [slot.sym], to=_onnx_dtype(out))
    return slot.sym


def _scaled(t: _Translator, slot: _Slot, alpha: Any, out: Any) -> str:
    """`slot` times the number `alpha` (the `alpha` of aten add / sub)."""
    if alpha is None or alpha == 1:
        return _operand(t, slot, out)
    if slot.static:
        value = slot.concrete
        if isinstance(value, t.torch.Tensor):
            value = value.detach().numpy()
        return t.constant(np.asarray(value) * alpha, _np_dtype(out))
    factor = t.constant(alpha, _np_dtype(out))
    return t.emit("Mul", [_operand(t, slot, out), factor])


@_aten("add", "sub")
def _add_sub(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    alpha = args[2].concrete if len(args) > 2 else 1
    op = "Add" if node.kind().startswith("aten::add") else "Sub"
    return [
        t.emit(op, [_operand(t, args[0], outs[0]), _scaled(t, args[1], alpha, outs[0])])
    ]


@_aten("rsub")
def _rsub(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    alpha = args[2].concrete if len(args) > 2 else 1
    return [
        t.emit("Sub", [_operand(t, args[1], outs[0]), _scaled(t, args[0], alpha, outs[0])])
    ]


_BINARY = {"mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max", "minimum": "Min"}


@_aten(*_BINARY)
def _binary(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    short = node.kind().removeprefix("aten::").rstrip("_")
    if short == "div" and len(args) > 2 and args[2].concrete is not None:
        raise t.fail(f"rounding_mode '{args[2].concrete}' is not supported")
    a = _operand(t, args[0], outs[0])
    if short == "pow" and args[1].static:
        b = t.constant(args[1].concrete, _np_dtype(outs[0]))
    else:
        b = _operand(t, args[1], outs[0])
    return [t.emit(_BINARY[short], [a, b])]


_UNARY = {
    "relu": "Relu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "hardswish": "HardSwish",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "abs": "Abs",
    "neg": "Neg",
}


@_aten(*_UNARY)
def _unary(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    short = node.kind().removeprefix("aten::").rstrip("_")
    return [t.emit(_UNARY[short], [t.tensor(args[0])])]


@_aten("rsqrt")
def _rsqrt(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    root = t.emit("Sqrt", [t.tensor(args[0])])
    return [t.emit("Div", [t.constant(1.0, _np_dtype(outs[0])), root])]


@_aten("silu")
def _silu(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x = t.tensor(args[0])
    return [t.emit("Mul", [x, t.emit("Sigmoid", [x])])]


@_aten("hardsigmoid")
def _hardsigmoid(
    t: _Translator, node: Any, args: list[_Slot], outs: list[Any]
) -> list[Any]:
    return [t.emit("HardSigmoid", [t.tensor(args[0])], alpha=1.0 / 6.0, beta=0.5)]


@_aten("leaky_relu")
def _leaky_relu(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    slope = float(args[1].concrete) if len(args) > 1 else 0.01
    return [t.emit("LeakyRelu", [t.tensor(args[0])], alpha=slope)]


@_aten("elu")
def _elu(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    alpha, scale, input_scale = (float(a.concrete) for a in args[1:4])
    if scale != 1.0 or input_scale != 1.0:
        raise t.fail("elu with scale or input_scale other than 1 is not supported")
    return [t.emit("Elu", [t.tensor(args[0])], alpha=alpha)]


@_aten("gelu")
def _gelu(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    approximate = args[1].concrete if len(args) > 1 else "none"
    return [t.emit("Gelu", [t.tensor(args[0])], approximate=approximate)]


def _clip(t: _Translator, x: _Slot, low: Any, high: Any, out: Any) -> list[Any]:
    dtype = _np_dtype(out)
    bounds = ["" if b is None else t.constant(float(b), dtype) for b in (low, high)]
    while bounds and bounds[-1] == "":
        bounds.pop()
    return [t.emit("Clip", [t.tensor(x), *bounds])]


@_aten("hardtanh")
def _hardtanh(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    return _clip(t, args[0], args[1].concrete, args[2].concrete, outs[0])


@_aten("relu6")
def _relu6(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    return _clip(t, args[0], 0.0, 6.0, outs[0])


@_aten("clamp", "clamp_min", "clamp_max")
def _clamp(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    short = node.kind().removeprefix("aten::").rstrip("_")
    if any(not a.static for a in args[1:]):
        raise t.fail("tensor bounds computed from the input data are not supported")
    values = [
        a.concrete.item() if isinstance(a.concrete, t.torch.Tensor) else a.concrete
        for a in args[1:]
    ]
    if short == "clamp_min":
        values = [values[0], None]
    elif short == "clamp_max":
        values = [None, values[0]]
    return _clip(t, args[0], values[0], values[1], outs[0])


@_aten("softmax", "log_softmax", "_softmax", "_log_softmax")
def _softmax(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    op = "LogSoftmax" if "log_softmax" in node.kind() else "Softmax"
    axis = _axis(int(args[1].concrete), _rank(args[0]))
    return [t.emit(op, [t.tensor(args[0])], axis=axis)]


def _pads_2x(padding: Sequence[int]) -> list[int]:
    return [int(p) for p in padding] * 2


def _conv(
    t: _Translator,
    args: list[_Slot],
    stride: Sequence[int],
    padding: Any,
    dilation: Sequence[int],
    groups: int,
) -> str:
    x, w, b = args[0], args[1], args[2]
    kernel = list(w.concrete.shape[2:])
    n = len(kernel)
    stride, dilation = _expand(stride, n), _expand(dilation, n)
    if isinstance(padding, str):
        if padding == "valid":
            pads = [0] * 2 * n
        else:  # "same": torch puts the odd pixel at the end
            totals = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
            pads = [p // 2 for p in totals] + [p - p // 2 for p in totals]
    else:
        pads = _pads_2x(_expand(padding, n))
    inputs = [t.tensor(x), t.tensor(w)]
    if b.concrete is not None:
        inputs.append(t.tensor(b))
    return t.emit(
        "Conv",
        inputs,
        kernel_shape=kernel,
        strides=stride,
        pads=pads,
        dilations=dilation,
        group=int(groups),
    )


def _conv_transpose(
    t: _Translator,
    args: list[_Slot],
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
    dilation: Sequence[int],
) -> str:
    x, w, b = args[0], args[1], args[2]
    kernel = list(w.concrete.shape[2:])
    n = len(kernel)
    inputs = [t.tensor(x), t.tensor(w)]
    if b.concrete is not None:
        inputs.append(t.tensor(b))
    return t.emit(
        "ConvTranspose",
        inputs,
        kernel_shape=kernel,
        strides=_expand(stride, n),
        pads=_pads_2x(_expand(padding, n)),
        dilations=_expand(dilation, n),
        output_padding=_expand(output_padding, n),
        group=int(groups),
    )


def _expand(values: Any, n: int) -> list[int]:
    """An int or a list of 1 or `n` ints as `n` ints."""
    if isinstance(values, int):
        return [values] * n
    values = [int(v) for v in values]
    return values * n if len(values) == 1 else values


def _static_args(t: _Translator, args: list[_Slot], first: int) -> list[Any]:
    """Concrete values of the arguments from `first` on, which must not depend on the
    input data."""
    for a in args[first:]:
        if not a.static:
            raise t.fail("a weight or parameter computed from the input data")
    return [a.concrete for a in args[first:]]


@_aten("conv1d", "conv2d", "_convolution_mode")
def _conv_nd(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    stride, padding, dilation, groups = _static_args(t, args, 3)
    return [_conv(t, args, stride, padding, dilation, groups)]


@_aten("conv_transpose1d", "conv_transpose2d")
def _conv_transpose_nd(
    t: _Translator, node: Any, args: list[_Slot], outs: list[Any]
) -> list[Any]:
    stride, padding, output_padding, groups, dilation = _static_args(t, args, 3)
    return [_conv_transpose(t, args, stride, padding, output_padding, groups, dilation)]


@_aten("_convolution", "convolution")
def _convolution(
    t: _Translator, node: Any, args: list[_Slot], outs: list[Any]
) -> list[Any]:
    stride, padding, dilation, transposed, output_padding, groups = _static_args(
        t, args[:9], 3
    )
    if transposed:
        return [_conv_transpose(t, args, stride, padding, output_padding, groups, dilation)]
    return [_conv(t, args, stride, padding, dilation, groups)]


@_aten("batch_norm", "_native_batch_norm_legit_no_training")
def _batch_norm(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x, weight, bias, mean, var = args[:5]
    if node.kind() == "aten::batch_norm":
        training, eps = bool(args[5].concrete), float(args[7].concrete)
    else:
        training, eps = False, float(args[6].concrete)
    if training:
        raise t.fail("training-mode batch normalization is not supported")
    channels = x.concrete.shape[1]
    scale = (
        t.tensor(weight)
        if weight.concrete is not None
        else t.constant(np.ones(channels, np.float32))
    )
    shift = (
        t.tensor(bias)
        if bias.concrete is not None
        else t.constant(np.zeros(channels, np.float32))
    )
    result = t.emit(
        "BatchNormalization",
        [t.tensor(x), scale, shift, t.tensor(mean), t.tensor(var)],
        epsilon=eps,
    )
    return [result, *([None] * (len(outs) - 1))]


@_aten("layer_norm")
def _layer_norm(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x, shape, weight, bias, eps = args[:5]
    size = list(shape.concrete)
    dtype = _np_dtype(outs[0])
    scale = (
        t.tensor(weight)
        if weight.concrete is not None
        else t.constant(np.ones(size, dtype))
    )
    inputs = [t.tensor(x), scale]
    if bias.concrete is not None:
        inputs.append(t.tensor(bias))
    return [
        t.emit("LayerNormalization", inputs, axis=-len(size), epsilon=float(eps.concrete))
    ]


@_aten("linear")
def _linear(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x, w, b = args[:3]
    has_bias = b.concrete is not None
    if _rank(x) == 2:
        inputs = [t.tensor(x), t.tensor(w)]
        if has_bias:
            inputs.append(t.tensor(b))
        return [t.emit("Gemm", inputs, transB=1)]
    if w.static:
        weight = t.constant(w.concrete.detach().t().contiguous())
    else:
        weight = t.emit("Transpose", [t.tensor(w)], perm=[1, 0])
    result = t.emit("MatMul", [t.tensor(x), weight])
    if has_bias:
        result = t.emit("Add", [result, t.tensor(b)])
    return [result]


@_aten("matmul", "mm", "bmm")
def _matmul(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    return [t.emit("MatMul", [t.tensor(args[0]), t.tensor(args[1])])]


@_aten("addmm")
def _addmm(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    bias, a, b = args[:3]
    beta = float(args[3].concrete) if len(args) > 3 else 1.0
    alpha = float(args[4].concrete) if len(args) > 4 else 1.0
    return [
        t.emit("Gemm", [t.tensor(a), t.tensor(b), t.tensor(bias)], alpha=alpha, beta=beta)
    ]


@_aten(
    "flatten",
    "view",
    "reshape",
    "_reshape_alias",
    "view_as",
    "reshape_as",
    "squeeze",
    "unsqueeze",
    "unflatten",
)
def _reshape(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    """All reshapes become one Reshape to the concrete result shape."""
    shape = list(outs[0].shape)
    if list(args[0].concrete.shape) == shape:
        return [t.tensor(args[0])]
    return [t.emit("Reshape", [t.tensor(args[0]), t.ints(shape)])]


@_aten("permute")
def _permute(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    rank = _rank(args[0])
    perm = [_axis(int(a), rank) for a in args[1].concrete]
    return [t.emit("Transpose", [t.tensor(args[0])], perm=perm)]


@_aten("transpose", "swapaxes", "t")
def _transpose(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    rank = _rank(args[0])
    if rank < 2:
        return [t.tensor(args[0])]
    if node.kind() == "aten::t":
        a, b = 0, 1
    else:
        a, b = (_axis(int(s.concrete), rank) for s in args[1:3])
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return [t.emit("Transpose", [t.tensor(args[0])], perm=perm)]


def _list_items(t: _Translator, slot: _Slot) -> list[str]:
    return [t.tensor(item) for item in _flatten_one(slot)]


@_aten("cat", "concat", "concatenate")
def _cat(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    rank = outs[0].dim()
    axis = _axis(int(args[1].concrete), rank)
    return [t.emit("Concat", _list_items(t, args[0]), axis=axis)]


@_aten("stack")
def _stack(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    rank = outs[0].dim()
    axis = _axis(int(args[1].concrete), rank)
    items = []
    for item in _flatten_one(args[0]):
        shape = list(item.concrete.shape)
        shape.insert(axis, 1)
        items.append(t.emit("Reshape", [t.tensor(item), t.ints(shape)]))
    return [t.emit("Concat", items, axis=axis)]


def _resize(t: _Translator, x: _Slot, out: Any, mode: str, **attrs: Any) -> list[Any]:
    sizes = t.ints(list(out.shape), "sizes")
    return [t.emit("Resize", [t.tensor(x), "", "", sizes], mode=mode, **attrs)]


@_aten("upsample_nearest1d", "upsample_nearest2d")
def _upsample_nearest(
    t: _Translator, node: Any, args: list[_Slot], outs: list[Any]
) -> list[Any]:
    return _resize(
        t,
        args[0],
        outs[0],
        "nearest",
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )


@_aten("_upsample_nearest_exact1d", "_upsample_nearest_exact2d")
def _upsample_nearest_exact(
    t: _Translator, node: Any, args: list[_Slot], outs: list[Any]
) -> list[Any]:
    return _resize(
        t,
        args[0],
        outs[0],
        "nearest",
        coordinate_transformation_mode="half_pixel",
        nearest_mode="round_prefer_ceil",
    )


@_aten("upsample_bilinear2d", "upsample_linear1d")
def _upsample_linear(
    t: _Translator, node: Any, args: list[_Slot], outs: list[Any]
) -> list[Any]:
    align_corners = bool(args[2].concrete)
    mode = "align_corners" if align_corners else "pytorch_half_pixel"
    return _resize(t, args[0], outs[0], "linear", coordinate_transformation_mode=mode)


@_aten("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d")
def _adaptive_pool(
    t: _Translator, node: Any, args: list[_Slot], outs: list[Any]
) -> list[Any]:
    is_max = "max" in node.kind()
    x = args[0]
    spatial = list(x.concrete.shape[2:])
    target = list(outs[0].shape[2:])
    extra = [None] * (len(outs) - 1)
    if is_max and len(list(node.outputs())[1].uses()) > 0:
        raise t.fail("the indices output is not supported")
    if all(o == 1 for o in target):
        op = "GlobalMaxPool" if is_max else "GlobalAveragePool"
        return [t.emit(op, [t.tensor(x)]), *extra]
    if any(s % o for s, o in zip(spatial, target, strict=True)):
        raise t.fail(
            f"adaptive pooling from {spatial} to {target} is supported only when the "
            "output size divides the input size"
        )
    kernel = [s // o for s, o in zip(spatial, target, strict=True)]
    op = "MaxPool" if is_max else "AveragePool"
    return [t.emit(op, [t.tensor(x)], kernel_shape=kernel, strides=kernel), *extra]


@_aten("avg_pool1d", "avg_pool2d")
def _avg_pool(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    kernel, stride, padding, ceil_mode, count_include_pad = _static_args(t, args, 1)[:5]
    if len(args) > 6 and args[6].concrete is not None:
        raise t.fail("divisor_override is not supported")
    n = len(kernel) if not isinstance(kernel, int) else args[0].concrete.dim() - 2
    kernel = _expand(kernel, n)
    stride = _expand(stride, n) if stride else kernel
    pads = _pads_2x(_expand(padding, n))
    return [
        t.emit(
            "AveragePool",
            [t.tensor(args[0])],
            kernel_shape=kernel,
            strides=stride,
            pads=pads,
            ceil_mode=int(bool(ceil_mode)),
            count_include_pad=int(bool(count_include_pad) and any(pads)),
        )
    ]


@_aten("max_pool1d", "max_pool2d")
def _max_pool(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    kernel, stride, padding, dilation, ceil_mode = _static_args(t, args, 1)[:5]
    n = args[0].concrete.dim() - 2
    kernel = _expand(kernel, n)
    stride = _expand(stride, n) if stride else kernel
    return [
        t.emit(
            "MaxPool",
            [t.tensor(args[0])],
            kernel_shape=kernel,
            strides=stride,
            pads=_pads_2x(_expand(padding, n)),
            dilations=_expand(dilation, n),
            ceil_mode=int(bool(ceil_mode)),
        )
    ]


_REDUCE = {
    "mean": "ReduceMean",
    "sum": "ReduceSum",
    "amax": "ReduceMax",
    "amin": "ReduceMin",
}


@_aten(*_REDUCE)
def _reduce(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    short = node.kind().removeprefix("aten::")
    named = _by_name(t, node, args)
    x = args[0]
    rank = _rank(x)
    dims = named["dim"].concrete if "dim" in named else None
    if dims is None or (isinstance(dims, list | tuple) and not dims):
        dims, keep = list(range(rank)), False  # all axes (sum() / mean() overloads)
    else:
        keep = bool(named["keepdim"].concrete) if "keepdim" in named else False
    axes = [_axis(int(d), rank) for d in ([dims] if isinstance(dims, int) else dims)]
    result = t.emit(_REDUCE[short], [t.tensor(x), t.ints(axes, "axes")], keepdims=int(keep))
    if outs[0].dtype != x.concrete.dtype:
        result = t.emit("Cast", [result], to=_onnx_dtype(outs[0]))
    return [result]


def _by_name(t: _Translator, node: Any, args: list[_Slot]) -> dict[str, _Slot]:
    """The arguments of aten `node` by their names in its schema (ops whose overloads
    put different arguments at one position)."""
    schema = t.torch._C.parse_schema(node.schema())
    return {a.name: slot for a, slot in zip(schema.arguments, args, strict=False)}


@_aten("slice")
def _slice(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    dim, start, end, step = _static_args(t, args, 1)
    rank = _rank(x)
    dim = _axis(int(dim), rank)
    size = x.concrete.shape[dim]
    first, last, step = slice(start, end, step).indices(size)
    if (first, last, step) == (0, size, 1):
        return [t.tensor(x)]
    return [
        t.emit(
            "Slice",
            [
                t.tensor(x),
                t.ints([first], "starts"),
                t.ints([last], "ends"),
                t.ints([dim], "axes"),
                t.ints([step], "steps"),
            ],
        )
    ]


@_aten("narrow")
def _narrow(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    dim, start, length = _static_args(t, args, 1)
    dim = _axis(int(dim), _rank(x))
    start = _axis(int(start), x.concrete.shape[dim])
    return [
        t.emit(
            "Slice",
            [
                t.tensor(x),
                t.ints([start], "starts"),
                t.ints([start + int(length)], "ends"),
                t.ints([dim], "axes"),
            ],
        )
    ]


@_aten("select")
def _select(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    dim, index = _static_args(t, args, 1)
    dim = _axis(int(dim), _rank(x))
    index = _axis(int(index), x.concrete.shape[dim])
    indices = t.constant(np.asarray(index, np.int64), base="index")
    return [t.emit("Gather", [t.tensor(x), indices], axis=dim)]


@_aten("split", "split_with_sizes", "chunk", "unbind", "unsafe_split")
def _split(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    pieces = outs[0]
    rank = _rank(x)
    short = node.kind().removeprefix("aten::")
    dim = _axis(int(args[1].concrete if short == "unbind" else args[2].concrete), rank)
    sizes = [p.shape[dim] for p in pieces] if short != "unbind" else [1] * len(pieces)
    names = t.emit("Split", [t.tensor(x), t.ints(sizes, "split")], len(pieces), axis=dim)
    names = [names] if isinstance(names, str) else names
    if short == "unbind":
        names = [
            t.emit("Reshape", [n, t.ints(list(p.shape))])
            for n, p in zip(names, pieces, strict=True)
        ]
    return [names]


@_aten("constant_pad_nd", "pad")
def _pad(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    rank = _rank(x)
    pad = [int(p) for p in args[1].concrete]
    if node.kind() == "aten::pad":
        mode = args[2].concrete
        value = args[3].concrete if len(args) > 3 else None
    else:
        mode, value = "constant", args[2].concrete
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}
    if mode not in modes:
        raise t.fail(f"pad mode '{mode}' is not supported")
    begins, ends = [0] * rank, [0] * rank
    for k in range(len(pad) // 2):  # torch pads the last dimension first
        begins[rank - 1 - k], ends[rank - 1 - k] = pad[2 * k], pad[2 * k + 1]
    inputs = [t.tensor(x), t.ints(begins + ends, "pads")]
    if mode == "constant":
        inputs.append(t.constant(float(value or 0.0), _np_dtype(outs[0])))
    return [t.emit("Pad", inputs, mode=modes[mode])]


@_aten("expand", "expand_as", "broadcast_to")
def _expand_to(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    shape = list(outs[0].shape)
    if list(args[0].concrete.shape) == shape:
        return [t.tensor(args[0])]
    return [t.emit("Expand", [t.tensor(args[0]), t.ints(shape)])]


@_aten("repeat")
def _repeat(t: _Translator, node: Any, args: list[_Slot], outs: list[Any]) -> list[Any]:
    x = args[0]
    repeats = [int(r) for r in args[1].concrete]
    name = t.tensor(x)
    shape = list(x.concrete.shape)
    if len(repeats) > len(shape):
        shape = [1] * (len(repeats) - len(shape)) + shape
        name = t.emit("Reshape", [name, t.ints(shape)])
    return [t.emit("Tile", [name, t.ints(repeats, "repeats")])]
