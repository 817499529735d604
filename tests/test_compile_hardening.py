"""Everything is checked at compile: what the JAX backend cannot run is refused by
`synapc.compile` (and `synapc.convert`) with a `SynapcError` naming the layer, never at
the first `run`; `Executable.run` checks its inputs.

One test per finding of the compile/run fuzzer (benchmarks/fuzz/compile.py) and of the
review before it; each failed on the code before the fix (a kernel's refusal or a Python
exception at the first `run`, a traceback at compile, or a model accepted and packaged).
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import synapc
from benchmarks.fuzz import compile as fuzz_compile
from synapc.backends.jax import lowering
from synapc.backends.jax.lowering import UnsupportedOpError
from synapc.backends.targets import get_target
from synapc.errors import SynapcError
from synapc.limits import use_limits
from synapc.mlir_io import print_module
from synapc.model import Model
from synapc.testing.pass_check import model_from_text
from synapc.testing.tflite_builder import ModelBuilder, Quant

BIG = 2**62


def _model(body: str, inputs: str, outputs: str, source: str = "net.mlir") -> Model:
    """A model whose @main takes `inputs`, computes `body` and returns `outputs` (MLIR
    snippets); constants get random weights."""
    text = f"builtin.module {{ func.func @main({inputs}) -> ({outputs}) {{\n{body}\n}} }}"
    model = model_from_text(text)
    model.source = source
    return model


def _refused(model: Model, *needles: str) -> str:
    """The message of the SynapcError `synapc.compile` raises for `model`; it names the
    model file and holds `needles`."""
    with pytest.raises(SynapcError) as caught:
        synapc.compile(model, "VS680")
    message = str(caught.value)
    assert message.startswith(f"{model.source}: "), message
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message
    return message


def _runs(model: Model) -> list[np.ndarray]:
    executable = synapc.compile(model, "VS680")
    return executable.run([np.zeros(i.shape, i.dtype) for i in executable.inputs])


Q8 = "!quant.uniform<i8:f32, 0.05:-3>"


# -- kernel refusals surface at compile, not at the first run ----------------------------
def test_quantized_softmax_scale_is_refused_at_compile() -> None:
    """normalization.py: `beta * s_in * 2**26 <= 1` was refused at the first run."""
    q_in, q_out = (
        "!quant.uniform<i8:f32, 1.0e-09>",
        "!quant.uniform<i8:f32, 0.00390625:-128>",
    )
    model = _model(
        f'%y = synap.softmax %x {{layer_name = "prob"}} : (tensor<1x10x{q_in}>) -> '
        f"tensor<1x10x{q_out}>\nfunc.return %y : tensor<1x10x{q_out}>",
        f"%x: tensor<1x10x{q_in}>",
        f"tensor<1x10x{q_out}>",
    )
    message = _refused(model, 'layer "prob" (op #0, synap.softmax)', "beta * input scale")
    assert "UnsupportedOpError" not in message


def test_quantized_add_output_scale_is_refused_at_compile() -> None:
    """elementwise.py: an ADD whose output scale TFLite refuses failed at the first run."""
    q_in, q_out = "!quant.uniform<i8:f32, 1.0>", "!quant.uniform<i8:f32, 1.0e-09>"
    model = _model(
        f'%y = synap.add %x, %x {{layer_name = "sum"}} : (tensor<4x{q_in}>, '
        f"tensor<4x{q_in}>) -> tensor<4x{q_out}>\nfunc.return %y : tensor<4x{q_out}>",
        f"%x: tensor<4x{q_in}>",
        f"tensor<4x{q_out}>",
    )
    with pytest.raises(UnsupportedOpError):  # a SynapcError, still an UnsupportedOpError
        synapc.compile(model, "VS680")
    _refused(model, 'layer "sum" (op #0, synap.add)', "TFLite refuses it")


@pytest.mark.parametrize(
    ("before", "after"),
    [("1x4x4x3", "1x0x8x3"), ("1x0x4x3", "1x8x8x3")],
    ids=["to", "from"],
)
def test_zero_size_resize_is_refused(before: str, after: str) -> None:
    """resize.py: resizing to 0 rows divided by zero; from 0 rows failed at the first run
    (a gather from an empty axis)."""
    model = _model(
        f'%y = synap.resize %x {{layer_name = "up", mode = #synap<resize_mode bilinear>}} '
        f": (tensor<{before}xf32>) -> tensor<{after}xf32>\n"
        f"func.return %y : tensor<{after}xf32>",
        f"%x: tensor<{before}xf32>",
        f"tensor<{after}xf32>",
    )
    _refused(model, 'layer "up" (op #0, synap.resize)', "at least 1")


# -- sizes and attributes within the limits -----------------------------------------------
def test_conv_pads_of_2_62_are_refused() -> None:
    """conv.py: pads of 2**62 (with strides that keep the result small) reached XLA."""
    model = _model(
        "%w = synap.constant dense_resource<w> : tensor<8x1x1x3xf32>\n"
        f'%y = synap.conv2d %x, %w {{layer_name = "c", strides = array<i64: {BIG}, {BIG}>, '
        f"pad = array<i64: {BIG}, 0, {BIG}, 0>}} : (tensor<1x4x4x3xf32>, "
        "tensor<8x1x1x3xf32>) -> tensor<1x2x2x8xf32>\n"
        "func.return %y : tensor<1x2x2x8xf32>",
        "%x: tensor<1x4x4x3xf32>",
        "tensor<1x2x2x8xf32>",
    )
    _refused(model, 'layer "c" (op #1, synap.conv2d)', "beyond the limit")


def test_padded_input_beyond_the_limits_is_refused() -> None:
    """Pads within the attribute limit whose padded input exceeds the tensor limit."""
    pad = 2**20
    model = _model(
        "%w = synap.constant dense_resource<w> : tensor<8x1x1x3xf32>\n"
        f'%y = synap.conv2d %x, %w {{layer_name = "c", strides = array<i64: {pad}, {pad}>, '
        f"pad = array<i64: {pad}, 0, {pad}, 0>}} : (tensor<1x4x4x3xf32>, "
        "tensor<8x1x1x3xf32>) -> tensor<1x2x2x8xf32>\n"
        "func.return %y : tensor<1x2x2x8xf32>",
        "%x: tensor<1x4x4x3xf32>",
        "tensor<1x2x2x8xf32>",
    )
    _refused(
        model, 'layer "c" (op #1, synap.conv2d): its padded input', "exceeds the limit"
    )


def test_input_dimension_of_2_62_is_refused() -> None:
    """An input dimension of 2**62 was accepted (and packaged by convert)."""
    t = f"tensor<{BIG}x4xf32>"
    model = _model(
        f'%y = synap.clamp %x {{layer_name = "r", min = 0.0 : f32}} : ({t}) -> {t}\n'
        f"func.return %y : {t}",
        f"%x: {t}",
        t,
    )
    _refused(model, "input #0", "SYNAPC_MAX_TENSOR_ELEMENTS")
    with pytest.raises(UnsupportedOpError, match="input #0"):  # what convert lowers with
        lowering.lower(model.main, model.weights, get_target("VS680"))


def test_result_beyond_the_limits_names_the_layer() -> None:
    model = _model(
        '%y = synap.tile %x {layer_name = "rep", multiples = array<i64: 65536, 65536>} : '
        "(tensor<2x2xf32>) -> tensor<131072x131072xf32>\n"
        "func.return %y : tensor<131072x131072xf32>",
        "%x: tensor<2x2xf32>",
        "tensor<131072x131072xf32>",
    )
    _refused(model, 'layer "rep" (op #0, synap.tile): result #0', "exceeds the limit")


def test_intermediate_beyond_the_limits_names_the_layer() -> None:
    """The traced program is checked too: a convolution on 3 channels runs as one
    matrix product of gathered patches, 49 times the input here (a 7 x 7 kernel, the
    largest that runs so)."""
    model = _model(
        "%w = synap.constant dense_resource<w> : tensor<8x7x7x3xf32>\n"
        '%y = synap.conv2d %x, %w {layer_name = "wide"} : (tensor<1x64x64x3xf32>, '
        "tensor<8x7x7x3xf32>) -> tensor<1x58x58x8xf32>\n"
        "func.return %y : tensor<1x58x58x8xf32>",
        "%x: tensor<1x64x64x3xf32>",
        "tensor<1x58x58x8xf32>",
    )
    with use_limits(max_tensor_elements=100_000):
        _refused(model, 'layer "wide" (op #1, synap.conv2d): an intermediate float')
    assert _runs(model)[0].shape == (1, 58, 58, 8)  # within the default limits


def test_attribute_beyond_the_limits_is_refused() -> None:
    model = _model(
        '%y = synap.pad %x {layer_name = "p", pads = array<i64: 0, 0, 0, 4294967296>} : '
        "(tensor<2x2xf32>) -> tensor<2x4294967298xf32>\n"
        "func.return %y : tensor<2x4294967298xf32>",
        "%x: tensor<2x2xf32>",
        "tensor<2x4294967298xf32>",
    )
    _refused(model, 'layer "p" (op #0, synap.pad)')


def test_dynamic_input_is_refused() -> None:
    model = _model(
        "func.return %x : tensor<?x4xf32>", "%x: tensor<?x4xf32>", "tensor<?x4xf32>"
    )
    _refused(model, "input #0", "dynamic shape")


def test_unsupported_element_type_is_refused() -> None:
    """An element type numpy cannot hold (i4 raised TypeError before ml_dtypes' int4
    stored it; i3 has no storage at all)."""
    model = _model("func.return %x : tensor<4xi3>", "%x: tensor<4xi3>", "tensor<4xi3>")
    _refused(model, "input #0", "element type i3")


def test_ir_that_does_not_verify_is_refused() -> None:
    """compile raised xDSL's VerifyException."""
    model = _model(
        "%y = synap.clamp %x : (tensor<4xf32>) -> tensor<5xf32>\n"
        "func.return %y : tensor<5xf32>",
        "%x: tensor<4xf32>",
        "tensor<5xf32>",
    )
    _refused(model, "synap.clamp", "should be [4]")


# -- constants -----------------------------------------------------------------------------
def test_missing_weights_are_refused() -> None:
    """A constant without weights raised KeyError."""
    model = _model(
        '%w = synap.constant {layer_name = "bias"} dense_resource<b> : tensor<4xf32>\n'
        "%y = synap.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
        "func.return %y : tensor<4xf32>",
        "%x: tensor<4xf32>",
        "tensor<4xf32>",
    )
    del model.weights["b"]
    _refused(model, 'layer "bias" (op #0, synap.constant)', "weights 'b' are missing")


def test_weights_of_another_shape_are_refused() -> None:
    model = _model(
        "%w = synap.constant dense_resource<b> : tensor<4xf32>\n"
        "%y = synap.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
        "func.return %y : tensor<4xf32>",
        "%x: tensor<4xf32>",
        "tensor<4xf32>",
    )
    model.weights["b"] = np.zeros(5, np.float32)
    _refused(model, "op #0 (synap.constant)", "float32 [5]")


# -- fuzzer findings: Python exceptions while lowering ------------------------------------
@pytest.mark.parametrize(
    ("op", "operands"),
    [
        ("synap.add", 2),  # AssertionError: per-axis type has no single scale
        ("synap.max_pool2d", 1),
    ],
)
def test_per_axis_activations_are_refused(op: str, operands: int) -> None:
    """Kernels that need one scale asserted on a per-axis type while lowering."""
    q = "!quant.uniform<i8:f32:3, {0.1,0.2}>"
    t = f"tensor<1x2x2x2x{q}>"
    args = ", ".join(["%x"] * operands)
    props = " {kernel = array<i64: 1, 1>}" if op == "synap.max_pool2d" else ""
    model = _model(
        f"%y = {op} {args}{props} : ({', '.join([t] * operands)}) -> {t}\n"
        f"func.return %y : {t}",
        f"%x: {t}",
        t,
    )
    _refused(model, f"op #0 ({op})", "quantized per axis")


def test_per_axis_matmul_is_refused() -> None:
    q = "!quant.uniform<i8:f32:1, {0.1,0.2}>"
    model = _model(
        f"%y = synap.matmul %x, %x : (tensor<2x2x{q}>, tensor<2x2x{q}>) -> "
        f"tensor<2x2x{Q8}>\n"
        f"func.return %y : tensor<2x2x{Q8}>",
        f"%x: tensor<2x2x{q}>",
        f"tensor<2x2x{Q8}>",
    )
    _refused(model, "op #0 (synap.matmul)", "its lhs is quantized per axis")


def test_non_finite_rescale_multiplier_is_refused() -> None:
    """ValueError('quantize_multiplier needs finite multipliers') while lowering: a uint8
    layer's product of scales is a float32 one, here beyond float32's range."""
    q_in, q_out = "!quant.uniform<u8:f32, 3.0e+38:128>", "!quant.uniform<u8:f32, 1.0:128>"
    q_w, q_b = "!quant.uniform<u8:f32, 3.0e+38:128>", "!quant.uniform<i32:f32, 1.0>"
    model = _model(
        f"%w = synap.constant dense_resource<w> : tensor<2x1x1x2x{q_w}>\n"
        f"%b = synap.constant dense_resource<b> : tensor<2x{q_b}>\n"
        f'%y = synap.conv2d %x, %w, %b {{layer_name = "c"}} : (tensor<1x2x2x2x{q_in}>, '
        f"tensor<2x1x1x2x{q_w}>, tensor<2x{q_b}>) -> tensor<1x2x2x2x{q_out}>\n"
        f"func.return %y : tensor<1x2x2x2x{q_out}>",
        f"%x: tensor<1x2x2x2x{q_in}>",
        f"tensor<1x2x2x2x{q_out}>",
    )
    message = _refused(model, 'layer "c" (op #2, synap.conv2d)', "not finite")
    assert "ValueError" not in message


def test_scale_beyond_float32_is_refused() -> None:
    """ZeroDivisionError in quantized ADD / SUB: a scale of 5e-324 is 0 as the float32
    TFLite stores."""
    q_in, q_out = "!quant.uniform<i8:f32, 0.5>", "!quant.uniform<i8:f32, 5.0e-324>"
    model = _model(
        f'%y = synap.sub %x, %x {{layer_name = "d"}} : (tensor<4x{q_in}>, '
        f"tensor<4x{q_in}>) -> tensor<4x{q_out}>\nfunc.return %y : tensor<4x{q_out}>",
        f"%x: tensor<4x{q_in}>",
        f"tensor<4x{q_out}>",
    )
    _refused(model, 'layer "d" (op #0, synap.sub): result #0', "not a positive float32")


@pytest.mark.parametrize(
    ("op", "element", "needle"),
    [
        ("synap.sigmoid", "i32", "real-valued function"),  # TypeError: logistic of int32
        ("synap.swish", "ui8", "real-valued function"),
        ("synap.l2_normalize", "i8", "real-valued function"),
        ("synap.elu", "ui8", "real-valued function"),  # OverflowError: alpha to uint8
        ("synap.neg", "i1", "boolean (i1)"),  # TypeError: negative of bool
        ("synap.softmax", "i1", "real-valued function"),
    ],
)
def test_kernels_refuse_element_kinds_they_cannot_compute(
    op: str, element: str, needle: str
) -> None:
    """Real-valued functions of plain integers, arithmetic on booleans: TypeError or
    OverflowError from jax.numpy while lowering."""
    t = f"tensor<2x3x{element}>"
    model = _model(
        f'%y = {op} %x {{layer_name = "f"}} : ({t}) -> {t}\nfunc.return %y : {t}',
        f"%x: {t}",
        t,
    )
    _refused(model, f'layer "f" (op #0, {op}): operand #0', needle)


def test_integer_arithmetic_still_runs() -> None:
    t = "tensor<3xi32>"
    model = _model(
        f"%y = synap.sub %x, %x : ({t}, {t}) -> {t}\n"
        f"%z = synap.neg %y : ({t}) -> {t}\nfunc.return %z : {t}",
        f"%x: {t}",
        t,
    )
    assert _runs(model)[0].tolist() == [0, 0, 0]


def test_bilinear_resize_of_integers_is_refused() -> None:
    """TypeError (float weights times booleans) while lowering; nearest neighbour moves
    booleans as they are."""
    for element in ("i1", "i32"):
        model = _model(
            '%y = synap.resize %x {layer_name = "up", mode = #synap<resize_mode bilinear>} '
            f": (tensor<1x2x2x1x{element}>) -> tensor<1x4x4x1x{element}>\n"
            f"func.return %y : tensor<1x4x4x1x{element}>",
            f"%x: tensor<1x2x2x1x{element}>",
            f"tensor<1x4x4x1x{element}>",
        )
        _refused(model, 'layer "up" (op #0, synap.resize)', "interpolates")
    nearest = _model(
        "%y = synap.resize %x : (tensor<1x2x2x1xi1>) -> tensor<1x4x4x1xi1>\n"
        "func.return %y : tensor<1x4x4x1xi1>",
        "%x: tensor<1x2x2x1xi1>",
        "tensor<1x4x4x1xi1>",
    )
    assert _runs(nearest)[0].shape == (1, 4, 4, 1)


def test_pad_value_outside_the_integer_type_is_refused() -> None:
    """OverflowError (-1 as uint8) while lowering."""
    model = _model(
        '%y = synap.pad %x {layer_name = "p", pads = array<i64: 1, 1>, value = -1.0 : f32} '
        ": (tensor<2xui8>) -> tensor<4xui8>\nfunc.return %y : tensor<4xui8>",
        "%x: tensor<2xui8>",
        "tensor<4xui8>",
    )
    _refused(model, 'layer "p" (op #0, synap.pad)', "pad value -1 is not a ui8 value")


@pytest.mark.parametrize("scale", ["1.0e-30", "1.0e+30"])
@pytest.mark.parametrize("op", ["synap.sigmoid", "synap.tanh"])
def test_int16_logistic_input_scale_out_of_range_is_refused(op: str, scale: str) -> None:
    """OverflowError (``3 << 31`` or a multiplier beyond int32 passed to XLA) while
    lowering an int16 LOGISTIC / TANH with an extreme input scale."""
    q_in = f"!quant.uniform<i16:f32, {scale}>"
    q_out = "!quant.uniform<i16:f32, 3.0517578125e-05>"
    model = _model(
        f'%y = {op} %x {{layer_name = "act"}} : (tensor<8x{q_in}>) -> tensor<8x{q_out}>\n'
        f"func.return %y : tensor<8x{q_out}>",
        f"%x: tensor<8x{q_in}>",
        f"tensor<8x{q_out}>",
    )
    message = _refused(model, f'layer "act" (op #0, {op})', "input scale")
    assert "Overflow" not in message


def test_quantized_clamp_to_an_infinite_bound_runs() -> None:
    """OverflowError (infinity to integer) quantizing the bound; an infinite bound is
    the storage extreme."""
    t = f"tensor<4x{Q8}>"
    model = _model(
        f"%y = synap.clamp %x {{min = 0x7F800000 : f32}} : ({t}) -> {t}\n"
        f"func.return %y : {t}",
        f"%x: {t}",
        t,
    )
    assert _runs(model)[0].tolist() == [127] * 4


def test_gather_from_an_empty_axis_is_refused() -> None:
    """IndexError (a non-empty take from an empty axis) while lowering."""
    model = _model(
        "%i = synap.constant dense_resource<i> : tensor<2xi32>\n"
        '%y = synap.gather %x, %i {layer_name = "g", axis = 1 : i64} : '
        "(tensor<3x0xf32>, tensor<2xi32>) -> tensor<3x2xf32>\n"
        "func.return %y : tensor<3x2xf32>",
        "%x: tensor<3x0xf32>",
        "tensor<3x2xf32>",
    )
    _refused(model, 'layer "g" (op #1, synap.gather)', "the axis is empty")


def test_conv_with_an_empty_window_is_refused() -> None:
    """ValueError (nothing to concatenate) lowering a convolution with a 0-row filter."""
    model = _model(
        "%w = synap.constant dense_resource<w> : tensor<4x0x3x3xf32>\n"
        '%y = synap.conv2d %x, %w {layer_name = "c"} : (tensor<1x4x4x3xf32>, '
        "tensor<4x0x3x3xf32>) -> tensor<1x5x2x4xf32>\n"
        "func.return %y : tensor<1x5x2x4xf32>",
        "%x: tensor<1x4x4x3xf32>",
        "tensor<1x5x2x4xf32>",
    )
    _refused(model, 'layer "c" (op #1, synap.conv2d)', "empty 0x3 window")


def test_computed_values_quantized_in_64_bits_are_refused() -> None:
    """OverflowError (a zero point of 2**63 - 1 passed to XLA) lowering a layer whose
    result is quantized with i64 storage."""
    q_out = "!quant.uniform<i64:f32, 1.0:9223372036854775807>"
    model = _model(
        f'%y = synap.quantize %x {{layer_name = "q"}} : (tensor<4xf32>) -> '
        f"tensor<4x{q_out}>\nfunc.return %y : tensor<4x{q_out}>",
        "%x: tensor<4xf32>",
        f"tensor<4x{q_out}>",
    )
    _refused(model, 'layer "q" (op #0, synap.quantize): result #0', "i64 storage")


def test_unsigned_64_bit_integers_run_as_32_bit_ones() -> None:
    """A cast to ui64 raised OverflowError (2**64 - 1 passed to XLA); uint64 now runs
    as uint32 on the device, as int64 runs as int32, and is uint64 again outside."""
    model = _model(
        '%y = synap.cast %x {layer_name = "c"} : (tensor<4xf32>) -> tensor<4xui64>\n'
        "func.return %y : tensor<4xui64>",
        "%x: tensor<4xf32>",
        "tensor<4xui64>",
    )
    x = np.array([0.0, 1.5, 7.0, 40000.0], np.float32)  # float16 on the NPU
    (y,) = synapc.compile(model, "VS680").run([x])
    assert y.dtype == np.uint64
    np.testing.assert_array_equal(y, [0, 1, 7, 40000])


def test_float_to_uint32_cast_saturates() -> None:
    """OverflowError (uint32's maximum as a Python int passed to XLA) lowering a
    saturating cast of floats to ui32."""
    model = _model(
        "%y = synap.cast %x : (tensor<3xf32>) -> tensor<3xui32>\n"
        "func.return %y : tensor<3xui32>",
        "%x: tensor<3xf32>",
        "tensor<3xui32>",
    )
    executable = synapc.compile(model, "VS680")
    out = executable.run([np.array([-5.0, 7.9, 1e20], np.float32)])
    assert out[0].tolist() == [0, 7, 2**32 - 1]


def test_empty_results_need_no_kernel() -> None:
    """ValueError (a maximum of nothing) lowering a softmax along an empty axis."""
    t = "tensor<2x0xf32>"
    model = _model(
        f"%y = synap.log_softmax %x {{axis = 1 : i64}} : ({t}) -> {t}\n"
        f"%z = synap.softmax %x : ({t}) -> {t}\nfunc.return %y, %z : {t}, {t}",
        f"%x: {t}",
        f"{t}, {t}",
    )
    assert [o.shape for o in _runs(model)] == [(2, 0), (2, 0)]


def test_extreme_over_an_empty_axis_is_refused() -> None:
    model = _model(
        '%y = synap.reduce_max %x {layer_name = "m", axes = array<i64: 1>} : '
        "(tensor<3x0xf32>) -> tensor<3xf32>\nfunc.return %y : tensor<3xf32>",
        "%x: tensor<3x0xf32>",
        "tensor<3xf32>",
    )
    _refused(model, 'layer "m" (op #0, synap.reduce_max)', "axis 1 of its input")


def test_concat_rescaling_32_bit_inputs_is_refused() -> None:
    """MemoryError: a lookup table with an entry for each of 2**32 stored values."""
    q_in, q_out = "!quant.uniform<i32:f32, 0.07>", "!quant.uniform<u8:f32, 0.2:2>"
    model = _model(
        f'%y = synap.concat %a, %b {{layer_name = "cat", axis = 0 : i64}} : '
        f"(tensor<2x{q_in}>, tensor<3x{q_out}>) -> tensor<5x{q_out}>\n"
        f"func.return %y : tensor<5x{q_out}>",
        f"%a: tensor<2x{q_in}>, %b: tensor<3x{q_out}>",
        f"tensor<5x{q_out}>",
    )
    _refused(model, 'layer "cat" (op #0, synap.concat)', "i32-quantized inputs")


# -- traced once, at compile ---------------------------------------------------------------
def test_the_first_run_does_not_trace_again(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model(
        '%y = synap.clamp %x {layer_name = "r", min = 0.0 : f32} : (tensor<4xf32>) -> '
        "tensor<4xf32>\nfunc.return %y : tensor<4xf32>",
        "%x: tensor<4xf32>",
        "tensor<4xf32>",
    )
    executable = synapc.compile(model, "GENERIC")
    calls = []
    original = lowering._run_kernel
    monkeypatch.setattr(lowering, "_run_kernel", lambda *a: calls.append(a) or original(*a))
    out = executable.run([np.array([-1, 0, 1, 2], np.float32)])
    assert out[0].tolist() == [0, 0, 1, 2]
    assert calls == []


# -- Executable.run checks its inputs ------------------------------------------------------
@pytest.fixture(scope="module")
def executable() -> synapc.Executable:
    q = "!quant.uniform<u8:f32, 0.1:128>"
    model = _model(
        f"%y = synap.dequantize %q : (tensor<2x{q}>) -> tensor<2xf32>\n"
        "%z = synap.add %x, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "func.return %z : tensor<2xf32>",
        f"%x: tensor<2xf32>, %q: tensor<2x{q}>",
        "tensor<2xf32>",
    )
    return synapc.compile(model, "GENERIC")


def test_run_accepts_what_converts_exactly(executable: synapc.Executable) -> None:
    out = executable.run([[1, 2], np.array([128, 138], np.int64)])  # ints for floats
    assert np.allclose(out[0], [1, 3])
    out = executable.run({"input_0": np.ones(2), "input_1": np.array([128, 128], np.uint8)})
    assert np.allclose(out[0], [1, 1])


@pytest.mark.parametrize(
    ("inputs", "needle"),
    [
        ([np.zeros(2, np.float32)], "expected 2 inputs, got 1"),
        (
            [np.zeros(3, np.float32), np.zeros(2, np.uint8)],
            "input 'input_0' (#0): has shape",
        ),
        ([np.zeros(2), np.zeros(2)], "input 'input_1' (#1): has float64 values"),
        ([np.zeros(2), np.array([0, 300])], "outside the uint8 range"),
        ([np.array(["a", "b"]), np.zeros(2, np.uint8)], "has <U1 values"),
        ([[1, [2]], np.zeros(2, np.uint8)], "not an array of numbers"),
        ({"input_0": 0, "input_1": 0, "extra": 0}, "unknown inputs: extra"),
        ({"input_0": np.zeros(2)}, "missing inputs: input_1"),
        (np.zeros((2, 2)), "pass the inputs as a list"),
    ],
)
def test_run_refuses_inputs_that_do_not_fit(
    executable: synapc.Executable, inputs: object, needle: str
) -> None:
    with pytest.raises(SynapcError) as caught:
        executable.run(inputs)  # type: ignore[arg-type]
    assert str(caught.value).startswith("net.mlir: ")
    assert needle in str(caught.value)


# -- convert -----------------------------------------------------------------------------
def test_convert_refuses_at_conversion_naming_the_file(tmp_path: Path) -> None:
    """A kernel's refusal surfaced from jax.export inside convert without the file."""
    b = ModelBuilder()
    x = b.input("x", [2, 5], np.int8, quant=Quant(1e-8, 0))
    y = b.tensor("y", [2, 5], np.int8, quant=Quant(1 / 256, -128))
    b.op("SOFTMAX", [x], [y], beta=1.0)
    b.output(y)
    path = b.save(tmp_path / "softmax.tflite")
    with pytest.raises(SynapcError) as caught:
        synapc.convert(path, "VS680", tmp_path / "out")
    assert str(caught.value).startswith(str(path)), caught.value
    assert "synap.softmax" in str(caught.value)
    assert not (tmp_path / "out").exists()


# -- the fuzzer's check -----------------------------------------------------------------
def test_fuzz_check_names_the_file(tmp_path: Path) -> None:
    """`check` of the compile fuzzer: accepted models run, refusals begin with the file
    (xDSL's parse errors too)."""
    path = tmp_path / "case.mlir"
    model = _model(
        '%y = synap.clamp %x {layer_name = "r", min = 0.0 : f32} : (tensor<4xf32>) -> '
        "tensor<4xf32>\nfunc.return %y : tensor<4xf32>",
        "%x: tensor<4xf32>",
        "tensor<4xf32>",
    )
    path.write_text(print_module(model.module))
    fuzz_compile.check(path)
    path.write_text("builtin.module { func.func @main( }")
    with pytest.raises(SynapcError, match=f"^{path}: "):
        fuzz_compile.check(path)


def test_fuzz_cases_are_deterministic() -> None:
    first = [(c.name, c.data) for c in fuzz_compile.cases(seed=3, count=8)]
    assert first == [(c.name, c.data) for c in fuzz_compile.cases(seed=3, count=8)]
    assert len({data for _, data in first}) > 1


def test_bfloat16_weights_compute_in_the_targets_float_type() -> None:
    """A bfloat16 model on VS680 (whose NPU computes float16): the activations were
    cast to float16 but the bfloat16 weights were not, and the transposed convolution
    refused the mixed dtypes with a TypeError (compile fuzzer, case 04436)."""
    model = _model(
        "%w = synap.constant dense_resource<w> : tensor<2x3x3x4xbf16>\n"
        '%y = synap.transpose_conv2d %x, %w {layer_name = "up", strides = '
        "array<i64: 2, 2>, pad = array<i64: 0, 1, 0, 1>} : (tensor<1x6x6x4xbf16>, "
        "tensor<2x3x3x4xbf16>) -> tensor<1x12x12x2xbf16>\n"
        "func.return %y : tensor<1x12x12x2xbf16>",
        "%x: tensor<1x6x6x4xbf16>",
        "tensor<1x12x12x2xbf16>",
    )
    x = np.random.default_rng(0).standard_normal((1, 6, 6, 4)).astype(np.float32)
    x = x.astype(ml_dtypes.bfloat16)
    on_npu = synapc.compile(model, "VS680").run([x])[0].astype(np.float32)
    in_float32 = synapc.compile(model, "GENERIC").run([x])[0].astype(np.float32)
    assert on_npu.shape == (1, 12, 12, 2)
    np.testing.assert_allclose(on_npu, in_float32, rtol=2e-2, atol=2e-2)


def test_a_pass_that_breaks_the_ir_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pass leaving IR that does not verify (a compiler bug) surfaces as one
    SynapcError naming the model and the pipeline, not as xDSL's exception (it did in
    `synapc.quantize` on SwiftF0)."""
    from dataclasses import dataclass

    from xdsl.dialects.func import FuncOp
    from xdsl.passes import ModulePass

    from synapc.convert.pipeline import run_pipeline
    from synapc.passes import registry

    @dataclass(frozen=True)
    class Breaking(ModulePass):
        name = "break-ir"

        def apply(self, ctx, op) -> None:  # type: ignore[no-untyped-def]
            func = next(o for o in op.body.block.ops if isinstance(o, FuncOp))
            layer = next(o for o in func.body.block.ops if o.name == "synap.tanh")
            layer.detach()
            func.body.block.add_op(layer)  # after the return

    monkeypatch.setitem(registry.PASSES, "break-ir", lambda: Breaking)
    t = "tensor<2xf32>"
    model = model_from_text(
        f"func.func @main(%x: {t}) -> {t} {{\n"
        f"  %y = synap.tanh %x : ({t}) -> {t}\n  func.return %y : {t}\n}}"
    )
    with pytest.raises(SynapcError, match="the IR after 'break-ir' does not verify"):
        run_pipeline(model, "break-ir")
