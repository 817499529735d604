"""Quantized TFLite data-movement operators through synapc, checked against LiteRT.

Every case builds a one-operator model whose tensors are int8, uint8 or int16 (zero point
0, as TFLite's 16x8 scheme requires) and feeds random values over the whole storage range.
LiteRT (`OpResolverType.BUILTIN_REF`) and synapc must give identical integers.

These operators copy stored integers, so LiteRT wants the output quantized like the
input. CONCATENATION is the one that rescales: uint8 inputs quantized differently from
the output go through TFLite's ConcatenationWithScaling (float32
``round(q * scale + bias) + zero_point``); int8 inputs must match the output (Prepare
refuses anything else) and int16 inputs are copied without rescaling, so synapc refuses
to import an int16 CONCATENATION whose inputs and output differ (see the test at the end).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import synapc
from synapc.testing.oracle import (
    QUANTS,
    Case,
    CaseGraph,
    build_case,
    check_case,
    reference_resolver,
    run_litert,
    storage_range,
)
from synapc.testing.tflite_builder import Quant

pytest.importorskip("ai_edge_litert.interpreter")

TYPES = tuple(QUANTS)


def _i32(values: Any) -> np.ndarray:
    return np.asarray(values, np.int32)


def _i64(values: Any) -> np.ndarray:
    return np.asarray(values, np.int64)


_CASES: list[Any] = []


def _add(op: str, variant: str, case: Case) -> None:
    _CASES.append(pytest.param(case, id=f"{op}-{variant}"))


def _single(
    op: str,
    type_name: str,
    shapes: Sequence[Sequence[int]],
    *,
    consts: Sequence[Any] = (),
    outputs: int = 1,
    **options: Any,
) -> Case:
    """One `op` on random quantized inputs of `shapes` (followed by the integer constant
    inputs `consts`), every input and result quantized alike."""
    dtype, quant = QUANTS[type_name]
    low, high = storage_range(dtype, quant)

    def case(g: CaseGraph) -> None:
        inputs = [g.input(s, low, high, dtype, quant=quant) for s in shapes]
        inputs += [g.const(c) for c in consts]
        result = g.op(op, inputs, outputs=outputs, dtype=dtype, quant=quant, **options)
        g.output(*(result if outputs > 1 else [result]))

    return case


# -- concatenation ---------------------------------------------------------------------
def _concat(
    type_name: str,
    shapes: Sequence[Sequence[int]],
    axis: int,
    quants: Sequence[Quant] | None = None,
    const: int | None = None,
) -> Case:
    """CONCATENATION of inputs of `shapes` quantized with `quants` (default: like the
    output); input number `const` is a constant."""
    dtype, out_quant = QUANTS[type_name]
    quants = quants or [out_quant] * len(shapes)

    def case(g: CaseGraph) -> None:
        inputs = []
        for i, (shape, quant) in enumerate(zip(shapes, quants, strict=True)):
            low, high = storage_range(dtype, quant)
            if i == const:
                value = g.rng.uniform(low, high, shape)
                inputs.append(g.const(value, dtype, quant))
            else:
                inputs.append(g.input(shape, low, high, dtype, quant=quant))
        g.output(g.op("CONCATENATION", inputs, axis=axis, dtype=dtype, quant=out_quant))

    return case


for _t in TYPES:
    _add("CONCATENATION", f"{_t}_axis1", _concat(_t, [[2, 3, 4], [2, 2, 4]], 1))
_add(
    "CONCATENATION",
    "int8_three_inputs_axis_neg1_const",
    _concat("int8", [[2, 3, 1], [2, 3, 4], [2, 3, 2]], -1, const=1),
)
# uint8 inputs quantized differently from the output are rescaled (one input keeps the
# output's parameters and is copied).
_add(
    "CONCATENATION",
    "uint8_rescaled",
    _concat(
        "uint8",
        [[2, 3, 16], [2, 3, 8], [2, 3, 16]],
        -1,
        [Quant(0.013, 100), Quant(0.04, 131), Quant(0.11, 7)],
        const=2,
    ),
)


def _concat_every_uint8(g: CaseGraph) -> None:
    """Every uint8 value rescaled with parameters where a fused multiply-add would round
    16 of the 256 values differently from TFLite's float32 multiply, then add."""
    dtype, out_quant = QUANTS["uint8"]
    quant = Quant(0.036, 137)
    every = 0.036 * (np.arange(256).reshape(4, 64) - 137.0)
    a = g.input([4, 64], dtype=dtype, value=every, quant=quant)
    b = g.input([4, 64], dtype=dtype, value=every[::-1], quant=Quant(0.004, 84))
    g.output(g.op("CONCATENATION", [a, b], axis=0, dtype=dtype, quant=out_quant))


_add("CONCATENATION", "uint8_rescaled_every_value", _concat_every_uint8)


# -- split, slicing --------------------------------------------------------------------
def _split(type_name: str, shape: Sequence[int], axis: int, num: int) -> Case:
    dtype, quant = QUANTS[type_name]
    low, high = storage_range(dtype, quant)

    def case(g: CaseGraph) -> None:
        x = g.input(shape, low, high, dtype, quant=quant)
        outputs = g.op(
            "SPLIT",
            [g.const(_i32(axis)), x],
            outputs=num,
            dtype=dtype,
            quant=quant,
            num_splits=num,
        )
        g.output(*outputs)

    return case


def _split_v(type_name: str, shape: Sequence[int], sizes: Sequence[int], axis: int) -> Case:
    dtype, quant = QUANTS[type_name]
    low, high = storage_range(dtype, quant)

    def case(g: CaseGraph) -> None:
        inputs = [
            g.input(shape, low, high, dtype, quant=quant),
            g.const(_i32(sizes)),
            g.const(_i32([axis])),
        ]
        outputs = g.op(
            "SPLIT_V",
            inputs,
            outputs=len(sizes),
            dtype=dtype,
            quant=quant,
            num_splits=len(sizes),
        )
        g.output(*outputs)

    return case


for _t in TYPES:
    _add("SPLIT", f"{_t}_axis1_3", _split(_t, [2, 6, 4], 1, 3))
    _add("SPLIT_V", f"{_t}_sizes_neg1_axis_neg1", _split_v(_t, [2, 3, 7], [1, -1, 2], -1))
    _add(
        "SLICE",
        f"{_t}_3d",
        _single(
            "SLICE",
            _t,
            [[3, 4, 5]],
            consts=[_i32([1, 0, 2]), _i32([2, -1, 2])],
            shape=[2, 4, 2],
        ),
    )
    _add(
        "STRIDED_SLICE",
        f"{_t}_negative_strides_shrink",
        _single(
            "STRIDED_SLICE",
            _t,
            [[4, 5, 6]],
            consts=[_i32([1, 4, 1]), _i32([2, 0, 5]), _i32([1, -2, 2])],
            shrink_axis_mask=0b001,
        ),
    )
_add(
    "SLICE",
    "int8_4d_int64",
    _single(
        "SLICE",
        "int8",
        [[2, 3, 4, 5]],
        consts=[_i64([0, 1, 1, 2]), _i64([2, 1, -1, 3])],
        shape=[2, 1, 3, 3],
    ),
)
_add(
    "STRIDED_SLICE",
    "int8_masks",
    _single(
        "STRIDED_SLICE",
        "int8",
        [[1, 3, 4, 5]],
        consts=[_i32([0, 1, 0, 2]), _i32([1, 3, 4, 0]), _i32([1, 1, 2, -1])],
        begin_mask=0b0100,
        end_mask=0b0001,
        shrink_axis_mask=0b0001,
    ),
)

# -- reshaping and layout --------------------------------------------------------------
for _t in TYPES:
    _add(
        "RESHAPE",
        f"{_t}_shape_input",
        _single("RESHAPE", _t, [[2, 3, 4]], consts=[_i32([4, -1])]),
    )
    _add(
        "SQUEEZE",
        f"{_t}_dim_neg2",
        _single("SQUEEZE", _t, [[1, 3, 1, 4]], squeeze_dims=[-2]),
    )
    _add(
        "EXPAND_DIMS",
        f"{_t}_axis1",
        _single("EXPAND_DIMS", _t, [[3, 4]], consts=[_i32([1])]),
    )
    _add(
        "TRANSPOSE",
        f"{_t}_4d",
        _single("TRANSPOSE", _t, [[2, 3, 4, 5]], consts=[_i32([3, 1, 0, 2])]),
    )
    _add("TILE", f"{_t}_3d", _single("TILE", _t, [[2, 1, 3]], consts=[_i32([1, 3, 2])]))
    _add(
        "BROADCAST_TO",
        f"{_t}_3x1_to_2x3x4",
        _single("BROADCAST_TO", _t, [[3, 1]], consts=[_i32([2, 3, 4])], version=2),
    )
    _add(
        "PACK",
        f"{_t}_three_axis1",
        _single("PACK", _t, [[2, 3]] * 3, values_count=3, axis=1),
    )
    _add(
        "UNPACK",
        f"{_t}_axis_neg1",
        _single("UNPACK", _t, [[3, 2, 4]], outputs=4, num=4, axis=-1),
    )
# LiteRT's DEPTH_TO_SPACE and SPACE_TO_DEPTH take no int16.
for _t in ("int8", "uint8"):
    _add(
        "DEPTH_TO_SPACE",
        f"{_t}_b2",
        _single("DEPTH_TO_SPACE", _t, [[1, 2, 3, 8]], block_size=2),
    )
    _add(
        "SPACE_TO_DEPTH",
        f"{_t}_b2",
        _single("SPACE_TO_DEPTH", _t, [[1, 4, 6, 3]], block_size=2),
    )
_add(
    "RESHAPE",
    "int8_options_only",
    _single("RESHAPE", "int8", [[2, 3, 4]], new_shape=[6, 4]),
)
_add(
    "TILE", "int8_int64_multiples", _single("TILE", "int8", [[3, 2]], consts=[_i64([2, 1])])
)


# -- padding ---------------------------------------------------------------------------
for _t in TYPES:
    _add(
        "PAD",
        f"{_t}_4d",
        _single("PAD", _t, [[1, 3, 4, 2]], consts=[_i32([[0, 0], [1, 2], [0, 1], [0, 0]])]),
    )
    for _mode in ("REFLECT", "SYMMETRIC"):
        _add(
            "MIRROR_PAD",
            f"{_t}_{_mode.lower()}",
            _single(
                "MIRROR_PAD",
                _t,
                [[1, 4, 5, 2]],
                consts=[_i32([[0, 0], [2, 1], [1, 3], [0, 0]])],
                mode=_mode,
            ),
        )


def _padv2(type_name: str, value: float, pads: np.ndarray) -> Case:
    """PADV2 with the pad value a constant quantized like the output (LiteRT requires
    that), `value` real."""
    dtype, quant = QUANTS[type_name]
    low, high = storage_range(dtype, quant)

    def case(g: CaseGraph) -> None:
        x = g.input([2, 3, 4], low, high, dtype, quant=quant)
        pad_value = g.const(np.array(value), dtype, quant)
        g.output(g.op("PADV2", [x, g.const(pads), pad_value], dtype=dtype, quant=quant))

    return case


for _t, _value in [("int8", 1.37), ("uint8", -2.5), ("int16", 0.0123), ("int8", 100.0)]:
    _add(
        "PADV2", f"{_t}_value_{_value}", _padv2(_t, _value, _i32([[1, 0], [0, 2], [1, 1]]))
    )


# -- gather ----------------------------------------------------------------------------
for _t in TYPES:
    _add(
        "GATHER",
        f"{_t}_axis1_2d_indices",
        _single("GATHER", _t, [[2, 5, 3]], consts=[_i32([[0, 4], [3, 2]])], axis=1),
    )
_add(
    "GATHER",
    "int8_axis0_int64_indices",
    _single("GATHER", "int8", [[4, 2, 3]], consts=[_i64([1, 3, 0])], axis=0),
)


@pytest.mark.parametrize("case", _CASES)
def test_operator(tmp_path: Path, case: Case) -> None:
    """One quantized operator gives LiteRT's integers."""
    check_case(tmp_path, case)


def _requantizing(
    op: str, shape: Sequence[int], consts: Sequence[Any], **options: Any
) -> Case:
    """`op` with an int8 input and an int8 output quantized differently."""

    def case(g: CaseGraph) -> None:
        x = g.input(shape, -4.0, 4.0, np.int8, quant=Quant(0.05, -3))
        inputs = [x, *(g.const(c) for c in consts)]
        if op == "SPLIT":
            inputs.reverse()
        g.output(g.op(op, inputs, dtype=np.int8, quant=Quant(0.1, 2), **options))

    return case


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            _concat("int16", [[2, 3], [2, 4]], 1, [Quant(0.001), Quant(0.0007)]),
            id="CONCATENATION-int16",
        ),
        pytest.param(_requantizing("RESHAPE", [2, 3], [_i32([3, 2])]), id="RESHAPE"),
        pytest.param(_requantizing("TRANSPOSE", [2, 3], [_i32([1, 0])]), id="TRANSPOSE"),
        pytest.param(_requantizing("PAD", [2, 3], [_i32([[1, 1], [0, 2]])]), id="PAD"),
        pytest.param(_requantizing("GATHER", [4, 3], [_i32([2, 0])]), id="GATHER"),
        pytest.param(_requantizing("SPLIT", [4, 3], [_i32(0)], num_splits=1), id="SPLIT"),
    ],
)
def test_copy_into_other_quantization_is_rejected(tmp_path: Path, case: Case) -> None:
    """LiteRT runs these operators on an output quantized unlike the input by copying
    the stored integers without rescaling (int16 CONCATENATION only checks that zero
    points are 0), so the integers mean other real values. synapc's ops keep real
    values, so the importer refuses the model rather than compute other integers."""
    resolver = reference_resolver()
    data, feeds = build_case(case, resolver)
    run_litert(data, feeds, resolver)  # LiteRT accepts and runs the model
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    with pytest.raises(synapc.SynapcError, match="without rescaling"):
        synapc.import_model(path)
