"""Upsampling aten ops (what `F.interpolate` compiles into) as ONNX Resize to the
concrete output size."""

from __future__ import annotations

from typing import Any

from synapc.importers.torchscript.translator import (
    Slot,
    Translator,
    aten,
)


def _resize(t: Translator, x: Slot, out: Any, mode: str, **attrs: Any) -> list[Any]:
    sizes = t.ints(list(out.shape), "sizes")
    return [t.emit("Resize", [t.tensor(x), "", "", sizes], mode=mode, **attrs)]


@aten("upsample_nearest1d", "upsample_nearest2d")
def _upsample_nearest(
    t: Translator, node: Any, args: list[Slot], outs: list[Any]
) -> list[Any]:
    return _resize(
        t,
        args[0],
        outs[0],
        "nearest",
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )


@aten("_upsample_nearest_exact1d", "_upsample_nearest_exact2d")
def _upsample_nearest_exact(
    t: Translator, node: Any, args: list[Slot], outs: list[Any]
) -> list[Any]:
    return _resize(
        t,
        args[0],
        outs[0],
        "nearest",
        coordinate_transformation_mode="half_pixel",
        nearest_mode="round_prefer_ceil",
    )


@aten("upsample_bilinear2d", "upsample_linear1d")
def _upsample_linear(
    t: Translator, node: Any, args: list[Slot], outs: list[Any]
) -> list[Any]:
    align_corners = bool(args[2].concrete)
    mode = "align_corners" if align_corners else "pytorch_half_pixel"
    return _resize(t, args[0], outs[0], "linear", coordinate_transformation_mode=mode)
