# ruff: noqa: E501 (MLIR text of test programs: one op per line)
"""The memory planner (`plan-memory`, `passes/memory/`): offsets never let two live
tensors share a byte, they reach the optimum exhaustive search finds, a corrupted plan
is caught with both tensors and the layer named, and the arena executor, which runs a
model with every intermediate in one buffer at its planned offset, computes what the
normal program computes."""

from __future__ import annotations

import itertools
import random
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import synapc
from synapc.backends.jax.arena import ArenaExecutor
from synapc.backends.targets import get_target
from synapc.compiler import Executable
from synapc.context import make_context
from synapc.convert.pipeline import run_pipeline
from synapc.mlir_io import parse_module
from synapc.model import Model
from synapc.passes.memory.offsets import (
    Buffer,
    arena_size,
    lower_bound,
    place_in_order,
    plan_offsets,
)
from synapc.passes.memory.placement import placement_of, plan_of, set_placement
from synapc.passes.memory.sram import choose_sram
from synapc.passes.memory.verify import MemoryPlanError, verify_plan
from synapc.passes.plan_memory import PlanMemoryPass
from synapc.testing.real_models import load_real_model
from synapc.weights import WeightStore


@st.composite
def _buffers(draw: st.DrawFn) -> list[Buffer]:
    n = draw(st.integers(1, 14))
    buffers = []
    for k in range(n):
        first = draw(st.integers(0, 10))
        buffers.append(
            Buffer(
                f"b{k}", draw(st.integers(0, 4096)), first, first + draw(st.integers(0, 6))
            )
        )
    return buffers


@settings(max_examples=300, deadline=None)
@given(_buffers(), st.sampled_from([1, 16, 64]))
def test_offsets_never_overlap_live_buffers(buffers: list[Buffer], alignment: int) -> None:
    aligned = [Buffer(b.name, -(-b.size // alignment) * alignment, b.first, b.last)
               for b in buffers]  # fmt: skip
    offsets = plan_offsets(aligned, alignment, climb_steps=20)
    assert set(offsets) == {b.name for b in aligned}
    assert all(o % alignment == 0 for o in offsets.values())
    for a, b in itertools.combinations(aligned, 2):
        if a.meets(b) and a.size and b.size:
            oa, ob = offsets[a.name], offsets[b.name]
            assert oa + a.size <= ob or ob + b.size <= oa, (a, b, oa, ob)
    assert arena_size(aligned, offsets) >= lower_bound(aligned)


def _optimum(buffers: list[Buffer]) -> int:
    """The least arena over every placement order (lowest-offset placement reaches
    every optimum from some order: see `offsets`)."""
    return min(
        arena_size(buffers, place_in_order(order))
        for order in itertools.permutations(buffers)
    )


def test_planner_reaches_the_exhaustive_optimum() -> None:
    """On 400 random cases of 2-7 buffers, the planner's arena equals the optimum found
    by trying every placement order in at least 95 % of them."""
    rng = random.Random(21)
    reached = 0
    cases = 400
    for _ in range(cases):
        buffers = []
        for k in range(rng.randint(2, 7)):
            first = rng.randint(0, 5)
            buffers.append(
                Buffer(f"b{k}", rng.randint(1, 9), first, first + rng.randint(0, 3))
            )
        planned = arena_size(buffers, plan_offsets(buffers))
        reached += planned == _optimum(buffers)
    assert reached >= 0.95 * cases, f"{reached} of {cases}"


T, TWO, SWAP = "tensor<2x16xf32>", "tensor<4x16xf32>", "tensor<16x2xf32>"
UNARY = ("tanh", "sigmoid", "abs", "neg", "exp")
BINARY = ("add", "mul", "maximum")


@st.composite
def _programs(draw: st.DrawFn) -> str:
    """MLIR of a random DAG over one input mixing elementwise layers (in-place
    candidates), reshapes (views) and concatenations along the outermost axis (in
    place), several outputs."""
    values: dict[str, list[str]] = {T: ["%x"], TWO: [], SWAP: []}
    lines = []
    for k in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["unary", "binary", "concat", "reshape"]))
        name = f"%v{k}"
        if kind == "concat" and len(values[T]) >= 1:
            a, b = draw(st.sampled_from(values[T])), draw(st.sampled_from(values[T]))
            lines.append(
                f"  {name} = synap.concat {a}, {b} {{axis = 0 : i64}} : ({T}, {T}) -> {TWO}"
            )
            values[TWO].append(name)
        elif kind == "reshape":
            source_type = draw(st.sampled_from([t for t in (T, SWAP) if values[t]]))
            target = SWAP if source_type == T else T
            a = draw(st.sampled_from(values[source_type]))
            lines.append(f"  {name} = synap.reshape {a} : ({source_type}) -> {target}")
            values[target].append(name)
        else:
            t = draw(st.sampled_from([t for t in values if values[t]]))
            a = draw(st.sampled_from(values[t]))
            if kind == "unary":
                op = draw(st.sampled_from(UNARY))
                lines.append(f"  {name} = synap.{op} {a} : ({t}) -> {t}")
            else:
                op, b = draw(st.sampled_from(BINARY)), draw(st.sampled_from(values[t]))
                lines.append(f"  {name} = synap.{op} {a}, {b} : ({t}, {t}) -> {t}")
            values[t].append(name)
    typed = [(v, t) for t, vs in values.items() for v in vs if v != "%x"]
    outputs = draw(st.lists(st.sampled_from(typed), min_size=1, max_size=3, unique=True))
    types = ", ".join(t for _, t in outputs)
    ret = f"  func.return {', '.join(v for v, _ in outputs)} : {types}"
    return (
        f"func.func @main(%x: {T}) -> ({types}) {{\n" + "\n".join([*lines, ret]) + "\n}\n"
    )


def _model(text: str) -> Model:
    store = WeightStore()
    return Model.from_module(parse_module(text, store), store)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _programs(),
    st.sampled_from([1, 16, 64]),
    st.booleans(),
    st.sampled_from(["VS680", "GENERIC"]),
)
def test_random_programs_run_the_same_in_their_arena(
    text: str, alignment: int, reorder: bool, target_name: str
) -> None:
    """The pass plans (its verifier holds: it runs inside the pass), and the arena
    executor's outputs equal the same layers run without an arena bit for bit, and the
    program's: bit for bit in float16 (VS680), within 1e-5 relative on GENERIC
    (XLA fuses a float32 multiply and the next layer's add into one rounding)."""
    model = _model(text)
    target = get_target(target_name)
    npu_bytes = target.npu_float_dtype.itemsize
    spec = (
        f"plan-memory{{alignment={alignment} npu-float-bytes={npu_bytes} "
        f"reorder={str(reorder).lower()}}}"
    )
    planned = run_pipeline(model, spec)
    x = np.random.default_rng(0).normal(size=(2, 16)).astype(np.float32)
    program = Executable(model, target).run([x])
    arena = ArenaExecutor(planned.module, planned.weights, target).run([x])
    control = ArenaExecutor(planned.module, planned.weights, target, in_arena=False).run(
        [x]
    )
    for p, a, c in zip(program, arena, control, strict=True):
        assert a.tobytes() == c.tobytes()
        if target_name == "VS680":
            assert np.array_equal(a, p)
        else:
            np.testing.assert_allclose(a, p, rtol=1e-5, atol=1e-6)


PLANNED = """
func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %a = synap.tanh %x {layer_name = "a"} : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %b = synap.sigmoid %a {layer_name = "b"} : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %c = synap.add %a, %b {layer_name = "c"} : (tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %d = synap.exp %c {layer_name = "d"} : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  func.return %d : tensor<1x8x8x16xf32>
}
"""


def test_a_corrupted_plan_names_both_tensors_and_the_layer() -> None:
    planned = run_pipeline(_model(PLANNED), "plan-memory{npu-float-bytes=4}")
    ops = {o.attributes["layer_name"].data: o for o in planned.main.body.block.ops
           if "layer_name" in o.attributes}  # fmt: skip
    # a and b are live together (c reads both): put b where a is
    place = placement_of(ops["a"])
    assert place is not None and place[0] is not None
    set_placement(ops["b"], [place[0]])
    with pytest.raises(MemoryPlanError) as caught:
        verify_plan(planned.main, 4)
    message = str(caught.value)
    assert re.search(r'tensor op0\.0 of layer "a" .*tensor op1\.0 of layer "b"', message)
    assert 'live at layer "b" (op #1, synap.sigmoid)' in message


@pytest.mark.parametrize("quantized", [False, True], ids=["float", "uint8"])
@pytest.mark.parametrize("name", ["face_detection_short_range", "ppocr_mobile_v2_cls"])
def test_real_models_run_the_same_in_their_arena(name: str, quantized: bool) -> None:
    """Real models compiled for VS680 (float16 on the NPU, or uint8 quantized on random
    data): the arena executor's outputs equal the compiled program's bit for bit."""
    model, inputs = load_real_model(name)
    if quantized:
        model = synapc.quantize(model, "random", data_type="uint8")
    executable = synapc.compile(model, "VS680")
    compiled = executable.model
    module = compiled.module.clone()
    PlanMemoryPass().apply(make_context(compiled.weights), module)
    expected = executable.run(inputs)
    actual = ArenaExecutor(
        module, compiled.weights, get_target("VS680"), compiled.integer_semantics
    ).run(inputs)
    for e, a in zip(expected, actual, strict=True):
        assert np.array_equal(e, a)


@settings(max_examples=200, deadline=None)
@given(_buffers(), st.integers(0, 8192), st.randoms(use_true_random=False))
def test_sram_holds_what_fits_at_every_step(
    buffers: list[Buffer], capacity: int, rng: random.Random
) -> None:
    """The buffers the SRAM takes never overlap while live and end within its
    capacity."""
    accesses = {b.name: rng.randint(1, 9) for b in buffers}
    chosen = choose_sram(buffers, accesses, capacity, 1)
    placed = [b for b in buffers if b.name in chosen]
    assert arena_size(placed, chosen) <= max(capacity, 0)
    for a, b in itertools.combinations(placed, 2):
        if a.meets(b) and a.size and b.size:
            oa, ob = chosen[a.name], chosen[b.name]
            assert oa + a.size <= ob or ob + b.size <= oa


#: A large tensor computed first but read last, beside a chain of small layers: in
#: block order it is live throughout; run after the chain, it is not.
LATE_READER = """
func.func @main(%x: tensor<1x64xf32>, %s: tensor<1x4xf32>) -> (tensor<1x64xf32>, tensor<1x4xf32>) {
  %big = synap.exp %x {layer_name = "big"} : (tensor<1x64xf32>) -> tensor<1x64xf32>
  %s1 = synap.tanh %s {layer_name = "s1"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %s2 = synap.concat %s1, %s1 {layer_name = "s2", axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x8xf32>
  %s3 = synap.concat %s2, %s2 {layer_name = "s3", axis = 1 : i64} : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x16xf32>
  %s4 = synap.concat %s3, %s3 {layer_name = "s4", axis = 1 : i64} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
  %s5 = synap.concat %s4, %s4 {layer_name = "s5", axis = 1 : i64} : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x64xf32>
  %y = synap.add %big, %s5 {layer_name = "y"} : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
  %t = synap.sigmoid %s1 {layer_name = "t"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %y, %t : tensor<1x64xf32>, tensor<1x4xf32>
}
"""


def test_reorder_runs_the_layers_in_an_order_of_lower_peak() -> None:
    """With ``reorder``, the large tensor is computed just before its reader: the peak
    (the lower bound) falls, the outputs stay the same."""
    figures = {}
    for reorder in ("false", "true"):
        planned = run_pipeline(
            _model(LATE_READER),
            f"plan-memory{{alignment=1 npu-float-bytes=4 reorder={reorder}}}",
        )
        figures[reorder] = plan_of(planned.main)
        names = [o.attributes["layer_name"].data for o in planned.main.body.block.ops
                 if "layer_name" in o.attributes]  # fmt: skip
        x = [np.ones((1, 64), np.float32), np.ones((1, 4), np.float32)]
        out = ArenaExecutor(planned.module, planned.weights, get_target("GENERIC")).run(x)
        expected = Executable(_model(LATE_READER), get_target("GENERIC")).run(x)
        assert all(np.array_equal(a, e) for a, e in zip(out, expected, strict=True))
    assert figures["true"]["lower_bound"] < figures["false"]["lower_bound"]
    assert names.index("big") > names.index("s5")


#: A quantized concatenation whose result has another scale than its operands: it
#: rescales, so its operands cannot be written into it.
RESCALING_CONCAT = """
func.func @main(%x: tensor<1x8x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.00390625>> {
  %a = synap.sigmoid %x {layer_name = "a"} : (tensor<1x8x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.00390625>>
  %b = synap.tanh %x {layer_name = "b"} : (tensor<1x8x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.0078125:128>>
  %c = synap.concat %a, %b {layer_name = "c", axis = 0 : i64} : (tensor<1x8x!quant.uniform<u8:f32, 0.00390625>>, tensor<1x8x!quant.uniform<u8:f32, 0.0078125:128>>) -> tensor<2x8x!quant.uniform<u8:f32, 0.0078125:128>>
  %r = synap.reshape %c {layer_name = "r"} : (tensor<2x8x!quant.uniform<u8:f32, 0.0078125:128>>) -> tensor<1x16x!quant.uniform<u8:f32, 0.0078125:128>>
  %y = synap.slice %r {layer_name = "y", start = array<i64: 0, 0>} : (tensor<1x16x!quant.uniform<u8:f32, 0.0078125:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.0078125:128>>
  %z = synap.sigmoid %y {layer_name = "z"} : (tensor<1x8x!quant.uniform<u8:f32, 0.0078125:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.00390625>>
  func.return %z : tensor<1x8x!quant.uniform<u8:f32, 0.00390625>>
}
"""


def test_a_rescaling_concatenation_is_not_written_in_place() -> None:
    """The concatenation gets a buffer of its own (SileroVAD's quantized decoder: its
    operands written into it kept their own scales), and the arena run equals the
    same layers without an arena and the program bit for bit."""
    model = _model(RESCALING_CONCAT)
    planned = run_pipeline(model, "plan-memory{alignment=1}")
    ops = {o.attributes["layer_name"].data: o for o in planned.main.body.block.ops
           if "layer_name" in o.attributes}  # fmt: skip
    places = {name: placement_of(op)[0] for name, op in ops.items()}  # type: ignore[index]
    assert places["c"] not in (places["a"], places["b"])
    assert places["r"] == places["c"]  # a reshape keeps its input's bytes and type
    x = [np.arange(8, dtype=np.uint8).reshape(1, 8) * 30]
    target = get_target("VS680")
    arena = ArenaExecutor(planned.module, planned.weights, target).run(x)
    control = ArenaExecutor(planned.module, planned.weights, target, in_arena=False).run(x)
    program = Executable(model, target).run(x)
    assert arena[0].tobytes() == control[0].tobytes() == program[0].tobytes()
