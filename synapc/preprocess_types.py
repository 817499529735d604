"""The preprocessing input types of the metafile (../shared/METAFILE.md, "preprocess";
contract18) as plain data, shared by the compiler (`insert-preprocess`) and the runtime
(`synapc.runtime.images`, `synapc.runtime.preprocessed`), so that both name and order the
new inputs alike. A leaf module: it imports nothing, so every layer may import it.
"""

from __future__ import annotations

#: The planes of each preprocessing type, in input order (the `plane=<role>` of their
#: ``synap.format``), the types in METAFILE.md's order.
ROLES: dict[str, tuple[str, ...]] = {
    "yuv444": ("y", "u", "v"),
    "yuv420": ("y", "u", "v"),
    "nv12": ("y", "uv"),
    "nv21": ("y", "vu"),
    "gray": ("gray",),
    "rgb": ("rgb",),
    "bgra": ("bgra",),
    "rgb888p": ("rgb",),
    "rgb888p3": ("r", "g", "b"),
    "float32": ("float32",),
}
#: The preprocessing types.
TYPES: tuple[str, ...] = tuple(ROLES)
#: The types converted from YUV planes.
YUV_TYPES = ("yuv444", "yuv420", "nv12", "nv21")
#: Types whose chroma has half the height and width of the luma (4:2:0).
SUBSAMPLED = frozenset({"yuv420", "nv12", "nv21"})
#: The crop scalars, in input order (after the planes).
CROP_FIELDS = ("width", "height", "left", "top")
COLOR_RANGES = ("limited", "full")
COLOR_MATRICES = ("bt601", "bt709")
RESIZE_MODES = ("bilinear", "nearest")

__all__ = [
    "COLOR_MATRICES",
    "COLOR_RANGES",
    "CROP_FIELDS",
    "RESIZE_MODES",
    "ROLES",
    "SUBSAMPLED",
    "TYPES",
    "YUV_TYPES",
]
