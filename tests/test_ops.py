"""synap ops: construction with inferred types, random attributes round-tripping through
text, shape rules against NumPy, and the documentation every op must carry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32, i32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation

from synapc.context import make_context
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import (
    OPS,
    conv,
    data_movement,
    elementwise,
    pool,
    reduce,
    resize,
    shapes,
)
from synapc.dialects.synap import activation as act
from synapc.dialects.synap.attributes import (
    Activation,
    CoordinateMode,
    DepthToSpaceMode,
    NearestRounding,
    PadMode,
    ResizeMode,
)
from synapc.dialects.synap.base import shape_of
from synapc.mlir_io import parse_module, print_module
from synapc.weights import WeightStore

REPO = Path(__file__).resolve().parents[1]


def module_of(arg_types: list[Attribute], body) -> ModuleOp:
    """A module with one function whose body `body(args)` builds and returns ops."""
    func = FuncOp("main", (arg_types, []))
    ops: list[Operation] = body(list(func.body.block.args))
    func.body.block.add_ops(ops)
    results = [r for r in ops[-1].results]
    func.body.block.add_op(ReturnOp(*results))
    func.function_type = FunctionType.from_lists(arg_types, [r.type for r in results])
    module = ModuleOp([func])
    module.verify()
    return module


def assert_round_trips(module: ModuleOp) -> None:
    for generic in (False, True):
        text = print_module(module) if not generic else _generic(module)
        again = parse_module(text, WeightStore())
        again.verify()
        assert (print_module(again) if not generic else _generic(again)) == text


def _generic(module: ModuleOp) -> str:
    import io

    from synapc.mlir_io import write_module

    out = io.StringIO()
    write_module(module, out, print_generic=True)
    return out.getvalue()


# -- documentation ---------------------------------------------------------------------
def test_every_op_has_a_docstring_and_a_lit_round_trip() -> None:
    lit_text = "\n".join(p.read_text() for p in (REPO / "lit_tests").rglob("*.mlir"))
    for op in OPS:
        assert op.__doc__ and len(op.__doc__.strip()) > 10, f"{op.name} has no docstring"
        assert f"{op.name} " in lit_text, f"{op.name} has no lit test"


def test_dialect_has_the_ops_real_models_need() -> None:
    names = {op.name.removeprefix("synap.") for op in OPS}
    required = [
        "constant",
        "conv2d",
        "depthwise_conv2d",
        "transpose_conv2d",
        "fully_connected",
        "matmul",
        "max_pool2d",
        "avg_pool2d",
        "reduce_mean",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "add",
        "sub",
        "mul",
        "div",
        "maximum",
        "minimum",
        "pow",
        "clamp",
        "leaky_relu",
        "prelu",
        "sigmoid",
        "tanh",
        "hard_swish",
        "hard_sigmoid",
        "swish",
        "gelu",
        "elu",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "abs",
        "neg",
        "square",
        "softmax",
        "log_softmax",
        "concat",
        "split",
        "slice",
        "strided_slice",
        "reshape",
        "transpose",
        "pad",
        "resize",
        "gather",
        "argmax",
        "argmin",
        "depth_to_space",
        "space_to_depth",
        "tile",
        "broadcast_to",
        "cast",
        "quantize",
        "dequantize",
        "l2_normalize",
    ]
    assert not set(required) - names


# -- construction ----------------------------------------------------------------------
def test_make_infers_conv_result_and_keeps_source_layer() -> None:
    store = WeightStore()
    x_type = TensorType(f32, [1, 9, 9, 4])

    def body(args):
        w = store.constant(np.zeros((6, 3, 3, 2), np.float32), "w")
        b = store.constant(np.zeros((6,), np.float32), "b")
        y = conv.Conv2DOp.make(
            args[0],
            w,
            b,
            strides=(2, 2),
            pad=(1, 1, 1, 1),
            groups=2,
            activation=Activation.RELU6,
            layer_name="c",
            layer_index=7,
        )
        return [w, b, y]

    module = module_of([x_type], body)
    op = next(o for o in module.walk() if isinstance(o, conv.Conv2DOp))
    assert shape_of(op.output) == (1, 5, 5, 6)
    assert op.layer_name.data == "c" and op.layer_index.value.data == 7
    assert op.props()["activation"] == Activation.RELU6


def test_make_rejects_unknown_and_ill_typed_properties() -> None:
    func = FuncOp("f", ([TensorType(f32, [2, 3])], []))
    value = func.body.block.args[0]
    with pytest.raises(TypeError, match="has no property 'alpha'"):
        act.SigmoidOp.make(value, alpha=0.1)
    with pytest.raises(TypeError, match="does not fit property 'axes'"):
        reduce.ReduceMeanOp.make(value, axes="x")


def test_quantized_elementwise_keeps_quantized_kind() -> None:
    qa = TensorType(UniformQuantizedType.per_tensor("i8", 0.5, -3), [4])
    qb = TensorType(UniformQuantizedType.per_tensor("i8", 0.25, 1), [4])
    module = module_of(
        [qa, qb], lambda a: [elementwise.AddOp.make(a[0], a[1], result_types=[qb])]
    )
    assert_round_trips(module)


# -- random attributes round-trip ------------------------------------------------------
activations = st.sampled_from(list(Activation))
small = st.integers(min_value=1, max_value=3)


@st.composite
def conv_cases(draw: st.DrawFn):
    groups = draw(st.sampled_from([1, 2]))
    cin, cout = groups * draw(small), groups * draw(small)
    kh, kw, sh, sw = (draw(small) for _ in range(4))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pad = tuple(draw(st.integers(0, 2)) for _ in range(4))
    h = draw(st.integers(dh * (kh - 1) + 1, 9))
    w = draw(st.integers(dw * (kw - 1) + 1, 9))
    quantized = draw(st.booleans())
    return dict(
        groups=groups,
        cin=cin,
        cout=cout,
        kernel=(kh, kw),
        strides=(sh, sw),
        dilations=(dh, dw),
        pad=pad,
        hw=(h, w),
        bias=draw(st.booleans()),
        activation=draw(activations),
        quantized=quantized,
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_cases())
def test_random_conv_round_trips(case) -> None:
    store = WeightStore()
    kh, kw = case["kernel"]
    if case["quantized"]:
        act_t = UniformQuantizedType.per_tensor("u8", 0.02, 128)
        w_t = UniformQuantizedType.per_axis("i8", 0, np.linspace(0.01, 0.1, case["cout"]))
        b_t = UniformQuantizedType.per_axis("i32", 0, np.linspace(2e-4, 2e-3, case["cout"]))
    else:
        act_t = w_t = b_t = f32
    x_type = TensorType(act_t, [1, *case["hw"], case["cin"]])

    def body(args):
        w = store.constant(
            np.zeros(
                (case["cout"], kh, kw, case["cin"] // case["groups"]),
                np.int8 if case["quantized"] else np.float32,
            ),
            "w",
            TensorType(w_t, [case["cout"], kh, kw, case["cin"] // case["groups"]]),
        )
        ops: list[Operation] = [w]
        b = None
        if case["bias"]:
            b = store.constant(
                np.zeros(case["cout"], np.int32 if case["quantized"] else np.float32),
                "b",
                TensorType(b_t, [case["cout"]]),
            )
            ops.append(b)
        ops.append(
            conv.Conv2DOp.make(
                args[0],
                w,
                b,
                strides=case["strides"],
                dilations=case["dilations"],
                pad=case["pad"],
                groups=case["groups"],
                activation=case["activation"],
                layer_name="conv",
                layer_index=3,
            )
        )
        return ops

    assert_round_trips(module_of([x_type], body))


@settings(max_examples=40, deadline=None)
@given(
    kernel=st.tuples(small, small),
    strides=st.tuples(small, small),
    pad=st.tuples(*[st.integers(0, 1)] * 4),
    include=st.booleans(),
    activation=activations,
    op=st.sampled_from([pool.MaxPool2DOp, pool.AvgPool2DOp]),
)
def test_random_pool_round_trips(kernel, strides, pad, include, activation, op) -> None:
    extra = {"count_include_pad": include} if op is pool.AvgPool2DOp else {}
    module = module_of(
        [TensorType(f32, [1, 7, 6, 2])],
        lambda a: [
            op.make(
                a[0],
                kernel=kernel,
                strides=strides,
                pad=pad,
                activation=activation,
                **extra,
            )
        ],
    )
    assert_round_trips(module)


floats = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(
    lambda v: float(np.float32(v))
)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_random_unary_attributes_round_trip(data) -> None:
    x = TensorType(f32, [2, 3, 4])
    low = data.draw(floats)
    high = data.draw(floats.filter(lambda v: v >= low))
    axis = data.draw(st.integers(-3, 2))
    builders = [
        lambda a: act.ClampOp.make(a, min=low, max=high),
        lambda a: act.ClampOp.make(a, min=low),
        lambda a: act.LeakyReluOp.make(a, alpha=data.draw(floats)),
        lambda a: act.HardSigmoidOp.make(
            a, alpha=data.draw(floats), beta=data.draw(floats)
        ),
        lambda a: act.SoftmaxOp.make(a, axis=axis, beta=data.draw(floats)),
        lambda a: act.GeluOp.make(a, approximate=data.draw(st.booleans())),
        lambda a: act.L2NormalizeOp.make(a, axis=axis, epsilon=data.draw(floats)),
        lambda a: reduce.ArgMaxOp.make(
            a, axis=axis, keep_dims=data.draw(st.booleans()), element_type=i32
        ),
    ]
    for build in builders:
        assert_round_trips(module_of([x], lambda a, build=build: [build(a[0])]))


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_random_data_movement_round_trips(data) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    rank = len(shape)
    x = TensorType(f32, list(shape))
    perm = data.draw(st.permutations(range(rank)))
    pads = data.draw(st.lists(st.integers(0, 3), min_size=2 * rank, max_size=2 * rank))
    mode = data.draw(st.sampled_from([PadMode.CONSTANT, PadMode.EDGE]))
    multiples = data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    axes = data.draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
    builders = [
        lambda a: data_movement.TransposeOp.make(a, perm=perm),
        lambda a: data_movement.PadOp.make(
            a, pads=pads, mode=mode, value=data.draw(floats)
        ),
        lambda a: data_movement.TileOp.make(a, multiples=multiples),
        lambda a: reduce.ReduceSumOp.make(a, axes=axes, keep_dims=data.draw(st.booleans())),
        lambda a: data_movement.ConcatOp.make(
            [a, a], axis=data.draw(st.integers(0, rank - 1))
        ),
    ]
    for build in builders:
        assert_round_trips(module_of([x], lambda a, build=build: [build(a[0])]))


@settings(max_examples=20, deadline=None)
@given(
    mode=st.sampled_from(list(ResizeMode)),
    coords=st.sampled_from(list(CoordinateMode)),
    rounding=st.sampled_from(list(NearestRounding)),
    d2s=st.sampled_from(list(DepthToSpaceMode)),
)
def test_enum_properties_round_trip(mode, coords, rounding, d2s) -> None:
    x = TensorType(f32, [1, 4, 4, 8])
    module = module_of(
        [x],
        lambda a: [
            resize.ResizeOp.make(
                a[0],
                mode=mode,
                coordinate_mode=coords,
                nearest_rounding=rounding,
                result_types=[TensorType(f32, [1, 7, 9, 8])],
            ),
        ],
    )
    assert_round_trips(module)
    module = module_of(
        [x], lambda a: [data_movement.DepthToSpaceOp.make(a[0], block_size=2, mode=d2s)]
    )
    assert_round_trips(module)


# -- shape rules against NumPy ---------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_strided_slice_matches_numpy_slicing(data) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    begin, end, strides = [], [], []
    for dim in shape:
        stride = data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))
        b = data.draw(st.integers(0, dim if stride > 0 else dim - 1))
        e = data.draw(st.integers(-1 if stride < 0 else 0, dim))
        begin.append(b), end.append(e), strides.append(stride)
    index = tuple(
        slice(b, None if e == -1 else e, s)
        for b, e, s in zip(begin, end, strides, strict=True)
    )
    expected = np.zeros(shape)[index].shape
    assert shapes.strided_slice(shape, begin, end, strides) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from([1, 2, 3]), max_size=4), min_size=2, max_size=3))
def test_broadcast_matches_numpy(shape_lists) -> None:
    shape_tuples = [tuple(s) for s in shape_lists]
    try:
        expected = np.broadcast_shapes(*shape_tuples)
    except ValueError:
        with pytest.raises(shapes.ShapeError):
            shapes.broadcast(*shape_tuples)
        return
    assert shapes.broadcast(*shape_tuples) == expected


def test_shape_rules_match_numpy_on_examples() -> None:
    x = np.zeros((2, 3, 4))
    assert shapes.gather(x.shape, (5, 2), 1) == np.take(x, np.zeros((5, 2), int), 1).shape
    assert shapes.tile(x.shape, (2, 1, 3)) == np.tile(x, (2, 1, 3)).shape
    assert (
        shapes.pad(x.shape, (1, 0, 2, 2, 0, 3)) == np.pad(x, ((1, 0), (2, 2), (0, 3))).shape
    )
    assert shapes.matmul((5, 1, 2, 3), (4, 3, 7), False, False) == (5, 4, 2, 7)
    assert shapes.matmul((2, 3), (7, 3), False, True) == (2, 7)
    assert shapes.reduce(x.shape, (0, -1), True) == np.sum(x, (0, 2), keepdims=True).shape
    assert shapes.depth_to_space((1, 2, 3, 8), 2) == (1, 4, 6, 2)
    assert shapes.space_to_depth((1, 4, 6, 2), 2) == (1, 2, 3, 8)
    assert shapes.transpose_conv2d(
        (1, 4, 4, 3), (5, 3, 3, 3), (2, 2), (1, 1), (1, 0, 1, 0)
    ) == (1, 8, 8, 5)
    assert shapes.transpose_conv2d(
        (1, 4, 4, 3), (5, 3, 3, 3), (2, 2), (1, 1), (1, -1, 1, -1)
    ) == (1, 9, 9, 5)


def test_context_loads_every_dialect() -> None:
    ctx = make_context()
    for op in OPS:
        assert ctx.get_optional_op(op.name) is op
