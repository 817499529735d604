"""The conversion metafile model (`synapc.metafile`): every key of METAFILE.md parsed into
its dataclass, each kind of mistake reported on one line with the file and field path,
the `${ENV:..}` / `${FILE:..}` / `${ANCHORS}` substitutions, unsupported features named,
and the anchors of a `TFLite_Detection_PostProcess` layer read from a `.tflite` file."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from synapc.errors import SynapcError
from synapc.metafile import (
    InputSpec,
    Metafile,
    MetafileError,
    OutputSpec,
    PreprocessSpec,
    QuantizationSpec,
    load_metafile,
    model_anchors,
    parse_metafile,
)
from synapc.testing.tflite_builder import ModelBuilder, Quant, flexbuffer_options

FULL = """\
delegate: npu
data_layout: nchw
input_format: bgr
output_format: confidence_array
dequantize_outputs: false
security:
  secure: true
inputs:
  - name: image
    shape: [1, 3, 224, 224]
    means: [123.675, 116.28, 103.53]
    scale: 58.4
    format: rgb keep_proportions=1 fill_color=0
    security: any
    preprocess:
      type: nv12
      size: [1080, 1920]
      crop: true
      color_range: full
      color_matrix: bt709
      resize: nearest
  - name: mask
    shape: [1, 1, 224, 224]
    means: 128
outputs:
  - name: logits
    dequantize: true
    format: confidence_array class_index_base=-1
    shape: [1, 1000]
    security: secure
  - name: boxes
quantization:
  dataset: [images/*.jpg, masks/*.npy]
  data_type:
    '*': int8
    INPUTS: int16
    conv1...: float16
    '@12': int16
    '7': int16
  scheme: perchannel_symmetric_affine
  mode: full
  algorithm: percentile
  options:
    percentile: 99.9
    bins: 2048
custom:
  anything: [1, 2, {x: y}]
"""


def parse(text: str, **kwargs: object) -> Metafile:
    """Parse dedented `text` as if read from "m.yaml"."""
    return parse_metafile(textwrap.dedent(text), Path("m.yaml"), **kwargs)  # type: ignore[arg-type]


def error_of(text: str, **kwargs: object) -> str:
    """The one-line message parsing dedented `text` raises."""
    with pytest.raises(MetafileError) as info:
        parse(text, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    assert isinstance(info.value, SynapcError)
    return message


# --------------------------------------------------------------------------------------
# Valid metafiles
# --------------------------------------------------------------------------------------


def test_full_metafile_parses_every_key(tmp_path: Path) -> None:
    path = tmp_path / "meta.yaml"
    path.write_text(FULL)
    meta = load_metafile(path)
    assert meta.path == path
    assert meta.delegate == "npu"
    assert meta.data_layout == "nchw"
    assert meta.input_format == "bgr"
    assert meta.output_format == "confidence_array"
    assert meta.dequantize_outputs is False
    assert meta.security == {"secure": True}
    assert meta.custom == {"anything": [1, 2, {"x": "y"}]}
    image, mask = meta.inputs
    assert image == InputSpec(
        name="image",
        shape=(1, 3, 224, 224),
        means=(123.675, 116.28, 103.53),
        scale=58.4,
        format="rgb keep_proportions=1 fill_color=0",
        format_name="rgb",
        format_attrs={"keep_proportions": "1", "fill_color": "0"},
        security="any",
        preprocess=PreprocessSpec(
            type="nv12",
            size=(1080, 1920),
            crop=True,
            color_range="full",
            color_matrix="bt709",
            resize="nearest",
        ),
    )
    # input_format is the default format of an entry without one.
    assert (mask.means, mask.scale, mask.format, mask.format_name) == (
        (128.0,),
        None,
        "bgr",
        "bgr",
    )
    assert mask.format_attrs == {}
    assert mask.preprocess is None
    assert meta.outputs == (
        OutputSpec(
            name="logits",
            dequantize=True,
            format="confidence_array class_index_base=-1",
            shape=(1, 1000),
            security="secure",
        ),
        OutputSpec(
            name="boxes",
            dequantize=False,
            format="confidence_array",
            shape=None,
            security=None,
        ),
    )
    assert meta.quantization == QuantizationSpec(
        dataset=(str(tmp_path / "images/*.jpg"), str(tmp_path / "masks/*.npy")),
        data_type=(
            ("*", "int8"),
            ("INPUTS", "int16"),
            ("conv1...", "float16"),
            ("@12", "int16"),
            ("7", "int16"),
        ),
        scheme="perchannel_symmetric_affine",
        mode="full",
        algorithm="percentile",
        options={"percentile": 99.9, "bins": 2048},
    )
    assert meta.warnings() == [
        "security: recorded; synapc does not encrypt models",
        "inputs[0].security: recorded; synapc does not encrypt models",
        "outputs[0].security: recorded; synapc does not encrypt models",
    ]


def test_defaults() -> None:
    meta = parse("{}")
    assert meta.delegate == "default"
    assert meta.data_layout == "default"
    assert (meta.input_format, meta.output_format) == (None, None)
    assert meta.dequantize_outputs is False
    assert (meta.security, meta.quantization, meta.custom) == (None, None, None)
    assert (meta.inputs, meta.outputs) == ((), ())
    assert meta.unsupported() == [] and meta.warnings() == []
    meta.require_supported()

    meta = parse(
        """
        dequantize_outputs: true
        inputs: [{}]
        outputs: [{}, {dequantize: false}]
        quantization: {dataset: random}
        """
    )
    (spec,) = meta.inputs
    assert (spec.name, spec.shape, spec.means, spec.scale) == (None, None, None, None)
    assert (spec.format, spec.format_name, spec.format_attrs) == ("", "rgb", {})
    # dequantize_outputs dequantizes every output.
    assert [o.dequantize for o in meta.outputs] == [True, True]
    assert [o.format for o in meta.outputs] == ["", ""]
    q = meta.quantization
    assert q is not None
    assert (q.dataset, q.data_type, q.scheme, q.mode, q.algorithm, q.options) == (
        ("random",),
        "uint8",
        "default",
        "standard",
        "standard",
        {},
    )


def test_null_values_mean_not_given_and_preprocess_none() -> None:
    meta = parse(
        """
        delegate:
        quantization:
        inputs:
          - name: 7
            shape: [1, 4]
            preprocess: {type: none}
          - name: x
            shape: [2]
            preprocess: {type: ''}
        """
    )
    assert meta.delegate == "default" and meta.quantization is None
    assert [i.name for i in meta.inputs] == ["7", "x"]  # `name: 7` reads as an int
    assert [i.preprocess for i in meta.inputs] == [None, None]


def test_delegate_map_and_index_keys() -> None:
    meta = parse(
        """
        delegate:
          '*': npu
          conv3...: cpu
          63: gpu
          '@4': cpu
        """
    )
    assert meta.delegate == (
        ("*", "npu"),
        ("conv3...", "cpu"),
        ("63", "gpu"),
        ("@4", "cpu"),
    )


def test_relative_dataset_without_path_and_absolute_globs(tmp_path: Path) -> None:
    absolute = str(tmp_path / "a" / "*.npy")
    meta = parse_metafile(f"quantization:\n  dataset: [x/*.png, {absolute}]\n")
    assert meta.quantization is not None
    assert meta.quantization.dataset == ("x/*.png", absolute)
    nested = tmp_path / "sub"
    nested.mkdir()
    (nested / "m.yaml").write_text("quantization:\n  dataset: ../data/*.jpg\n")
    meta = load_metafile(nested / "m.yaml")
    assert meta.quantization is not None
    assert meta.quantization.dataset == (str(tmp_path / "data" / "*.jpg"),)


def test_canonical_is_deterministic_and_tracks_every_field(tmp_path: Path) -> None:
    path = tmp_path / "meta.yaml"
    path.write_text(FULL)
    first = load_metafile(path).canonical()
    assert first == load_metafile(path).canonical()
    data = json.loads(first)
    assert set(data) == {
        "delegate",
        "data_layout",
        "input_format",
        "output_format",
        "dequantize_outputs",
        "security",
        "inputs",
        "outputs",
        "quantization",
        "custom",
    }
    assert data["inputs"][0]["preprocess"]["size"] == [1080, 1920]
    assert data["quantization"]["data_type"][2] == ["conv1...", "float16"]
    changed = FULL.replace("scale: 58.4", "scale: 58.5")
    path.write_text(changed)
    assert load_metafile(path).canonical() != first
    changed = FULL.replace("anything: [1, 2", "anything: [1, 3")
    path.write_text(changed)
    assert load_metafile(path).canonical() != first
    # The same content elsewhere with the same resolved datasets gives the same key.
    other = tmp_path / "again.yaml"
    other.write_text(FULL)
    assert load_metafile(other).canonical() == first


def test_frozen_and_hashable() -> None:
    meta = parse(FULL)
    assert hash(meta) == hash(parse(FULL))
    with pytest.raises(AttributeError):
        meta.data_layout = "nhwc"  # type: ignore[misc]


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "m.yaml: empty metafile"),
        ("- a\n- b\n", "m.yaml: expected a mapping at the top level, got ['a', 'b']"),
        ("delegate: tpu\n", "m.yaml: delegate: expected one of 'default', 'npu', 'gpu',"),
        ("delegate: 3\n", "m.yaml: delegate: expected one of"),
        ("delegate: {'@x': cpu}\n", "m.yaml: delegate['@x']: expected '@' followed by"),
        ("delegate: {conv: tpu}\n", "m.yaml: delegate['conv']: expected one of"),
        ("delegate: {'...': cpu}\n", "m.yaml: delegate['...']: expected a layer name"),
        ("delegate: {}\n", "m.yaml: delegate: expected a non-empty mapping"),
        ("data_layout: NHWC\n", "m.yaml: data_layout: expected one of 'default', 'nchw'"),
        (
            "dequantize_outputs: 1\n",
            "m.yaml: dequantize_outputs: expected true or false, got 1",
        ),
        (
            "dequantize_outputs: 'yes'\n",
            "dequantize_outputs: expected true or false, got 'yes'",
        ),
        ("security: on\n", "m.yaml: security: expected a mapping, got true"),
        ("input_format: 5\n", "m.yaml: input_format: expected a string, got 5"),
        ("input_format: yuv\n", "m.yaml: input_format: unknown input format 'yuv'"),
        (
            "inputs: {name: x}\n",
            "m.yaml: inputs: expected a list of mappings, got a mapping",
        ),
        ("inputs: [3]\n", "m.yaml: inputs[0]: expected a mapping, got 3"),
        ("inputs:\n  -\n", "m.yaml: inputs[0]: expected a mapping, got nothing (null)"),
        (
            "inputs: [{shape: abc}]\n",
            "m.yaml: inputs[0].shape: expected a list of positive integers, got 'abc'",
        ),
        ("inputs: [{shape: [1, 0]}]\n", "inputs[0].shape: expected a list of positive int"),
        ("inputs: [{shape: [1, true]}]\n", "inputs[0].shape: expected a list of positive"),
        (
            "inputs: [{name: ''}]\n",
            "m.yaml: inputs[0].name: expected a tensor name, got ''",
        ),
        (
            "inputs: [{name: a, shape: [1]}, {shape: [1]}]\n",
            "m.yaml: inputs[1].name: either all inputs are named or none",
        ),
        (
            "inputs: [{shape: [1]}, {name: a, shape: [1]}]\n",
            "m.yaml: inputs[1].name: either all inputs are named or none",
        ),
        (
            "inputs: [{name: a, shape: [1]}, {name: a, shape: [2]}]\n",
            "m.yaml: inputs[1].name: 'a' is already used by inputs[0]",
        ),
        (
            "inputs: [{means: [1, x]}]\n",
            "m.yaml: inputs[0].means[1]: expected a number, got",
        ),
        ("inputs: [{means: []}]\n", "m.yaml: inputs[0].means: expected a number or a list"),
        (
            "inputs: [{means: true}]\n",
            "m.yaml: inputs[0].means: expected a number or a list",
        ),
        ("inputs: [{means: .nan}]\n", "m.yaml: inputs[0].means: expected a finite number"),
        ("inputs: [{scale: 0}]\n", "m.yaml: inputs[0].scale: must not be 0"),
        ("inputs: [{scale: [1, 2]}]\n", "m.yaml: inputs[0].scale: expected a number, got"),
        (
            "inputs: [{format: gray}]\n",
            "m.yaml: inputs[0].format: unknown input format 'gray'",
        ),
        (
            "inputs: [{format: rgb bgr}]\n",
            "inputs[0].format: expected key=value attributes",
        ),
        ("inputs: [{format: 'rgb =1'}]\n", "inputs[0].format: attribute '=1' has no name"),
        (
            "inputs: [{format: rgb a=1 a=2}]\n",
            "inputs[0].format: attribute 'a' is given twice",
        ),
        ("inputs: [{format: rgb keep_proportions=2}]\n", "keep_proportions must be 0 or 1"),
        ("inputs: [{format: rgb fill_color=red}]\n", "fill_color must be an integer"),
        ("inputs: [{security: [a]}]\n", "m.yaml: inputs[0].security: expected a string"),
        ("inputs: [{preprocess: nv12}]\n", "inputs[0].preprocess: expected a mapping, got"),
        ("inputs: [{preprocess: {size: [1, 2]}}]\n", "inputs[0].preprocess.type: required"),
        (
            "inputs: [{preprocess: {type: yuv}}]\n",
            "inputs[0].preprocess.type: expected one",
        ),
        (
            "inputs: [{preprocess: {type: none, crop: true}}]\n",
            "m.yaml: inputs[0].preprocess.crop: given but preprocess type is 'none'",
        ),
        (
            "inputs: [{preprocess: {type: gray, size: [1, 2, 3]}}]\n",
            "m.yaml: inputs[0].preprocess.size: expected [height, width], got [1, 2, 3]",
        ),
        (
            "inputs: [{preprocess: {type: float32, size: [4, 4]}}]\n",
            "m.yaml: inputs[0].preprocess.size: type 'float32' takes no size",
        ),
        (
            "inputs: [{preprocess: {type: rgb, crop: 1}}]\n",
            "preprocess.crop: expected true or",
        ),
        (
            "inputs: [{preprocess: {type: rgb, color_range: tv}}]\n",
            "m.yaml: inputs[0].preprocess.color_range: expected one of 'limited' or "
            "'full', got 'tv'",
        ),
        (
            "inputs: [{preprocess: {type: rgb, resize: cubic}}]\n",
            "preprocess.resize: expected",
        ),
        (
            "inputs: [{preprocess: {type: rgb, color_matrix: bt2020}}]\n",
            "preprocess.color_matrix: expected one of 'bt601' or 'bt709'",
        ),
        ("outputs: x\n", "m.yaml: outputs: expected a list of mappings, got 'x'"),
        (
            "outputs: [{dequantize: 'no'}]\n",
            "m.yaml: outputs[0].dequantize: expected true or",
        ),
        ("outputs: [{format: [a]}]\n", "m.yaml: outputs[0].format: expected a string, got"),
        (
            "outputs: [{shape: 3}]\n",
            "m.yaml: outputs[0].shape: expected a list of positive",
        ),
        (
            "outputs: [{name: a}, {}]\n",
            "m.yaml: outputs[1].name: either all outputs are named",
        ),
        ("quantization: [a]\n", "m.yaml: quantization: expected a mapping, got ['a']"),
        ("quantization: {dataset: 3}\n", "quantization.dataset: expected a glob or a list"),
        (
            "quantization: {dataset: []}\n",
            "quantization.dataset: expected a glob or a list",
        ),
        (
            "quantization: {dataset: [a, 3]}\n",
            "quantization.dataset[1]: expected a file glob",
        ),
        (
            "inputs: [{}, {}]\nquantization: {dataset: a/*.npy}\n",
            "m.yaml: quantization.dataset: 1 glob(s) for 2 inputs (one glob per input",
        ),
        (
            "quantization: {data_type: int4}\n",
            "quantization.data_type: expected one of 'uint8'",
        ),
        (
            "quantization: {data_type: 8}\n",
            "quantization.data_type: expected one of 'uint8'",
        ),
        (
            "quantization: {data_type: {'*': uint8, conv1: int8}}\n",
            "m.yaml: quantization.data_type: 'uint8' and 'int8' cannot both appear",
        ),
        (
            "quantization: {data_type: {conv: int4}}\n",
            "quantization.data_type['conv']: expec",
        ),
        (
            "quantization: {scheme: symmetric}\n",
            "quantization.scheme: expected one of 'default'",
        ),
        (
            "quantization: {mode: fast}\n",
            "m.yaml: quantization.mode: expected one of 'standard'",
        ),
        (
            "quantization: {algorithm: kl}\n",
            "quantization.algorithm: expected one of 'standard'",
        ),
        (
            "quantization: {options: 3}\n",
            "quantization.options: expected a mapping of option",
        ),
    ],
)
def test_field_errors(text: str, expected: str) -> None:
    assert expected in error_of(text)


@pytest.mark.parametrize(
    ("text", "field", "suggestion"),
    [
        ("deleagte: npu\n", "m.yaml: deleagte: unknown key", "did you mean 'delegate'?"),
        ("input: []\n", "m.yaml: input: unknown key", "'inputs'"),
        ("inputs: [{mean: 1}]\n", "m.yaml: inputs[0].mean: unknown key", "'means'"),
        (
            "outputs: [{dequant: true}]\n",
            "m.yaml: outputs[0].dequant: unknown",
            "'dequantize'",
        ),
        (
            "quantization: {datatype: int8}\n",
            "m.yaml: quantization.datatype: unknown",
            "'data_type'",
        ),
        (
            "inputs: [{preprocess: {typ: rgb}}]\n",
            "m.yaml: inputs[0].preprocess.typ:",
            "'type'",
        ),
        ("Outputs: []\n", "m.yaml: Outputs: unknown key", "'outputs'"),
        ("zzz: 1\n", "m.yaml: zzz: unknown key; valid keys: delegate, data_layout", ""),
        ("1: a\n", "m.yaml: 1: unknown key", "valid keys: delegate"),
    ],
)
def test_unknown_keys_name_the_closest(text: str, field: str, suggestion: str) -> None:
    message = error_of(text)
    assert message.startswith(field)
    assert suggestion in message


def test_yaml_syntax_error_gives_the_line() -> None:
    message = error_of("inputs:\n  - name: x\n    shape: [1, 2\noutputs: []\n")
    assert message.startswith("m.yaml: line ")
    assert "invalid YAML" in message
    assert error_of("delegate: npu\ndata_layout: nchw\ninputs: a: b\n") == (
        "m.yaml: line 3, column 10: invalid YAML: mapping values are not allowed here"
    )
    assert error_of("a: 1\n---\nb: 2\n").startswith("m.yaml: line 2, column 1: invalid")
    # The safe loader refuses Python tags.
    assert "could not determine a constructor" in error_of(
        "a: !!python/object:os.system x\n"
    )


def test_alias_bombs_and_self_references_are_refused() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdef":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [" + ", ".join([f"*{previous}"] * 10) + "]\n"
    message = error_of("custom:\n" + textwrap.indent(bomb, "  "))
    assert message.startswith("m.yaml: invalid YAML: more than 100000 values")
    assert "more than 100000 values" in error_of("custom: &a [1, *a]\n")


def test_duplicate_keys_are_errors() -> None:
    assert error_of("delegate: npu\ndata_layout: nchw\ndelegate: cpu\n") == (
        "m.yaml: line 3: duplicate key 'delegate'"
    )
    assert error_of("inputs:\n  - name: a\n    shape: [1]\n    name: b\n") == (
        "m.yaml: line 4: duplicate key 'name'"
    )


def test_missing_unreadable_metafile(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(MetafileError, match=r"nope\.yaml: no such metafile$"):
        load_metafile(missing)
    with pytest.raises(MetafileError, match="is a directory"):
        load_metafile(tmp_path)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(MetafileError, match="not a UTF-8 text file"):
        load_metafile(binary)


def test_error_messages_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("inputs:\n  - shape: abc\n")
    with pytest.raises(MetafileError) as info:
        load_metafile(path)
    assert str(info.value) == (
        f"{path}: inputs[0].shape: expected a list of positive integers, got 'abc'"
    )
    with pytest.raises(MetafileError, match=r"^metafile: data_layout: expected"):
        parse_metafile("data_layout: x\n")


# --------------------------------------------------------------------------------------
# Substitutions
# --------------------------------------------------------------------------------------


def test_env_substitution_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNAPC_TEST_LAYOUT", "nhwc")
    monkeypatch.setenv("SYNAPC_TEST_INPUT", "  - name: in\n    shape: [1, 8]")
    meta = parse(
        """\
        data_layout: ${ENV:SYNAPC_TEST_LAYOUT}
        inputs:
        ${ENV:SYNAPC_TEST_INPUT}
        outputs:
          - format: box w_${ENV:SYNAPC_TEST_LAYOUT}=1
        """
    )
    assert meta.data_layout == "nhwc"
    assert meta.inputs[0].name == "in" and meta.inputs[0].shape == (1, 8)
    assert meta.outputs[0].format == "box w_nhwc=1"


def test_env_substitution_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNAPC_TEST_UNSET", raising=False)
    message = error_of("delegate: npu\ndata_layout: ${ENV:SYNAPC_TEST_UNSET}\n")
    assert message == (
        "m.yaml: line 2: environment variable 'SYNAPC_TEST_UNSET' is not set "
        "(used as ${ENV:SYNAPC_TEST_UNSET})"
    )
    assert "invalid environment variable name '1X'" in error_of("delegate: ${ENV:1X}\n")


def test_file_substitution(tmp_path: Path) -> None:
    (tmp_path / "labels").mkdir()
    # YAML-special content stays intact: FILE runs on the parsed string.
    (tmp_path / "labels" / "box.txt").write_text("y_scale=10 x: {a, b} # not a comment\n\n")
    path = tmp_path / "meta.yaml"
    path.write_text(
        "outputs:\n"
        "  - format: tflite_detection_boxes ${FILE:labels/box.txt} w=1\n"
        "  - format: ${FILE:./labels/../labels/box.txt}\n"
    )
    meta = load_metafile(path)
    assert meta.outputs[0].format == (
        "tflite_detection_boxes y_scale=10 x: {a, b} # not a comment w=1"
    )
    assert meta.outputs[1].format == "y_scale=10 x: {a, b} # not a comment"
    # Absolute paths are refused (${FILE:} is confined to the metafile's folder tree;
    # this used to read the absolute path).
    path.write_text(
        "outputs:\n  - format: ${FILE:" + str(tmp_path / "labels" / "box.txt") + "}\n"
    )
    with pytest.raises(MetafileError, match="absolute paths are not allowed"):
        load_metafile(path)

    (tmp_path / "fmt.txt").write_text("bgr keep_proportions=0\n")
    path.write_text("input_format: ${FILE:fmt.txt}\ninputs: [{}]\n")
    meta = load_metafile(path)
    assert meta.input_format == "bgr keep_proportions=0"
    assert meta.inputs[0].format_name == "bgr"
    assert meta.inputs[0].format_attrs == {"keep_proportions": "0"}


def test_file_substitution_errors(tmp_path: Path) -> None:
    path = tmp_path / "meta.yaml"
    path.write_text("outputs:\n  - format: a ${FILE:gone.txt}\n")
    with pytest.raises(MetafileError) as info:
        load_metafile(path)
    assert str(info.value).startswith(f"{path}: outputs[0].format: ${{FILE:gone.txt}}: ")
    assert str(tmp_path / "gone.txt") in str(info.value)
    assert "no such file" in str(info.value)
    assert "outputs[0].format: unknown substitution '${FOO}'" in error_of(
        "outputs:\n  - format: a ${FOO}\n"
    )
    assert "names no file" in error_of("outputs: [{format: '${FILE:}'}]\n")


def test_anchors_substitution() -> None:
    calls: list[int] = []

    def anchors() -> str:
        calls.append(1)
        return "[[0.5,0.5,0.1,0.2]]"

    text = """
        outputs:
          - format: tflite_detection_boxes y_scale=10 anchors=${ANCHORS}
          - format: again ${ANCHORS}
        """
    meta = parse(text, anchors=anchors)
    assert meta.outputs[0].format == (
        "tflite_detection_boxes y_scale=10 anchors=[[0.5,0.5,0.1,0.2]]"
    )
    assert meta.outputs[1].format == "again [[0.5,0.5,0.1,0.2]]"
    assert calls == [1]  # computed once
    assert parse(text).outputs[0].format.endswith("anchors=[]")
    # Not asked for when no format uses it.
    parse("outputs: [{format: plain}]\n", anchors=lambda: pytest.fail("called"))


# --------------------------------------------------------------------------------------
# Unsupported features and warnings
# --------------------------------------------------------------------------------------


def test_every_feature_is_supported() -> None:
    meta = parse(FULL)
    # (preprocess: insert-preprocess; quantization: synapc.quantization; delegate:
    # assign-delegates / place-layers / partition)
    assert meta.unsupported() == []
    meta.require_supported()
    for delegate in ("default", "npu", "gpu", "cpu", "auto", "{'*': npu, '63': cpu}"):
        assert parse(f"delegate: {delegate}\n").unsupported() == []
    # Security is accepted with a warning, not refused.
    meta = parse("security: {file: k}\noutputs: [{security: any}]\n")
    assert meta.unsupported() == []
    assert len(meta.warnings()) == 2


# --------------------------------------------------------------------------------------
# Anchors of a detection model
# --------------------------------------------------------------------------------------

DETECTION_OPTIONS = {
    "max_detections": 3,
    "max_classes_per_detection": 1,
    "detections_per_class": 3,
    "use_regular_nms": False,
    "nms_score_threshold": 0.3,
    "nms_iou_threshold": 0.5,
    "num_classes": 2,
    "y_scale": 10.0,
    "x_scale": 10.0,
    "h_scale": 5.0,
    "w_scale": 5.0,
}


def detection_model(path: Path, anchors: np.ndarray, *, float16: bool = False) -> Path:
    """A .tflite file: a RELU, then TFLite_Detection_PostProcess whose anchors are a
    float32 constant, or a float16 constant behind a DEQUANTIZE."""
    count = anchors.shape[0]
    b = ModelBuilder()
    raw = b.input("raw_boxes", [1, count, 4], np.float32)
    boxes = b.tensor("boxes", [1, count, 4], np.float32)
    b.op("RELU", [raw], [boxes])
    scores = b.input("scores", [1, count, 3], np.float32)
    if float16:
        half = b.constant("anchors_f16", anchors.astype(np.float16))
        table = b.tensor("anchors", [count, 4], np.float32)
        b.op("DEQUANTIZE", [half], [table])
    else:
        table = b.constant("anchors", anchors.astype(np.float32))
    outputs = [
        b.tensor("detection_boxes", [1, 3, 4], np.float32),
        b.tensor("detection_classes", [1, 3], np.float32),
        b.tensor("detection_scores", [1, 3], np.float32),
        b.tensor("num_detections", [1], np.float32),
    ]
    b.custom_op(
        "TFLite_Detection_PostProcess",
        [boxes, scores, table],
        outputs,
        options=flexbuffer_options(DETECTION_OPTIONS),
    )
    b.output(*outputs)
    return b.save(path)


def test_model_anchors_float32(tmp_path: Path) -> None:
    anchors = np.random.default_rng(3).uniform(0, 1, (5, 4)).astype(np.float32)
    path = detection_model(tmp_path / "ssd.tflite", anchors)
    text = model_anchors(path)
    assert " " not in text
    assert json.loads(text) == anchors.tolist()  # float32 values as Python floats
    assert text == json.dumps(anchors.tolist(), separators=(",", ":"))
    # The anchors go into a metafile's format through parse_metafile.
    meta = parse(
        "outputs: [{format: 'tflite_detection_boxes anchors=${ANCHORS}'}]\n",
        anchors=lambda: model_anchors(path),
    )
    assert meta.outputs[0].format == f"tflite_detection_boxes anchors={text}"


def test_model_anchors_float16_behind_dequantize(tmp_path: Path) -> None:
    anchors = np.array([[0.5, 0.25, 0.125, 1.0], [0.1, 0.2, 0.3, 0.4]], np.float32)
    path = detection_model(tmp_path / "ssd16.tflite", anchors, float16=True)
    expected = anchors.astype(np.float16).astype(np.float32).tolist()
    assert json.loads(model_anchors(path)) == expected


def test_model_anchors_without_detection_op(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.input("x", [1, 4], np.int8, quant=Quant(0.5, 0))
    y = b.tensor("y", [1, 4], np.int8, quant=Quant(0.5, 0))
    b.op("RELU", [x], [y])
    b.output(y)
    assert model_anchors(b.save(tmp_path / "plain.tflite")) == "[]"
    onnx = tmp_path / "model.onnx"
    onnx.write_bytes(b"not read")
    assert model_anchors(onnx) == "[]"


def test_model_anchors_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"12345678")
    with pytest.raises(SynapcError, match=r"bad\.tflite: not a TFLite model"):
        model_anchors(bad)
    with pytest.raises(SynapcError, match=r"gone\.tflite: cannot read"):
        model_anchors(tmp_path / "gone.tflite")
    # Anchors computed from a model input are not constant.
    b = ModelBuilder()
    boxes = b.input("boxes", [1, 2, 4], np.float32)
    scores = b.input("scores", [1, 2, 3], np.float32)
    table = b.input("anchors", [2, 4], np.float32)
    outputs = [b.tensor(f"o{i}", [1], np.float32) for i in range(4)]
    b.custom_op("TFLite_Detection_PostProcess", [boxes, scores, table], outputs)
    b.output(*outputs)
    path = b.save(tmp_path / "dynamic.tflite")
    with pytest.raises(
        SynapcError, match=r"operator 0: the anchors \(input 2\) are not constant"
    ):
        model_anchors(path)


# --------------------------------------------------------------------------------------
# Light imports
# --------------------------------------------------------------------------------------


def test_metafile_package_imports_neither_xdsl_nor_importers(tmp_path: Path) -> None:
    anchors = np.ones((2, 4), np.float32)
    model = detection_model(tmp_path / "ssd.tflite", anchors)
    meta = tmp_path / "m.yaml"
    meta.write_text(FULL.replace("format: confidence_array\n", "format: a=${ANCHORS}\n"))
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from synapc.metafile import load_metafile, model_anchors\n"
        f"m = load_metafile({str(meta)!r}, lambda: model_anchors(Path({str(model)!r})))\n"
        "assert m.outputs[1].format == 'a=[[1.0,1.0,1.0,1.0],[1.0,1.0,1.0,1.0]]', m\n"
        "heavy = [n for n in sys.modules if n.startswith(('xdsl', 'synapc.importers',"
        " 'synapc.dialects', 'jax'))]\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
