"""synapc.Network on packages with preprocessed inputs (metadata "preprocess", plane
formats "<type> plane=<role>" / "crop field=<f>"): assign() of an image file or RGB array
fills every plane, a raw array sets one plane, ints set the crop scalars, and wrong plane
shapes, wrong image sizes and crop rectangles outside the image are refused naming the
input. The packages are built directly (a tiny JAX program over the plane inputs that
returns them), until the insert-preprocess pass exists."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from PIL import Image

from synapc.backends.jax.export import export_program
from synapc.backends.package import PackageError, Subgraph, TensorSpec, build_package
from synapc.errors import SynapcError
from synapc.runtime import Network, images

H, W = 8, 12


def plane_specs(name: str, type_: str, crop: bool) -> list[TensorSpec]:
    """The inputs that replace `name` (1 x H x W image) for `type_`, per contract18."""
    shapes = images.plane_shapes(type_, H, W)
    dtype = images.plane_dtype(type_).name
    specs = [
        TensorSpec(n, (1, *shapes[r]), dtype, "nhwc", f"{type_} plane={r}")
        for n, r in zip(images.plane_names(name, type_), images.ROLES[type_], strict=True)
    ]
    if crop:
        specs += [
            TensorSpec(f"{name}_crop_{f}", (), "int32", "none", f"crop field={f}")
            for f in ("width", "height", "left", "top")
        ]
    return specs


def echo_package(
    path: Path, type_: str, crop: bool, metadata: dict[str, object] | None = None
) -> Path:
    """A package whose one subgraph returns its inputs (so planes can be read back)."""
    inputs = plane_specs("cam", type_, crop)
    entry = {
        "input": "cam",
        "type": type_,
        "size": [H, W],
        "crop": crop,
        "color_range": "limited",
        "color_matrix": "bt601",
        "resize": "bilinear",
        "layout": "nhwc",
        "inputs": [s.name for s in inputs],
        **(metadata or {}),
    }
    outputs = [
        TensorSpec(f"out{i}", s.shape, s.data_type, s.layout) for i, s in enumerate(inputs)
    ]

    def echo(params: dict[str, jax.Array], *xs: jax.Array) -> list[jax.Array]:
        return [jnp.asarray(x) for x in xs]

    avals = [jax.ShapeDtypeStruct(s.shape, np.dtype(s.data_type)) for s in inputs]
    blob, weights = export_program(echo, {}, avals)
    refs = [(-1, i) for i in range(len(inputs))]
    path.write_bytes(
        build_package(
            target="GENERIC",
            source={"model": "test", "sha256": "0", "synapc": "0"},
            inputs=inputs,
            outputs=outputs,
            output_refs=[(0, j) for j in range(len(outputs))],
            subgraphs=[Subgraph("npu", blob, weights, inputs, outputs, refs)],
            metadata={"preprocess": json.dumps([entry])},
        )
    )
    return path


def photo(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (H, W, 3)).astype(np.uint8)


@pytest.mark.parametrize("type_", ["nv12", "yuv420", "rgb888p", "bgra", "gray"])
def test_image_file_fills_every_plane(type_: str, tmp_path: Path) -> None:
    network = Network(echo_package(tmp_path / "m.synap", type_, crop=False))
    [group] = network.preprocessed
    assert (group.name, group.type, (group.height, group.width)) == ("cam", type_, (H, W))
    first = network.inputs[0]
    assert first.format == f"{type_} plane={images.ROLES[type_][0]}"
    assert first.preprocess is group
    Image.fromarray(photo()).save(tmp_path / "photo.png")
    first.assign(tmp_path / "photo.png")
    expected = images.rgb_to_planes(photo()[np.newaxis], type_)
    for tensor, plane in zip(network.inputs, expected.values(), strict=True):
        assert np.array_equal(tensor.to_numpy(), plane)
    outputs = network.predict()
    for out, plane in zip(outputs, expected.values(), strict=True):
        assert np.array_equal(out.to_numpy(), plane)
    first.assign(str(tmp_path / "photo.png"))  # a str path as well


def test_rgb_array_raw_planes_and_crop(tmp_path: Path) -> None:
    network = Network(echo_package(tmp_path / "m.synap", "nv21", crop=True))
    y, vu, width, height, left, top = network.inputs
    assert vu.format == "nv21 plane=vu" and vu.shape == (1, H // 2, W // 2, 2)
    assert left.format == "crop field=left" and left.shape == ()
    # crop starts as the whole image
    assert [int(t.to_numpy()) for t in (width, height, left, top)] == [W, H, 0, 0]
    y.assign(photo(1))
    expected = images.rgb_to_planes(photo(1)[np.newaxis], "nv21")
    assert np.array_equal(vu.to_numpy(), expected["vu"])
    raw = np.full((1, H // 2, W // 2, 2), 7, np.uint8)
    vu.assign(raw)  # a raw array of the plane's shape sets that plane only
    assert np.array_equal(vu.to_numpy(), raw)
    assert np.array_equal(y.to_numpy(), expected["y"])
    for tensor, value in zip(
        (width, height, left, top), (4, 2, 3, np.int64(5)), strict=True
    ):
        tensor.assign(value)
    outputs = network.predict()
    assert [int(o.to_numpy()) for o in outputs[2:]] == [4, 2, 3, 5]


def test_assign_errors(tmp_path: Path) -> None:
    network = Network(echo_package(tmp_path / "m.synap", "nv12", crop=True))
    y, uv, _, height, left, _ = network.inputs
    with pytest.raises(
        SynapcError,
        match=r"tensor 'cam_uv' \(plane uv of nv12 input 'cam'\): data of shape "
        r"\[1, 4, 6, 1\], expected \[1, 4, 6, 2\]",
    ):
        uv.assign(np.zeros((1, 4, 6, 1), np.uint8))
    with pytest.raises(
        SynapcError,
        match=r"input 'cam' \(nv12\): the image is 10x8 \(width x height\), the planes "
        r"take 12x8; resize it first",
    ):
        y.assign(np.zeros((8, 10, 3), np.uint8))
    Image.fromarray(np.zeros((6, 12, 3), np.uint8)).save(tmp_path / "small.png")
    with pytest.raises(SynapcError, match=r"image .*small.png is 12x6 \(width x height\)"):
        y.assign(tmp_path / "small.png")
    with pytest.raises(
        SynapcError, match=r"plane uv of nv12 input 'cam'.*first plane 'cam_y'"
    ):
        uv.assign(tmp_path / "small.png")
    with pytest.raises(SynapcError, match="expected an H x W x 3 uint8 RGB array"):
        y.assign(np.zeros((8, 12, 3), np.float32))
    with pytest.raises(SynapcError, match=r"cam_crop_left' \(crop left of input 'cam'\)"):
        left.assign(1.5)
    with pytest.raises(SynapcError, match="no such file"):
        y.assign(tmp_path / "missing.png")
    left.assign(8)  # 8 + 12 > 12
    with pytest.raises(
        SynapcError,
        match=r"input 'cam': crop width \('cam_crop_width'\): left 8 \+ width 12 exceeds "
        "the image width 12",
    ):
        network.predict()
    left.assign(0)
    height.assign(0)
    with pytest.raises(SynapcError, match=r"crop height \('cam_crop_height'\): 0"):
        network.predict()


def test_metadata_is_checked(tmp_path: Path) -> None:
    """Metadata that does not fit the package's inputs is refused at load."""
    bad = echo_package(tmp_path / "a.synap", "nv12", False, {"inputs": ["cam_y", "nope"]})
    with pytest.raises(PackageError, match=r'metadata\["preprocess"\]\[0\].inputs\[1\]'):
        Network(bad)
    bad = echo_package(tmp_path / "b.synap", "nv12", False, {"type": "yuv444"})
    with pytest.raises(PackageError, match=r"\[0\].inputs: expected 3 input names"):
        Network(bad)
    bad = echo_package(tmp_path / "c.synap", "nv12", False, {"type": "nv13"})
    with pytest.raises(PackageError, match="type 'nv13': unknown type"):
        Network(bad)
