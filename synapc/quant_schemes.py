"""The quantization vocabulary of the metafile's `quantization` section (METAFILE.md):
the schemes and modes that the `quantize` pass implements and the metafile parser
accepts. A leaf module (plain data, no imports, like `synapc.preprocess_types`), so the
metafile package reads it without loading xDSL or the dialects."""

#: `quantization.scheme`.
SCHEMES = (
    "default",
    "asymmetric_affine",
    "dynamic_fixed_point",
    "perchannel_symmetric_affine",
)
#: `quantization.mode`: ``full`` quantizes every layer (refusing one it cannot).
QUANTIZATION_MODES = ("standard", "full")
