"""`synapc.limits`: every limit is a documented setting, read when it is checked.

The structural limits that readers used to keep as module constants (tensor rank, TFLite
graph items, ONNX subgraph nesting, constant-folding work, metafile values, names and
substituted text, package members, a cached model_info.txt) are fields of `Limits`: a
small input is refused once `use_limits()` or `SYNAPC_<FIELD>` lowers one, with one line
naming the file and the field, tensor or member, and the setting that raises the limit.
"""

from __future__ import annotations

import contextvars
import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx import numpy_helper as nh

import synapc
from benchmarks.fuzz.harness import PYTHON_TEXT
from synapc.backends.package import PackageError, read_package
from synapc.errors import SynapcError
from synapc.limits import Limits, limits, use_limits
from synapc.metafile import MetafileError, parse_metafile
from synapc.testing.tflite_builder import ModelBuilder

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MODEL = REPO / "examples" / "tiny_classifier.onnx"
META = REPO / "examples" / "tiny_classifier.yaml"

#: The fields that readers kept as local constants before, with their defaults.
NEW_DEFAULTS = {
    "max_tensor_rank": 32,
    "max_graph_items": 1 << 20,
    "max_graph_nesting": 16,
    "max_fold_work_elements": 1 << 28,
    "max_metafile_values": 20_000,
    "max_name_chars": 1024,
    "max_substituted_text_bytes": 16 << 20,
    "max_package_members": 100_000,
    "max_model_info_bytes": 256 << 20,
}

T = TypeVar("T")


def fresh(function: Callable[[], T]) -> T:
    """`function()` in a new context, where `limits()` reads the environment again (the
    test's own context keeps the limits it read first)."""
    return contextvars.Context().run(function)


def clear(error: BaseException, start: str, *needles: str) -> str:
    """The message of `error`: a SynapcError on one line, starting with `start` (the
    file), holding each of `needles` and no Python exception text."""
    assert isinstance(error, SynapcError), repr(error)
    message = str(error)
    assert message.startswith(start), message
    assert "\n" not in message and not PYTHON_TEXT.search(message), message
    for needle in needles:
        assert needle in message, message
    return message


def tflite_model(tmp_path: Path) -> Path:
    """x [1, 4, 4, 2] -> RELU -> y, as model.tflite (two tensors, one operator)."""
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2], np.float32)
    y = b.tensor("y", [1, 4, 4, 2], np.float32)
    b.op("RELU", [x], [y])
    b.output(y)
    path = tmp_path / "model.tflite"
    path.write_bytes(b.build())
    return path


def onnx_model(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inits: list[onnx.TensorProto] | None = None,
) -> Path:
    """A model of `nodes` with input x [1, 3, 8, 8] float and output y, as model.onnx."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        inits or [],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def import_error(path: Path, **changes: int) -> SynapcError:
    """The error importing `path` raises under the limits `changes`."""
    with use_limits(**changes), pytest.raises(SynapcError) as error:
        synapc.import_model(path)
    return error.value


def metafile_error(text: str, **changes: int) -> str:
    """The one-line message parsing metafile `text` (as m.yaml) gives under `changes`."""
    with use_limits(**changes), pytest.raises(MetafileError) as error:
        parse_metafile(text, Path("m.yaml"), lambda: "[[0.5, 0.5, 1.0, 1.0]]")
    return clear(error.value, "m.yaml: ")


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/tiny_classifier.onnx converted for VS680: its model.synap."""
    out = tmp_path_factory.mktemp("converted")
    return synapc.convert(MODEL, "VS680", out, meta=META).package


# -- the settings ------------------------------------------------------------------------
def test_new_fields_have_their_former_defaults() -> None:
    defaults = Limits()
    for name, value in NEW_DEFAULTS.items():
        assert getattr(defaults, name) == value, name


def test_every_limit_is_documented() -> None:
    """docs/limits.md has a table row for each field: its name, a default and its
    environment variable, and says why for each of the new ones."""
    text = (REPO / "docs" / "limits.md").read_text()
    for field in dataclasses.fields(Limits):
        row = re.search(
            rf"^\| `{field.name}` \| ([^|]+) \| `([^`]+)` \| .+ \|$", text, re.M
        )
        assert row is not None, field.name
        assert row.group(2) == f"SYNAPC_{field.name.upper()}"
    for name in NEW_DEFAULTS:
        assert re.search(rf"^- `{name}`: ", text, re.M), name


def test_environment_variables_set_the_new_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNAPC_MAX_TENSOR_RANK", "8")
    monkeypatch.setenv("SYNAPC_MAX_PACKAGE_MEMBERS", "1_000")
    current = fresh(limits)
    assert current.max_tensor_rank == 8
    assert current.max_package_members == 1000
    assert current.max_graph_nesting == 16  # the others keep their defaults
    monkeypatch.setenv("SYNAPC_MAX_GRAPH_NESTING", "deep")
    with pytest.raises(SynapcError, match="SYNAPC_MAX_GRAPH_NESTING='deep'"):
        fresh(limits)


def test_limits_are_read_when_checked_not_at_import() -> None:
    """A reader sees `use_limits` at the time of the check: the same input is accepted,
    refused inside the block, and accepted again after it."""
    text = "inputs: [{name: input_0}]\n"
    assert parse_metafile(text).inputs[0].name == "input_0"
    with use_limits(max_name_chars=4), pytest.raises(MetafileError):
        parse_metafile(text)
    assert parse_metafile(text).inputs[0].name == "input_0"


def test_environment_variable_is_honoured_by_the_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYNAPC_MAX_NAME_CHARS", "4")
    monkeypatch.setenv("SYNAPC_MAX_GRAPH_ITEMS", "1")
    with pytest.raises(MetafileError) as error:
        fresh(lambda: parse_metafile("inputs: [{name: input_0}]\n", Path("m.yaml")))
    clear(
        error.value,
        "m.yaml: inputs[0].name: a tensor name of 7 characters (at most 4; ",
        "SYNAPC_MAX_NAME_CHARS raises it",
    )
    path = tflite_model(tmp_path)
    with pytest.raises(SynapcError) as error:
        fresh(lambda: synapc.import_model(path))
    clear(error.value, f"{path}: ", "tensors", "SYNAPC_MAX_GRAPH_ITEMS raises it")


def test_environment_variable_is_honoured_by_the_command_line() -> None:
    """`SYNAPC_MAX_TENSOR_RANK=3 synapc import` refuses the example model (its first
    rank-4 tensor, a convolution's weights), naming the file, the tensor and the
    setting."""
    env = {**os.environ, "SYNAPC_MAX_TENSOR_RANK": "3"}
    result = subprocess.run(
        [str(BIN / "synapc"), "import", str(MODEL), "--no-weights"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert result.stderr == (
        f"synapc: error: {MODEL}: initializer 'conv1.weight' (rank): 4 exceeds the "
        "limit of 3 (SYNAPC_MAX_TENSOR_RANK raises it)\n"
    )


# -- max_tensor_rank: one value every reader shares --------------------------------------
def test_tensor_rank_is_checked_by_every_reader(tmp_path: Path, converted: Path) -> None:
    path = tflite_model(tmp_path)
    clear(
        import_error(path, max_tensor_rank=3),
        f"{path}: subgraph 0, tensor 0 ('x'), field shape (entries): 4 exceeds the "
        "limit of 3 (SYNAPC_MAX_TENSOR_RANK raises it)",
    )
    path = onnx_model(tmp_path, [helper.make_node("Relu", ["x"], ["y"])])
    clear(
        import_error(path, max_tensor_rank=3),
        f"{path}: input 'x' (rank): 4 exceeds the limit of 3 "
        "(SYNAPC_MAX_TENSOR_RANK raises it)",
    )
    assert metafile_error("inputs: [{shape: [1, 2, 2, 3]}]\n", max_tensor_rank=3) == (
        "m.yaml: inputs[0].shape: 4 dimensions (at most 3; SYNAPC_MAX_TENSOR_RANK "
        "raises it)"
    )
    with use_limits(max_tensor_rank=3), pytest.raises(PackageError) as error:
        read_package(converted)
    clear(
        error.value,
        f"{converted}: bundle.json: inputs[0].shape: 4 dimensions exceed the limit of 3 "
        "(SYNAPC_MAX_TENSOR_RANK raises it)",
    )
    # the shared default reads all of them
    assert synapc.import_model(tflite_model(tmp_path)) is not None
    assert read_package(converted) is not None


# -- the TFLite and ONNX importers -----------------------------------------------------
def test_graph_items(tmp_path: Path) -> None:
    path = tflite_model(tmp_path)
    clear(
        import_error(path, max_graph_items=1),
        f"{path}: subgraph 0, field tensors (entries): 2 exceeds the limit of 1 "
        "(SYNAPC_MAX_GRAPH_ITEMS raises it)",
    )


def test_graph_nesting(tmp_path: Path) -> None:
    """An If inside the then-branch of an If: subgraphs two levels deep."""

    def branch(nodes: list[onnx.NodeProto], out: str) -> onnx.GraphProto:
        info = helper.make_tensor_value_info(out, TensorProto.FLOAT, None)
        return helper.make_graph(nodes, f"g_{out}", [], [info])

    inner = helper.make_node(
        "If",
        ["c"],
        ["o"],
        then_branch=branch([helper.make_node("Identity", ["a"], ["t"])], "t"),
        else_branch=branch([helper.make_node("Identity", ["a"], ["e"])], "e"),
    )
    outer = helper.make_node(
        "If",
        ["c"],
        ["k"],
        then_branch=branch([inner], "o"),
        else_branch=branch([helper.make_node("Identity", ["a"], ["e2"])], "e2"),
    )
    inits = [
        nh.from_array(np.asarray(True), "c"),
        nh.from_array(np.ones(1, np.float32), "a"),
    ]
    path = onnx_model(tmp_path, [outer, helper.make_node("Add", ["x", "k"], ["y"])], inits)
    assert synapc.import_model(path) is not None
    clear(
        import_error(path, max_graph_nesting=1),
        f"{path}: subgraphs are nested more than 1 levels deep "
        "(SYNAPC_MAX_GRAPH_NESTING raises it)",
    )


def test_fold_work(tmp_path: Path) -> None:
    """Range(0, 8, 1) folds to 8 values by default; its work (with the overhead of a
    node) is over a budget of 100 elements, and Range cannot run on the target."""
    inits = [
        nh.from_array(np.asarray(v, np.float32), n)
        for n, v in (("s", 0.0), ("l", 8.0), ("d", 1.0))
    ]
    nodes = [
        helper.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
        helper.make_node("Add", ["x", "r"], ["y"]),
    ]
    path = onnx_model(tmp_path, nodes, inits)
    assert synapc.import_model(path) is not None
    clear(
        import_error(path, max_fold_work_elements=100),
        f"{path}: node 'range' (Range, opset 17): folding it would compute more than "
        "100 elements in all",
        "(SYNAPC_MAX_FOLD_WORK_ELEMENTS raises it)",
    )


# -- the metafile ----------------------------------------------------------------------
def test_metafile_values_names_and_substituted_text() -> None:
    assert metafile_error("custom: [1, 2, 3, 4, 5, 6]\n", max_metafile_values=5) == (
        "m.yaml: invalid YAML: more than 5 values written out (a metafile needs far "
        "fewer; SYNAPC_MAX_METAFILE_VALUES raises it)"
    )
    assert metafile_error("inputs: [{name: input_0}]\n", max_name_chars=4) == (
        "m.yaml: inputs[0].name: a tensor name of 7 characters (at most 4; "
        "SYNAPC_MAX_NAME_CHARS raises it)"
    )
    text = "outputs: [{format: '${ANCHORS}'}]\n"
    assert metafile_error(text, max_substituted_text_bytes=10) == (
        "m.yaml: outputs[0].format: the substitutions of this metafile add more than "
        "10 bytes (at '${ANCHORS}'; SYNAPC_MAX_SUBSTITUTED_TEXT_BYTES raises it)"
    )
    # counted in UTF-8 bytes: these 6 characters are 12 bytes
    with use_limits(max_substituted_text_bytes=12):
        assert parse_metafile(text, anchors=lambda: "é" * 6).outputs[0].format == "é" * 6
    with use_limits(max_substituted_text_bytes=11), pytest.raises(MetafileError) as error:
        parse_metafile(text, anchors=lambda: "é" * 6)
    clear(error.value, "metafile: outputs[0].format: ", "more than 11 bytes")


# -- the package and the conversion cache ----------------------------------------------
def test_package_members(converted: Path) -> None:
    with use_limits(max_package_members=1), pytest.raises(PackageError) as error:
        read_package(converted)
    clear(
        error.value,
        f"{converted}: ",
        "members exceed the limit of 1 (SYNAPC_MAX_PACKAGE_MEMBERS raises it)",
    )


def test_cached_model_info_over_the_limit_is_converted_again(tmp_path: Path) -> None:
    assert not synapc.convert(MODEL, "VS680", tmp_path, meta=META).cached
    said: list[str] = []
    with use_limits(max_model_info_bytes=10):
        again = synapc.convert(MODEL, "VS680", tmp_path, meta=META, log=said.append)
    assert not again.cached
    warning = f"warning: {tmp_path / 'cache' / 'model_info.txt'}: "
    assert any(
        s.startswith(warning)
        and "exceeds the limit of 10 (SYNAPC_MAX_MODEL_INFO_BYTES raises it)" in s
        for s in said
    ), said
    assert synapc.convert(MODEL, "VS680", tmp_path, meta=META).cached
