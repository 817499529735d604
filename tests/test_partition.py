"""The `partition` pass: convex subgraphs by delegate, outlined and called in order.

Property tests on random DAGs with random delegates and fallbacks: every layer lands in
exactly one subgraph, the subgraphs' dependencies are acyclic (each call reads only the
model's inputs and earlier calls), the knobs hold, and the partitioned model computes
what the unpartitioned one does. A quantized model split into NPU and CPU subgraphs
stays bit-exact on VS680 (both run the same integer kernels)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.func import CallOp, FuncOp

import synapc
from synapc.backends.targets import get_target
from synapc.compiler import Executable
from synapc.convert.pipeline import run_pipeline
from synapc.errors import SynapcError
from synapc.mlir_io import parse_module
from synapc.model import Model
from synapc.weights import WeightStore

T = "tensor<1x4xf32>"
UNARY = ("tanh", "sigmoid", "abs", "neg")
BINARY = ("add", "mul", "maximum")


@st.composite
def random_dags(draw: st.DrawFn) -> tuple[str, list[str]]:
    """MLIR of a random DAG of elementwise layers over one input, each with a random
    delegate request (or none) and sometimes a fallback reason; the layers' names."""
    count = draw(st.integers(1, 10))
    lines, names = [], []
    for k in range(count):
        sources = ["%x", *[f"%v{j}" for j in range(k)]]
        attrs = []
        delegate = draw(st.sampled_from([None, "npu", "gpu", "cpu"]))
        if delegate is not None:
            attrs.append(f'synap.delegate = "{delegate}"')
        if draw(st.booleans()) and draw(st.booleans()):
            attrs.append('synap.fallback = "not on the NPU"')
        attr = f" {{{', '.join(attrs)}}}" if attrs else ""
        if draw(st.booleans()):
            op, a = draw(st.sampled_from(UNARY)), draw(st.sampled_from(sources))
            lines.append(f"  %v{k} = synap.{op} {a}{attr} : ({T}) -> {T}")
        else:
            op = draw(st.sampled_from(BINARY))
            a, b = draw(st.sampled_from(sources)), draw(st.sampled_from(sources))
            lines.append(f"  %v{k} = synap.{op} {a}, {b}{attr} : ({T}, {T}) -> {T}")
        names.append(f"v{k}")
    outputs = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    types = ", ".join([T] * len(outputs))
    ret = f"  func.return {', '.join('%' + o for o in outputs)} : {types}"
    text = (
        f"func.func @main(%x: {T}) -> ({types}) {{\n" + "\n".join([*lines, ret]) + "\n}\n"
    )
    return text, names


def _model(text: str) -> Model:
    store = WeightStore()
    return Model.from_module(parse_module(text, store), store)


def _requested(op) -> tuple[str | None, bool]:
    delegate = op.attributes.get("synap.delegate")
    return (
        delegate.data if isinstance(delegate, StringAttr) else None,
        "synap.fallback" in op.attributes,
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    random_dags(),
    st.sampled_from(["npu", "gpu", "cpu"]),
    st.integers(0, 3),
    st.integers(0, 3),
)
def test_partition_properties_on_random_dags(
    dag: tuple[str, list[str]], default: str, max_partitions: int, min_nodes: int
) -> None:
    text, names = dag
    model = _model(text)
    spec = (
        f"partition{{default={default} max-partitions={max_partitions} "
        f"min-nodes-per-partition={min_nodes}}}"
    )
    parted = run_pipeline(model, spec)
    parted.module.verify()
    functions = {
        f.sym_name.data: f for f in parted.module.body.block.ops if isinstance(f, FuncOp)
    }
    calls = [op for op in parted.main.body.block.ops if isinstance(op, CallOp)]
    assert len(calls) == len(functions) - 1
    if not calls:  # the whole model on the default delegate: left as it is
        layers = [o for o in parted.main.body.block.ops if o.name.startswith("synap.")]
        assert sorted(o.results[0].name_hint for o in layers) == sorted(names)
        for layer in layers:
            asked, fallback = _requested(layer)
            assert default == "cpu" or ((asked or default) == default and not fallback)
    # every layer exactly once, on the delegate it asked for or the CPU
    seen: list[str] = []
    defined = set(parted.main.body.block.args)
    for call in calls:
        # the dependencies are acyclic: a call reads model inputs and earlier calls
        assert all(v in defined for v in call.operands)
        defined |= set(call.results)
        function = functions[call.callee.root_reference.data]
        delegate = function.attributes["synap.delegate"].data
        layers = [o for o in function.body.block.ops if o.name.startswith("synap.")]
        if delegate != "cpu":
            assert len(layers) >= max(min_nodes, 1)
        for layer in layers:
            seen.append(layer.results[0].name_hint)
            asked, fallback = _requested(layer)
            assert delegate in {asked or default, "cpu"}
            assert not (fallback and delegate != "cpu")
    assert not calls or sorted(seen) == sorted(names)
    if max_partitions:
        accelerated = sum(
            functions[c.callee.root_reference.data].attributes["synap.delegate"].data
            != "cpu"
            for c in calls
        )
        assert len(calls) <= max_partitions or accelerated == 0
    # the same outputs (GENERIC: every subgraph computes in float32)
    x = np.random.default_rng(len(names)).normal(size=(1, 4)).astype(np.float32)
    target = get_target("GENERIC")
    expected = Executable(model, target).run([x])
    actual = Executable(parted, target).run([x])
    for e, a in zip(expected, actual, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def test_quantized_subgraphs_stay_bit_exact(tmp_path) -> None:
    model = synapc.optimize(synapc.import_model("examples/tiny_classifier.onnx"))
    quantized = synapc.quantize(model, "random", data_type="uint8")
    ops = list(quantized.main.body.block.ops)
    pool = next(o for o in ops if o.name == "synap.reduce_mean")
    pool.attributes["synap.delegate"] = StringAttr("cpu")
    parted = run_pipeline(quantized, "partition")
    delegates = [
        f.attributes["synap.delegate"].data
        for f in parted.module.body.block.ops
        if isinstance(f, FuncOp) and "synap.delegate" in f.attributes
    ]
    assert delegates == ["npu", "cpu", "npu"]
    x = np.random.default_rng(1).normal(size=(1, 3, 64, 64)).astype(np.float32)
    target = get_target("VS680")
    expected = Executable(quantized, target).run([x])
    actual = Executable(parted, target).run([x])
    for e, a in zip(expected, actual, strict=True):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("partition{default=tpu}", "default=tpu: expected one of npu, gpu, cpu"),
        ("partition{max-partitions=-1}", ">= 0"),
    ],
)
def test_bad_options_are_refused(spec: str, message: str) -> None:
    model = _model(f"func.func @main(%x: {T}) -> {T} {{\n  func.return %x : {T}\n}}\n")
    with pytest.raises((ValueError, SynapcError), match=message):
        run_pipeline(model, spec)


def test_an_unknown_delegate_and_a_second_partition_are_refused() -> None:
    model = _model(
        f"func.func @main(%x: {T}) -> {T} {{\n"
        f'  %y = synap.tanh %x {{synap.delegate = "dsp"}} : ({T}) -> {T}\n'
        f"  func.return %y : {T}\n}}\n"
    )
    with pytest.raises((ValueError, SynapcError), match="delegate 'dsp'"):
        run_pipeline(model, "partition")
    del model.main.body.block.first_op.attributes["synap.delegate"]
    parted = run_pipeline(model, "partition")
    with pytest.raises((ValueError, SynapcError), match="already partitioned"):
        run_pipeline(parted, "partition")


def test_a_split_package_returns_an_output_a_later_subgraph_also_reads(tmp_path) -> None:
    """Output 0 (tanh) is computed by the NPU subgraph and read by the CPU one and by
    the NPU one after it: every subgraph sees it under the model output's name, and the
    package computes both outputs."""
    from synapc.convert.convert import package_files
    from synapc.convert.output import PACKAGE

    model = _model(
        f"func.func @main(%x: {T}) -> ({T}, {T}) {{\n"
        f'  %a = synap.tanh %x {{layer_name = "a"}} : ({T}) -> {T}\n'
        f'  %b = synap.sigmoid %a {{layer_name = "b", synap.delegate = "cpu"}} '
        f": ({T}) -> {T}\n"
        f'  %c = synap.add %a, %b {{layer_name = "c"}} : ({T}, {T}) -> {T}\n'
        f"  func.return %a, %c : {T}, {T}\n}}\n"
    )
    parted = run_pipeline(model, "partition")
    files = package_files(
        parted, "VS680", "two.mlir", {"model": "0" * 64, "synapc": "test"}, [], {}
    )
    (tmp_path / PACKAGE).write_bytes(files[PACKAGE])
    net = synapc.Network(tmp_path / PACKAGE)
    assert [s.delegate for s in net.package.subgraphs] == ["npu", "cpu", "npu"]
    assert net.package.output_refs == [(0, 0), (2, 0)]
    name = net.package.subgraphs[0].outputs[0].name
    assert name == net.outputs[0].name
    assert net.package.subgraphs[1].inputs[0].name == name
    x = np.linspace(-1, 1, 4, dtype=np.float32).reshape(1, 4)
    net.inputs[0].assign(x)
    a, c = (np.asarray(o.to_numpy(), np.float64) for o in net.predict())
    expected = np.tanh(x.astype(np.float64))
    np.testing.assert_allclose(a, expected, atol=2e-3)  # float16 on the NPU
    np.testing.assert_allclose(c, expected + 1 / (1 + np.exp(-expected)), atol=4e-3)
