"""Corrupt or inconsistent `.tflite` files are refused with one line that starts with the
file name and names the operator (index and opcode), tensor (index and name), buffer or
flatbuffer field that is wrong, never with Python's own exception text; sizes are
checked against `synapc.limits` before anything is allocated.

Each test is a finding of the TFLite fuzzer (benchmarks/fuzz/tflite.py) or of reading
the importer; the comment above it says what the importer did before.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tflite

import synapc
from benchmarks.fuzz.harness import PYTHON_TEXT
from benchmarks.fuzz.tflite import FuzzBuilder, RawQuant
from synapc.limits import use_limits
from synapc.testing.tflite_builder import ModelBuilder, Quant, flexbuffer_options

F32, I8, I32 = np.float32, np.int8, np.int32


def refused(path: Path, *fragments: str) -> str:
    """Import `path`, which must fail with one clean line naming it and `fragments`."""
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    message = str(error.value)
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message, message
    assert not PYTHON_TEXT.search(message), message
    for fragment in fragments:
        assert fragment in message, message
    return message


def save(tmp_path: Path, data: bytes, name: str = "model.tflite") -> Path:
    """Write `data` as `name` in `tmp_path`."""
    path = tmp_path / name
    path.write_bytes(data)
    return path


def conv_model(builder: type[ModelBuilder] = FuzzBuilder, **options: Any) -> ModelBuilder:
    """x [1, 4, 4, 2] -> CONV_2D (3 filters of 1x1) -> y, with `options` overriding the
    convolution's."""
    b = builder()
    x = b.input("x", [1, 4, 4, 2], F32)
    w = b.constant("w", np.ones((3, 1, 1, 2), F32))
    bias = b.constant("bias", np.zeros(3, F32))
    y = b.tensor("y", [1, 4, 4, 3], F32)
    settings = {"padding": "SAME", "stride_w": 1, "stride_h": 1, **options}
    b.op("CONV_2D", [x, w, bias], [y], **settings)
    b.output(y)
    return b


def one_op(
    name: str,
    inputs: list[tuple[str, list[int], Any, Any]],
    out_shape: list[int],
    out_dtype: Any = F32,
    **options: Any,
) -> bytes:
    """A model of one operator: `inputs` are (name, shape, dtype, data or None; None
    makes a model input)."""
    b = FuzzBuilder()
    indices = []
    for tensor, shape, dtype, data in inputs:
        if data is None:
            indices.append(b.input(tensor, shape, dtype))
        else:
            indices.append(b.tensor(tensor, shape, dtype, data=np.asarray(data, dtype)))
    y = b.tensor("y", out_shape, out_dtype)
    b.op(name, indices, [y], **options)
    b.output(y)
    return b.build()


def test_valid_models_still_import(tmp_path: Path) -> None:
    model = synapc.import_model(save(tmp_path, conv_model().build()))
    assert [o.name for o in model.outputs] == ["y"]


# -- the file and its flatbuffer structure ----------------------------------------------


def test_file_size_is_checked_before_reading(tmp_path: Path) -> None:
    # before: no limit; the whole file was read whatever its size
    path = save(tmp_path, conv_model().build())
    with use_limits(max_model_file_bytes=100):
        refused(
            path, "file size", "exceeds the limit of 100", "SYNAPC_MAX_MODEL_FILE_BYTES"
        )


def _patched(data: bytes, pos: int, fmt: str, value: int) -> bytes:
    """`data` with `value` packed as `fmt` at byte `pos`."""
    out = bytearray(data)
    struct.pack_into(fmt, out, pos, value)
    return bytes(out)


def _model_table(data: bytes) -> Any:
    """The root Model table of `data`, read with the generated `tflite` classes."""
    return tflite.Model.GetRootAs(data, 0)


def test_buffer_running_past_the_end_of_the_file(tmp_path: Path) -> None:
    # before: "operator 0 (CONV_2D, output 'y'): buffer is smaller than requested size"
    data = conv_model().build()
    buffer = _model_table(data).Buffers(1)
    length_at = buffer._tab.Vector(buffer._tab.Offset(4)) - 4
    path = save(tmp_path, _patched(data, length_at, "<I", 1 << 30))
    refused(
        path, "corrupt TFLite model: buffer 1, field data", "runs past the end of the file"
    )


def test_vtable_outside_the_file(tmp_path: Path) -> None:
    # before: "operator 0 (CONV_2D, output 'y'): bad number -1073741452 for type uint32"
    data = conv_model().build()
    tensor = _model_table(data).Subgraphs(0).Tensors(1)
    path = save(tmp_path, _patched(data, tensor._tab.Pos, "<i", 1 << 30))
    refused(path, "corrupt TFLite model: subgraph 0, tensor 1", "vtable at byte")


def test_options_field_outside_its_table(tmp_path: Path) -> None:
    # before: "unpack_from requires a buffer of at least 65769 bytes for unpacking 1
    # bytes at offset 65768 (actual buffer size is 544)"
    data = conv_model().build()
    options = _model_table(data).Subgraphs(0).Operators(0).BuiltinOptions()
    vtable = options.Pos - struct.unpack_from("<i", data, options.Pos)[0]
    path = save(tmp_path, _patched(data, vtable + 4, "<H", 0xFFF0))
    refused(path, "subgraph 0, operator 0, builtin_options", "lies outside its table")


def test_missing_operator_codes(tmp_path: Path) -> None:
    # before: "corrupt TFLite model (AttributeError: 'NoneType' object has no attribute
    # 'BuiltinCode')"
    b = conv_model()
    b.drop = frozenset({"operator_codes"})
    refused(
        save(tmp_path, b.build()),
        "operator 0: opcode_index 0 does not exist",
        "0 operator codes",
    )


def test_too_many_dimensions(tmp_path: Path) -> None:
    # before: any rank was accepted and walked by every shape rule
    b = FuzzBuilder()
    x = b.input("x", [1] * 40, F32)
    y = b.tensor("y", [1] * 40, F32)
    b.op("RELU", [x], [y])
    b.output(y)
    refused(
        save(tmp_path, b.build()),
        "tensor 0 ('x'), field shape (entries): 40 exceeds the limit of 32",
        "SYNAPC_MAX_TENSOR_RANK",
    )


# -- indices between tables -------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        pytest.param(
            lambda b: setattr(b._operators[0], "inputs", (0, 57, 2)),
            ("operator 0 (CONV_2D): input 1 is tensor 57, but the subgraph has 4 tensors",),
            id="input-index",
        ),
        pytest.param(
            lambda b: setattr(b._operators[0], "outputs", (-1,)),
            ("operator 0 (CONV_2D): output 0 is tensor -1",),
            id="output-index",
        ),
        pytest.param(
            lambda b: setattr(b._tensors[1], "buffer", 9),
            ("tensor 1 ('w'): buffer 9 does not exist (the model has 3 buffers)",),
            id="buffer-index",
        ),
        pytest.param(
            lambda b: setattr(b._operators[0], "opcode", 5),
            ("operator 0: opcode_index 5 does not exist (the model has 1 operator codes)",),
            id="opcode-index",
        ),
        pytest.param(
            lambda b: b._inputs.append(-1),
            ("model input 1 is tensor -1, but the subgraph has 4 tensors",),
            id="model-input",
        ),
        pytest.param(
            lambda b: b._outputs.append(4),
            ("model output 1 is tensor 4",),
            id="model-output",
        ),
        pytest.param(
            lambda b: setattr(b._operators[0], "outputs", ()),
            ("operator 0 (CONV_2D): expected 1 output, got 0",),
            id="no-output",
        ),
        pytest.param(
            lambda b: setattr(b._operators[0], "inputs", (0,)),
            ("operator 0 (CONV_2D, output 'y'): expected 2-3 inputs, got 1",),
            id="too-few-inputs",
        ),
        pytest.param(
            lambda b: setattr(b._operators[0], "inputs", (0, -1, 2)),
            ("input 1 is absent (-1), but CONV_2D requires it",),
            id="absent-required-input",
        ),
        pytest.param(
            lambda b: b._opcodes.update({(250, "", 1): b._opcodes.pop((3, "", 1))}),
            ("operator 0 (BUILTIN_250, output 'y'): builtin operator code 250",),
            id="unknown-builtin",
        ),
        pytest.param(
            lambda b: b._opcodes.update({(32, "My\nOp", 1): b._opcodes.pop((3, "", 1))}),
            ("operator 0 (My\\nOp, output 'y'): operator is not supported",),
            id="newline-in-custom-name",
        ),
    ],
)
def test_indices_and_counts_name_the_operator_or_tensor(
    tmp_path: Path, change: Callable[[Any], None], fragments: tuple[str, ...]
) -> None:
    # before: IndexError / struct.error texts ("list index out of range"), garbage read
    # through index -1, or a message spanning two lines
    b = conv_model()
    change(b)
    refused(save(tmp_path, b.build()), *fragments)


# -- shapes, types and quantization -----------------------------------------------------


def test_activation_beyond_the_element_limit(tmp_path: Path) -> None:
    # before: accepted (nothing compared shapes with any limit)
    b = FuzzBuilder()
    x = b.input("x", [2**31 - 1, 2**31 - 1], F32)
    y = b.tensor("y", [2**31 - 1, 2**31 - 1], F32)
    b.op("RELU", [x], [y])
    b.output(y)
    refused(
        save(tmp_path, b.build()),
        "tensor 0 ('x') (elements of",
        "SYNAPC_MAX_TENSOR_ELEMENTS",
    )


def test_negative_dimension(tmp_path: Path) -> None:
    # before: "buffer of tensor 'w' has 24 bytes, its shape [3, -1, 1, 2] of float32 needs
    # -24", naming no operator
    b = conv_model()
    b._tensors[1].shape = (3, -1, 1, 2)
    refused(
        save(tmp_path, b.build()),
        "tensor 1 ('w'): negative dimension in shape [3, -1, 1, 2]",
    )


def test_buffer_size_does_not_match_the_shape(tmp_path: Path) -> None:
    # before: named the tensor, but not its index, its buffer or the operator
    b = conv_model()
    b._buffers[1] = b._buffers[1][:-4]
    refused(
        save(tmp_path, b.build()),
        "operator 0 (CONV_2D, output 'y'): tensor 1 ('w'): buffer 1 has 20 bytes",
        "needs 24",
    )


def _quantized_relu(quant: Quant) -> bytes:
    b = FuzzBuilder()
    x = b.input("x", [1, 3], I8, quant=Quant(0.1, 0))
    b._tensors[x].quant = quant
    y = b.tensor("y", [1, 3], I8, quant=Quant(0.1, 0))
    b.op("RELU", [x], [y])
    b.output(y)
    return b.build()


@pytest.mark.parametrize(
    ("quant", "fragment"),
    [
        (RawQuant([0.1, 0.2, 0.3], [0, 0]), "has 3 scales but 2 zero points"),
        (RawQuant([float("nan")], [0]), "scale 0 is nan"),
        (RawQuant([0.0], [0]), "scale 0 is 0.0"),
        (RawQuant([-1.0], [0]), "scale 0 is -1.0"),
        (RawQuant([0.1], [300]), "zero point 300 is outside the int8 range"),
        (RawQuant([0.1, 0.2, 0.3], [0], axis=5), "quantized_dimension 5 is not an axis"),
        (RawQuant([0.1, 0.2], [0], axis=1), "2 scales for quantized_dimension 1 of size 3"),
    ],
    ids=["zero-points", "nan", "zero", "negative", "zero-point-range", "axis", "count"],
)
def test_bad_quantization_names_the_tensor(
    tmp_path: Path, quant: RawQuant, fragment: str
) -> None:
    # before: IndexError, or a VerifyException of quant.uniform naming no tensor
    refused(
        save(tmp_path, _quantized_relu(quant)), "tensor 0 ('x'): quantization", fragment
    )


def test_unknown_tensor_type(tmp_path: Path) -> None:
    # before: named the tensor, but not its index or the operator
    b = conv_model()
    b._tensors[0].type = 99
    refused(save(tmp_path, b.build()), "tensor 0 ('x') has unsupported type code 99")


# -- options and operator semantics -----------------------------------------------------


def test_missing_options_table(tmp_path: Path) -> None:
    # before: "'NoneType' object has no attribute 'StrideH'"
    b = conv_model()
    b._operators[0].table = None
    refused(
        save(tmp_path, b.build()), "operator 0 (CONV_2D, output 'y')", "Conv2DOptions table"
    )


def test_options_table_of_another_operator(tmp_path: Path) -> None:
    # before: the AddOptions bytes were read as Conv2DOptions fields: "integer division
    # or modulo by zero"
    from synapc.testing.tflite_builder import options_table

    b = conv_model()
    b._operators[0].table = options_table("ADD")
    b._operators[0].options = []
    refused(
        save(tmp_path, b.build()),
        "builtin_options is a AddOptions table",
        "takes Conv2DOptions",
    )


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"stride_w": 0}, "strides must be positive, got [1, 0]"),
        ({"dilation_h_factor": -1}, "dilations must be positive, got [-1, 1]"),
        ({"padding": 7}, "padding 7 is not supported"),
        ({"fused_activation_function": 9}, "fused activation 9 is not supported"),
    ],
    ids=["stride", "dilation", "padding", "activation"],
)
def test_convolution_options(
    tmp_path: Path, options: dict[str, Any], fragment: str
) -> None:
    # before: "integer division or modulo by zero" for a zero stride; "corrupt TFLite
    # model (VerifyException: synap.conv2d ...)" naming no operator for a dilation of -1
    refused(save(tmp_path, conv_model(**options).build()), "operator 0 (CONV_2D", fragment)


def test_convolution_input_of_the_wrong_rank(tmp_path: Path) -> None:
    # before: "tuple index out of range"
    b = conv_model()
    b._tensors[0].shape = (4, 2)
    refused(
        save(tmp_path, b.build()), "input tensor 0 ('x') must have rank 4, got shape [4, 2]"
    )


def test_convolution_weights_with_no_channels(tmp_path: Path) -> None:
    # before: "tensor 'w' is used before it is computed" (its empty buffer)
    b = conv_model()
    b._tensors[1].shape = (3, 1, 1, 0)
    b._buffers[1] = b""
    refused(save(tmp_path, b.build()), "2 input channels cannot be split into groups of 0")


def test_pool_filter_of_zero(tmp_path: Path) -> None:
    # before: "corrupt TFLite model (VerifyException: synap.max_pool2d ...)", no operator
    data = one_op(
        "MAX_POOL_2D",
        [("x", [1, 4, 4, 1], F32, None)],
        [1, 4, 4, 1],
        padding="SAME",
        stride_w=1,
        stride_h=1,
        filter_width=0,
        filter_height=1,
    )
    refused(save(tmp_path, data), "operator 0 (MAX_POOL_2D", "filter size must be positive")


def test_fully_connected_with_no_features(tmp_path: Path) -> None:
    # before: "integer division or modulo by zero"
    data = one_op(
        "FULLY_CONNECTED",
        [("x", [1, 2, 3], F32, None), ("w", [4, 0], F32, np.zeros((4, 0)))],
        [1, 4],
    )
    refused(save(tmp_path, data), "cannot be flattened into rows of 0 features")


@pytest.mark.parametrize("axis", [3, -4])
def test_axis_out_of_range(tmp_path: Path, axis: int) -> None:
    # before: 3 was taken modulo the rank (as 0) and imported; -4 gave "corrupt TFLite
    # model (VerifyException: synap.concat ...)" naming no operator
    data = one_op(
        "CONCATENATION",
        [("a", [1, 2, 3], F32, None), ("b", [1, 2, 3], F32, None)],
        [2, 2, 3],
        axis=axis,
    )
    refused(
        save(tmp_path, data),
        "operator 0 (CONCATENATION",
        f"axis {axis} is out of range for rank 3",
    )


def test_reduction_axis_out_of_range(tmp_path: Path) -> None:
    # before: "integer division or modulo by zero" for a rank-0 input, silent wrap else
    data = one_op("MEAN", [("x", [], F32, None), ("axes", [1], I32, [0])], [])
    refused(save(tmp_path, data), "operator 0 (MEAN", "axis 0 is out of range for rank 0")


def test_split_axis_constant_without_values(tmp_path: Path) -> None:
    # before: "list index out of range"
    b = FuzzBuilder()
    axis = b.tensor("axis", [0], I32)
    x = b.input("x", [2, 4], F32)
    outs = [b.tensor("s0", [2, 2], F32), b.tensor("s1", [2, 2], F32)]
    b.op("SPLIT", [axis, x], outs, num_splits=2)
    b.output(*outs)
    refused(
        save(tmp_path, b.build()),
        "operator 0 (SPLIT",
        "axis (input 0) must hold one value, got 0",
    )


def test_float_constant_where_integers_are_needed(tmp_path: Path) -> None:
    # before: "cannot convert float NaN to integer"
    data = one_op(
        "TRANSPOSE",
        [("x", [2, 3], F32, None), ("perm", [2], F32, [1.0, float("nan")])],
        [3, 2],
    )
    refused(
        save(tmp_path, data),
        "operator 0 (TRANSPOSE",
        "perm (input 1) must be integers, got float32",
    )


def test_strided_slice_lists_of_different_lengths(tmp_path: Path) -> None:
    # before: "list index out of range"
    data = one_op(
        "STRIDED_SLICE",
        [
            ("x", [4, 4], F32, None),
            ("begin", [2], I32, [0, 0]),
            ("end", [1], I32, [2]),
            ("strides", [2], I32, [1, 1]),
        ],
        [2, 4],
    )
    refused(
        save(tmp_path, data), "begin, end and strides must have one value per dimension"
    )


def test_padv2_constant_values_must_be_one_value(tmp_path: Path) -> None:
    # before: the first of several values was taken (LiteRT requires exactly one)
    data = one_op(
        "PADV2",
        [
            ("x", [1, 2], F32, None),
            ("pads", [2, 2], I32, [[0, 0], [1, 1]]),
            ("value", [2], F32, [1.0, 2.0]),
        ],
        [1, 4],
    )
    refused(save(tmp_path, data), "constant_values (input 2) must hold one value, got 2")


def test_mirror_pad_mode_out_of_range(tmp_path: Path) -> None:
    # before: any mode other than REFLECT was taken as SYMMETRIC
    data = one_op(
        "MIRROR_PAD",
        [("x", [1, 3], F32, None), ("pads", [2, 2], I32, [[0, 0], [1, 1]])],
        [1, 5],
        mode=5,
    )
    refused(save(tmp_path, data), "mirror pad mode 5 is not REFLECT or SYMMETRIC")


def test_float16_dequantize_into_another_shape(tmp_path: Path) -> None:
    # before: "ValueError: array of float32[2, 3] does not fit tensor<3x2xf32>"
    b = FuzzBuilder()
    w = b.constant("w", np.ones((2, 3), np.float16))
    y = b.tensor("y", [3, 2], F32)
    b.op("DEQUANTIZE", [w], [y])
    b.output(y)
    refused(
        save(tmp_path, b.build()),
        "operator 0 (DEQUANTIZE",
        "must be float32 of the input's shape [2, 3]",
    )


def test_mediapipe_transpose_conv_stride_of_zero(tmp_path: Path) -> None:
    # before: "corrupt TFLite model (VerifyException: synap.transpose_conv2d ...)", no
    # operator
    b = FuzzBuilder()
    x = b.input("x", [1, 3, 3, 2], F32)
    w = b.constant("w", np.ones((4, 2, 2, 2), F32))
    bias = b.constant("bias", np.zeros(4, F32))
    y = b.tensor("y", [1, 6, 6, 4], F32)
    raw = np.asarray([2, 0, 2], "<i4").tobytes()  # padding VALID, stride_w 0, stride_h 2
    b.custom_op("Convolution2DTransposeBias", [x, w, bias], [y], options=raw)
    b.output(y)
    refused(
        save(tmp_path, b.build()), "Convolution2DTransposeBias", "strides must be positive"
    )


def test_detection_results_beyond_the_element_limit(tmp_path: Path) -> None:
    # before: accepted with outputs of 2**40 boxes (their shapes come from the options)
    b = FuzzBuilder()
    boxes = b.input("boxes", [1, 6, 4], F32)
    scores = b.input("scores", [1, 6, 4], F32)
    anchors = b.constant("anchors", np.full((6, 4), 0.5, F32))
    results = [
        b.tensor("detection_boxes", [1, 1, 4], F32),
        b.tensor("detection_classes", [1, 1], F32),
        b.tensor("detection_scores", [1, 1], F32),
        b.tensor("num_detections", [1], F32),
    ]
    options = {
        "max_detections": 2**40,
        "max_classes_per_detection": 1,
        "nms_score_threshold": 0.3,
        "nms_iou_threshold": 0.5,
        "num_classes": 3,
        "y_scale": 10.0,
        "x_scale": 10.0,
        "h_scale": 5.0,
        "w_scale": 5.0,
    }
    b.custom_op(
        "TFLite_Detection_PostProcess",
        [boxes, scores, anchors],
        results,
        options=flexbuffer_options(options),
    )
    b.output(*results)
    refused(
        save(tmp_path, b.build()),
        "operator 0 (TFLite_Detection_PostProcess",
        "result 0 of synap.detection_postprocess",
        "SYNAPC_MAX_TENSOR_ELEMENTS",
    )


def test_constants_beyond_the_constant_limit(tmp_path: Path) -> None:
    # before: no limit on the constants of a model
    path = save(tmp_path, conv_model().build())
    with use_limits(max_constant_bytes=16):
        refused(path, "constants (bytes)", "SYNAPC_MAX_CONSTANT_BYTES")


def test_buffer_after_the_flatbuffer(tmp_path: Path) -> None:
    # Models over 2 GiB keep buffers after the flatbuffer (offset, size). Before: one
    # outside the file gave "operator 0 (CONV_2D, output 'y'): buffer is smaller than
    # requested size".
    b = conv_model()
    weights = b._buffers[1]
    b.external[1] = (2, len(weights))
    offset = -(-len(b.build()) // 16) * 16
    b.external[1] = (offset, len(weights))
    data = b.build()
    data += b"\0" * (offset - len(data)) + weights
    model = synapc.import_model(save(tmp_path, data))
    np.testing.assert_array_equal(model.weights["w"], np.ones((3, 1, 1, 2), F32))
    short = save(tmp_path, data[:-4], "short.tflite")
    refused(short, "corrupt TFLite model: buffer 1", "run past the end of the file")


def test_sparse_constant(tmp_path: Path) -> None:
    # before: the sparse tensor's buffer was read as the dense tensor (these sizes agree,
    # so the model imported with whatever values that gave)
    b = conv_model()
    b.sparse.add(1)
    refused(save(tmp_path, b.build()), "tensor 1 ('w') is sparse")


def test_long_integer_list_is_not_turned_into_python_ints(tmp_path: Path) -> None:
    # before: every value of the constant became a Python int first (a 400 MB constant
    # meant gigabytes of them)
    data = one_op(
        "TRANSPOSE",
        [("x", [2, 3], F32, None), ("perm", [100], I32, np.arange(100))],
        [3, 2],
    )
    refused(save(tmp_path, data), "perm (input 1) has 100 values; at most 64")


def test_zero_bias_is_checked_before_it_is_allocated(tmp_path: Path) -> None:
    # A 16x8 convolution without bias gets a zero bias with one value per output channel.
    # Before: np.zeros(2**31 - 1) for an output of shape [0, 1, 1, 2**31 - 1] (which has
    # no elements, so passed every other check).
    b = FuzzBuilder()
    x = b.input("x", [1, 1, 1, 1], np.int16, quant=Quant(0.1, 0))
    w = b.constant("w", np.ones((1, 1, 1, 1), I8), quant=Quant(0.1, 0))
    y = b.tensor("y", [0, 1, 1, 2**31 - 1], np.int16, quant=Quant(0.1, 0))
    b.op(
        "CONV_2D",
        [x, w],
        [y],
        padding="VALID",
        stride_w=1,
        stride_h=1,
        quantized_bias_type="INT32",
    )
    b.output(y)
    refused(save(tmp_path, b.build()), "zero bias (elements of [2147483647])")
