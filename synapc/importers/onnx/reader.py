"""Reading an ONNX model: initializers, static shapes, layouts, the node loop, the
converter registry. The converters live in the sibling modules, one per op family.

Every ONNX tensor becomes a `Tensor`: an IR value stored in some layout (see `layout`),
or a host constant. Converters ask for operands in the layout they compute in
(`Importer.get`): channels-last for convolutions and pools, the logical layout for
reshapes and matrix products, any layout for elementwise ops. Constants are transposed on
the host; everything else gets one explicit `synap.transpose`, so an NCHW network keeps
transposes only where its data really changes layout (normally at the model boundary).

Nodes whose inputs are all constants are evaluated at import (shape arithmetic, constant
reshapes, `If` / `Loop` / `Scan` on constants), within `synapc.limits`: `folding` sizes
every result before ONNX's reference implementation computes it and runs control flow
itself, iteration by iteration; a result too large to fold stays an op that runs on the
target. `Shape` of a static tensor is a constant too. Everything the file declares
(initializers, external data, names, opsets, attributes) is checked by `checks` before
it is trusted, and every refusal is one `SynapcError` line naming the file and the node
(name, op type, opset and index), tensor or field.

Quantized models keep their integers: a `DequantizeLinear` result is a view of quantized
values, and a converter registered with `quantized=True` consumes such views directly
when its only consumer is a `QuantizeLinear` (QDQ folding).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.utils.exceptions import VerifyException

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.attributes import INTEGER_SEMANTICS_ATTR, IntegerSemantics
from synapc.dialects.synap.base import SynapOp, element_of, shape_of
from synapc.dialects.synap.conversion import DequantizeOp, QuantizeOp
from synapc.dialects.synap.data_movement import ReshapeOp, TransposeOp
from synapc.dialects.synap.shapes import ShapeError
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.errors import SynapcError
from synapc.importers.cut import ancestors, check_requested, unknown_output
from synapc.importers.onnx import checks, layout
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.folding import (
    METADATA_INPUTS,
    CannotFold,
    Folder,
    stand_in,
    subgraph_reads,
)
from synapc.importers.onnx.layout import Perm
from synapc.importers.onnx.quant_types import holds_quantized_type
from synapc.io_attributes import describe_io
from synapc.limits import check_count, check_tensor
from synapc.model import Model, TensorInfo
from synapc.weights import WeightStore

InputShapes = Mapping[str, Sequence[int]] | Sequence[Sequence[int]] | None

#: Ops evaluated by their converter even when every input is constant.
_NEVER_FOLD = {"DequantizeLinear", "QuantizeLinear", "Constant"}
#: Ops that only select or move values: quantized, they compute in their input's type
#: and requantize to their QuantizeLinear's type when it differs (max and min commute
#: with the monotonic requantization, so the result is the same as computing in it).
_KEEP_INPUT_TYPE = {
    "MaxPool",
    "GlobalMaxPool",
    "ReduceMax",
    "ReduceMin",
    "Slice",
    "Pad",
    "Resize",
    "Upsample",
    "DepthToSpace",
    "SpaceToDepth",
    "Relu",
    "Clip",
}


@dataclass
class Tensor:
    """One ONNX tensor: an IR value stored with `perm`, or a host constant `array`
    (logical layout). `qtype` set means the value or array holds quantized integers;
    `dequantized` means ONNX sees their real values (the output of DequantizeLinear)."""

    value: SSAValue | None = None
    perm: Perm = None
    array: np.ndarray | None = None
    qtype: UniformQuantizedType | None = None
    dequantized: bool = False


class Node:
    """One ONNX node as the converters see it."""

    def __init__(self, importer: Importer, index: int, proto: onnx.NodeProto):
        self.importer = importer
        self.index = index
        self.proto = proto
        self.op_type = proto.op_type
        self.name = proto.name or (proto.output[0] if proto.output else f"node_{index}")
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.opset = importer.opset
        #: Set when the node's output is folded into its QuantizeLinear consumer.
        self.out_qtype: UniformQuantizedType | None = None
        self.attrs: dict[str, Any] = {}
        for attribute in proto.attribute:
            try:
                self.attrs[attribute.name] = helper.get_attribute_value(attribute)
            except Exception:  # no value, or a type the onnx library does not know
                raise self.fail(
                    f"attribute '{shown(attribute.name)}' has no value of a valid type"
                ) from None

    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute `name` (bytes decoded to str), or `default` when absent."""
        value = self.attrs.get(name, default)
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value

    def axis(self, value: Any, rank: int, what: str = "axis") -> int:
        """`value` (attribute or input `what`) as an axis of a rank-`rank` tensor, negative
        values counting from the end; refused when out of range."""
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise self.fail(f"{what} {checks.brief(value)} must be an integer")
        axis = int(value)
        if not -rank <= axis < rank:
            raise self.fail(f"{what} {axis} is out of range for rank {rank}")
        return axis + rank if axis < 0 else axis

    def int_attr(self, name: str, default: int) -> int:
        """Integer attribute `name` (`default` when absent)."""
        value = self.attrs.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise self.fail(
                f"attribute '{name}' must be an integer, got {checks.brief(value)}"
            )
        return int(value)

    def ints_attr(
        self, name: str, default: Sequence[int] | None = None
    ) -> list[int] | None:
        """List-of-integers attribute `name` (`default` when absent)."""
        value = self.attrs.get(name)
        if value is None:
            return None if default is None else list(default)
        if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
            raise self.fail(f"attribute '{name}' must be a list of integers")
        return list(value)

    def input(self, i: int) -> str | None:
        """Name of input `i`, or None when absent or empty."""
        if i >= len(self.inputs) or not self.inputs[i]:
            return None
        return self.inputs[i]

    @property
    def quantized(self) -> bool:
        """Whether the node is converted as one quantized op (QDQ folding)."""
        return self.out_qtype is not None

    @property
    def source(self) -> dict[str, Any]:
        """`layer_name` / `layer_index` keyword arguments for `SynapOp.make`."""
        return {"layer_name": self.name, "layer_index": self.index}

    def fail(self, message: str) -> SynapcError:
        """An error naming this node (name, op type, the model's opset and the node's
        index in the graph)."""
        return SynapcError(
            f"{self.importer.path}: node '{shown(self.name)}' ({shown(self.op_type)}, "
            f"opset {self.opset}): {checks.one_line(message)} (graph node {self.index})"
        )


class Importer:
    """State of one import: the ONNX tensors seen so far and the IR ops emitted.

    `outputs` (ONNX tensor names) cuts the graph: the model returns those tensors, in
    that order, and only the nodes they depend on are converted (`kept`)."""

    def __init__(
        self,
        path: Path,
        proto: onnx.ModelProto,
        input_shapes: InputShapes,
        outputs: Sequence[str] | None = None,
    ):
        self.path = path
        self.proto = proto
        self.graph = proto.graph
        checks.check_strings(proto, path)
        self.opset = checks.check_opsets(proto, path)
        self.folder = Folder(path, proto.opset_import)
        #: why the folder left a node with constant inputs to its converter (by the
        #: id of its NodeProto), for converters that cannot run it on the target either
        self.fold_refusals: dict[int, str] = {}
        #: bytes of the host constants made so far (initializers and folded results)
        self.constant_bytes = 0
        self.weights = WeightStore()
        self.tensors: dict[str, Tensor] = {}
        self.ops: list[Operation] = []
        self._cache: dict[tuple[Any, ...], SSAValue] = {}
        #: float result of a node folded into a QuantizeLinear -> that Q's output
        self._folded_q: dict[str, str] = {}
        #: the tensors the model returns: the graph outputs, or the cut's
        self.output_names = (
            [o.name for o in self.graph.output]
            if outputs is None
            else self._requested(outputs)
        )
        #: indices of the nodes converted: all, or the ancestors of a cut's outputs
        self.kept: set[int] = (
            set(range(len(self.graph.node)))
            if outputs is None
            else self._ancestors(self.output_names)
        )
        #: tensor name -> indices of the kept nodes that read it (-1: a model output)
        self.readers: dict[str, list[int]] = {}
        for k, node in enumerate(self.graph.node):
            if k in self.kept:
                for name in node.input:
                    if name:
                        self.readers.setdefault(name, []).append(k)
        for name in self.output_names:
            self.readers.setdefault(name, []).append(-1)
        self.input_shapes = input_shapes
        #: how many subgraphs (If branches) deep the node being converted is
        self.nesting = 0

    # -- cutting ---------------------------------------------------------------------
    def _requested(self, outputs: Sequence[str]) -> list[str]:
        """The cut's output names, each checked to be a tensor of the main graph (a
        graph input, an initializer or a node output)."""
        names = check_requested(self.path, outputs)
        known = {i.name for i in self.graph.input}
        known.update(i.name for i in self.graph.initializer)
        known.update(o for node in self.graph.node for o in node.output if o)
        for name in names:
            if name not in known:
                raise unknown_output(self.path, name, known)
        return names

    def _ancestors(self, names: Sequence[str]) -> set[int]:
        """Indices of the nodes the tensors `names` depend on."""
        nodes = self.graph.node
        producer = {o: k for k, node in enumerate(nodes) for o in node.output if o}
        return ancestors(names, producer, lambda k: _reads(nodes[k]))

    # -- tensors ---------------------------------------------------------------------
    def tensor(self, name: str) -> Tensor:
        """The tensor called `name`."""
        try:
            return self.tensors[name]
        except KeyError:
            raise SynapcError(
                f"{self.path}: tensor '{shown(name)}' is used before it is computed"
            ) from None

    def const(self, name: str | None) -> np.ndarray | None:
        """The real (dequantized) value of a constant tensor, None if not constant."""
        if name is None:
            return None
        t = self.tensor(name)
        if t.array is None:
            return None
        if t.qtype is not None and t.dequantized:
            return dequantize_array(t.array, t.qtype)
        return t.array

    def const_ints(self, node: Node, i: int, what: str) -> list[int]:
        """Input `i` of `node`, which must be a constant, as Python ints."""
        array = self.const(node.input(i))
        if array is None:
            raise node.fail(f"{what} (input {i}) must be a constant")
        array = np.asarray(array)
        if array.dtype.kind not in "iu":
            raise node.fail(f"{what} (input {i}) must be integers, got {array.dtype}")
        return [int(v) for v in array.reshape(-1).tolist()]

    def shape(self, name: str) -> tuple[int, ...]:
        """The logical (ONNX) shape of tensor `name`."""
        t = self.tensor(name)
        if t.array is not None:
            return tuple(t.array.shape)
        return layout.logical_shape(shape_of(t.value), t.perm)

    def rank(self, name: str) -> int:
        """The rank of tensor `name`."""
        return len(self.shape(name))

    def perm(self, name: str) -> Perm:
        """The layout tensor `name` is stored in (None for constants: they have all)."""
        return self.tensor(name).perm

    def element_type(self, name: str, quantized: bool = False) -> Attribute:
        """The IR element type the tensor has (its quantized type if `quantized`)."""
        t = self.tensor(name)
        if quantized and t.qtype is not None:
            return t.qtype
        if t.array is not None:
            if t.qtype is not None and t.dequantized:
                return element_type_for(np.float32)
            return t.qtype or self._array_element(name, t.array)
        element = element_of(t.value)
        if isinstance(element, UniformQuantizedType) and t.dequantized and not quantized:
            return element_type_for(np.float32)
        return element

    # -- values in a layout -------------------------------------------------------
    def get(
        self,
        name: str,
        perm: Perm | str = None,
        rank: int | None = None,
        quantized: bool = False,
    ) -> SSAValue:
        """Tensor `name` as an IR value stored with `perm` (None: logical, "any": as it
        is). `rank` first prepends unit dimensions (numpy broadcasting). With `quantized`
        a dequantized view gives its quantized values; otherwise real values."""
        t = self.tensor(name)
        own_rank = len(self.shape(name))
        rank = own_rank if rank is None else rank
        if perm == "any":
            perm = t.perm if rank == own_rank else None
        perm = layout.normalize(perm)  # type: ignore[arg-type]
        use_q = quantized or (t.qtype is not None and not t.dequantized)
        key = (name, perm, rank, use_q)
        if key in self._cache:
            return self._cache[key]
        if t.array is not None:
            value = self._constant(name, t, perm, rank, use_q)
        else:
            value = t.value
            if not use_q and t.dequantized:
                value = self.append(
                    DequantizeOp.make(
                        value,
                        result_types=[
                            TensorType(element_type_for(np.float32), shape_of(value))
                        ],
                        layer_name=name,
                    )
                )
            stored = t.perm
            if rank != own_rank:
                value = self.transpose(value, layout.between(stored, None, own_rank))
                stored = None
                shape = (1,) * (rank - own_rank) + self.shape(name)
                value = self.reshape(value, shape)
            value = self.transpose(value, layout.between(stored, perm, rank))
        self._cache[key] = value
        return value

    def _constant(
        self, name: str, t: Tensor, perm: Perm, rank: int, quantized: bool
    ) -> SSAValue:
        array = t.array
        element = None
        if t.qtype is not None and quantized:
            element = t.qtype
        elif t.qtype is not None:
            array = dequantize_array(array, t.qtype)
        array = array.reshape((1,) * (rank - array.ndim) + array.shape)
        if element is not None and element.is_per_axis:
            axis = element.quantized_dimension + rank - t.array.ndim
            if perm is not None:
                axis = perm.index(axis)
            element = UniformQuantizedType.per_axis(
                element.storage.data, axis, element.scales, element.zero_points
            )
        if perm is not None:
            array = array.transpose(perm)
        array = np.ascontiguousarray(array).reshape(array.shape)  # keeps rank 0
        result_type = TensorType(element or self._array_element(name, array), array.shape)
        op = self.weights.constant(array, name, result_type)
        return self.append(op)

    def _array_element(self, name: str, array: np.ndarray) -> Attribute:
        """The IR element type of constant `array` (tensor `name`)."""
        try:
            return element_type_for(array.dtype)
        except TypeError:
            raise SynapcError(
                f"{self.path}: constant '{shown(name)}' has element type {array.dtype}, "
                "which synapc does not support as a tensor"
            ) from None

    def transpose(self, value: SSAValue, perm: Perm) -> SSAValue:
        """`value` transposed by `perm` (a reshape when only unit axes move)."""
        perm = layout.normalize(perm)
        if perm is None:
            return value
        shape = shape_of(value)
        if layout.moves_only_unit_axes(shape, perm):
            return self.reshape(value, tuple(shape[p] for p in perm))
        return self.append(TransposeOp.make(value, perm=perm))

    def reshape(self, value: SSAValue, shape: Sequence[int], **source: Any) -> SSAValue:
        """`value` reshaped to `shape` (itself when it has that shape); `source` names
        the node the reshape computes, when it is one."""
        if tuple(shape) == tuple(shape_of(value)):
            return value
        element = element_of(value)
        return self.append(
            ReshapeOp.make(value, result_types=[TensorType(element, shape)], **source)
        )

    def append(self, op: Operation) -> SSAValue:
        """Append `op` and return its first result."""
        self.check_results(op)
        self.ops.append(op)
        return op.results[0]

    def check_results(self, op: Operation, node: Node | None = None) -> None:
        """Refuse an op whose result shapes exceed the tensor limits (a huge attribute or
        constant shape that the shape rules carried through), naming its node."""
        for result in op.results:
            if not isinstance(result.type, TensorType):
                continue
            shape = [int(d) for d in result.type.get_shape()]
            try:
                itemsize = numpy_dtype(result.type.element_type).itemsize
            except TypeError:  # an element type without a numpy dtype
                itemsize = 4
            if node is not None:
                where = (
                    f"{self.path}: node '{shown(node.name)}' ({shown(node.op_type)}, "
                    f"graph node {node.index}) result"
                )
            else:
                name = getattr(op, "layer_name", None)
                label = shown(name.data) if name is not None else op.name
                where = f"{self.path}: result of '{label}' ({op.name})"
            check_tensor(shape, itemsize, where)

    # -- binding ---------------------------------------------------------------------
    def bind(self, name: str, value: SSAValue, perm: Perm = None) -> None:
        """Tensor `name` is `value`, stored with `perm`; an op result with no elements
        (a zero-size dimension) is bound as an empty constant instead."""
        perm = layout.normalize(perm)
        element = element_of(value)
        qtype = element if isinstance(element, UniformQuantizedType) else None
        shape = shape_of(value)
        if isinstance(value, OpResult) and 0 in shape:
            self.bind_empty(name, layout.logical_shape(shape, perm), element)
            return
        self.tensors[name] = Tensor(value=value, perm=perm, qtype=qtype)

    def bind_empty(self, name: str, shape: Sequence[int], element: Attribute) -> None:
        """Tensor `name` has the zero-element logical `shape`: it holds no values, so it
        is fully known, a constant (an empty array of `element`'s type) that its readers
        fold or drop."""
        qtype = element if isinstance(element, UniformQuantizedType) else None
        dtype = qtype.storage_dtype if qtype is not None else numpy_dtype(element)
        self.tensors[name] = Tensor(array=np.zeros(tuple(shape), dtype), qtype=qtype)

    def bind_output(self, node: Node, value: SSAValue, perm: Perm = None) -> None:
        """Bind `node`'s (first) output to `value`; a quantized node whose result is not
        already of its QuantizeLinear's type gets a requantization."""
        if node.quantized and element_of(value) != node.out_qtype:
            value = self.append(
                QuantizeOp.make(
                    value,
                    result_types=[TensorType(node.out_qtype, shape_of(value))],
                    **node.source,
                )
            )
        self.bind(self.out_name(node), value, perm)

    def bind_const(self, name: str, array: np.ndarray) -> None:
        """Tensor `name` is the host constant `array` (counted against
        `max_constant_bytes` with every other host constant of the import)."""
        array = np.asarray(array)
        self.constant_bytes += array.nbytes
        check_count(
            self.constant_bytes,
            "max_constant_bytes",
            f"{self.path}: bytes of the constants, with '{shown(name)}'",
        )
        self.tensors[name] = Tensor(array=array)

    def emit(
        self,
        node: Node,
        op_class: type[SynapOp],
        *operands: Any,
        perm: Perm = None,
        element_type: Attribute | None = None,
        result_types: Sequence[Attribute] | None = None,
        output: int | None = 0,
        **props: Any,
    ) -> SynapOp:
        """Append `op_class(operands, props)` for `node` and bind its result to output
        `output` (stored with `perm`). A quantized node's result takes the type of the
        QuantizeLinear it folds."""
        first = _first_value(operands)
        keep_input_type = node.op_type in _KEEP_INPUT_TYPE and first is not None
        target = element_of(first) if keep_input_type else node.out_qtype
        if node.quantized and result_types is None:
            element_type = target
        elif node.quantized and result_types is not None:
            result_types = [TensorType(target, shape_of_type(t)) for t in result_types]
        op = op_class.make(
            *operands,
            result_types=result_types,
            element_type=element_type,
            **props,
            **node.source,
        )
        self.check_results(op, node)
        self.ops.append(op)
        if output is not None and node.quantized:
            self.bind_output(node, op.results[output], perm)
        elif output is not None:
            self.bind(self.out_name(node, output), op.results[output], perm)
        return op

    def out_name(self, node: Node, i: int = 0) -> str:
        """The tensor name output `i` of `node` binds (a folded QuantizeLinear's output
        for quantized nodes)."""
        return self._folded_q.get(node.outputs[i], node.outputs[i])

    # -- the node loop ---------------------------------------------------------------
    def run(self) -> Model:
        """Convert the whole main graph."""
        initializers = {init.name for init in self.graph.initializer}
        for init in self.graph.initializer:
            self.bind_const(init.name, self._initializer(init))
        for name in self.output_names:
            if not name:
                raise SynapcError(f"{self.path}: a graph output has an empty name")
        graph_inputs = [i for i in self.graph.input if i.name not in initializers]
        input_types = [self._input_type(i, k) for k, i in enumerate(graph_inputs)]
        func = FuncOp("main", (input_types, []))
        for value_info, arg in zip(graph_inputs, func.body.block.args, strict=True):
            self.bind(value_info.name, arg)
        skip: set[int] = set()
        nodes = list(self.graph.node)
        for index, proto in enumerate(nodes):
            if index in skip or index not in self.kept:
                continue
            node = Node(self, index, proto)
            with self._failures_named(node):
                converter = self._converter_unless_folded(node)
                if converter is None:
                    continue
                q_index = self._quantized_consumer(node)
                if q_index is not None:
                    q = Node(self, q_index, nodes[q_index])
                    checks.check_node(q)
                    node.out_qtype = self.quantize_type(q)
                    self._folded_q[node.outputs[0]] = q.outputs[0]
                    skip.add(q_index)
                converter(self, node)
        outputs = self.output_names
        results = [self.get(name) for name in outputs]
        self._drop_dead_ops(results)
        func.body.block.add_ops([*self.ops, ReturnOp(*results)])
        func.function_type = FunctionType.from_lists(input_types, [r.type for r in results])
        # the user-visible names and ONNX's channels-first layout, in the IR
        describe_io(func, [i.name for i in graph_inputs], list(outputs), "nchw")
        module = ModuleOp([func])
        if any(
            isinstance(element_of(r), UniformQuantizedType)
            for op in self.ops
            for r in op.results
        ):
            module.attributes[INTEGER_SEMANTICS_ATTR] = StringAttr(IntegerSemantics.ONNX)
        try:
            module.verify()
        except Exception as error:
            raise SynapcError(
                f"{self.path}: the imported model is not valid: {describe_failure(error)}"
            ) from error
        return Model(
            module=module,
            weights=self.weights,
            inputs=[
                TensorInfo(i.name, tuple(t.get_shape()), t.element_type)
                for i, t in zip(graph_inputs, input_types, strict=True)
            ],
            outputs=[
                TensorInfo(name, tuple(shape_of(r)), r.type.element_type)
                for name, r in zip(outputs, results, strict=True)
            ],
            source=str(self.path),
        )

    def convert_inline(self, node: Node) -> None:
        """Convert `node` of a subgraph (an `If` branch converted in place) like a node
        of the main graph: folded when its inputs are constants, otherwise converted on
        the tensors bound so far, the outer scope's included (no QDQ folding: the
        readers of a subgraph's tensors are not tracked). Errors name `node`."""
        with self._failures_named(node):
            converter = self._converter_unless_folded(node)
            if converter is not None:
                converter(self, node)

    def _converter_unless_folded(self, node: Node) -> Converter | None:
        """Check `node`; None when it folded (its inputs are constants), otherwise its
        converter, refused when there is none or its first output has no name."""
        domain = node.proto.domain if node.proto.domain != "ai.onnx" else ""
        key = node.op_type if not domain else f"{domain}.{node.op_type}"
        converter = CONVERTERS.get(key)
        checks.check_node(node)
        if self._fold(node, converter is not None):
            return None
        if converter is None:
            where = f" in domain '{shown(domain)}'" if domain else ""
            raise node.fail(f"operator is not supported{where}")
        if not any(node.outputs if key in OUTPUTS_OPTIONAL else node.outputs[:1]):
            raise node.fail("its first output has no name")
        return converter

    @contextmanager
    def _failures_named(self, node: Node) -> Iterator[None]:
        """Any failure converting `node` as one SynapcError naming it (and the file)."""
        try:
            yield
        except SynapcError as error:
            if str(self.path) in str(error):
                raise
            raise node.fail(checks.one_line(str(error))) from error  # no file named
        except MemoryError:
            raise
        except Exception as error:  # a verifier or shape rule rejected the layer
            raise node.fail(f"cannot be converted: {describe_failure(error)}") from error

    @contextmanager
    def subgraph_scope(self) -> Iterator[None]:
        """A subgraph's scope: the tensors it binds (and layouts cached for them) are
        forgotten when it ends, so that two branches may use the same names; the ops
        emitted stay."""
        tensors, cache = dict(self.tensors), dict(self._cache)
        self.nesting += 1
        try:
            yield
        finally:
            self.tensors, self._cache = tensors, cache
            self.nesting -= 1

    def _quantized_consumer(self, node: Node) -> int | None:
        """Index of the QuantizeLinear that `node`'s result can be folded into: the node
        converts quantized, its only reader is that QuantizeLinear, and all its tensor
        inputs are dequantized views."""
        if node.op_type not in QUANTIZED or len(node.outputs) != 1:
            return None
        readers = self.readers.get(node.outputs[0], [])
        if len(readers) != 1 or readers[0] < 0:
            return None
        if self.graph.node[readers[0]].op_type != "QuantizeLinear":
            return None
        q = Node(self, readers[0], self.graph.node[readers[0]])
        if not all(n in self.tensors for n in q.inputs[1:] if n):
            return None
        if not holds_quantized_type(self, q):  # low precision, blocked, run-time scale
            return None
        names = QUANTIZED[node.op_type](node)
        if names is None:
            return None
        for name in names:
            t = None if name is None else self.tensor(name)
            if t is not None and (t.qtype is None or not t.dequantized):
                return None
        return readers[0]

    def quantize_type(self, node: Node) -> UniformQuantizedType:
        """The quantized type a QuantizeLinear / DequantizeLinear node describes (its
        scale, zero point and axis must be constants)."""
        if node.attr("block_size", 0):
            raise node.fail("blocked quantization is not supported")
        x = node.inputs[0]
        stored = None
        if node.op_type == "DequantizeLinear":  # without a zero point: the input's type
            t = self.tensor(x)
            stored = t.array.dtype if t.array is not None else None
        axis = node.int_attr("axis", 1)
        if x not in self.tensors and axis < 0:  # a folded node's result, not yet made
            raise node.fail("a negative quantization axis needs the input's rank")
        rank = self.rank(x) if x in self.tensors else 0
        qtype = self.qtype(node, node.input(1), node.input(2), axis, rank, stored)
        if qtype.is_per_axis and x in self.tensors:
            dim = self.shape(x)[qtype.quantized_dimension]
            if dim != len(qtype.scales):
                raise node.fail(
                    f"{len(qtype.scales)} scales for axis {axis} of size {dim} of "
                    f"'{shown(x)}'"
                )
        return qtype

    def qtype(
        self,
        node: Node,
        scale_name: str | None,
        zp_name: str | None,
        axis: int,
        rank: int,
        stored: np.dtype | None = None,
    ) -> UniformQuantizedType:
        """The quantized type of constant `scale_name` and `zp_name` (absent: 0 of type
        `stored`, default uint8); several scales quantize along `axis` of a rank-`rank`
        tensor."""
        scale = self.const(scale_name)
        if scale is None:
            raise node.fail(f"the scale '{shown(scale_name)}' must be a constant")
        zero_point = self.const(zp_name)
        if zp_name is not None and zero_point is None:
            raise node.fail(f"the zero point '{shown(zp_name)}' must be a constant")
        if scale.dtype.kind != "f" or scale.size == 0 or scale.ndim > 1:
            raise node.fail(
                f"the scale '{shown(scale_name)}' must be one float or a 1-D list of "
                f"them, got {list(scale.shape)} {scale.dtype}"
            )
        if zero_point is None:
            zero_point = np.zeros(scale.shape, stored or np.uint8)
        if zero_point.size != scale.size:
            raise node.fail(
                f"the zero point has {zero_point.size} values for {scale.size} scales"
            )
        storage = _STORAGE.get(zero_point.dtype.name)
        if storage is None:
            raise node.fail(f"quantized type {zero_point.dtype} is not supported")
        if scale.size > 1 and rank and not -rank <= axis < rank:
            raise node.fail(f"quantization axis {axis} is out of range for rank {rank}")
        if scale.size == 1:
            return UniformQuantizedType.per_tensor(
                storage, float(scale.reshape(-1)[0]), int(zero_point.reshape(-1)[0])
            )
        scales = scale.astype(np.float64).reshape(-1)
        return UniformQuantizedType.per_axis(
            storage,
            axis + rank if axis < 0 else axis,
            scales,
            np.broadcast_to(zero_point.reshape(-1), scales.shape).astype(np.int64),
        )

    def _fold(self, node: Node, convertible: bool) -> bool:
        """Evaluate `node` on the host when all its inputs (and the outer-scope names its
        subgraphs read) are constants, within the limits (see `folding`). A node that is
        not foldable, or too large to fold, is left to its converter when it has one
        (`convertible`) and can run on the target; otherwise the import stops here."""
        if node.op_type in _NEVER_FOLD or not node.inputs:
            return False
        metadata = METADATA_INPUTS.get(node.op_type, ())
        read = {n for k, n in enumerate(node.inputs) if n and k not in metadata}
        names = [n for n in node.inputs if n]
        if not all(self.tensor(n).array is not None for n in read):
            return False
        outer = subgraph_reads(node.proto)
        if not all(n in self.tensors and self.tensors[n].array is not None for n in outer):
            return False
        values = {n: self._value_or_stand_in(n) for n in [*names, *outer]}
        if any(v is None for v in values.values()):
            return False
        try:
            results = self.folder.fold(node.proto, values, node.attrs)
        except CannotFold as error:
            if error.kind == CannotFold.UNKNOWN:
                return False
            if error.kind != CannotFold.INVALID and convertible:
                # it runs on the target instead; a converter that cannot run it there
                # reports why it was not folded (`fold_refusal`)
                self.fold_refusals[id(node.proto)] = error.reason
                return False
            raise node.fail(error.reason) from None
        for name, array in zip(node.outputs, results, strict=False):
            if name and array is not None:
                self.bind_const(name, array)
        return True

    def _value_or_stand_in(self, name: str) -> np.ndarray | None:
        """Constant `name`'s value; for a run-time tensor (an input whose values the node
        does not read) a stand-in of its logical shape and element type, None when that
        type has no numpy dtype."""
        if self.tensor(name).array is not None:
            return self.const(name)
        try:
            dtype = numpy_dtype(self.element_type(name))
        except (TypeError, KeyError, ValueError):
            return None
        return stand_in(self.shape(name), dtype)

    def _initializer(self, init: onnx.TensorProto) -> np.ndarray:
        """Initializer `init` as an array; its size is checked before it is read."""
        return checks.tensor_to_array(
            init, f"{self.path}: initializer '{shown(init.name)}'"
        )

    def _input_type(self, value_info: onnx.ValueInfoProto, k: int) -> TensorType[Attribute]:
        name = shown(value_info.name)
        ttype = value_info.type.tensor_type
        if not value_info.type.HasField("tensor_type"):
            raise SynapcError(f"{self.path}: input '{name}' is not a tensor")
        try:
            element = element_type_for(helper.tensor_dtype_to_np_dtype(ttype.elem_type))
        except (KeyError, TypeError, ValueError):
            kind = checks.type_name(ttype.elem_type)
            raise SynapcError(
                f"{self.path}: input '{name}' has element type {kind}, which synapc "
                "does not support"
            ) from None
        checks.check_rank(len(ttype.shape.dim), f"{self.path}: input '{name}'")
        declared = [
            d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
            for d in ttype.shape.dim
        ]
        given = _given_shape(self.input_shapes, value_info.name, k)
        if given is not None:
            if len(given) != len(declared) or any(
                d is not None and d != g for d, g in zip(declared, given, strict=False)
            ):
                dims = ["?" if d is None else d for d in declared]
                raise SynapcError(
                    f"{self.path}: input_shapes gives {list(given)} for input '{name}', "
                    f"which has shape {dims}"
                )
            shape = list(given)
        else:
            shape = [1 if d is None and i == 0 else d for i, d in enumerate(declared)]
            if any(d is None for d in shape):
                dims = ["?" if d is None else d for d in declared]
                raise SynapcError(
                    f"{self.path}: input '{name}' has dynamic shape {dims}; give its "
                    f"static shape with input_shapes={{'{name}': [...]}}"
                )
        check_tensor(shape, numpy_dtype(element).itemsize, f"{self.path}: input '{name}'")
        return TensorType(element, shape)

    def _drop_dead_ops(self, results: list[SSAValue]) -> None:
        """Remove ops whose results nothing uses (folded shape arithmetic, weights of a
        folded batch norm) together with their weights."""
        live: set[int] = {id(r) for r in results}
        kept: list[Operation] = []
        for op in reversed(self.ops):
            if any(id(r) in live for r in op.results):
                kept.append(op)
                live.update(id(o) for o in op.operands)
            else:
                handle = getattr(op, "handle", None)
                if handle is not None and handle in self.weights:
                    del self.weights[handle]
                op.drop_all_references()
        self.ops = kept[::-1]


_STORAGE = {"int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32"}


def dequantize_array(array: np.ndarray, qtype: UniformQuantizedType) -> np.ndarray:
    """The real values of stored integers `array` of type `qtype`, as float32."""
    scales = qtype.scales
    zero_points = qtype.zero_points
    if qtype.is_per_axis:
        shape = [1] * array.ndim
        shape[qtype.quantized_dimension] = -1
        scales = scales.reshape(shape)
        zero_points = zero_points.reshape(shape)
    real = (array.astype(np.int64) - zero_points).astype(np.float32) * scales.astype(
        np.float32
    )
    return real.astype(np.float32)


def _reads(node: onnx.NodeProto) -> list[str]:
    """The tensors `node` reads: its inputs and the outer-scope names its subgraphs
    (If / Loop / Scan bodies) use."""
    names = [n for n in node.input if n]
    for attribute in node.attribute:
        graphs = list(attribute.graphs)
        if attribute.HasField("g"):
            graphs.append(attribute.g)
        for graph in graphs:
            for inner in graph.node:
                names.extend(_reads(inner))
    return names


def _first_value(operands: Sequence[Any]) -> SSAValue | None:
    """The first operand value of an op's operand list (which may nest lists)."""
    for operand in operands:
        if isinstance(operand, SSAValue):
            return operand
        if isinstance(operand, Sequence) and operand:
            return _first_value(operand)
    return None


def shape_of_type(t: Attribute) -> tuple[int, ...]:
    """The shape of a tensor type."""
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _given_shape(shapes: InputShapes, name: str, k: int) -> Sequence[int] | None:
    if shapes is None:
        return None
    if isinstance(shapes, Mapping):
        return shapes.get(name)
    return shapes[k] if k < len(shapes) else None


def load_onnx(path: str | os.PathLike[str]) -> onnx.ModelProto:
    """Read an ONNX file with its external data; a corrupt file raises `SynapcError`.
    The file's size is checked against `max_model_file_bytes` before it is read, and
    every external tensor's size before its data is (see `checks.load_external_data`)."""
    path = Path(path)
    checks.check_file_size(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SynapcError(f"{path}: cannot read the model ({error.strerror})") from None
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as error:  # protobuf's DecodeError, or a nesting too deep
        raise SynapcError(
            f"{path}: not a valid ONNX model (corrupt ONNX model: the protobuf does not "
            "parse)"
        ) from error
    del data
    if not proto.graph.node and not proto.graph.output:
        raise SynapcError(f"{path}: not an ONNX model (no graph)")
    checks.check_strings(proto, path)
    checks.load_external_data(proto, path)
    return proto


def import_onnx(
    path: str | os.PathLike[str],
    input_shapes: InputShapes = None,
    proto: onnx.ModelProto | None = None,
    outputs: Sequence[str] | None = None,
) -> Model:
    """Import an ONNX model. `input_shapes` (by name or in input order) fixes dynamic
    dimensions; a symbolic leading (batch) dimension defaults to 1. `outputs` (ONNX
    tensor names: node outputs, graph inputs or initializers) cuts the graph there: the
    model returns those tensors in that order, only the nodes they depend on are
    converted, and every graph input stays a model input."""
    path = Path(path)
    if proto is None:
        proto = load_onnx(path)
    try:
        # arithmetic on a model's constants (a batch norm's variance of -1, a scale of
        # 1e38) gives what ONNX Runtime gives (NaN, inf), without numpy's warnings on
        # stderr, which is one line of error at most
        with np.errstate(all="ignore"):
            return Importer(path, proto, input_shapes, outputs).run()
    except SynapcError as error:
        if str(path) in str(error):
            raise
        raise SynapcError(f"{path}: {checks.one_line(str(error))}") from error
    except MemoryError:
        raise
    except Exception as error:  # a malformed graph
        reason = describe_failure(error)
        raise SynapcError(
            f"{path}: not a valid ONNX model (corrupt ONNX model: {reason})"
        ) from error


def describe_failure(error: BaseException) -> str:
    """One line saying what went wrong, in the model's terms: the message of a shape
    rule or verifier (they name the layer and the shapes), otherwise what kind of
    mismatch the exception means, never Python's own exception text."""
    if isinstance(error, VerifyException | ShapeError):
        lines = str(error).strip().splitlines()
        text = lines[0] if lines else ""
        if text and not _PYTHON_TEXT.search(text):
            return shown(text) if len(text) <= 300 else shown(text[:297]) + "..."
    if isinstance(error, IndexError):
        return "an input, output or attribute it needs is missing"
    if isinstance(error, KeyError):
        return "it refers to a tensor or attribute that does not exist"
    if isinstance(error, ZeroDivisionError):
        return "a size or attribute that must not be zero is zero"
    if isinstance(error, OverflowError):
        return "a size or attribute is too large"
    return "its inputs, outputs or attributes do not fit the operator"


#: Python's own exception texts, which a message must not quote.
_PYTHON_TEXT = re.compile(
    r"object has no attribute|'NoneType'|object is not|unhashable type|unsupported "
    r"operand|out of bounds|index out of range|invalid literal|positional argument|"
    r"Traceback|not supported between instances|Error\b"
)


Converter = Callable[[Importer, Node], None]
CONVERTERS: dict[str, Converter] = {}
#: For converters that can run quantized: the node's inputs that must be dequantized
#: views for the QDQ folding to apply.
QUANTIZED: dict[str, Callable[[Node], list[str | None] | None]] = {}


#: Op types whose converters bind each named output themselves, so that any output,
#: the first included, may be omitted (LSTM's Y).
OUTPUTS_OPTIONAL: set[str] = set()


def converts(
    *op_types: str,
    quantized: Callable[[Node], list[str | None] | None] | None = None,
    outputs_optional: bool = False,
) -> Callable[[Converter], Converter]:
    """Register a converter for the ONNX `op_types`; `quantized` names the inputs that
    must be quantized for the node to be converted as one quantized op (None when the
    node's attributes rule it out); `outputs_optional` says that the converter binds
    each named output itself, so the first output may be omitted too."""

    def register(function: Converter) -> Converter:
        for op_type in op_types:
            CONVERTERS[op_type] = function
            if quantized is not None:
                QUANTIZED[op_type] = quantized
            if outputs_optional:
                OUTPUTS_OPTIONAL.add(op_type)
        return function

    return register
