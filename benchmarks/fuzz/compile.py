"""The compile/run fuzzer: real imported models with mutated shapes, attributes, element
types and quantization, through `synapc.compile` and one `run`.

Everything a backend cannot run must be refused by `synapc.compile` with a `SynapcError`
naming the layer -- never a traceback, and never a failure at the first `run`.

Seeds are real models in synap IR: examples/tiny_classifier.onnx imported, the MLIR
examples (examples/*.mlir), small TFLite models built with `synapc.testing.tflite_builder`
and imported (int8 / uint8 / 16x8 quantized layers, float data movement), and, for op
coverage, every function of the dialect's round-trip tests (lit_tests/dialects/synap),
each made a model that returns all its values. A case parses a seed and mutates it
through xDSL: op attributes (strides, pads, dilations, kernel, axis, perm, sizes, block
sizes, thresholds, enums), dimensions of values (0, 1, off by one, doubled, 2**31,
2**62, a dimension added or dropped), element types and quantization parameters
(scales from 1e-30 to 1e30, zero points at the storage edges, per-axis), usually followed
by re-inferring result shapes downstream so that more cases get past the verifier to the
backend; a few mutate the MLIR text or its bytes. The case file is the mutated module as
MLIR text with its weights (`synapc.write_module`); weights are regenerated for a
constant whose type changed, or left out when too large.

`check(path)` reads the file with `synapc.read_module`, compiles it for VS680 and runs it
once on zeros. xDSL's own refusals of malformed IR -- ParseError and VerifyException
(any DiagnosticException), which name a line and column -- count as clear, reported like
synapc's: a SynapcError whose message begins with the file.
Any other exception is a finding.

Each case runs in a child forked by the harness that starts XLA on its own (~0.3 s); the
jax, kernel and pass modules are imported here, in the parent, without starting XLA. The
campaign lowers the tensor limits (`FUZZ_LIMITS`) so that whatever synapc accepts also
runs within the harness's memory cap.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from io import StringIO
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    DenseResourceAttr,
    Float32Type,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException, ParseError

from benchmarks.fuzz.harness import Case
from benchmarks.fuzz.mutate import mutate_bytes
from synapc.dialects.quant import STORAGE_TYPES, UniformQuantizedType
from synapc.dialects.synap.base import SynapOp, i64_array, shape_of
from synapc.dialects.synap.constant import ConstantOp
from synapc.errors import SynapcError
from synapc.limits import use_limits
from synapc.mlir_io import parse_module, read_module, write_module
from synapc.model import Model
from synapc.testing.pass_check import random_array
from synapc.weights import WeightStore

TARGET = "compile"
#: Cases in the test suite (each forks a child that starts XLA and compiles a model).
TEST_CASES = 60
#: Tensor limits of the campaign: every tensor synapc accepts then fits the memory cap.
FUZZ_LIMITS = {"max_tensor_elements": 1 << 22, "max_tensor_bytes": 64 << 20}
#: Largest constant (elements) whose weights are regenerated when its type changes.
MAX_REGENERATED = 1 << 16

ROOT = Path(__file__).resolve().parents[2]

# Import what every case uses once, here: the children then only start XLA.
from synapc.backends.jax import lowering as _lowering  # noqa: E402
from synapc.passes.registry import get_pass as _get_pass  # noqa: E402

_lowering.load_kernels()
_get_pass("optimize")

# --------------------------------------------------------------------------------------
# check
# --------------------------------------------------------------------------------------


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:600]


def check(path: Path) -> None:
    """What synapc does with an MLIR model: read it (`synapc.read_module`), compile it
    for VS680 and run it once on zeros. Refusals are `SynapcError`s beginning with the
    file (xDSL's refusals of malformed IR are reported so)."""
    import synapc

    with use_limits(**FUZZ_LIMITS):
        try:
            weights = WeightStore()
            module = read_module(path, weights)
            module.verify()  # before Model.from_module reads @main's signature
            model = Model.from_module(module, weights, source=str(path))
            executable = synapc.compile(model, "VS680")
            executable.run([np.zeros(i.shape, i.dtype) for i in executable.inputs])
        except (ParseError, DiagnosticException) as error:
            raise SynapcError(f"{path}: {_one_line(error)}") from None


# --------------------------------------------------------------------------------------
# seeds
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """A seed model: its name and MLIR text with every weight."""

    name: str
    text: str


def _module_text(module: ModuleOp, weights: WeightStore) -> str:
    out = StringIO()
    write_module(module, out, weights)
    return out.getvalue()


def _fill_weights(module: ModuleOp, weights: WeightStore, rng: np.random.Generator) -> None:
    """Random values for the constants of `module` that have no weights."""
    for op in module.walk():
        if isinstance(op, ConstantOp) and op.handle not in weights:
            weights[op.handle] = random_array(op.result.type, rng)


def _onnx_seeds() -> list[Seed]:
    from synapc.importers import import_model

    model = import_model(ROOT / "examples" / "tiny_classifier.onnx")
    return [Seed("tiny_classifier", _module_text(model.module, model.weights))]


def _mlir_seeds() -> list[Seed]:
    seeds = []
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        weights = WeightStore()
        module = read_module(path, weights)
        _fill_weights(module, weights, np.random.default_rng(0))
        seeds.append(Seed(path.stem, _module_text(module, weights)))
    return seeds


def _lit_seeds() -> list[Seed]:
    """Every function of the dialect's round-trip tests as a model `@main` returning all
    the values its ops compute."""
    seeds = []
    folder = ROOT / "lit_tests" / "dialects" / "synap"
    files = [*sorted(folder.glob("*_roundtrip.mlir")), folder / "conv2d_pool.mlir",
             folder / "layer_norm.mlir"]  # fmt: skip
    for path in files:
        if not path.is_file():
            continue
        text = "\n".join(
            line
            for line in path.read_text().splitlines()
            if not line.lstrip().startswith("//")
        )
        try:
            weights = WeightStore()
            module = parse_module(text, weights, name=str(path))
        except Exception:  # a test file this fuzzer cannot use as a seed
            continue
        for func in [op for op in module.body.block.ops if isinstance(op, FuncOp)]:
            seed = _as_model(func, WeightStore())
            if seed is not None:
                name = f"lit_{path.stem.removesuffix('_roundtrip')}_{func.sym_name.data}"
                seeds.append(Seed(name, _module_text(*seed)))
    return seeds


def _as_model(func: FuncOp, weights: WeightStore) -> tuple[ModuleOp, WeightStore] | None:
    """A module whose `@main` is a copy of `func` returning the results of all its ops."""
    clone = func.clone()
    block = clone.body.block
    ret = block.last_op
    if not isinstance(ret, ReturnOp):
        return None
    values = [r for op in block.ops if isinstance(op, SynapOp) for r in op.results]
    values = [v for v in values if not isinstance(v.owner, ConstantOp)] or values
    if not values:
        return None
    block.insert_op_before(ReturnOp(*values), ret)
    block.erase_op(ret)
    clone.properties["sym_name"] = StringAttr("main")
    _sync_signature(clone)
    module = ModuleOp([clone])
    try:
        module.verify()
    except Exception:  # an invalid-IR test case: not a model
        return None
    _fill_weights(module, weights, np.random.default_rng(0))
    return module, weights


def _tflite_seeds() -> list[Seed]:
    import tempfile

    from synapc.importers import import_model

    seeds = []
    with tempfile.TemporaryDirectory(prefix="synapc-fuzz-seeds-") as folder:
        for name, build in _TFLITE_MODELS.items():
            path = Path(folder) / f"{name}.tflite"
            path.write_bytes(build(np.random.default_rng(7)))
            model = import_model(path)
            seeds.append(Seed(name, _module_text(model.module, model.weights)))
    return seeds


def _tflite_int8(rng: np.random.Generator) -> bytes:
    """conv -> depthwise -> residual add -> average pool -> mean -> fully connected ->
    softmax, int8 with per-channel weights."""
    from synapc.testing.tflite_builder import ModelBuilder, Quant

    b = ModelBuilder()
    s_in, s_conv, s_dw, s_add = 2 / 255, 0.03, 0.05, 0.06

    def weights(name: str, shape: list[int], axis: int) -> tuple[int, np.ndarray]:
        scales = np.full(shape[axis], 0.01) * rng.uniform(0.5, 1.5, shape[axis])
        data = rng.integers(-127, 128, shape).astype(np.int8)
        return b.constant(name, data, quant=Quant(scales, 0, axis=axis)), scales

    def bias(name: str, scales: np.ndarray) -> int:
        data = rng.integers(-200, 200, scales.size).astype(np.int32)
        return b.constant(name, data, quant=Quant(scales, 0, axis=0))

    x = b.input("image", [1, 8, 8, 3], np.int8, quant=Quant(s_in, 5))
    w, ws = weights("conv_w", [8, 3, 3, 3], 0)
    conv = b.tensor("conv", [1, 8, 8, 8], np.int8, quant=Quant(s_conv, 5))
    b.op("CONV_2D", [x, w, bias("conv_b", s_in * ws)], [conv], padding="SAME",
         stride_h=1, stride_w=1, fused_activation_function="RELU")  # fmt: skip
    dw_w, dw_s = weights("dw_w", [1, 3, 3, 8], 3)
    dw = b.tensor("dw", [1, 8, 8, 8], np.int8, quant=Quant(s_dw, 5))
    b.op("DEPTHWISE_CONV_2D", [conv, dw_w, bias("dw_b", s_conv * dw_s)], [dw],
         padding="SAME", stride_h=1, stride_w=1, depth_multiplier=1,
         fused_activation_function="RELU6")  # fmt: skip
    added = b.tensor("add", [1, 8, 8, 8], np.int8, quant=Quant(s_add, 5))
    b.op("ADD", [conv, dw], [added])
    pooled = b.tensor("pool", [1, 4, 4, 8], np.int8, quant=Quant(s_add, 5))
    b.op("AVERAGE_POOL_2D", [added], [pooled], padding="VALID", stride_h=2, stride_w=2,
         filter_height=2, filter_width=2)  # fmt: skip
    mean = b.tensor("mean", [1, 8], np.int8, quant=Quant(0.04, 5))
    b.op("MEAN", [pooled, b.constant("axes", np.array([1, 2], np.int32))], [mean],
         keep_dims=False)  # fmt: skip
    fc_w, fc_s = weights("fc_w", [5, 8], 0)
    logits = b.tensor("logits", [1, 5], np.int8, quant=Quant(0.1, 5))
    b.op("FULLY_CONNECTED", [mean, fc_w, bias("fc_b", 0.04 * fc_s)], [logits])
    probs = b.tensor("probs", [1, 5], np.int8, quant=Quant(1 / 256, -128))
    b.op("SOFTMAX", [logits], [probs], beta=1.0)
    b.output(probs, pooled)
    return b.build()


def _tflite_uint8(rng: np.random.Generator) -> bytes:
    """Two uint8 inputs: bilinear resize, concatenation, max pool, logistic, mul."""
    from synapc.testing.tflite_builder import ModelBuilder, Quant

    b = ModelBuilder()
    q = Quant(4 / 255, 131)
    a = b.input("a", [1, 4, 4, 2], np.uint8, quant=q)
    c = b.input("c", [1, 8, 8, 3], np.uint8, quant=q)
    up = b.tensor("up", [1, 8, 8, 2], np.uint8, quant=q)
    b.op("RESIZE_BILINEAR", [a, b.constant("size", np.array([8, 8], np.int32))], [up],
         half_pixel_centers=True)  # fmt: skip
    joined = b.tensor("joined", [1, 8, 8, 5], np.uint8, quant=q)
    b.op("CONCATENATION", [up, c], [joined], axis=3)
    pooled = b.tensor("pooled", [1, 4, 4, 5], np.uint8, quant=q)
    b.op("MAX_POOL_2D", [joined], [pooled], padding="SAME", stride_h=2, stride_w=2,
         filter_height=3, filter_width=3)  # fmt: skip
    sig = b.tensor("sig", [1, 4, 4, 5], np.uint8, quant=Quant(1 / 256, 0))
    b.op("LOGISTIC", [pooled], [sig])
    prod = b.tensor("prod", [1, 4, 4, 5], np.uint8, quant=Quant(0.02, 128))
    b.op("MUL", [pooled, sig], [prod])
    b.output(prod)
    return b.build()


def _tflite_int16(rng: np.random.Generator) -> bytes:
    """16x8: fully connected with int8 weights and int64 bias, int16 add and softmax."""
    from synapc.testing.tflite_builder import ModelBuilder, Quant

    b = ModelBuilder()
    x = b.input("x", [1, 16], np.int16, quant=Quant(1e-3, 0))
    w = b.constant("w", rng.integers(-127, 128, (8, 16)).astype(np.int8),
                   quant=Quant(np.full(8, 0.02), 0, axis=0))  # fmt: skip
    bias = b.constant("b", rng.integers(-500, 500, 8).astype(np.int64),
                      quant=Quant(np.full(8, 2e-5), 0, axis=0))  # fmt: skip
    fc = b.tensor("fc", [1, 8], np.int16, quant=Quant(2e-3, 0))
    b.op("FULLY_CONNECTED", [x, w, bias], [fc])
    added = b.tensor("added", [1, 8], np.int16, quant=Quant(3e-3, 0))
    b.op("ADD", [fc, fc], [added])
    probs = b.tensor("probs", [1, 8], np.int16, quant=Quant(1 / 32768, 0))
    b.op("SOFTMAX", [added], [probs], beta=1.0)
    b.output(probs)
    return b.build()


def _tflite_float(rng: np.random.Generator) -> bytes:
    """Float data movement and transposed convolution."""
    from synapc.testing.tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.input("x", [1, 6, 6, 4], np.float32)
    w = b.constant("tw", rng.normal(0, 0.3, (2, 3, 3, 4)).astype(np.float32))
    up = b.tensor("up", [1, 12, 12, 2], np.float32)
    b.op("TRANSPOSE_CONV", [b.constant("shape", np.array([1, 12, 12, 2], np.int32)), w, x],
         [up], padding="SAME", stride_h=2, stride_w=2)  # fmt: skip
    padded = b.tensor("padded", [1, 14, 14, 2], np.float32)
    pads = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)
    b.op("PAD", [up, b.constant("pads", pads)], [padded])
    moved = b.tensor("moved", [1, 2, 14, 14], np.float32)
    b.op("TRANSPOSE", [padded, b.constant("perm", np.array([0, 3, 1, 2], np.int32))],
         [moved])  # fmt: skip
    sliced = b.tensor("sliced", [1, 2, 7, 7], np.float32)
    b.op("STRIDED_SLICE", [moved, b.constant("begin", np.array([0, 0, 0, 0], np.int32)),
         b.constant("end", np.array([1, 2, 14, 14], np.int32)),
         b.constant("strides", np.array([1, 1, 2, 2], np.int32))], [sliced])  # fmt: skip
    flat = b.tensor("flat", [1, 98], np.float32)
    b.op("RESHAPE", [sliced, b.constant("new_shape", np.array([1, 98], np.int32))], [flat],
         new_shape=[1, 98])  # fmt: skip
    tiled = b.tensor("tiled", [2, 98], np.float32)
    b.op("TILE", [flat, b.constant("multiples", np.array([2, 1], np.int32))], [tiled])
    picked = b.tensor("picked", [2, 3], np.float32)
    b.op("GATHER", [tiled, b.constant("indices", np.array([0, 50, 97], np.int32))],
         [picked], axis=1)  # fmt: skip
    act = b.tensor("act", [2, 3], np.float32)
    b.op("HARD_SWISH", [picked], [act])
    b.output(act, up)
    return b.build()


_TFLITE_MODELS: dict[str, Callable[[np.random.Generator], bytes]] = {
    "tflite_int8": _tflite_int8,
    "tflite_uint8": _tflite_uint8,
    "tflite_int16": _tflite_int16,
    "tflite_float": _tflite_float,
}


@cache
def seeds() -> tuple[Seed, ...]:
    """Every seed model (built once per process)."""
    found = [*_onnx_seeds(), *_mlir_seeds(), *_tflite_seeds(), *_lit_seeds()]
    return tuple(found)


# --------------------------------------------------------------------------------------
# mutations
# --------------------------------------------------------------------------------------

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
INTERESTING_SIZES = (0, 1, 2, 3, 7, 255, 65536, 2**31 - 1, 2**31, 2**32, 2**40, 2**62)
INTERESTING_ATTRIBUTES = (0, 1, -1, 2, 3, -2, 4, 5, 7, 8, 64, 255, 65536, 2**31 - 1,
                          2**31, 2**32, 2**62, _INT64_MAX, _INT64_MIN)  # fmt: skip
INTERESTING_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, 6.0, 1e-9, 1e-30, 1e30, 3.4e38, -3.4e38,
                      math.inf, -math.inf, math.nan)  # fmt: skip
ELEMENT_TYPES: tuple[Attribute, ...] = (
    f32, f16, BFloat16Type(), f64, i1, i8, i16, i32, i64,
    IntegerType(8, Signedness.UNSIGNED), IntegerType(16, Signedness.UNSIGNED),
    IntegerType(32, Signedness.UNSIGNED), IntegerType(64, Signedness.UNSIGNED),
    IntegerType(4), IntegerType(128), IntegerType(8, Signedness.SIGNED),
)  # fmt: skip
SCALES = (
    1 / 256,
    1 / 32768,
    0.02,
    0.1,
    1.0,
    2**-26,
    1e-9,
    1e-30,
    1e-38,
    1e30,
    3e38,
    5e-324,
)


class _Mutator:
    """The mutations of one case, drawn from `rng`, applied to a parsed seed."""

    def __init__(self, module: ModuleOp, weights: WeightStore, rng: np.random.Generator):
        self.module = module
        self.weights = weights
        self.rng = rng
        self.func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
        self.notes: list[str] = []

    # -- helpers ------------------------------------------------------------------------
    def pick(self, items: list | tuple):
        return items[int(self.rng.integers(0, len(items)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def ops(self) -> list[Operation]:
        return [op for op in self.func.body.block.ops if not isinstance(op, ReturnOp)]

    def values(self) -> list[SSAValue]:
        block = self.func.body.block
        return [*block.args, *(r for op in self.ops() for r in op.results)]

    def size(self, old: int) -> int:
        choices = [*INTERESTING_SIZES, old + 1, max(old - 1, 0), 2 * old, old * old]
        return int(self.pick(choices))

    # -- attributes ---------------------------------------------------------------------
    def mutate_attribute(self) -> None:
        ops = [op for op in self.ops() if not isinstance(op, ConstantOp) and op.properties]
        if not ops:
            return self.mutate_dimension()
        op = self.pick(ops)
        name = self.pick(sorted(op.properties))
        attr = op.properties[name]
        try:
            new = self._mutated(attr)
        except Exception:  # a value the attribute itself refuses: nothing to mutate
            new = None
        if new is None:
            return None
        op.properties[name] = new
        self.notes.append(f"attr-{op.name.split('.')[-1]}-{name}")
        return None

    def _int(self) -> int:
        if self.chance(0.5):
            return int(self.pick(INTERESTING_ATTRIBUTES))
        return int(self.rng.integers(-4, 9))

    def _mutated(self, attr: Attribute) -> Attribute | None:
        if isinstance(attr, DenseArrayBase):
            values = [int(v) for v in np.frombuffer(attr.data.data, dtype="<i8")]
            kind = int(self.rng.integers(0, 4))
            if kind == 0 and values:
                values[int(self.rng.integers(0, len(values)))] = self._int()
            elif kind == 1:
                values.append(self._int())
            elif kind == 2 and values:
                del values[int(self.rng.integers(0, len(values)))]
            else:
                values = [self._int() for _ in values]
            return i64_array(values)
        if isinstance(attr, IntegerAttr):
            if attr.type == i1:
                return IntegerAttr(0 if attr.value.data else 1, i1)
            return IntegerAttr(self._int(), i64)
        if isinstance(attr, FloatAttr):
            value = float(self.pick(INTERESTING_FLOATS))
            if isinstance(attr.type, Float32Type) and math.isfinite(value):
                value = float(np.clip(value, -3.4e38, 3.4e38))
            return FloatAttr(value, attr.type)
        if isinstance(attr, EnumAttribute):
            members = list(type(attr.data))
            return type(attr)(self.pick(members))
        return None

    # -- types --------------------------------------------------------------------------
    def mutate_dimension(self) -> None:
        value = self.pick(self.values())
        t = value.type
        if not isinstance(t, TensorType):
            return
        shape = list(t.get_shape())
        kind = int(self.rng.integers(0, 5))
        if kind <= 2 and shape:
            axis = int(self.rng.integers(0, len(shape)))
            shape[axis] = self.size(shape[axis])
        elif kind == 3:
            shape.insert(int(self.rng.integers(0, len(shape) + 1)), self.size(1))
        elif shape:
            del shape[int(self.rng.integers(0, len(shape)))]
        self.set_type(value, TensorType(t.element_type, shape))
        self.notes.append(f"dim-{len(shape)}")

    def mutate_element(self) -> None:
        value = self.pick(self.values())
        t = value.type
        if not isinstance(t, TensorType):
            return
        if self.chance(0.4):
            element = self.quantized(t.get_shape())
            if element is None:
                return
        else:
            element = self.pick(ELEMENT_TYPES)
        self.set_type(value, TensorType(element, t.get_shape()))
        self.notes.append("elem")

    def mutate_element_everywhere(self) -> None:
        """One element type replaced by another wherever it occurs (the verifier then
        lets more of these through to the backend than a change of one value)."""
        value = self.pick(self.values())
        old = value.type.element_type if isinstance(value.type, TensorType) else None
        if old is None:
            return
        if isinstance(old, UniformQuantizedType) or self.chance(0.5):
            storage = old.storage.data if isinstance(old, UniformQuantizedType) else None
            new = self.quantized((), storage if self.chance(0.7) else None)
        else:
            new = self.pick(ELEMENT_TYPES)
        if new is None:
            return
        for v in self.values():
            t = v.type
            if isinstance(t, TensorType) and t.element_type == old:
                self.set_type(v, TensorType(new, t.get_shape()))
        self.notes.append("elem-all")

    def mutate_quantization(self) -> None:
        quantized = [
            v
            for v in self.values()
            if isinstance(v.type, TensorType)
            and isinstance(v.type.element_type, UniformQuantizedType)
        ]
        if not quantized:
            return self.mutate_element()
        value = self.pick(quantized)
        t = value.type
        old: UniformQuantizedType = t.element_type
        storage = old.storage.data if self.chance(0.7) else self.pick(sorted(STORAGE_TYPES))
        element = self.quantized(t.get_shape(), storage)
        if element is not None:
            self.set_type(value, TensorType(element, t.get_shape()))
            self.notes.append("quant")
        return None

    def quantized(
        self, shape: tuple[int, ...], storage: str | None = None
    ) -> UniformQuantizedType | None:
        """A random quantized type (per-axis now and then) for a tensor of `shape`."""
        storage = storage or self.pick(("i8", "u8", "i16", "i32", "u16"))
        _, lo, hi = STORAGE_TYPES[storage]

        def zero_point() -> int:
            return int(self.pick((lo, hi, 0, (lo + hi) // 2, lo + 1)))

        def scale() -> float:
            if self.chance(0.6):
                return float(self.pick(SCALES))
            return float(10.0 ** self.rng.uniform(-8, 2))

        try:
            if shape and self.chance(0.3):
                axis = int(self.rng.integers(0, len(shape)))
                count = shape[axis] if 0 < shape[axis] <= 4096 else 1
                return UniformQuantizedType.per_axis(
                    storage, axis, [scale() for _ in range(count)],
                    [zero_point() for _ in range(count)],
                )  # fmt: skip
            return UniformQuantizedType.per_tensor(storage, scale(), zero_point())
        except Exception:  # parameters the type itself refuses: nothing to mutate
            return None

    def set_type(self, value: SSAValue, t: TensorType) -> None:
        """Give `value` type `t`; a constant's value attribute and weights follow."""
        value._type = t
        owner = value.owner
        if isinstance(owner, ConstantOp):
            handle = owner.handle
            owner.properties["value"] = DenseResourceAttr.from_params(handle, t)
            if handle in self.weights:
                del self.weights[handle]
            try:
                count = math.prod(t.get_shape())
                if 0 <= count <= MAX_REGENERATED and self.chance(0.9):
                    self.weights[handle] = random_array(t, self.rng)
            except Exception:  # an element type numpy cannot hold: no weights
                pass

    # -- propagation ----------------------------------------------------------------------
    def propagate(self) -> None:
        """Re-infer the result shapes of every op after a mutation (keeping element
        types), as an importer would have written them."""
        for op in self.ops():
            if isinstance(op, ConstantOp) or not isinstance(op, SynapOp):
                continue
            try:
                found = type(op).infer_shapes(
                    [shape_of(v) for v in op.operands], op.props()
                )
            except Exception:  # ops shaped by their result type, or shapes that fail
                continue
            if len(found) != len(op.results):
                continue
            for result, shape in zip(op.results, found, strict=True):
                t = result.type
                if isinstance(t, TensorType) and tuple(t.get_shape()) != tuple(shape):
                    result._type = TensorType(t.element_type, list(shape))

    # -- one case -----------------------------------------------------------------------
    def run(self) -> None:
        mutations = (
            [self.mutate_attribute] * 4
            + [self.mutate_dimension] * 3
            + [
                self.mutate_element,
                self.mutate_quantization,
                self.mutate_quantization,
                self.mutate_element_everywhere,
                self.mutate_element_everywhere,
            ]
        )
        for _ in range(int(self.pick((1, 1, 1, 2, 2, 3)))):
            self.pick(mutations)()
        if self.chance(0.75):
            self.propagate()
            self.notes.append("prop")
        if self.chance(0.95):
            _sync_signature(self.func)


def _sync_signature(func: FuncOp) -> None:
    """Make `func`'s type match its block arguments and returned values."""
    block = func.body.block
    ret = block.last_op
    outputs = [v.type for v in ret.operands] if isinstance(ret, ReturnOp) else []
    func.properties["function_type"] = FunctionType.from_lists(
        [a.type for a in block.args], outputs
    )


#: Numbers of the text, except bit widths of types (i64, f32) and float exponents.
_DIGITS = re.compile(rb"(?<![A-Za-z_0-9])(?<!e[-+])\d+")
_FLOAT_TEXT = re.compile(rb"-?\d+\.\d+(e[-+]?\d+)?")


def _mutate_text(data: bytes, rng: np.random.Generator) -> tuple[bytes, str]:
    """A number of the module text (not the weights) replaced by an interesting one."""
    end = data.find(b"\n{-#")
    end = len(data) if end < 0 else end
    text = data[:end]
    if rng.random() < 0.3:
        matches = list(_FLOAT_TEXT.finditer(text))
        replacement = str(float(rng.choice(INTERESTING_FLOATS))).encode()
        if replacement in (b"inf", b"-inf", b"nan"):
            replacement = {b"inf": b"0x7F800000", b"-inf": b"0xFF800000",
                           b"nan": b"0x7FC00000"}[replacement]  # fmt: skip
        kind = "float"
    else:
        matches = list(_DIGITS.finditer(text))
        replacement = str(int(rng.choice(INTERESTING_ATTRIBUTES))).lstrip("-").encode()
        kind = "int"
    if not matches:
        return data, "text-none"
    match = matches[int(rng.integers(0, len(matches)))]
    return data[: match.start()] + replacement + data[match.end() :], f"text-{kind}"


def _damaged(data: bytes, rng: np.random.Generator) -> bytes:
    """`data` with a few byte-level edits (`mutate_bytes`)."""
    return mutate_bytes(data, rng, edits=int(rng.integers(1, 4)))


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:90]


def cases(seed: int, count: int) -> Iterator[Case]:
    """`count` mutated seed models, deterministic for `seed` (see the module docstring):
    mostly mutations through xDSL, one in ten of the MLIR text, one in twenty of the
    bytes."""
    rng = np.random.default_rng(seed)
    models = seeds()
    for index in range(count):
        source = models[int(rng.integers(0, len(models)))]
        roll = rng.random()
        if roll < 0.05:
            data = _damaged(source.text.encode(), rng)
            note = "bytes"
        elif roll < 0.15:
            data, note = _mutate_text(source.text.encode(), rng)
        else:
            weights = WeightStore()
            module = parse_module(source.text, weights, name=source.name)
            mutator = _Mutator(module, weights, rng)
            mutator.run()
            data = _module_text(module, weights).encode()
            note = "+".join(mutator.notes) or "none"
        yield Case(_safe(f"{index:05d}-{source.name}-{note}"), data, ".mlir")


if __name__ == "__main__":  # list the seeds
    for s in seeds():
        print(s.name, len(s.text), file=sys.stdout)
