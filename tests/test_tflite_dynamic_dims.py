"""TFLite models whose shape_signature has unknown (-1) dimensions.

The unknown dimensions of an input come from `input_shapes` (or a metafile's
`inputs[].shape`); the other tensors' shapes are then worked out from the operators, and
shape arithmetic (SHAPE, STRIDED_SLICE, PACK, FLOOR_DIV, ...) is folded, as LiteRT does
after `resize_tensor_input`. Models are built with `ModelBuilder` with placeholder (1)
shapes where the signature says -1, the way the TFLite converter writes them, and every
result is compared with LiteRT's reference kernels run on the same resized input.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.convert import signature
from synapc.importers.tflite import CONVERTERS
from synapc.importers.tflite.reader import Importer
from synapc.importers.tflite.shape_rules import RULES
from synapc.metafile import load_metafile
from synapc.testing.tflite_builder import ModelBuilder

litert = pytest.importorskip("ai_edge_litert.interpreter")

F32, I32 = np.float32, np.int32


# -- models ----------------------------------------------------------------------------
def _samples_to_frames(path: Path) -> Path:
    """Audio samples [1, ?] cut into frames of 4 at run time (SHAPE -> STRIDED_SLICE ->
    FLOOR_DIV -> PACK -> RESHAPE), a per-frame FULLY_CONNECTED + RELU, and the mean over
    frames; outputs the frames' features [1, ?, 8] and the mean [1, 8]."""
    b = ModelBuilder()
    rng = np.random.default_rng(3)
    x = b.input("samples", [1, 1], F32, signature=[1, -1])
    shape = b.tensor("shape", [2], I32)
    b.op("SHAPE", [x], [shape], out_type="INT32")
    count = b.tensor("count", [], I32)
    b.op(
        "STRIDED_SLICE",
        [
            shape,
            b.constant("one", np.array([1], I32)),
            b.constant("two", np.array([2], I32)),
            b.constant("step", np.array([1], I32)),
        ],
        [count],
        shrink_axis_mask=1,
    )
    frames = b.tensor("frames", [], I32)
    b.op("FLOOR_DIV", [count, b.constant("four", np.array(4, I32))], [frames])
    new_shape = b.tensor("new_shape", [3], I32)
    b.op(
        "PACK",
        [b.constant("batch", np.array(1, I32)), frames, b.constant("w", np.array(4, I32))],
        [new_shape],
        values_count=3,
        axis=0,
    )
    framed = b.tensor("framed", [1, 1, 4], F32, signature=[1, -1, 4])
    b.op("RESHAPE", [x, new_shape], [framed])
    features = b.tensor("features", [1, 1, 8], F32, signature=[1, -1, 8])
    weights = b.constant("weights", rng.standard_normal((8, 4)).astype(F32))
    bias = b.constant("bias", rng.standard_normal(8).astype(F32))
    b.op(
        "FULLY_CONNECTED",
        [framed, weights, bias],
        [features],
        keep_num_dims=True,
        fused_activation_function="RELU",
    )
    mean = b.tensor("mean", [1, 8], F32, signature=[1, 8])
    b.op("MEAN", [features, b.constant("axis", np.array([1], I32))], [mean])
    b.output(features, mean)
    return b.save(path / "frames.tflite")


def _spectrogram_conv(path: Path) -> Path:
    """A [1, ?, 40, 1] spectrogram of unknown length: CONV_2D 3x3 SAME, MAX_POOL 2x2
    VALID, then RESHAPE by the options' new_shape [1, -1, 80] (the -1 is the frames)."""
    b = ModelBuilder()
    rng = np.random.default_rng(4)
    x = b.input("spectrogram", [1, 1, 40, 1], F32, signature=[1, -1, 40, 1])
    conv = b.tensor("conv", [1, 1, 40, 4], F32, signature=[1, -1, 40, 4])
    b.op(
        "CONV_2D",
        [
            x,
            b.constant("filter", rng.standard_normal((4, 3, 3, 1)).astype(F32)),
            b.constant("conv_bias", rng.standard_normal(4).astype(F32)),
        ],
        [conv],
        padding="SAME",
        stride_w=1,
        stride_h=1,
    )
    pooled = b.tensor("pooled", [1, 1, 20, 4], F32, signature=[1, -1, 20, 4])
    b.op(
        "MAX_POOL_2D",
        [conv],
        [pooled],
        padding="VALID",
        stride_w=2,
        stride_h=2,
        filter_width=2,
        filter_height=2,
    )
    flat = b.tensor("flat", [1, 1, 80], F32, signature=[1, -1, 80])
    b.op("RESHAPE", [pooled], [flat], new_shape=[1, -1, 80])
    b.output(flat)
    return b.save(path / "spectrogram.tflite")


def _batch_only(path: Path) -> Path:
    """A Keras-style export: [?, 8] (batch unknown, placeholder 1) -> FULLY_CONNECTED."""
    b = ModelBuilder()
    rng = np.random.default_rng(5)
    x = b.input("x", [1, 8], F32, signature=[-1, 8])
    y = b.tensor("y", [1, 3], F32, signature=[-1, 3])
    b.op(
        "FULLY_CONNECTED",
        [x, b.constant("w", rng.standard_normal((3, 8)).astype(F32)), -1],
        [y],
    )
    b.output(y)
    return b.save(path / "batch.tflite")


def _waveform(path: Path) -> Path:
    """A rank-1 waveform [?] (no batch dimension) scaled by 2."""
    b = ModelBuilder()
    x = b.input("waveform", [1], F32, signature=[-1])
    y = b.tensor("y", [1], F32, signature=[-1])
    b.op("MUL", [x, b.constant("two", np.array([2.0], F32))], [y])
    b.output(y)
    return b.save(path / "waveform.tflite")


# -- helpers ---------------------------------------------------------------------------
def _litert(path: Path, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """LiteRT's reference kernels with each input resized (strictly) to its value."""
    interpreter = litert.Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    details = interpreter.get_input_details()
    for detail, x in zip(details, inputs, strict=True):
        interpreter.resize_tensor_input(detail["index"], list(x.shape), strict=True)
    interpreter.allocate_tensors()
    for detail, x in zip(details, inputs, strict=True):
        interpreter.set_tensor(detail["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


def _check(path: Path, shapes: Sequence[Sequence[int]], **given: object) -> None:
    """synapc (GENERIC) against LiteRT on random inputs of `shapes`."""
    model = synapc.import_model(path, **given)  # type: ignore[arg-type]
    assert [i.shape for i in model.inputs] == [tuple(s) for s in shapes]
    rng = np.random.default_rng(11)
    inputs = [rng.uniform(-1, 1, s).astype(F32) for s in shapes]
    refs = _litert(path, inputs)
    outputs = synapc.compile(model, target="GENERIC").run(inputs)
    assert len(outputs) == len(refs)
    for got, ref in zip(outputs, refs, strict=True):
        assert got.shape == ref.shape and got.dtype == ref.dtype
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def _error(path: Path, input_shapes: object = None) -> str:
    with pytest.raises(synapc.SynapcError) as info:
        synapc.import_model(path, input_shapes=input_shapes)  # type: ignore[arg-type]
    return str(info.value)


# -- resolved shapes against LiteRT ----------------------------------------------------
@pytest.mark.parametrize("samples", [4, 64, 402])
def test_shape_arithmetic_is_folded_and_matches_litert(
    tmp_path: Path, samples: int
) -> None:
    path = _samples_to_frames(tmp_path)
    if samples % 4:  # RESHAPE to whole frames fails, as it does in LiteRT
        message = _error(path, {"samples": [1, samples]})
        assert "operator 4 (RESHAPE, output 'framed')" in message
        assert f"cannot be reshaped to [1, {samples // 4}, 4]" in message
        return
    _check(path, [[1, samples]], input_shapes={"samples": [1, samples]})
    model = synapc.import_model(path, input_shapes=[[1, samples]])
    names = {op.name for op in model.main.body.walk()}
    assert "synap.fully_connected" in names and "synap.concat" not in names
    assert model.outputs[0].shape == (1, samples // 4, 8)


@pytest.mark.parametrize("frames", [2, 9, 50])
def test_windows_and_new_shape_follow_the_frames(tmp_path: Path, frames: int) -> None:
    path = _spectrogram_conv(tmp_path)
    _check(path, [[1, frames, 40, 1]], input_shapes=[[1, frames, 40, 1]])
    model = synapc.import_model(path, input_shapes=[[1, frames, 40, 1]])
    assert model.outputs[0].shape == (1, frames // 2, 80)


def test_an_unknown_batch_is_one_unless_given(tmp_path: Path) -> None:
    path = _batch_only(tmp_path)
    _check(path, [[1, 8]])
    _check(path, [[3, 8]], input_shapes=[[3, 8]])


def test_a_rank_one_input_is_given_its_length(tmp_path: Path) -> None:
    path = _waveform(tmp_path)
    _check(path, [[16000]], input_shapes={"waveform": [16000]})


# -- refusals --------------------------------------------------------------------------
def test_an_unknown_dimension_nothing_gives_is_refused(tmp_path: Path) -> None:
    path = _samples_to_frames(tmp_path)
    assert _error(path) == (
        f"{path}: input 'samples' has shape [1, ?]: the size of dimension 1 is unknown "
        "(-1 in its shape_signature); give its shape with input_shapes={'samples': "
        "[...]} (synapc convert: the metafile's inputs[].shape)"
    )
    path = _waveform(tmp_path)
    assert "input 'waveform' has shape [?]: the size of dimension 0 is unknown" in (
        _error(path)
    )


def test_given_shapes_must_keep_the_known_dimensions(tmp_path: Path) -> None:
    path = _spectrogram_conv(tmp_path)
    where = f"{path}: input 'spectrogram': input_shapes gives"
    assert _error(path, [[1, 8, 41, 1]]) == (
        f"{where} [1, 8, 41, 1], but dimension 2 of the input is 40 (shape "
        "[1, ?, 40, 1]; only the -1 dimensions of its shape_signature can be chosen)"
    )
    assert _error(path, {"spectrogram": [1, 8, 40]}) == (
        f"{where} [1, 8, 40], but the input has rank 4 (shape [1, ?, 40, 1])"
    )
    assert _error(path, [[1, 0, 40, 1]]) == (
        f"{where} [1, 0, 40, 1]: dimension 1 must be at least 1"
    )
    assert _error(path, {"spectrum": [1, 8, 40, 1]}) == (
        f"{path}: input_shapes names 'spectrum', which is not an input of the model "
        "(inputs: 'spectrogram')"
    )
    assert _error(path, [[1, 8, 40, 1], [1]]) == (
        f"{path}: input_shapes gives 2 shapes for a model with 1 inputs"
    )


def test_a_static_model_takes_only_its_own_shape(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.input("x", [1, 4], F32)
    y = b.tensor("y", [1, 4], F32)
    b.op("RELU", [x], [y])
    b.output(y)
    path = b.save(tmp_path / "static.tflite")
    assert synapc.import_model(path, input_shapes=[[1, 4]]).inputs[0].shape == (1, 4)
    assert _error(path, [[2, 4]]) == (
        f"{path}: input 'x': input_shapes gives [2, 4], but dimension 0 of the input is "
        "1 (shape [1, 4]; only the -1 dimensions of its shape_signature can be chosen)"
    )


def test_a_shape_computed_from_data_is_refused(tmp_path: Path) -> None:
    """RESHAPE's shape computed at run time from values (not from shapes) cannot be
    known at import."""
    b = ModelBuilder()
    x = b.input("x", [1, 1], F32, signature=[1, -1])
    sizes = b.input("sizes", [2], I32)
    y = b.tensor("y", [1, 1], F32, signature=[-1, -1])
    b.op("RESHAPE", [x, sizes], [y])
    b.output(y)
    path = b.save(tmp_path / "data_shape.tflite")
    message = _error(path, {"x": [1, 6], "sizes": [2]})
    assert message == (
        f"{path}: operator 0 (RESHAPE, output 'y'): shape (input 1) is computed at run "
        "time; with unknown (-1) dimensions in the model synapc needs it at import, as "
        "a constant or as shape arithmetic on constants and tensor shapes"
    )


def test_a_shape_contradicting_its_signature_is_refused(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.input("x", [1, 1], F32, signature=[1, -1])
    y = b.tensor("y", [1, 1], F32, signature=[1, 7])
    b.op("RELU", [x], [y])
    b.output(y)
    path = b.save(tmp_path / "contradiction.tflite")
    assert _error(path, [[1, 5]]) == (
        f"{path}: operator 0 (RELU, output 'y'): output tensor 1 ('y') works out as "
        "[1, 5] for these input shapes, but its shape_signature is [1, 7]"
    )


def test_a_signature_that_does_not_fit_its_shape_is_refused(tmp_path: Path) -> None:
    def model(signature: list[int]) -> Path:
        b = ModelBuilder()
        x = b.input("x", [1, 3], F32, signature=signature)
        y = b.tensor("y", [1, 3], F32)
        b.op("RELU", [x], [y])
        b.output(y)
        return b.save(tmp_path / "signature.tflite")

    path = model([-1, 4])
    assert _error(path) == (
        f"{path}: input 'x': shape_signature [-1, 4] contradicts shape [1, 3]"
    )
    # without unknown dimensions the signature says nothing LiteRT uses: `shape` counts
    assert synapc.import_model(model([1, 4])).inputs[0].shape == (1, 3)


# -- the metafile's words --------------------------------------------------------------
def _import_with(path: Path, tmp_path: Path, text: str) -> synapc.Model:
    meta_path = tmp_path / "m.yaml"
    meta_path.write_text(text)
    return signature.import_with_metafile(path, load_metafile(meta_path), str(meta_path))


def test_the_metafile_gives_unknown_dimensions(tmp_path: Path) -> None:
    path = _spectrogram_conv(tmp_path)
    model = _import_with(path, tmp_path, "inputs:\n  - shape: [1, 12, 40, 1]\n")
    assert model.inputs[0].shape == (1, 12, 40, 1)
    assert model.outputs[0].shape == (1, 6, 80)
    meta = tmp_path / "m.yaml"
    for text, problem in [
        (
            "inputs:\n  - name: spectrogram\n    means: [0]\n",
            "inputs[0].shape: required for input 'spectrogram' (its shape "
            "[1, ?, 40, 1] is not static)",
        ),
        (
            "inputs:\n  - shape: [1, 12, 41, 1]\n",
            "inputs[0].shape: [1, 12, 41, 1] does not match input 'spectrogram' of "
            "shape [1, ?, 40, 1]",
        ),
    ]:
        with pytest.raises(synapc.SynapcError) as info:
            _import_with(path, tmp_path, text)
        assert str(info.value) == f"{meta}: {problem}"
    waveform = _waveform(tmp_path)
    with pytest.raises(synapc.SynapcError) as info:
        _import_with(waveform, tmp_path, "inputs:\n  - means: [0]\n")
    assert str(info.value) == (
        f"{meta}: inputs[0].shape: required for input 'waveform' (its shape [?] is not "
        "static)"
    )
    assert _import_with(waveform, tmp_path, "inputs:\n  - shape: [80]\n").inputs[
        0
    ].shape == (80,)


def test_convert_and_the_command_line_take_the_shapes(tmp_path: Path) -> None:
    from synapc.cli import main

    path = _spectrogram_conv(tmp_path)
    meta = tmp_path / "m.yaml"
    meta.write_text("inputs:\n  - shape: [1, 6, 40, 1]\n")
    done = synapc.convert(path, "GENERIC", tmp_path / "out", meta)
    assert done.package.is_file()
    out = tmp_path / "frames.mlir"
    argv = ["import", str(path), "--input-shape", "spectrogram=1,6,40,1", "-o", str(out)]
    assert main(argv) == 0
    assert "tensor<1x3x80xf32>" in out.read_text()


# -- the rules themselves --------------------------------------------------------------
def test_every_converted_operator_has_a_shape_rule() -> None:
    assert sorted(set(CONVERTERS) - set(RULES)) == []


def _static_network(path: Path) -> Path:
    """A static model of many operators whose file shapes are right: PAD, CONV_2D
    (strided, VALID), DEPTHWISE_CONV_2D, AVERAGE_POOL_2D (SAME), CONCATENATION,
    TRANSPOSE, STRIDED_SLICE (shrink), SQUEEZE, EXPAND_DIMS, MEAN, SOFTMAX."""
    b = ModelBuilder()
    rng = np.random.default_rng(6)

    def const(name: str, shape: Sequence[int]) -> int:
        return b.constant(name, rng.standard_normal(shape).astype(F32))

    def op(name: str, inputs: list[int], shape: Sequence[int], **options: object) -> int:
        out = b.tensor(f"{name.lower()}_{len(inputs)}_{shape}", shape, F32)
        b.op(name, inputs, [out], **options)
        return out

    x = b.input("x", [1, 9, 11, 3], F32)
    pads = b.constant("pads", np.array([[0, 0], [1, 1], [0, 2], [0, 0]], I32))
    padded = op("PAD", [x, pads], [1, 11, 13, 3])
    conv = op(
        "CONV_2D",
        [padded, const("w", [4, 3, 3, 3]), const("b", [4])],
        [1, 5, 6, 4],
        padding="VALID",
        stride_h=2,
        stride_w=2,
    )
    depthwise = op(
        "DEPTHWISE_CONV_2D",
        [conv, const("dw", [1, 3, 3, 4]), const("db", [4])],
        [1, 5, 6, 4],
        padding="SAME",
        stride_h=1,
        stride_w=1,
        depth_multiplier=1,
    )
    pool = op(
        "AVERAGE_POOL_2D",
        [depthwise],
        [1, 3, 3, 4],
        padding="SAME",
        stride_h=2,
        stride_w=2,
        filter_height=3,
        filter_width=2,
    )
    joined = op("CONCATENATION", [pool, pool], [1, 3, 3, 8], axis=3)
    perm = b.constant("perm", np.array([0, 3, 1, 2], I32))
    moved = op("TRANSPOSE", [joined, perm], [1, 8, 3, 3])
    ends = [b.constant(n, np.array(v, I32)) for n, v in (
        ("begin", [0, 1, 2]), ("end", [1, 7, 0]), ("strides", [1, 2, -1]))]  # fmt: skip
    sliced = op("STRIDED_SLICE", [moved, *ends], [3, 2, 3], shrink_axis_mask=1)
    axis = b.constant("axis", np.array(0, I32))
    expanded = op("EXPAND_DIMS", [sliced, axis], [1, 3, 2, 3])
    mean = op("MEAN", [expanded, b.constant("axes", np.array([2], I32))], [1, 3, 3])
    squeezed = op("SQUEEZE", [expanded], [3, 2, 3])
    soft = op("SOFTMAX", [squeezed], [3, 2, 3], beta=1.0)
    b.output(mean, soft)
    return b.save(path / "static.tflite")


def test_the_rules_reproduce_a_static_model(tmp_path: Path) -> None:
    """Worked out from the operators, every shape of a static model is the file's."""
    path = _static_network(tmp_path)
    _check(path, [[1, 9, 11, 3]])
    data = path.read_bytes()
    stated = Importer(path, data).run()
    inferred = Importer(path, data, infer_all_shapes=True).run()
    assert _result_types(stated) == _result_types(inferred)


def _result_types(model: synapc.Model) -> list[str]:
    return [str(r.type) for op in model.main.body.walk() for r in op.results]


def test_folded_integer_division_matches_litert(tmp_path: Path) -> None:
    """DIV truncates toward zero, FLOOR_DIV and FLOOR_MOD round down, on sizes that
    are negative for short inputs: all folded, and the model's outputs are constants."""
    b = ModelBuilder()
    x = b.input("x", [1, 1], F32, signature=[1, -1])
    shape = b.tensor("shape", [2], I32)
    b.op("SHAPE", [x], [shape], out_type="INT32")
    shifted = b.tensor("shifted", [2], I32)
    b.op("SUB", [shape, b.constant("ten", np.array([10, 10], I32))], [shifted])
    outputs = []
    for name in ("DIV", "FLOOR_DIV", "FLOOR_MOD"):
        out = b.tensor(name.lower(), [2], I32)
        b.op(name, [shifted, b.constant(f"{name}_by", np.array([3, -4], I32))], [out])
        outputs.append(out)
    y = b.tensor("y", [1, 1], F32, signature=[1, -1])
    b.op("RELU", [x], [y])
    b.output(y, *outputs)
    path = b.save(tmp_path / "division.tflite")
    for samples in (3, 17):
        _check(path, [[1, samples]], input_shapes=[[1, samples]])


# -- comparisons and selection (Basic Pitch's div_no_nan: EQUAL + SELECT_V2) ------------
@pytest.mark.parametrize("dtype", [F32, I32])
def test_comparisons_logic_and_select_match_litert(tmp_path: Path, dtype: type) -> None:
    b = ModelBuilder()
    x = b.input("x", [2, 3], dtype)
    y = b.input("y", [3], dtype)
    outputs = {}
    for name in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"):
        outputs[name] = b.tensor(name.lower(), [2, 3], np.bool_)
        b.op(name, [x, y], [outputs[name]])
    both = b.tensor("both", [2, 3], np.bool_)
    b.op("LOGICAL_AND", [outputs["LESS_EQUAL"], outputs["NOT_EQUAL"]], [both])
    either = b.tensor("either", [2, 3], np.bool_)
    b.op("LOGICAL_OR", [outputs["EQUAL"], outputs["GREATER"]], [either])
    neither = b.tensor("neither", [2, 3], np.bool_)
    b.op("LOGICAL_NOT", [either], [neither])
    chosen = b.tensor("chosen", [2, 3], dtype)
    b.op("SELECT_V2", [both, x, y], [chosen])
    b.output(*outputs.values(), both, either, neither, chosen)
    path = b.save(tmp_path / "logic.tflite")
    rng = np.random.default_rng(8)
    inputs = [rng.integers(-2, 3, s).astype(dtype) for s in ([2, 3], [3])]
    refs = _litert(path, inputs)
    got = synapc.compile(synapc.import_model(path), target="GENERIC").run(inputs)
    for g, r in zip(got, refs, strict=True):
        assert g.dtype == r.dtype
        np.testing.assert_array_equal(g, r)


def test_quantized_comparisons_are_refused(tmp_path: Path) -> None:
    from synapc.testing.tflite_builder import Quant

    b = ModelBuilder()
    x = b.input("x", [4], np.int8, quant=Quant(0.5, 0))
    y = b.input("y", [4], np.int8, quant=Quant(0.25, 1))
    out = b.tensor("less", [4], np.bool_)
    b.op("LESS", [x, y], [out])
    b.output(out)
    path = b.save(tmp_path / "quantized_less.tflite")
    assert _error(path) == (
        f"{path}: operator 0 (LESS, output 'less'): input tensor 0 ('x') is quantized; "
        "quantized comparisons are not supported (LiteRT rescales both sides to a "
        "common fixed-point scale)"
    )
