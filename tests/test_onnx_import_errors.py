"""Bad ONNX input gives one clear line naming the file and the node, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import synapc

BIN = Path(sys.executable).parent


def save(tmp_path: Path, nodes: list[onnx.NodeProto], opset: int = 17, **shapes) -> Path:
    """A float graph of `nodes` from input x [1, 3, 8, 8] to output y."""
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(
                "x", TensorProto.FLOAT, shapes.get("x", [1, 3, 8, 8])
            )
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def run_import(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "synapc"), "import", str(path), "--no-weights", *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line_cli_error(path: Path, message: str, *extra: str) -> None:
    result = run_import(path, *extra)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "content",
    [
        lambda: np.random.default_rng(3).bytes(2048),
        lambda: b"\x08\x07\x12\x04abcd\x3a\xff\xff\xff",
        lambda: b"",
    ],
    ids=["random-bytes", "truncated-protobuf", "empty"],
)
def test_corrupt_onnx_is_a_one_line_error(tmp_path, content) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(content())
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    text = str(error.value)
    assert str(path) in text and "\n" not in text
    assert "corrupt ONNX model" in text or "not an ONNX model" in text
    assert_one_line_cli_error(path, str(path))


def test_unsupported_operator_names_op_type_node_and_opset(tmp_path) -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="first_relu"),
        helper.make_node("Unique", ["r"], ["y"], name="the_unique"),
    ]
    path = save(tmp_path, nodes, opset=15)
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    text = str(error.value)
    assert "node 'the_unique' (Unique, opset 15): operator is not supported" in text
    assert "\n" not in text
    assert_one_line_cli_error(path, "(Unique, opset 15)")


def test_unknown_domain_is_named(tmp_path) -> None:
    nodes = [helper.make_node("Fancy", ["x"], ["y"], name="n0", domain="com.example")]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
    )
    path = tmp_path / "domain.onnx"
    onnx.save(model, str(path))
    with pytest.raises(synapc.SynapcError, match=r"in domain 'com\.example'"):
        synapc.import_model(path)


def test_dynamic_input_needs_input_shapes(tmp_path) -> None:
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    path = save(tmp_path, nodes, x=["batch", 3, "h", "w"])
    with pytest.raises(synapc.SynapcError, match=r"input_shapes=\{'x'"):
        synapc.import_model(path)
    model = synapc.import_model(path, input_shapes={"x": [1, 3, 5, 7]})
    assert model.inputs[0].shape == (1, 3, 5, 7)
    assert_one_line_cli_error(path, "dynamic shape")
    assert run_import(path, "--input-shape", "x=1,3,5,7").returncode == 0
    with pytest.raises(synapc.SynapcError, match=r"gives \[1, 4, 5, 7\]"):
        synapc.import_model(path, input_shapes=[[1, 4, 5, 7]])


def test_symbolic_batch_defaults_to_one(tmp_path) -> None:
    path = save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], x=["N", 3, 4, 4])
    model = synapc.import_model(path)
    assert model.inputs[0].shape == (1, 3, 4, 4)


def test_external_data_is_read(tmp_path) -> None:
    weights = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
    init = onnx.numpy_helper.from_array(weights, "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [init],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # onnxruntime, the reference here, reads up to IR 13
    path = tmp_path / "ext.onnx"
    onnx.save(
        model, str(path), save_as_external_data=True, location="ext.bin", size_threshold=0
    )
    assert (tmp_path / "ext.bin").is_file()
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    out = synapc.compile(synapc.import_model(path), "GENERIC").run([x])[0]
    import onnxruntime as ort

    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"x": x}
    )[0]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    (tmp_path / "ext.bin").unlink()
    with pytest.raises(synapc.SynapcError, match="external data"):
        synapc.import_model(path)
