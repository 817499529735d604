"""Metafile inputs in `synapc convert`: a named input may leave out `shape` where the
model's shape is static, and every problem with the inputs' shapes is said in the
metafile's words (`inputs[i].shape` and the input's name), never with the importer's
`input_shapes` argument (synapc/convert/signature.py, synapc/metafile/parse.py)."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

import synapc

# `synapc.convert` (the function) first: importing the synapc.convert package before it
# resolves would leave the attribute bound to the package module for every later test
from synapc import convert
from synapc.convert import signature
from synapc.metafile import Metafile, load_metafile, parse_metafile

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tiny_classifier.onnx"


def _meta(tmp_path: Path, text: str) -> tuple[Metafile, str]:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return load_metafile(path), str(path)


def _import(model: Path, tmp_path: Path, text: str) -> synapc.Model:
    meta, where = _meta(tmp_path, text)
    return signature.import_with_metafile(model, meta, where)


def _error(model: Path, tmp_path: Path, text: str) -> str:
    with pytest.raises(synapc.SynapcError) as info:
        _import(model, tmp_path, text)
    message = str(info.value)
    assert "input_shapes" not in message
    return message


def _dynamic_classifier(tmp_path: Path, dims: tuple[int, ...] = (0, 2, 3)) -> Path:
    """examples/tiny_classifier.onnx with symbolic dimensions `dims` of its input."""
    proto = onnx.load(EXAMPLE)
    shape = proto.graph.input[0].type.tensor_type.shape
    for d in dims:
        shape.dim[d].dim_param = f"d{d}"
    path = tmp_path / "dynamic.onnx"
    onnx.save(proto, path)
    return path


def _two_inputs(tmp_path: Path, b_shape: tuple[int | str, ...] = (1, 4)) -> Path:
    """y = a + b with a: [?, 4] (a dynamic batch) and b: `b_shape`."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        "add",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b_shape)),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "add.onnx"
    onnx.save(proto, path)
    return path


def test_a_named_input_may_leave_out_its_shape() -> None:
    meta = parse_metafile("inputs:\n  - name: image\n    means: [1, 2, 3]\n", "m.yaml")
    (entry,) = meta.inputs
    assert (entry.name, entry.shape, entry.means) == ("image", None, (1.0, 2.0, 3.0))


def test_convert_keeps_a_static_shape_the_metafile_leaves_out(tmp_path: Path) -> None:
    meta = tmp_path / "m.yaml"
    meta.write_text(
        "inputs:\n  - name: image\n    means: [123.675, 116.28, 103.53]\n"
        "    scale: 58.4\n    format: bgr\n"
    )
    convert(EXAMPLE, "VS680", tmp_path / "out", meta)
    (image,) = synapc.Network(tmp_path / "out" / "model.synap").inputs
    assert (image.name, image.shape, image.layout) == ("image", (1, 3, 64, 64), "nchw")
    assert image.means == pytest.approx((123.675, 116.28, 103.53))
    assert image.scale == pytest.approx(58.4) and image.format == "bgr"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "inputs:\n  - name: image\n    shape: [1, 3, 32, 32]\n",
            "inputs[0].shape: [1, 3, 32, 32] does not match input 'image' of shape "
            "[1, 3, 64, 64]",
        ),
        (
            "inputs:\n  - shape: [1, 3, 64]\n",
            "inputs[0].shape: [1, 3, 64] does not match input 'image' of shape "
            "[1, 3, 64, 64]",
        ),
    ],
)
def test_a_wrong_shape_names_the_field_and_the_input(
    tmp_path: Path, text: str, problem: str
) -> None:
    assert _error(EXAMPLE, tmp_path, text) == f"{tmp_path / 'm.yaml'}: {problem}"


def test_a_dynamic_input_takes_the_metafile_shape(tmp_path: Path) -> None:
    dynamic = _dynamic_classifier(tmp_path)
    model = _import(
        dynamic, tmp_path, "inputs:\n  - name: image\n    shape: [2, 3, 32, 48]\n"
    )
    assert model.inputs[0].shape == (2, 3, 32, 48)
    # only the batch is dynamic: it defaults to 1, and `shape` may be left out
    batch = _dynamic_classifier(tmp_path, dims=(0,))
    model = _import(batch, tmp_path, "inputs:\n  - name: image\n    scale: 2\n")
    assert model.inputs[0].shape == (1, 3, 64, 64)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "inputs:\n  - name: image\n    means: [0]\n",
            "inputs[0].shape: required for input 'image' (its shape [?, 3, ?, ?] is not "
            "static)",
        ),
        (
            "inputs:\n  - means: [0]\n",
            "inputs[0].shape: required for input 'image' (its shape [?, 3, ?, ?] is not "
            "static)",
        ),
        (
            "inputs:\n  - name: image\n    shape: [1, 4, 32, 32]\n",
            "inputs[0].shape: [1, 4, 32, 32] does not match input 'image' of shape "
            "[?, 3, ?, ?]",
        ),
        (
            "inputs:\n  - name: image\n    shape: [1, 3, 32]\n",
            "inputs[0].shape: [1, 3, 32] does not match input 'image' of shape "
            "[?, 3, ?, ?]",
        ),
        (
            "outputs:\n  - format: confidence_array\n",
            "inputs: input 'image' has no entry and needs a static shape (its shape "
            "[?, 3, ?, ?] is not static); add inputs[0] with name: image and its shape",
        ),
    ],
)
def test_a_dynamic_input_needs_its_shape_in_the_metafile(
    tmp_path: Path, text: str, problem: str
) -> None:
    dynamic = _dynamic_classifier(tmp_path)
    assert _error(dynamic, tmp_path, text) == f"{tmp_path / 'm.yaml'}: {problem}"


def test_without_a_metafile_the_error_says_to_give_one(tmp_path: Path) -> None:
    dynamic = _dynamic_classifier(tmp_path)
    with pytest.raises(synapc.SynapcError) as info:
        signature.import_with_metafile(dynamic, parse_metafile("{}"), "metafile")
    assert str(info.value) == (
        f"{dynamic}: input 'image' needs a static shape (its shape [?, 3, ?, ?] is not "
        "static); give it in a metafile (--meta) as inputs[0].shape, with "
        "inputs[0].name: image"
    )


def test_named_entries_in_another_order_name_their_own_index(tmp_path: Path) -> None:
    add = _two_inputs(tmp_path)
    text = "inputs:\n  - name: b\n    shape: [1, 4]\n  - name: a\n    shape: [2, 5]\n"
    assert _error(add, tmp_path, text) == (
        f"{tmp_path / 'm.yaml'}: inputs[1].shape: [2, 5] does not match input 'a' of "
        "shape [?, 4]"
    )
    # the check after import (TFLite's path) names the entry's index too
    meta, where = _meta(tmp_path, "inputs:\n  - name: b\n  - name: a\n    shape: [3, 4]\n")
    model = synapc.import_model(add)
    bound = signature.bind_inputs(model, meta, where)
    with pytest.raises(synapc.SynapcError, match=r"m\.yaml: inputs\[1\]\.shape: \[3, 4\] "):
        signature.check_input_shapes(model, bound, where, meta)


def test_unnamed_entries_bind_in_order_with_or_without_shapes(tmp_path: Path) -> None:
    add = _two_inputs(tmp_path, b_shape=("m", 4))
    model = _import(add, tmp_path, "inputs:\n  - shape: [3, 4]\n  - means: [0]\n")
    assert [i.shape for i in model.inputs] == [(3, 4), (1, 4)]
    # b's batch alone is dynamic; a second dynamic dimension needs the shape
    add = _two_inputs(tmp_path, b_shape=("m", "k"))
    text = "inputs:\n  - shape: [3, 4]\n  - means: [0]\n"
    assert _error(add, tmp_path, text) == (
        f"{tmp_path / 'm.yaml'}: inputs[1].shape: required for input 'b' (its shape "
        "[?, ?] is not static)"
    )
    text = "inputs:\n  - name: a\n    shape: [1, 4]\n"
    assert _error(add, tmp_path, text) == (
        f"{tmp_path / 'm.yaml'}: inputs: input 'b' has no entry and needs a static shape "
        "(its shape [?, ?] is not static); add inputs[1] with name: b and its shape"
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit.trace
def test_torchscript_shapes_are_asked_for_in_metafile_words(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()
    path = tmp_path / "net.pt"
    torch.jit.trace(net, torch.zeros(1, 3, 8, 8)).save(str(path))
    names = signature._torchscript_argument_names(path)
    assert len(names) == 1
    (name,) = names
    for text, problem in [
        (
            f"inputs:\n  - name: {name}\n    means: [0]\n",
            f"inputs[0].shape: required for input '{name}' (TorchScript models record "
            "no input shapes)",
        ),
        (
            "inputs:\n  - means: [0]\n",
            f"inputs[0].shape: required for input '{name}' (TorchScript models record "
            "no input shapes)",
        ),
        (
            "outputs:\n  - format: x\n",
            f"inputs: input '{name}' has no entry and needs a static shape (TorchScript "
            f"models record no input shapes); add inputs[0] with name: {name} and its "
            "shape",
        ),
    ]:
        assert _error(path, tmp_path, text) == f"{tmp_path / 'm.yaml'}: {problem}"
    model = _import(path, tmp_path, "inputs:\n  - shape: [1, 3, 8, 8]\n")
    assert model.inputs[0].shape == (1, 3, 8, 8)


def test_convert_speaks_the_metafile_words(tmp_path: Path) -> None:
    dynamic = _dynamic_classifier(tmp_path)
    meta = tmp_path / "m.yaml"
    for text, problem in [
        (
            "inputs:\n  - name: image\n    means: [0]\n",
            "inputs[0].shape: required for input 'image' (its shape [?, 3, ?, ?] is not "
            "static)",
        ),
        (
            "inputs:\n  - shape: [1, 3, 32]\n",
            "inputs[0].shape: [1, 3, 32] does not match input 'image' of shape "
            "[?, 3, ?, ?]",
        ),
    ]:
        meta.write_text(text)
        with pytest.raises(synapc.SynapcError) as info:
            convert(dynamic, "VS680", tmp_path / "out", meta)
        assert str(info.value) == f"{meta}: {problem}"
