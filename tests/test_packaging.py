"""The distribution: every package is listed, and a built wheel puts dialects/, passes/
and backends/ under synapc/ with nothing of them at the top of site-packages."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAPPED = {
    "synapc.dialects": "dialects",
    "synapc.passes": "passes",
    "synapc.backends": "backends",
}


def _declared() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_every_package_folder_is_declared() -> None:
    declared = set(_declared()["tool"]["setuptools"]["packages"])
    found = set()
    for package, folder in {"synapc": "synapc", **MAPPED}.items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder).parts
            found.add(".".join((package, *relative)))
    assert found == declared


def test_public_modules_import() -> None:
    import synapc.backends
    import synapc.dialects
    import synapc.passes

    assert synapc.dialects.__name__ == "synapc.dialects"
    assert synapc.passes.__name__ == "synapc.passes"
    assert synapc.backends.__name__ == "synapc.backends"


def test_no_top_level_dialects_passes_or_backends_in_site_packages() -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    for name in ("dialects", "passes", "backends"):
        assert not (site / name).exists(), f"{name} leaked into {site}"


def test_wheel_maps_folders_into_the_synapc_namespace(tmp_path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    wheel = next(tmp_path.glob("synapc-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {
        "synapc",
        f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info",
    }
    for module in (
        "synapc/dialects/quant.py",
        "synapc/dialects/synap/conv.py",
        "synapc/passes/registry.py",
        "synapc/backends/__init__.py",
        "synapc/opt.py",
    ):
        assert module in names
