"""ONNX reductions, normalizations and Lp pooling through synapc (GENERIC) against ONNX's
reference implementation or the operator's formula in numpy: every opset form of the
Reduce* operators (axes as attribute or constant input, keepdims, noop_with_empty_axes,
integer types), Hardmax, CumSum, LpNormalization, MeanVarianceNormalization,
GroupNormalization, RMSNormalization, LpPool and GlobalLpPool, on tensors the importer
holds channels-last (the output of a convolution) as well as in their ONNX layout; and
the refusals: one line naming the node and the operator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import synapc
from synapc.importers.onnx import import_onnx
from synapc.testing.onnx_conformance import compare

RNG = np.random.default_rng(7)
#: A 1x1 convolution from 2 to 3 channels: its output is held channels-last.
CONV_WEIGHTS = RNG.standard_normal((3, 2, 1, 1)).astype(np.float32)


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    opset: int,
    initializers: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    """A graph of `nodes` from graph inputs typed like `inputs` to output ``y``."""
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape
            )
            for name, a in inputs.items()
        ],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        [numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def run(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """`model` imported, compiled for GENERIC and run on `inputs`."""
    shapes = {name: a.shape for name, a in inputs.items()}
    imported = import_onnx(Path("m.onnx"), shapes, proto=model)
    return synapc.compile(imported, "GENERIC").run(list(inputs.values()))


def check(
    model: onnx.ModelProto,
    inputs: dict[str, np.ndarray],
    expected: list[np.ndarray] | None = None,
    rtol: float = 1e-4,
) -> None:
    """synapc's outputs match `expected` (default: ONNX's reference evaluator)."""
    if expected is None:
        expected = ReferenceEvaluator(model).run(None, inputs)
    reason = compare(run(model, inputs), expected, rtol=rtol, atol=1e-5)
    assert reason is None, reason


def refused(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> str:
    """The one-line message with which the import of `model` is refused."""
    shapes = {name: a.shape for name, a in inputs.items()}
    with pytest.raises(synapc.SynapcError) as error:
        import_onnx(Path("m.onnx"), shapes, proto=model)
    text = str(error.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def after_conv(node: onnx.NodeProto) -> list[onnx.NodeProto]:
    """A convolution of graph input ``x`` into ``t``, then `node` (reading ``t``)."""
    return [helper.make_node("Conv", ["x", "w"], ["t"]), node]


def data(shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
    """Random test data (small integers for integer types)."""
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(0 if np.dtype(dtype).kind == "u" else -5, 6, shape).astype(
            dtype
        )
    return RNG.standard_normal(shape).astype(dtype)


# -- Reduce* -----------------------------------------------------------------------------
REDUCTIONS = [
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceProd",
    "ReduceSumSquare",
    "ReduceMean",
    "ReduceSum",
    "ReduceMax",
    "ReduceMin",
]


def reduction_node(
    op: str, opset: int, axes: list[int] | None, source: str = "t", **attrs: int
) -> tuple[onnx.NodeProto, dict[str, np.ndarray]]:
    """A reduction of `source` over `axes` as the opset takes them (attribute, or a
    constant input ``axes`` returned as an initializer)."""
    as_input = opset >= (13 if op == "ReduceSum" else 18)
    if axes is None:
        return helper.make_node(op, [source], ["y"], **attrs), {}
    if as_input:
        node = helper.make_node(op, [source, "axes"], ["y"], **attrs)
        return node, {"axes": np.asarray(axes, np.int64)}
    return helper.make_node(op, [source], ["y"], axes=axes, **attrs), {}


def positive_if_log(op: str, x: np.ndarray) -> np.ndarray:
    """ReduceLogSum's inputs made positive (its sums must be)."""
    return np.abs(x) + 0.5 if op == "ReduceLogSum" else x


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize(
    "axes,keepdims", [([1], 0), ([-1, 2], 1), ([0, 3], 0)], ids=["c", "hw-keep", "nw"]
)
def test_reduction_of_channels_last_tensor(
    op: str, opset: int, axes: list[int], keepdims: int
) -> None:
    """Reductions over a convolution's output (held NHWC) reduce ONNX's logical axes
    (its absolute value for ReduceLogSum, whose sums must be positive)."""
    node, inits = reduction_node(op, opset, axes, keepdims=keepdims)
    conv = helper.make_node("Conv", ["x", "w"], ["c"])
    magnitude = helper.make_node("Abs", ["c"], ["t"])
    identity = helper.make_node("Identity", ["c"], ["t"])
    nodes = [conv, magnitude if op == "ReduceLogSum" else identity, node]
    x = data((2, 2, 3, 4))
    check(make_model(nodes, {"x": x}, opset, {"w": CONV_WEIGHTS, **inits}), {"x": x})


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("noop", [0, 1])
def test_reduction_without_axes(op: str, noop: int) -> None:
    """No axes: every axis, or with noop_with_empty_axes only the steps around the
    reduction (ReduceL1 is |x|, ReduceSumSquare x * x, ReduceLogSum log x)."""
    node, _ = reduction_node(op, 18, None, source="x", noop_with_empty_axes=noop)
    x = positive_if_log(op, data((2, 3, 4)))
    check(make_model([node], {"x": x}, 18), {"x": x})


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceSumSquare", "ReduceLogSumExp"])
def test_reduction_with_empty_constant_axes(op: str) -> None:
    """An empty `axes` input is no axes given."""
    node, _ = reduction_node(op, 18, [], source="x", keepdims=0)
    x = data((2, 3))
    model = make_model([node], {"x": x}, 18, {"axes": np.zeros((0,), np.int64)})
    check(model, {"x": x})


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceProd"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_integer_reductions(op: str, dtype: type) -> None:
    """Integer reductions stay integers (ReduceL2 truncates its square root). The
    output type is the input's (onnx.reference's ReduceSumSquare widens int32 sums)."""
    node, inits = reduction_node(op, 18, [1], source="x", keepdims=0)
    x = data((3, 4, 2), dtype)
    model = make_model([node], {"x": x}, 18, inits)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(dtype)
    check(model, {"x": x}, [want])


@pytest.mark.parametrize("op", ["ReduceL2", "ReduceLogSumExp", "ReduceProd"])
def test_reduction_over_empty_axis(op: str) -> None:
    """A reduction over an axis of size 0 gives the reduction's value over nothing."""
    node, inits = reduction_node(op, 18, [1], source="x", keepdims=1)
    x = np.zeros((2, 0, 3), np.float32)
    model = make_model([node], {"x": x}, 18, inits)
    imported = import_onnx(Path("m.onnx"), {"x": x.shape}, proto=model)
    out = synapc.compile(imported, "GENERIC").run([x])[0]
    fill = {"ReduceL2": 0.0, "ReduceLogSumExp": -np.inf, "ReduceProd": 1.0}[op]
    np.testing.assert_array_equal(out, np.full((2, 1, 3), fill, np.float32))


def test_log_sum_exp_is_stable() -> None:
    """ReduceLogSumExp subtracts the maximum: large values do not overflow, and an
    infinite maximum gives inf (all -inf gives -inf), not NaN."""
    x = np.array(
        [
            [1000.0, 1000.0, -5.0],
            [-1000.0, -999.0, -1001.0],
            [np.inf, 1.0, 2.0],
            [-np.inf, -np.inf, -np.inf],
        ],
        np.float32,
    )
    node, inits = reduction_node("ReduceLogSumExp", 18, [1], source="x", keepdims=0)
    out = run(make_model([node], {"x": x}, 18, inits), {"x": x})[0]
    finite = x[:2].astype(np.float64)
    top = finite.max(axis=1, keepdims=True)
    want = (top + np.log(np.exp(finite - top).sum(axis=1, keepdims=True)))[:, 0]
    np.testing.assert_allclose(out[:2], want, rtol=1e-6)
    assert out[2] == np.inf and out[3] == -np.inf


def test_reduction_axes_must_be_constant() -> None:
    """Axes from a run-time tensor are refused, naming the node and the input."""
    x = data((2, 3))
    model = make_model(
        [helper.make_node("ReduceL1", ["x", "axes"], ["y"], name="l1")],
        {"x": x, "axes": np.array([1], np.int64)},
        18,
    )
    text = refused(model, {"x": x, "axes": np.array([1], np.int64)})
    assert "node 'l1' (ReduceL1, opset 18): axes (input 1) must be a constant" in text


@pytest.mark.parametrize("op", ["ReduceLogSum", "ReduceLogSumExp"])
def test_log_reductions_refuse_integers(op: str) -> None:
    """ReduceLogSum(Exp) is defined for floats only."""
    node, inits = reduction_node(op, 18, [1], source="x")
    x = data((2, 3), np.int32)
    text = refused(make_model([node], {"x": x}, 18, inits), {"x": x})
    assert f"({op}, opset 18)" in text and "takes floats" in text


def test_arithmetic_reductions_refuse_booleans() -> None:
    """A sum of booleans is not an ONNX reduction."""
    node, inits = reduction_node("ReduceSumSquare", 18, [1], source="x")
    x = np.zeros((2, 3), np.bool_)
    text = refused(make_model([node], {"x": x}, 18, inits), {"x": x})
    assert "(ReduceSumSquare, opset 18)" in text and "boolean" in text


def test_reduction_axis_out_of_range_is_refused() -> None:
    """An axis beyond the input's rank is named."""
    node, inits = reduction_node("ReduceProd", 13, [3], source="x")
    x = data((2, 3))
    text = refused(make_model([node], {"x": x}, 13, inits), {"x": x})
    assert "(ReduceProd, opset 13): reduction axis 3 is out of range for rank 2" in text


# -- Hardmax -----------------------------------------------------------------------------
def hardmax_coerced(x: np.ndarray, axis: int) -> np.ndarray:
    """Hardmax before opset 13: one-hot of the first maximum of each row of x
    flattened to 2-D at `axis`."""
    flat = x.reshape(int(np.prod(x.shape[:axis])), -1)
    hot = np.zeros_like(flat)
    hot[np.arange(flat.shape[0]), flat.argmax(axis=1)] = 1
    return hot.reshape(x.shape)


@pytest.mark.parametrize("axis", [None, 0, 1, -2])
@pytest.mark.parametrize("layout", ["onnx", "channels_last"])
def test_hardmax(axis: int | None, layout: str) -> None:
    """Opset 13 Hardmax along `axis` (default -1); ties go to the first maximum."""
    attrs = {} if axis is None else {"axis": axis}
    x = np.round(data((2, 2, 3, 4)))  # rounded: ties
    source = "t" if layout == "channels_last" else "x"
    node = helper.make_node("Hardmax", [source], ["y"], **attrs)
    nodes = after_conv(node) if layout == "channels_last" else [node]
    inits = {"w": np.round(CONV_WEIGHTS)} if layout == "channels_last" else {}
    check(make_model(nodes, {"x": x}, 13, inits), {"x": x})


@pytest.mark.parametrize("axis", [None, 0, 2, -1])
def test_hardmax_before_opset_13_flattens(axis: int | None) -> None:
    """Opset 11 Hardmax works on the input flattened to 2-D at `axis` (default 1)."""
    attrs = {} if axis is None else {"axis": axis}
    x = np.round(data((2, 3, 4)))
    model = make_model([helper.make_node("Hardmax", ["x"], ["y"], **attrs)], {"x": x}, 11)
    want = hardmax_coerced(x, 1 if axis is None else axis % 3)
    check(model, {"x": x}, [want])


# -- CumSum ------------------------------------------------------------------------------
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [1, -1])
def test_cumsum_of_channels_last_tensor(exclusive: int, reverse: int, axis: int) -> None:
    """CumSum along a logical axis of a convolution's output (held NHWC)."""
    node = helper.make_node(
        "CumSum", ["t", "axis"], ["y"], exclusive=exclusive, reverse=reverse
    )
    x = data((1, 2, 3, 4))
    inits = {"w": CONV_WEIGHTS, "axis": np.array(axis, np.int32)}
    check(make_model(after_conv(node), {"x": x}, 14, inits), {"x": x})


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.float16])
def test_cumsum_types(dtype: type) -> None:
    """CumSum of integers and float16."""
    x = data((3, 5), dtype)
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=1)
    model = make_model([node], {"x": x}, 14, {"axis": np.array(0, np.int64)})
    check(model, {"x": x}, rtol=1e-2 if dtype == np.float16 else 1e-4)


def test_cumsum_axis_must_be_constant() -> None:
    """A run-time axis is refused, naming the node and the input."""
    x = data((2, 3))
    axis = np.array(0, np.int64)
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], name="running")
    text = refused(make_model([node], {"x": x, "axis": axis}, 14), {"x": x, "axis": axis})
    assert "node 'running' (CumSum, opset 14): axis (input 1) must be a constant" in text


# -- LpNormalization ---------------------------------------------------------------------
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("layout", ["onnx", "channels_last"])
def test_lp_normalization(p: int, axis: int, layout: str) -> None:
    """``x / ||x||_p`` along the axis; a zero vector stays zero."""
    x = data((1, 2, 3, 4))
    x[0, :, 0, 0] = 0  # a zero vector along axis 1 of the input (and of the conv output)
    source = "t" if layout == "channels_last" else "x"
    node = helper.make_node("LpNormalization", [source], ["y"], p=p, axis=axis)
    nodes = after_conv(node) if layout == "channels_last" else [node]
    inits = {"w": CONV_WEIGHTS} if layout == "channels_last" else {}
    model = make_model(nodes, {"x": x}, 22, inits)
    t = x if layout == "onnx" else np.einsum("oi,nihw->nohw", CONV_WEIGHTS[:, :, 0, 0], x)
    norm = np.sum(np.abs(t) ** p, axis=axis, keepdims=True) ** (1 / p)
    want = np.where(norm == 0, 0, t / np.where(norm == 0, 1, norm)).astype(np.float32)
    check(model, {"x": x}, [want])


def test_lp_normalization_refuses_other_orders() -> None:
    """ONNX defines p = 1 and 2 only."""
    x = data((2, 3))
    node = helper.make_node("LpNormalization", ["x"], ["y"], p=3, name="lp")
    text = refused(make_model([node], {"x": x}, 22), {"x": x})
    assert "node 'lp' (LpNormalization, opset 22): attribute 'p' 3" in text


# -- MeanVarianceNormalization, GroupNormalization, RMSNormalization --------------------
@pytest.mark.parametrize("axes", [None, [1], [0, 1, 2, 3], []])
@pytest.mark.parametrize("layout", ["onnx", "channels_last"])
def test_mean_variance_normalization(axes: list[int] | None, layout: str) -> None:
    """``(x - mean) / (std + 1e-9)`` over the axes (default [0, 2, 3]; [] is all)."""
    x = data((2, 2, 3, 4))
    source = "t" if layout == "channels_last" else "x"
    node = helper.make_node("MeanVarianceNormalization", [source], ["y"])
    if axes is not None:
        ints = onnx.AttributeProto.INTS
        node.attribute.append(helper.make_attribute("axes", axes, attr_type=ints))
    nodes = after_conv(node) if layout == "channels_last" else [node]
    inits = {"w": CONV_WEIGHTS} if layout == "channels_last" else {}
    t = x if layout == "onnx" else np.einsum("oi,nihw->nohw", CONV_WEIGHTS[:, :, 0, 0], x)
    reduce_over = tuple(axes or range(4)) if axes is not None else (0, 2, 3)
    mean = t.mean(axis=reduce_over, keepdims=True)
    std = np.sqrt(((t - mean) ** 2).mean(axis=reduce_over, keepdims=True))
    want = ((t - mean) / (std + 1e-9)).astype(np.float32)
    check(make_model(nodes, {"x": x}, 13, inits), {"x": x}, [want])


def group_norm(
    x: np.ndarray, groups: int, scale: np.ndarray, bias: np.ndarray, eps: float
) -> np.ndarray:
    """GroupNormalization in numpy; `scale` and `bias` per channel."""
    n, c = x.shape[:2]
    grouped = x.reshape(n, groups, -1).astype(np.float64)
    mean = grouped.mean(axis=2, keepdims=True)
    var = grouped.var(axis=2, keepdims=True)
    normalized = ((grouped - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return (normalized * scale.reshape(shape) + bias.reshape(shape)).astype(np.float32)


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("shape", [(2, 6, 3, 4), (2, 6, 5), (3, 6)])
@pytest.mark.parametrize("params", ["constant", "run-time"])
def test_group_normalization(opset: int, shape: tuple[int, ...], params: str) -> None:
    """Statistics per instance and group of channels; scale and bias per channel (per
    group before opset 21), constant or computed at run time."""
    groups = 3
    count = groups if opset < 21 else shape[1]
    x, scale, bias = data(shape), data((count,)), data((count,))
    node = helper.make_node(
        "GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups, epsilon=1e-3
    )
    if params == "constant":
        model = make_model([node], {"x": x}, opset, {"s": scale, "b": bias})
        inputs = {"x": x}
    else:
        inputs = {"x": x, "s": scale, "b": bias}
        model = make_model([node], inputs, opset)
    per_channel = [np.repeat(p, shape[1] // count) for p in (scale, bias)]
    check(model, inputs, [group_norm(x, groups, *per_channel, 1e-3)])


def test_group_normalization_of_channels_last_tensor() -> None:
    """GroupNormalization of a convolution's output needs no transpose."""
    x = data((1, 2, 3, 4))
    node = helper.make_node("GroupNormalization", ["t", "s", "b"], ["y"], num_groups=3)
    scale, bias = data((3,)), data((3,))
    inits = {"w": CONV_WEIGHTS, "s": scale, "b": bias}
    model = make_model(after_conv(node), {"x": x}, 21, inits)
    t = np.einsum("oi,nihw->nohw", CONV_WEIGHTS[:, :, 0, 0], x)
    check(model, {"x": x}, [group_norm(t, 3, scale, bias, 1e-5)])
    conv_only = make_model(
        [helper.make_node("Conv", ["x", "w"], ["y"])], {"x": x}, 21, {"w": CONV_WEIGHTS}
    )
    transposes = [
        str(import_onnx(Path("m.onnx"), {"x": x.shape}, proto=m).module).count(
            "synap.transpose"
        )
        for m in (model, conv_only)
    ]
    assert transposes[0] == transposes[1]  # those at the model's input and output


@pytest.mark.parametrize(
    "attrs,message",
    [
        ({"num_groups": 4}, "num_groups 4 must be a positive divisor of the 6 channels"),
        ({"num_groups": 3, "stash_type": 10}, "stash_type 10 is not supported"),
    ],
)
def test_group_normalization_refusals(attrs: dict[str, int], message: str) -> None:
    """Groups that do not divide the channels, and other statistics types, are named."""
    x = data((1, 6, 2, 2))
    node = helper.make_node(
        "GroupNormalization", ["x", "s", "b"], ["y"], name="gn", **attrs
    )
    inits = {"s": data((6,)), "b": data((6,))}
    text = refused(make_model([node], {"x": x}, 21, inits), {"x": x})
    assert "node 'gn' (GroupNormalization, opset 21)" in text and message in text


@pytest.mark.parametrize(
    "axis,scale_shape", [(-1, (5,)), (1, (3, 4, 5)), (2, (1, 5)), (0, (2, 3, 4, 5))]
)
@pytest.mark.parametrize("layout", ["onnx", "channels_last"])
def test_rms_normalization(axis: int, scale_shape: tuple[int, ...], layout: str) -> None:
    """``x / sqrt(mean(x * x) + eps) * scale`` over the axes from `axis` on."""
    if layout == "channels_last":
        x = data((2, 2, 4, 5))
        node = helper.make_node("RMSNormalization", ["t", "s"], ["y"], axis=axis)
        inits = {"w": CONV_WEIGHTS, "s": data(scale_shape)}
        model = make_model(after_conv(node), {"x": x}, 23, inits)
    else:
        x = data((2, 3, 4, 5))
        node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=axis)
        model = make_model([node], {"x": x}, 23, {"s": data(scale_shape)})
    check(model, {"x": x})


@pytest.mark.parametrize("params", ["constant", "run-time"])
def test_rms_normalization_float16_with_float32_scale(params: str) -> None:
    """A float16 input with a float32 scale (ONNX lets their types differ): the scale is
    converted on the host when constant, by a cast when computed."""
    x, scale = data((2, 3, 4), np.float16), data((4,), np.float32)
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"])
    if params == "constant":
        inputs = {"x": x}
        model = make_model([node], inputs, 23, {"s": scale})
    else:
        inputs = {"x": x, "s": scale}
        model = make_model([node], inputs, 23)
    check(model, inputs, rtol=1e-2)


def test_rms_normalization_refuses_a_scale_that_does_not_broadcast() -> None:
    """The scale must broadcast to the input."""
    x = data((2, 3, 4))
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], name="rms")
    text = refused(make_model([node], {"x": x}, 23, {"s": data((3,))}), {"x": x})
    assert "node 'rms' (RMSNormalization, opset 23): scale 's' of shape [3]" in text


# -- LpPool, GlobalLpPool ----------------------------------------------------------------
def lp_pool(
    x: np.ndarray,
    p: float,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    pads: tuple[int, int, int, int],
    out: tuple[int, int],
) -> np.ndarray:
    """2-D Lp pooling in numpy (zero padding; `pads` top, left, bottom, right)."""
    padded = np.pad(
        np.abs(x.astype(np.float64)) ** p,
        [
            (0, 0),
            (0, 0),
            (pads[0], pads[2] + kernel[0] * dilations[0] * strides[0]),
            (pads[1], pads[3] + kernel[1] * dilations[1] * strides[1]),
        ],
    )
    total = np.zeros(x.shape[:2] + out)
    for i in range(kernel[0]):  # one strided slice per window cell
        for j in range(kernel[1]):
            rows = slice(
                i * dilations[0], i * dilations[0] + out[0] * strides[0], strides[0]
            )
            cols = slice(
                j * dilations[1], j * dilations[1] + out[1] * strides[1], strides[1]
            )
            total += padded[:, :, rows, cols]
    return (total ** (1 / p)).astype(np.float32)


@pytest.mark.parametrize(
    "p,kernel,strides,dilations,pads,ceil,out",
    [
        (2, (2, 2), (1, 1), (1, 1), (0, 0, 0, 0), 0, (4, 5)),
        (3, (3, 2), (2, 1), (1, 2), (1, 0, 1, 1), 0, (3, 5)),
        (1, (2, 3), (2, 2), (1, 2), (0, 1, 0, 0), 1, (3, 2)),
    ],
)
@pytest.mark.parametrize("layout", ["onnx", "channels_last"])
def test_lp_pool(
    p: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    pads: tuple[int, int, int, int],
    ceil: int,
    out: tuple[int, int],
    layout: str,
) -> None:
    """LpPool with p, strides, dilations, pads and ceil_mode."""
    x = data((1, 2, 5, 6))
    source = "t" if layout == "channels_last" else "x"
    node = helper.make_node(
        "LpPool",
        [source],
        ["y"],
        p=p,
        kernel_shape=list(kernel),
        strides=list(strides),
        dilations=list(dilations),
        pads=list(pads),
        ceil_mode=ceil,
    )
    nodes = after_conv(node) if layout == "channels_last" else [node]
    inits = {"w": CONV_WEIGHTS} if layout == "channels_last" else {}
    t = x if layout == "onnx" else np.einsum("oi,nihw->nohw", CONV_WEIGHTS[:, :, 0, 0], x)
    want = lp_pool(t, p, kernel, strides, dilations, pads, out)
    check(make_model(nodes, {"x": x}, 22, inits), {"x": x}, [want])


def test_lp_pool_1d_and_float_p_of_opset_1() -> None:
    """A 1-D LpPool, and opset 1's float `p`."""
    x = data((1, 3, 7))
    node = helper.make_node("LpPool", ["x"], ["y"], p=2.5, kernel_shape=[3], strides=[2])
    want = lp_pool(x[:, :, None, :], 2.5, (1, 3), (1, 2), (1, 1), (0, 0, 0, 0), (1, 3))
    check(make_model([node], {"x": x}, 1), {"x": x}, [want[:, :, 0, :]])


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("shape", [(1, 3, 4, 5), (2, 3, 6)])
def test_global_lp_pool(p: int, shape: tuple[int, ...]) -> None:
    """GlobalLpPool: the Lp norm over every spatial axis, kept as unit axes."""
    x = data(shape)
    axes = tuple(range(2, len(shape)))
    want = (np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1 / p)).astype(np.float32)
    model = make_model([helper.make_node("GlobalLpPool", ["x"], ["y"], p=p)], {"x": x}, 22)
    check(model, {"x": x}, [want])


@pytest.mark.parametrize(
    "op,attrs,dtype,message",
    [
        ("LpPool", {"p": 0, "kernel_shape": [2, 2]}, np.float32, "attribute 'p' 0"),
        ("LpPool", {"kernel_shape": [2, 2]}, np.int32, "the operator takes floats"),
        ("GlobalLpPool", {"p": -1}, np.float32, "attribute 'p' -1"),
    ],
)
def test_lp_pool_refusals(
    op: str, attrs: dict[str, object], dtype: type, message: str
) -> None:
    """Non-positive orders and integer inputs are named."""
    x = data((1, 2, 4, 4), dtype)
    node = helper.make_node(op, ["x"], ["y"], name="pool", **attrs)
    text = refused(make_model([node], {"x": x}, 22), {"x": x})
    assert f"node 'pool' ({op}, opset 22)" in text and message in text
