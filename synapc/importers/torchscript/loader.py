"""Loading a TorchScript archive: the optional torch dependency, the checks that tell a
TorchScript archive from a `torch.save` file or a corrupt one, and freezing the forward
graph for inference."""

from __future__ import annotations

import os
import warnings
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synapc.errors import SynapcError

if TYPE_CHECKING:
    import torch

_EXPORT_HINT = (
    "only TorchScript is supported — export with torch.jit.script(model).save(path) "
    "or torch.jit.trace(model, example).save(path)"
)


def require_torch(path: Path | None = None) -> Any:
    """The torch module, or a one-line error saying how to install it."""
    try:
        import torch
    except ImportError:
        where = f"{path}: " if path is not None else ""
        raise SynapcError(
            f"{where}importing TorchScript needs PyTorch: pip install torch==2.13.0 "
            "(the 'torch' extra: pip install 'synapc[torch]')"
        ) from None
    return torch


def first_line(error: BaseException) -> str:
    """The first line of `error`'s message (errors are reported on one line)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _check_archive(path: Path) -> None:
    """Reject files that are not TorchScript archives before torch parses them: a
    `torch.save` archive (state_dict or pickled module, zip or legacy pickle) gets the
    export hint, anything else is called corrupt."""
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, OSError) as error:
            raise SynapcError(
                f"{path}: corrupt TorchScript archive ({first_line(error)})"
            ) from None
        scripted = any(n.endswith("/constants.pkl") or "/code/" in n for n in names)
        if not scripted:
            raise SynapcError(f"{path}: not a TorchScript archive; {_EXPORT_HINT}")
        return
    with open(path, "rb") as stream:
        head = stream.read(4)
    if head[:1] == b"\x80":  # a pickle: torch.save's legacy (non-zip) format
        raise SynapcError(f"{path}: not a TorchScript archive; {_EXPORT_HINT}")
    what = "truncated zip archive" if head[:2] == b"PK" else "not a zip archive"
    raise SynapcError(f"{path}: corrupt TorchScript archive ({what})")


def load_torchscript(path: str | os.PathLike[str]) -> torch.jit.ScriptModule:
    """Load a TorchScript archive on the CPU; a `torch.save` file or a corrupt file
    raises a one-line `SynapcError`."""
    path = Path(path)
    torch = require_torch(path)
    _check_archive(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return torch.jit.load(str(path), map_location="cpu")
    except Exception as error:
        raise SynapcError(
            f"{path}: corrupt TorchScript archive ({first_line(error)})"
        ) from None


def frozen_graph(path: Path, module: torch.jit.ScriptModule) -> torch._C.Graph:
    """The forward graph of `module` frozen for inference: parameters are constants,
    calls are inlined and tensor mutation is rewritten where it is safe."""
    torch = require_torch()
    module.eval()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            frozen = torch.jit.freeze(module)
    except Exception as error:
        raise SynapcError(
            f"{path}: cannot freeze the TorchScript module ({first_line(error)})"
        ) from None
    graph = frozen.graph
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_remove_mutation(graph)
    torch._C._jit_pass_constant_propagation(graph)
    torch._C._jit_pass_dce(graph)
    return graph
