"""`synapc.Model`: an imported model, i.e. IR plus weights plus its I/O description."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.attributes import INTEGER_SEMANTICS_ATTR, IntegerSemantics
from synapc.dtypes import numpy_dtype
from synapc.errors import SynapcError
from synapc.mlir_io import print_module
from synapc.weights import WeightStore


@dataclass(frozen=True)
class TensorInfo:
    """A model input or output as the user sees it: name, shape, dtype, quantization."""

    name: str
    shape: tuple[int, ...]
    element_type: Attribute

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the values the user passes or receives."""
        return numpy_dtype(self.element_type)

    @property
    def quantization(self) -> UniformQuantizedType | None:
        """The quantization of the tensor, or None for float and plain integer tensors."""
        t = self.element_type
        return t if isinstance(t, UniformQuantizedType) else None


@dataclass(frozen=True)
class StateInfo:
    """A value a model carries from one run to the next (a TFLite resource variable of a
    streaming model): model input `input` takes it before a run, model output `output`
    gives it after; `initial` holds it before the first run. The runtime feeds and keeps
    it, so users see the other inputs and outputs only."""

    name: str
    input: int
    output: int
    initial: np.ndarray


@dataclass
class Model:
    """An imported model: its module (entry function `main`), the weights the module's
    handles refer to, and the ordered model inputs and outputs (state included: see
    `state`).

    The IR holds the I/O description too (``synap.name`` and friends on `@main`'s
    arguments and results, see `synapc.io_attributes`): `from_module` and `with_module`
    derive `inputs` / `outputs` from it, so a model rebuilt after passes that rewrote
    the signature describes the new one."""

    module: ModuleOp
    weights: WeightStore
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    source: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    #: Files an importer produced on the way (TorchScript: the translated ONNX model),
    #: by file name; `synapc convert --preserve` writes them.
    artifacts: dict[str, bytes] = field(default_factory=dict)
    #: Values carried between runs (see `StateInfo`); their inputs and outputs are in
    #: `inputs` / `outputs` (the signature of @main) but the runtime hides them.
    state: list[StateInfo] = field(default_factory=list)

    @classmethod
    def from_module(
        cls,
        module: ModuleOp,
        weights: WeightStore,
        source: str = "",
        *,
        state: list[StateInfo] | None = None,
    ) -> Model:
        """A model over an existing module (e.g. parsed MLIR text): its inputs and outputs
        are those of `@main`, named by their ``synap.name`` attributes (``input_i`` /
        ``output_i`` where they have none; see `synapc.io_attributes`)."""
        model = cls(module, weights, [], [], source, state=list(state or []))
        try:
            model.main  # noqa: B018  (refuses a module without @main)
        except LookupError as error:
            raise SynapcError(f"{source or 'module'}: {error}") from None
        return model.with_module(module)

    def with_module(self, module: ModuleOp) -> Model:
        """This model over `module` (e.g. after passes that rewrote it), its inputs and
        outputs read from `@main`'s signature and ``synap.name`` attributes, so that a
        pass that changes the signature cannot leave them stale. Where the IR names no
        tensor, the name of this model's tensor at the same place is kept (``input_i``
        / ``output_i`` beyond them). Weights, source, metadata, artifacts and state are
        shared."""
        from synapc.io_attributes import NAME, io_string

        new = Model(module, self.weights, [], [], self.source, dict(self.metadata),
                    dict(self.artifacts), list(self.state))  # fmt: skip
        func = new.main
        signature = func.function_type
        for side, old, types, infos in (
            ("input", self.inputs, signature.inputs.data, new.inputs),
            ("output", self.outputs, signature.outputs.data, new.outputs),
        ):
            for i, t in enumerate(types):
                name = io_string(func, side, i, NAME)  # type: ignore[arg-type]
                if name is None:
                    name = old[i].name if len(old) == len(types) else f"{side}_{i}"
                infos.append(TensorInfo(name, tuple(t.get_shape()), t.element_type))
        new.state = [self._moved_state(s, new) for s in self.state]
        return new

    def _moved_state(self, state: StateInfo, new: Model) -> StateInfo:
        """`state` with its input and output indices in `new`'s signature: the same
        places when the signature kept its length, else the places of the same names
        (a pass that replaced an input by several moved the ones after it)."""
        indices = []
        for index, old, infos in (
            (state.input, self.inputs, new.inputs),
            (state.output, self.outputs, new.outputs),
        ):
            if len(old) == len(infos) or not old:  # not old: `from_module`'s start
                indices.append(index)
                continue
            name = old[index].name
            places = [i for i, info in enumerate(infos) if info.name == name]
            if len(places) != 1:
                raise SynapcError(
                    f"state {state.name!r}: its tensor '{name}' is "
                    f"{'gone from' if not places else 'not unique in'} the rewritten "
                    "@main signature"
                )
            indices.append(places[0])
        return replace(state, input=indices[0], output=indices[1])

    @property
    def main(self) -> FuncOp:
        """The entry function."""
        for op in self.module.body.block.ops:
            if isinstance(op, FuncOp) and op.sym_name.data == "main":
                return op
        raise LookupError("model has no @main function")

    @property
    def integer_semantics(self) -> IntegerSemantics:
        """The arithmetic the module's quantized ops follow (see `IntegerSemantics`)."""
        attr = self.module.attributes.get(INTEGER_SEMANTICS_ATTR)
        if attr is None:
            return IntegerSemantics.TFLITE
        known = ", ".join(f'"{s.value}"' for s in IntegerSemantics)
        if not isinstance(attr, StringAttr) or attr.data not in set(IntegerSemantics):
            raise SynapcError(f"module attribute {INTEGER_SEMANTICS_ATTR} is {attr}; "
                              f"expected one of {known}")  # fmt: skip
        return IntegerSemantics(attr.data)

    def __str__(self) -> str:
        return print_module(self.module)
