"""`synapc.convert`: model file + metafile -> `model.synap`, `model_info.txt` and
`cache/`, as the vendor's `synap convert` writes them (see `synapc/convert/convert.py`).

`synapc.convert` is both this package and the function `synapc.convert(...)`: importing
any `synapc.convert.*` module makes Python bind the package to the name `convert` in
`synapc`, over the lazily imported function, so the package itself is callable and
calls the function.
"""

import sys
import types
from typing import Any

from synapc.convert.convert import Conversion, convert

__all__ = ["Conversion", "convert"]


class _CallableModule(types.ModuleType):
    """This package, callable as `synapc.convert(model, target, out_dir, meta, ...)`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Conversion:
        return convert(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
