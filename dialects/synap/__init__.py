"""The `synap` dialect: NPU-level layers on NHWC tensors with static shapes.

Ops are grouped by what the hardware does with them (`conv`, `pool`, `elementwise`,
`activation`, `reduce`, `data_movement`, `resize`, `conversion`, `constant`); shape rules
live in `shapes`, shared enums in `attributes`.
"""

from xdsl.ir import Dialect

from synapc.dialects.synap import (
    activation,
    attention,
    bitcast,
    conv,
    conversion,
    data_movement,
    detection,
    elementwise,
    fused,
    indexing,
    linalg,
    logical,
    normalization,
    pool,
    preprocess,
    preprocess_fused,
    recurrent,
    reduce,
    resize,
    roi,
    sampling,
    window_nd,
)
from synapc.dialects.synap.attributes import ATTRIBUTES
from synapc.dialects.synap.base import SynapOp
from synapc.dialects.synap.constant import ConstantOp

OPS: list[type[SynapOp]] = [
    ConstantOp,
    *conv.OPS,
    *pool.OPS,
    *elementwise.OPS,
    *activation.OPS,
    *reduce.OPS,
    *data_movement.OPS,
    *resize.OPS,
    *conversion.OPS,
    *detection.OPS,
    *fused.OPS,
    *normalization.OPS,
    *logical.OPS,
    *indexing.OPS,
    *recurrent.OPS,
    *attention.OPS,
    *sampling.OPS,
    *bitcast.OPS,
    *window_nd.OPS,
    *linalg.OPS,
    *roi.OPS,
    *preprocess.OPS,
    *preprocess_fused.OPS,
]

Synap = Dialect(
    "synap",
    OPS,
    [
        *ATTRIBUTES,
        *indexing.ATTRIBUTES,
        *recurrent.ATTRIBUTES,
        *sampling.ATTRIBUTES,
        *preprocess.ATTRIBUTES,
    ],
)

__all__ = ["OPS", "ConstantOp", "Synap", "SynapOp"]
