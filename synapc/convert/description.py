"""The package's ``description.json``: the compiled graph as people look at it.

One entry per layer the package runs, in the order of `model_layers` (subgraph by
subgraph, each in its layer order, the order its memory plan counts layers in): name,
type, subgraph, delegate and engine, the source layers it computes, where each operand
comes from (a model input or a result of an earlier layer, across subgraph boundaries),
its results and weights with their types on the target, the latency model's estimated
time, why the NPU runs it or not, and for a quantized model the SQNR of its output
against the float model. `synapc report` draws the report from it and the package alone
(`synapc.report`); the format is checked by `synapc.backends.package.description`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from synapc.backends.jax.lowering import delegate_float_dtype
from synapc.backends.targets import Target
from synapc.backends.targets.latency import layer_time
from synapc.backends.targets.support import layer_support
from synapc.convert.executable import (
    layer_name,
    layer_ops,
    package_functions,
    subgraph_calls,
)
from synapc.convert.model_info import type_text
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.layer_patterns import source_layers
from synapc.quantization.compare import layer_key

#: A reference to a value: ``[-1, i]`` model input i, ``[k, j]`` result j of layer k.
Ref = list[int]


def _engine(op: Operation, delegate: str, target: Target) -> tuple[str, str]:
    """The engine running `op` on `delegate` and why (the NPU's rules for ``npu``)."""
    support = layer_support(op, target)
    if delegate == "npu" and support.engine is not None:
        return support.engine, support.reason
    return delegate.upper(), support.reason


def _tensor(value: SSAValue, float_dtype: np.dtype) -> dict[str, Any]:
    t = value.type
    if not isinstance(t, TensorType):
        return {"shape": [], "type": str(t)}
    return {
        "shape": [int(d) for d in t.get_shape()],
        "type": type_text(t.element_type, float_dtype),
    }


def _sqnr(value: float | None) -> float | str | None:
    """JSON has no infinity: a lossless layer's SQNR is the string "inf"."""
    if value is None or math.isnan(value):
        return None
    return "inf" if math.isinf(value) else round(float(value), 3)


def describe_layers(
    main: FuncOp, target: Target, sqnr: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """``description.json`` of the compiled model `main` (after placement and memory
    planning) for `target`; `sqnr` is the quantization's per-layer SQNR by layer key
    (`synapc.quantization.compare.layer_sqnr`), None for a float model."""
    where: dict[SSAValue, Ref] = {
        arg: [-1, i] for i, arg in enumerate(main.body.block.args)
    }
    calls = subgraph_calls(main)
    layers: list[dict[str, Any]] = []
    for k, (func, delegate) in enumerate(package_functions(main, target)):
        if calls:
            for arg, operand in zip(func.body.block.args, calls[k].operands, strict=True):
                where[arg] = where[operand]
        float_dtype = delegate_float_dtype(func, target)
        for op in layer_ops(func):
            index = len(layers)
            engine, reason = _engine(op, delegate, target)
            operands = [v for v in op.operands if not isinstance(v.owner, ConstantOp)]
            key = layer_key(op)
            layers.append(
                {
                    "name": layer_name(op, index),
                    "type": op.name.removeprefix("synap."),
                    "subgraph": k,
                    "delegate": delegate,
                    "engine": engine,
                    "support": reason,
                    "sources": list(dict.fromkeys(source_layers(op))),
                    "operands": [where[v] for v in operands],
                    "outputs": [_tensor(r, float_dtype) for r in op.results],
                    "weights": [
                        _tensor(v, float_dtype)
                        for v in op.operands
                        if isinstance(v.owner, ConstantOp)
                    ],
                    "time_us": round(1e6 * layer_time(op, target, delegate), 3),
                    "sqnr_db": _sqnr(sqnr.get(key) if sqnr and key else None),
                }
            )
            for j, result in enumerate(op.results):
                where[result] = [index, j]
        ret = func.body.block.last_op
        assert isinstance(ret, ReturnOp)
        if calls:
            for result, value in zip(calls[k].results, ret.operands, strict=True):
                where[result] = where[value]
    ret = main.body.block.last_op
    assert isinstance(ret, ReturnOp)
    return {
        "layers": layers,
        "outputs": [where[v] for v in ret.operands],
        "quantized": sqnr is not None,
    }
