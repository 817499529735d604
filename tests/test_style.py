"""Lint, format and layering are part of the suite: `ruff check` and `ruff format --check`
must be clean with the configuration in pyproject.toml, and no module imports a layer
above its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).parent / "ruff"


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff_is_clean(command: list[str]) -> None:
    result = subprocess.run(
        [str(RUFF), *command, str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout + result.stderr


#: Layers point one way: the folders a layer's modules may not import (synapc's own
#: modules by the package paths they are installed under).
FORBIDDEN_IMPORTS = {
    "dialects": ("synapc.passes", "synapc.backends", "synapc.importers", "synapc.convert"),
    "passes": ("synapc.backends", "synapc.importers", "synapc.convert"),
    # the runtime: the package format, numpy, JAX and Pillow (plus leaf modules such as
    # synapc.errors and synapc.preprocess_types), never the compiler
    "synapc/runtime": (
        "xdsl",
        "synapc.dialects",
        "synapc.passes",
        "synapc.importers",
        "synapc.convert",
        "synapc.tools",
        "synapc.backends.jax",
        "synapc.io_attributes",
        "synapc.model",
        "synapc.compiler",
    ),
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN_IMPORTS))
def test_layers_point_one_way(layer: str) -> None:
    """A pass never imports a backend (it gets the constant evaluator from the
    compilation context), and dialects import neither passes nor backends."""
    import ast

    offending = []
    for path in sorted((REPO / layer).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.startswith(FORBIDDEN_IMPORTS[layer]):
                    offending.append(f"{path.relative_to(REPO)}:{node.lineno} {name}")
    assert offending == []
