"""Regression tests of the issue-18 review: shared kernel helpers are public, `synapc
preprocess` writes through `synapc convert`'s output-folder protocol, one image decoder,
one table of plane roles, pass refusals in `synapc-opt` are one line, and a model's state
indices follow a pass that changes `@main`'s inputs."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from synapc import preprocess_types
from synapc.errors import SynapcError
from synapc.mlir_io import parse_module
from synapc.model import Model, StateInfo
from synapc.runtime import images
from synapc.weights import WeightStore

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "path", ["backends/jax/ops/preprocess_fused.py", "dialects/synap/preprocess_fused.py"]
)
def test_fused_modules_import_no_private_names(path: str) -> None:
    """The fused op and its kernel share the unfused modules' helpers through public
    names (no `_private` imports, no copies)."""
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    private = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and node.module != "__future__"
    ]
    assert private == []


def test_one_table_of_plane_roles() -> None:
    """The compiler and the runtime name the new inputs from one table."""
    from synapc.passes import insert_preprocess
    from synapc.runtime import preprocessed

    assert insert_preprocess.ROLES is preprocess_types.ROLES
    assert images.ROLES is preprocess_types.ROLES
    assert insert_preprocess.CROP_FIELDS is preprocessed.CROP_FIELDS
    assert images.TYPES is preprocess_types.TYPES


def test_one_image_decoder(tmp_path: Path) -> None:
    """`synapc benchmark --input` and `Tensor.assign` decode images with one helper;
    `read_rgb` gives RGB for gray and RGBA files and names a missing file."""
    from synapc.tools import input_files

    assert input_files.read_image is images.read_image
    gray = np.arange(12, dtype=np.uint8).reshape(3, 4)
    Image.fromarray(gray, "L").save(tmp_path / "gray.png")
    rgba = np.random.default_rng(0).integers(0, 256, (3, 4, 4), dtype=np.uint8)
    Image.fromarray(rgba, "RGBA").save(tmp_path / "rgba.png")
    assert images.read_image(tmp_path / "gray.png").shape == (3, 4, 1)
    np.testing.assert_array_equal(
        images.read_rgb(tmp_path / "gray.png"), np.repeat(gray[..., None], 3, axis=2)
    )
    np.testing.assert_array_equal(images.read_rgb(tmp_path / "rgba.png"), rgba[..., :3])
    with pytest.raises(SynapcError, match=r"missing\.png: no such file"):
        images.read_rgb(tmp_path / "missing.png")


def test_opt_pass_refusal_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A `SynapcError` of a pass (insert-preprocess) is one line from synapc-opt."""
    from synapc.opt import run

    source = REPO / "lit_tests" / "passes" / "insert_preprocess.mlir"
    assert run([str(source), "-p", 'insert-preprocess{input=9 type="nv12"}']) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "synapc-opt: error: insert-preprocess: input=9: @main has 1 inputs"
    ]


_STATEFUL = """func.func @main(%x: tensor<1x4x6x3xui8> {synap.name = "image"},
    %s: tensor<2xf32> {synap.name = "s_in"}) -> (tensor<1x4x6x3xui8> {synap.name = "out"},
    tensor<2xf32> {synap.name = "s_out"}) {
  func.return %x, %s : tensor<1x4x6x3xui8>, tensor<2xf32>
}
"""


def test_state_follows_a_signature_rewrite() -> None:
    """Replacing input 0 by two planes and four crop scalars moves the state input
    from 1 to 6; `Model.state` says so (the runtime feeds the state there)."""
    from synapc.convert.pipeline import run_pipeline

    weights = WeightStore()
    state = [StateInfo("s", 1, 1, np.zeros(2, np.float32))]
    model = Model.from_module(parse_module(_STATEFUL, weights), weights, "m", state=state)
    converted = run_pipeline(model, 'insert-preprocess{input=0 type="nv12" crop=true}')
    assert [i.name for i in converted.inputs][-1] == "s_in"
    (moved,) = converted.state
    assert (moved.input, moved.output) == (6, 1)
    assert converted.inputs[moved.input].name == "s_in"


def _args(out: Path, **changes: object) -> argparse.Namespace:
    values: dict[str, object] = dict(
        type="nv12",
        size=[8, 12],
        to="rgb",
        shape=[1, 4, 6, 3],
        layout="nhwc",
        crop=False,
        color_range="limited",
        color_matrix="bt601",
        resize="bilinear",
        out_dir=str(out),
        target="VS680",
    )
    values.update(changes)
    return argparse.Namespace(**values)


def test_preprocess_model_uses_the_output_protocol(tmp_path: Path) -> None:
    """`synapc preprocess` writes model.synap, model_info.txt and the cache all or
    nothing: a second identical run is served from the cache, bad options leave no
    folder, and an interrupted build leaves the previous output whole and no
    temporaries."""
    import sys

    from synapc.tools import preprocess_model

    convert_module = sys.modules["synapc.convert.convert"]

    out = tmp_path / "out"
    said: list[str] = []
    path = preprocess_model.build(_args(out), said.append)
    first = path.read_bytes()
    assert (out / "model_info.txt").is_file() and (out / "cache" / "key.json").is_file()
    preprocess_model.build(_args(out), said.append)
    assert "using the cached conversion" in said
    assert path.read_bytes() == first

    with pytest.raises(SynapcError, match="insert-preprocess: input 'image': type"):
        preprocess_model.build(_args(tmp_path / "bad", type="nv13"))
    assert not (tmp_path / "bad").exists()

    def interrupted(*args: object, **kwargs: object) -> dict[str, bytes]:
        raise KeyboardInterrupt

    patch = pytest.MonkeyPatch()
    patch.setattr(convert_module, "package_files", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            preprocess_model.build(_args(out, type="yuv420"))
    finally:
        patch.undo()
    assert path.read_bytes() == first
    leftovers = [p.name for p in out.rglob("*") if ".tmp-" in p.name or "partial" in p.name]
    assert leftovers == [] and not (out / ".synapc.lock").exists()


def test_preprocess_model_bgr_is_rgb_reversed(tmp_path: Path) -> None:
    """`--to bgr` (the model input's format, read by insert-preprocess) gives the
    channels of `--to rgb` reversed."""
    from synapc.runtime import Network
    from synapc.tools import preprocess_model

    rgb = np.random.default_rng(1).integers(0, 256, (8, 12, 3), dtype=np.uint8)
    results = []
    for to in ("rgb", "bgr"):
        args = _args(tmp_path / to, to=to)
        network = Network(preprocess_model.build(args))
        assert [t.name for t in network.inputs] == ["image_y", "image_uv"]
        network.inputs[0].assign(rgb)
        results.append(network.predict()[0].to_numpy())
    np.testing.assert_array_equal(results[0], results[1][..., ::-1])
