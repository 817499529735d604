"""`fuse-yuv-resize`: ``crop_resize(yuv_to_rgb(planes))`` becomes `synap.yuv_to_rgb_resize`.

A preprocessed camera input converts a whole frame to RGB and then resizes it to the
network's size, reading a few of its rows and columns; the fused op converts only those
(see `dialects/synap/preprocess_fused.py`), with the same pixels. The pair fuses when the
RGB image feeds only the resize. Part of `optimize`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from synapc.dialects.synap.preprocess import CropResizeOp, YuvToRgbOp
from synapc.dialects.synap.preprocess_fused import YuvToRgbResizeOp
from synapc.passes.common import has_one_use


class FuseYuvResize(RewritePattern):
    """Replace a `crop_resize` of a single-use `yuv_to_rgb` by the fused op."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CropResizeOp, rewriter: PatternRewriter) -> None:
        """Fuse `op` with the colour conversion producing its image, if any."""
        convert = op.image.owner
        if not isinstance(convert, YuvToRgbOp) or not has_one_use(op.image):
            return
        colour, resize = convert.props(), op.props()
        fused = YuvToRgbResizeOp.make(
            [*convert.planes, *op.crop],
            format=colour["format"],
            color_range=colour["color_range"],
            color_matrix=colour["color_matrix"],
            bgr=colour["bgr"],
            size=list(resize["size"]),
            mode=resize["mode"],
            result_types=[op.output.type],
        )
        for key, value in op.attributes.items():
            fused.attributes[key] = value
        rewriter.replace(op, fused)
        rewriter.erase(convert)


@dataclass(frozen=True)
class FuseYuvResizePass(ModulePass):
    """Apply `FuseYuvResize` everywhere."""

    name = "fuse-yuv-resize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseYuvResize(), apply_recursively=False).rewrite_module(op)
