"""MLIR text that xDSL's parser does not refuse cleanly is refused by synapc's reader with
one message naming the text and line: bytes that are not UTF-8, a string literal left
open or holding a bad escape (xDSL's lexer hangs on them), integer types wider than MLIR
allows, numbers beyond their float type, nesting deeper than the parser can recurse,
resources of types without storage, and a module without `@main`. Each case was found by
the compile fuzzer (`benchmarks/fuzz/compile.py`)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from synapc.dtypes import numpy_dtype
from synapc.errors import SynapcError
from synapc.mlir_io import MLIRTextError, ResourceError, parse_module, read_module
from synapc.model import Model
from synapc.weights import WeightStore

BIN = Path(sys.executable).parent


def clamp_module(attributes: str, element: str = "f32") -> str:
    """A one-op `@main` whose clamp carries `attributes`."""
    tensor = f"tensor<2x8x{element}>"
    return (
        f"func.func @main(%x: {tensor}) -> {tensor} {{\n"
        f"  %0 = synap.clamp %x {{{attributes}}} : ({tensor}) -> {tensor}\n"
        f"  func.return %0 : {tensor}\n}}\n"
    )


def test_well_formed_text_with_escapes_and_quoted_comments_parses() -> None:
    text = '// a " in a comment\n' + clamp_module(
        r'layer_name = "a\"b\0A\\", min = 0.0 : f32'
    )
    module = parse_module(text, WeightStore(), name="ok.mlir")
    assert Model.from_module(module, WeightStore(), "ok.mlir").inputs[0].shape == (2, 8)


@pytest.mark.parametrize(
    "name",
    [
        'layer_name = "never closed, min = 0.0 : f32' + "x" * 4000,
        r'layer_name = "a bad \q escape' + "y" * 4000 + '", min = 0.0 : f32',
    ],
)
def test_open_string_or_bad_escape_is_refused_at_once(name: str) -> None:
    start = time.monotonic()
    with pytest.raises(MLIRTextError, match=r"m\.mlir: line 2: a string literal"):
        parse_module(clamp_module(name), WeightStore(), name="m.mlir")
    assert time.monotonic() - start < 5  # xDSL's own lexer does not finish in minutes


@pytest.mark.parametrize("width", ["i9223372036854775807", "i4294967296", "ui16777216"])
def test_integer_type_wider_than_mlir_allows(width: str) -> None:
    text = f"func.func @main(%a: tensor<4x{width}>) {{\n  func.return\n}}\n"
    with pytest.raises(MLIRTextError, match=f"line 1: integer type '{width}' is wider"):
        parse_module(text, WeightStore(), name="w.mlir")


@pytest.mark.parametrize(("value", "element"), [("1.0e+255", "f32"), ("1.0e+40", "f16")])
def test_float_attribute_beyond_its_type(value: str, element: str) -> None:
    text = clamp_module(f'layer_name = "c", min = {value} : {element}')
    with pytest.raises(MLIRTextError, match=r"f\.mlir: line 2: a number is out of range"):
        parse_module(text, WeightStore(), name="f.mlir")


def test_nesting_deeper_than_the_parser_recurses() -> None:
    deep = "[" * 5000 + "]" * 5000
    text = clamp_module(f'layer_name = "c", min = 0.0 : f32, extra = {deep}')
    with pytest.raises(MLIRTextError, match=r"n\.mlir: line 2: .* nested too deeply"):
        parse_module(text, WeightStore(), name="n.mlir")


def test_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bytes.mlir"
    path.write_bytes(clamp_module('layer_name = "\xff", min = 0.0 : f32').encode("latin-1"))
    with pytest.raises(MLIRTextError, match=r"bytes\.mlir: line 2: not UTF-8 text \(byte"):
        read_module(path, WeightStore())


def test_resource_key_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "key.mlir"
    section = b'dialect_resources: { builtin: { "w\xff": "0x04" } }'
    path.write_bytes(b"builtin.module {}\n{-#\n " + section + b"\n#-}\n")
    with pytest.raises(ResourceError, match=r"key\.mlir: a resource key is not UTF-8"):
        read_module(path, WeightStore())


def test_resource_whose_type_has_no_storage() -> None:
    text = (
        "func.func @main() -> tensor<2xi3> {\n"
        "  %0 = synap.constant dense_resource<w> : tensor<2xi3>\n"
        "  func.return %0 : tensor<2xi3>\n}\n"
        '{-#\n dialect_resources: { builtin: { w: "0x0100000012" } }\n#-}\n'
    )
    with pytest.raises(ResourceError, match=r"r\.mlir: resource 'w' has a type without"):
        parse_module(text, WeightStore(), name="r.mlir")


def test_odd_width_integers_have_no_numpy_storage() -> None:
    from xdsl.dialects.builtin import IntegerType

    assert numpy_dtype(IntegerType(4)).name == "int4"  # ml_dtypes', not numpy's int32
    with pytest.raises(TypeError, match="i3"):
        numpy_dtype(IntegerType(3))


def test_module_without_main_is_a_synapc_error() -> None:
    module = parse_module("func.func @other() {\n  func.return\n}\n", WeightStore())
    with pytest.raises(SynapcError, match=r"o\.mlir: model has no @main function"):
        Model.from_module(module, WeightStore(), source="o.mlir")


def test_synapc_opt_reports_one_line_naming_the_input(tmp_path: Path) -> None:
    path = tmp_path / "open.mlir"
    path.write_text(clamp_module('layer_name = "open' + "z" * 3000))
    result = subprocess.run(
        [str(BIN / "synapc-opt"), str(path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"synapc-opt: {path}: line 2: a string literal")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_values_of_an_integer_type_xdsl_cannot_pack() -> None:
    """Compile fuzzer finding: an i74 dense constant made xDSL raise NotImplementedError."""
    text = (
        "func.func @main() -> tensor<2xi74> {\n"
        "  %0 = synap.constant dense<[1, 2]> : tensor<2xi74>\n"
        "  func.return %0 : tensor<2xi74>\n}\n"
    )
    with pytest.raises(MLIRTextError, match=r"c\.mlir: line \d+: .*i74"):
        parse_module(text, WeightStore(), name="c.mlir")


def test_resource_section_error_is_one_line() -> None:
    """Compile fuzzer finding: the text quoted after 'found' held a newline."""
    text = 'builtin.module {}\n{-#\n dialect_resources: { builtin: "0x01\n" }\n#-}\n'
    with pytest.raises(ResourceError) as error:
        parse_module(text, WeightStore(), name="r.mlir")
    assert "\n" not in str(error.value) and "found '\"0x01 \" } #-}'" in str(error.value)


def test_quantized_clamp_bound_far_beyond_its_storage_saturates() -> None:
    """Compile fuzzer finding: with a scale of 1e-30 a bound of -1.5 quantizes to
    -1.5e30, a Python int that could not enter the program (OverflowError)."""
    import numpy as np

    import synapc

    q = "!quant.uniform<i8:f32, 1.0e-30:-1>"
    text = clamp_module('layer_name = "c", max = -1.5 : f32', q)
    model = Model.from_module(parse_module(text, WeightStore()), WeightStore(), "q.mlir")
    out = synapc.compile(model, "VS680").run([np.zeros((2, 8), np.int8)])[0]
    assert (out == -128).all()
