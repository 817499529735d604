"""model_info.txt shows what runs on the target and reads well on a terminal: element
types as the target has them (f16 float models on VS680, f32 on GENERIC and in quantized
models), quantization as `uint8 scale=... zero_point=...` or per channel, never raw
`!quant.uniform` text; lines within 120 characters, each source layer named once in its
layer's row, and every source layer somewhere in the file."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest

# `synapc.convert`, the function, before any module of the synapc.convert package is
# imported (that would bind the name `synapc.convert` to the package).
from synapc import convert
from synapc.testing.mobilenet_v2 import build_mobilenet_v2
from synapc.testing.tflite_builder import ModelBuilder, Quant

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "tiny_classifier.onnx"
EXAMPLE_META = REPO / "examples" / "tiny_classifier.yaml"
#: The widest line model_info.txt may have (unless one name alone is longer).
WIDTH = 120


def _section(info: str, title: str) -> list[str]:
    """The lines of the section starting with a line that starts with `title`, up to the
    next blank line."""
    lines = info.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = lines.index("", start)
    return lines[start + 1 : end]


def _rows(section: list[str]) -> list[dict[str, str]]:
    """The rows of a table (header, dashes, rows up to a line that is not one), by
    header name; a row's continuation lines (indented) are joined to its last cell with
    newlines."""
    header, dashes, *body = section
    spans = [m.span() for m in re.finditer(r"-+", dashes)]
    names = [header[a:b].strip() for a, b in spans]
    rows: list[dict[str, str]] = []
    for line in body:
        if line.startswith(" ") and rows:
            rows[-1][names[-1]] += "\n" + line.strip()
            continue
        if not line[:1].isdigit():  # a note under the table
            break
        starts = [a for a, _ in spans]
        ends = [*starts[1:], len(line)]
        rows.append(
            {n: line[a:b].strip() for n, a, b in zip(names, starts, ends, strict=True)}
        )
    return rows


def _layer_rows(info: str) -> list[dict[str, str]]:
    return _rows(_section(info, "Layers ("))


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[\s,]+", text) if t]


@pytest.mark.parametrize(
    ("target", "float_type"), [("VS680", "f16"), ("VS640", "f16"), ("GENERIC", "f32")]
)
def test_float_model_types_are_the_targets(
    target: str, float_type: str, tmp_path: Path
) -> None:
    info = convert(EXAMPLE, target, tmp_path, EXAMPLE_META).model_info.read_text()
    layers = _layer_rows(info)
    assert len(layers) == 8
    assert {row["output type"] for row in layers} == {float_type}
    # exchanged as float32 at the package boundary, computed in the target's float type
    want = "f32" if float_type == "f32" else f"{float_type} (I/O f32)"
    (image,) = _rows(_section(info, "Inputs"))
    (probabilities,) = _rows(_section(info, "Outputs"))
    assert image["type"] == want and probabilities["type"] == want
    assert f"float tensors compute in {float_type} on {target}" in info
    if float_type == "f16":
        assert "the application reads and writes f32" in info


def test_activation_bytes_follow_the_float_type(tmp_path: Path) -> None:
    """The plan sizes float activations as the target holds them: float16 on VS680,
    float32 on GENERIC."""
    from synapc.backends.package.reader import read_package

    def planned(target: str) -> list[int]:
        result = convert(EXAMPLE, target, tmp_path / target, EXAMPLE_META)
        plan = read_package(result.package).subgraphs[0].memory_plan
        assert plan is not None
        return [t.size for t in plan.tensors]

    f16, f32 = planned("VS680"), planned("GENERIC")
    assert f16 and [2 * n for n in f16] == f32


def _uint8_pool(path: Path) -> Path:
    """uint8 average pool: per-tensor scale 0.0235, zero point 128."""
    b = ModelBuilder()
    q = Quant(0.0235, 128)
    x = b.input("image", [1, 4, 4, 3], np.uint8, quant=q)
    y = b.tensor("pooled", [1, 2, 2, 3], np.uint8, quant=q)
    b.op(
        "AVERAGE_POOL_2D",
        [x],
        [y],
        padding="VALID",
        stride_w=2,
        stride_h=2,
        filter_width=2,
        filter_height=2,
    )
    b.output(y)
    return b.save(path)


def _per_channel_quantize(path: Path) -> Path:
    """float32 input quantized to int8 with one scale per channel (axis 3, 16
    channels)."""
    b = ModelBuilder()
    x = b.input("x", [1, 2, 2, 16], np.float32)
    scales = np.linspace(0.01, 0.16, 16)
    y = b.tensor("q", [1, 2, 2, 16], np.int8, quant=Quant(scales, 0, axis=3))
    b.op("QUANTIZE", [x], [y])
    b.output(y)
    return b.save(path)


def test_per_tensor_quantization(tmp_path: Path) -> None:
    path = _uint8_pool(tmp_path / "uint8.tflite")
    info = convert(path, "VS680", tmp_path / "out").model_info.read_text()
    assert "!quant" not in info
    want = "uint8 scale=0.0235 zero_point=128"
    (layer,) = _layer_rows(info)
    assert layer["layer"] == "pooled" and layer["output type"] == want
    (image,) = _rows(_section(info, "Inputs"))
    (pooled,) = _rows(_section(info, "Outputs"))
    assert image["type"] == want and pooled["type"] == want


def test_per_channel_quantization_and_float_edges(tmp_path: Path) -> None:
    path = _per_channel_quantize(tmp_path / "per_channel.tflite")
    info = convert(path, "VS680", tmp_path / "out").model_info.read_text()
    assert "!quant" not in info
    want = "int8 per-channel axis=3 (16 channels)"
    (layer,) = _layer_rows(info)
    assert layer["type"] == "quantize" and layer["output type"] == want
    (q,) = _rows(_section(info, "Outputs"))
    assert q["type"] == want
    # a model with quantized tensors keeps its float tensors in float32, even on VS680
    (x,) = _rows(_section(info, "Inputs"))
    assert x["type"] == "f32"
    assert "float tensors compute in f32 on VS680 (the model has quantized" in info


def test_shorten() -> None:
    from synapc.convert.model_info import shorten

    name = "/mobilenet_v2/features/block10/expand/relu6/Clip"
    short = shorten(name, 40)
    assert len(short) == 40 and "..." in short
    head, tail = short.split("...")
    assert name.startswith(head) and name.endswith(tail)
    assert shorten("conv1", 40) == "conv1"


def test_fused_lists_wrap_under_their_column(tmp_path: Path) -> None:
    model = onnx.load(EXAMPLE)
    for node in model.graph.node:  # conv1 -> conv1_conv, conv1.bn -> ...
        node.name = f"{node.name}_{node.op_type.lower()}"
    onnx.save(model, tmp_path / "renamed.onnx")
    result = convert(tmp_path / "renamed.onnx", "VS680", tmp_path / "out", EXAMPLE_META)
    section = _section(result.model_info.read_text(), "Layers (")
    column = section[0].index("fused with")
    (row,) = [i for i, line in enumerate(section) if line.split()[1:2] == ["conv1_conv"]]
    first, more = section[row], section[row + 1]
    assert first[column:] == "conv1.bn_batchnormalization,"
    assert more == " " * column + "relu1_relu, pool1_maxpool"
    assert max(len(line) for line in section) <= WIDTH


def _mobilenet_v2(path: Path, long_names: bool) -> list[str]:
    """A small MobileNetV2 (width 0.35, 32x32); with `long_names` its nodes are named
    like exported PyTorch paths (~50 characters). Returns the node names."""
    model = build_mobilenet_v2(0.35, 32, 10)
    if long_names:
        for node in model.graph.node:
            node.name = (
                f"/mobilenet_v2/features/{node.name.replace('.', '/')}/{node.op_type}"
            )
    onnx.save(model, path)
    return [node.name for node in model.graph.node]


def _int8_long_names(path: Path) -> list[str]:
    """An int8 conv + relu + max pool + fully connected whose tensors have TFLite's long
    joined names. Returns the source layer (output tensor) names."""
    rng = np.random.default_rng(3)
    b = ModelBuilder()
    conv_name = (
        "sequential/conv2d/Relu;sequential/conv2d/BiasAdd;sequential/conv2d/Conv2D;"
        "sequential/conv2d/BiasAdd/ReadVariableOp"
    )
    pool_name = "sequential/max_pooling2d/MaxPool"
    flat_name = "sequential/flatten/Reshape"
    fc_name = "StatefulPartitionedCall:0"
    x = b.input("serving_default_input:0", [1, 8, 8, 3], np.int8, quant=Quant(0.02, -5))
    w_scale = np.full(8, 0.01)
    w = b.constant(
        "sequential/conv2d/Conv2D/weights",
        rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8),
        quant=Quant(w_scale, 0, axis=0),
    )
    bias = b.constant(
        "sequential/conv2d/BiasAdd/bias",
        np.zeros(8, np.int32),
        quant=Quant(0.02 * w_scale, 0, axis=0),
    )
    conv = b.tensor(conv_name, [1, 8, 8, 8], np.int8, quant=Quant(0.05, -128))
    b.op(
        "CONV_2D",
        [x, w, bias],
        [conv],
        padding="SAME",
        stride_w=1,
        stride_h=1,
        fused_activation_function="RELU",
    )
    pool = b.tensor(pool_name, [1, 4, 4, 8], np.int8, quant=Quant(0.05, -128))
    b.op(
        "MAX_POOL_2D",
        [conv],
        [pool],
        padding="VALID",
        stride_w=2,
        stride_h=2,
        filter_width=2,
        filter_height=2,
    )
    flat = b.tensor(flat_name, [1, 128], np.int8, quant=Quant(0.05, -128))
    shape = b.constant("sequential/flatten/Const", np.array([1, 128], np.int32))
    b.op("RESHAPE", [pool, shape], [flat])
    fw = b.constant(
        "sequential/dense/MatMul",
        rng.integers(-127, 128, (5, 128)).astype(np.int8),
        quant=Quant(0.01, 0),
    )
    fb = b.constant(
        "sequential/dense/BiasAdd/ReadVariableOp",
        np.zeros(5, np.int32),
        quant=Quant(0.05 * 0.01, 0),
    )
    logits = b.tensor(fc_name, [1, 5], np.int8, quant=Quant(0.1, 3))
    b.op("FULLY_CONNECTED", [flat, fw, fb], [logits])
    b.output(logits)
    b.save(path)
    return [conv_name, pool_name, flat_name, fc_name]


@pytest.mark.parametrize("kind", ["mobilenet_v2", "mobilenet_v2_long_names", "int8"])
def test_lines_fit_and_every_source_layer_is_named_once(kind: str, tmp_path: Path) -> None:
    if kind == "int8":
        path = tmp_path / "int8.tflite"
        names = _int8_long_names(path)
        fused_pair = (names[0], names[1])  # conv + relu with its max pool
    else:
        path = tmp_path / "mobilenet_v2.onnx"
        names = _mobilenet_v2(path, kind.endswith("long_names"))
        fused_pair = (names[6], names[7])  # block0.project conv with its batch norm
    info = convert(path, "VS680", tmp_path / "out").model_info.read_text()
    assert "!quant" not in info

    too_long = [line for line in info.splitlines() if len(line) > WIDTH]
    assert not too_long, too_long
    # every source layer is in the file, in full
    tokens = set(_tokens(info))
    missing = [name for name in names if name not in tokens]
    assert not missing, missing

    # each layer's row (with its continuation lines) names a source layer once
    section = _section(info, "Layers (")
    rows: list[list[str]] = []
    for line in section[2:]:
        if line.startswith(" "):
            rows[-1].append(line)
        else:
            rows.append([line])
    known = set(names)
    for row in rows:
        named = [t for t in _tokens("\n".join(row)) if t in known]
        assert len(named) == len(set(named)), row

    # a fused layer: its own name (shortened, then in full below the table) in the
    # layer column, its other source layer in full in its own row
    own, other = fused_pair
    (row,) = [row for row in rows if other in _tokens("\n".join(row))]
    index, label = row[0].split()[:2]
    if label != own:
        assert "..." in label and len(label) <= 40
        head, tail = label.split("...")
        assert own.startswith(head) and (own.endswith(tail) or tail == "")
        full_names = _rows(_section(info, "Full names of the layer names shortened"))
        assert {"#": index, "layer": own} in full_names


def test_memory_plan_section_per_subgraph(tmp_path: Path) -> None:
    """Each subgraph's plan: the DDR arena against its lower bound, the peak's layer,
    the SRAM's share, and the buffers placed by rule; the package holds the same plan.
    On GENERIC (no SRAM) every intermediate is in the arena, here at the lower bound."""
    from synapc.backends.package.reader import read_package

    for target, sram in (("VS680", "of 1048576 bytes hold"), ("GENERIC", "SRAM: 0 of 0")):
        result = convert(EXAMPLE, target, tmp_path / target, EXAMPLE_META)
        info = result.model_info.read_text()
        section = info.split("Memory plan of subgraph 0 (", 1)[1].split("\n\n", 1)[0]
        bound = int(re.search(r"DDR arena lower bound .*: (\d+)", section).group(1))
        arena = int(re.search(r"DDR arena planned: (\d+)", section).group(1))
        assert arena == bound and "(overhead 0.0 %" in section
        assert "peak of live tensors at layer" in section and sram in section
        plan = read_package(result.package).subgraphs[0].memory_plan
        assert plan is not None and plan.figures["arena"] == arena
        in_arena = [t for t in plan.tensors if t.memory == "ddr"]
        assert all(t.offset % 64 == 0 and t.offset + t.size <= arena for t in in_arena)
    assert arena > 0 and len(in_arena) == len(plan.tensors)
