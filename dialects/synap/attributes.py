"""Enumerated attributes of the `synap` dialect (`#synap<activation relu6>` and friends)."""

from __future__ import annotations

from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.str_enum import StrEnum


class Activation(StrEnum):
    """Activation functions the NPU fuses into the layer that produces a tensor."""

    NONE = "none"
    RELU = "relu"
    RELU6 = "relu6"
    RELU_N1_TO_1 = "relu_n1_to_1"
    RELU_0_TO_1 = "relu_0_to_1"

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        """The clamp range (min, max) the activation stands for; None means unbounded."""
        return _ACTIVATION_BOUNDS[self]


_ACTIVATION_BOUNDS: dict[Activation, tuple[float | None, float | None]] = {
    Activation.NONE: (None, None),
    Activation.RELU: (0.0, None),
    Activation.RELU6: (0.0, 6.0),
    Activation.RELU_N1_TO_1: (-1.0, 1.0),
    Activation.RELU_0_TO_1: (0.0, 1.0),
}


@irdl_attr_definition
class ActivationAttr(EnumAttribute[Activation], SpacedOpaqueSyntaxAttribute):
    """A fused activation: the producer applies it before writing its result."""

    name = "synap.activation"


class PadMode(StrEnum):
    """How `synap.pad` fills the border: `reflect` mirrors without repeating the edge
    (abc -> cb|abc|ba), `symmetric` mirrors including it (ba|abc|cb), `edge` repeats it,
    `wrap` continues periodically (bc|abc|ab)."""

    CONSTANT = "constant"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"
    EDGE = "edge"
    WRAP = "wrap"


@irdl_attr_definition
class PadModeAttr(EnumAttribute[PadMode], SpacedOpaqueSyntaxAttribute):
    """The border mode of `synap.pad`."""

    name = "synap.pad_mode"


class ResizeMode(StrEnum):
    """Interpolation of `synap.resize`."""

    NEAREST = "nearest"
    BILINEAR = "bilinear"
    CUBIC = "cubic"


@irdl_attr_definition
class ResizeModeAttr(EnumAttribute[ResizeMode], SpacedOpaqueSyntaxAttribute):
    """The interpolation of `synap.resize`."""

    name = "synap.resize_mode"


class CoordinateMode(StrEnum):
    """How an output pixel maps back to input coordinates (ONNX's names).

    ``asymmetric``: x_in = x_out / scale; ``align_corners``: corner pixels align;
    ``half_pixel``: x_in = (x_out + 0.5) / scale - 0.5; ``pytorch_half_pixel``: as
    half_pixel but -0.5 (ONNX; the TFLite-exact kernels take 0, which picks the same
    pixels) when the output extent is 1; ``half_pixel_symmetric``: as half_pixel,
    shifted so the centres of input and output align when the scale does not give a whole
    output size; ``tf_crop_and_resize``: align_corners within a region of interest, with
    an extrapolation value outside the input.
    """

    ASYMMETRIC = "asymmetric"
    ALIGN_CORNERS = "align_corners"
    HALF_PIXEL = "half_pixel"
    PYTORCH_HALF_PIXEL = "pytorch_half_pixel"
    HALF_PIXEL_SYMMETRIC = "half_pixel_symmetric"
    TF_CROP_AND_RESIZE = "tf_crop_and_resize"


@irdl_attr_definition
class CoordinateModeAttr(EnumAttribute[CoordinateMode], SpacedOpaqueSyntaxAttribute):
    """The coordinate transformation of `synap.resize`."""

    name = "synap.coordinate_mode"


class NearestRounding(StrEnum):
    """How nearest-neighbour resize rounds a fractional input coordinate."""

    ROUND_PREFER_FLOOR = "round_prefer_floor"
    ROUND_PREFER_CEIL = "round_prefer_ceil"
    FLOOR = "floor"
    CEIL = "ceil"


@irdl_attr_definition
class NearestRoundingAttr(EnumAttribute[NearestRounding], SpacedOpaqueSyntaxAttribute):
    """The rounding of nearest-neighbour `synap.resize`."""

    name = "synap.nearest_rounding"


class DepthToSpaceMode(StrEnum):
    """Channel order of `synap.depth_to_space`: DCR (TFLite, ONNX default) or CRD."""

    DCR = "dcr"
    CRD = "crd"


@irdl_attr_definition
class DepthToSpaceModeAttr(EnumAttribute[DepthToSpaceMode], SpacedOpaqueSyntaxAttribute):
    """The channel order of `synap.depth_to_space`."""

    name = "synap.depth_to_space_mode"


class ExponentRounding(StrEnum):
    """How `synap.cast` rounds to float8e8m0 (a power of two, exponent only): ``up``
    to the next power of two, ``down`` to the previous one, ``nearest`` (ties to even)."""

    UP = "up"
    DOWN = "down"
    NEAREST = "nearest"


@irdl_attr_definition
class ExponentRoundingAttr(EnumAttribute[ExponentRounding], SpacedOpaqueSyntaxAttribute):
    """The rounding of `synap.cast` to float8e8m0."""

    name = "synap.exponent_rounding"


ATTRIBUTES = [
    ActivationAttr,
    PadModeAttr,
    ResizeModeAttr,
    CoordinateModeAttr,
    NearestRoundingAttr,
    DepthToSpaceModeAttr,
    ExponentRoundingAttr,
]


class IntegerSemantics(StrEnum):
    """The arithmetic a module's quantized ops follow; a module states it with the
    discardable attribute :data:`INTEGER_SEMANTICS_ATTR` (absent means TFLITE).

    Quantized models come with their framework's definition of what a quantized op
    computes, and users compare synapc against that framework's runtime:

    * TFLITE: LiteRT's reference integer kernels (fixed-point multipliers, TFLite's
      roundings);
    * ONNX: ONNX's QDQ definition as ONNX Runtime computes it: an op on dequantized
      float32 values quantized back with round-half-to-even, and convolutions and matrix
      products accumulating in int32 and rescaled by a float32 multiplier.
    """

    TFLITE = "tflite"
    ONNX = "onnx"


INTEGER_SEMANTICS_ATTR = "synap.integer_semantics"
"""The name of the module attribute (a string) holding an :class:`IntegerSemantics`."""
