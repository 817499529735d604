"""`synapc.Model`: an imported model, i.e. IR plus weights plus its I/O description."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    `state`)."""

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
    def from_module(cls, module: ModuleOp, weights: WeightStore, source: str = "") -> Model:
        """A model over an existing module (e.g. parsed MLIR text): its inputs and outputs
        are those of `@main`, named ``input_i`` / ``output_i``."""
        model = cls(module, weights, [], [], source)
        try:
            signature = model.main.function_type
        except LookupError as error:
            raise SynapcError(f"{source or 'module'}: {error}") from None
        model.inputs = [
            TensorInfo(f"input_{i}", tuple(t.get_shape()), t.element_type)
            for i, t in enumerate(signature.inputs.data)
        ]
        model.outputs = [
            TensorInfo(f"output_{i}", tuple(t.get_shape()), t.element_type)
            for i, t in enumerate(signature.outputs.data)
        ]
        return model

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
