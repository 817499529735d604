"""`synapc.runtime.program_check`: a package's programs are deserialized in a separate
process before `synapc.Network` deserializes them itself, so that a program crashing
jaxlib's bytecode reader is one clear refusal instead of a dead process; programs that
passed, or that the converter exported, are remembered and never checked again; the
`SYNAPC_TRUST_PROGRAMS` setting; a cache that cannot be used."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import synapc
from benchmarks.fuzz.harness import classify_message
from synapc.backends.jax.export import export_program
from synapc.backends.package import PackageError, Subgraph, TensorSpec, build_package
from synapc.errors import SynapcError
from synapc.runtime import Network, program_check

REPO = Path(__file__).resolve().parents[1]
#: A fuzzer finding that kills jaxlib 0.10.2's deserializer by SIGSEGV (see its README).
CRASH = REPO / "tests/data/fuzz/crash-04190-program.synap"
PROGRAM = "0/model.stablehlo"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A program cache of the test's own, and the check on."""
    folder = tmp_path / "programs"
    monkeypatch.setenv(program_check.DIR_VARIABLE, str(folder))
    monkeypatch.delenv(program_check.TRUST_VARIABLE, raising=False)
    return folder


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many programs each checking process started so far was given."""
    calls: list[int] = []
    run = program_check._run_checker

    def counted(programs: Sequence[bytes]) -> program_check.CheckerRun:
        calls.append(len(programs))
        return run(programs)

    monkeypatch.setattr(program_check, "_run_checker", counted)
    return calls


def _package(tmp_path: Path, offset: float = 1.0) -> Path:
    """A one-subgraph package whose program (x * w + offset) nobody registered: the
    test exports it itself, not through the converter."""

    def program(params: dict[str, jax.Array], x: jax.Array) -> list[jax.Array]:
        return [x * params["w"] + offset]

    spec = TensorSpec("x", (4,), "float32")
    blob, weights = export_program(
        program,
        {"w": jnp.full(4, 2.0, np.float32)},
        [jax.ShapeDtypeStruct((4,), np.float32)],
    )
    data = build_package(
        target="GENERIC",
        source={},
        inputs=[spec],
        outputs=[spec],
        output_refs=[(0, 0)],
        subgraphs=[Subgraph("cpu", blob, weights, [spec], [spec], [(-1, 0)])],
    )
    path = tmp_path / f"model-{offset}.synap"
    path.write_bytes(data)
    return path


def _program_digest(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        return hashlib.sha256(archive.read(PROGRAM)).hexdigest()


def _markers(cache: Path) -> set[str]:
    return {p.name for p in cache.glob("*/*") if not p.name.startswith(".")}


def _refused(load: Callable[[], object], path: Path) -> str:
    with pytest.raises(PackageError) as error:
        load()
    message = str(error.value)
    assert message.startswith(f"{path}: {PROGRAM}: cannot load the program"), message
    assert classify_message(message, path) == "clear", message
    return message


def test_crashing_program_is_refused_in_process(
    cache: Path, spawned: list[int], capfd: pytest.CaptureFixture[str]
) -> None:
    """The fuzzer's SIGSEGV: one line naming the package and the member, the test
    process alive, nothing on stderr (the checking process's diagnostics stay there),
    nothing remembered."""
    message = _refused(lambda: Network(CRASH), CRASH)
    assert "killed by SIGSEGV" in message or "does not parse" in message, message
    assert "damaged or hostile" in message or "does not parse" in message, message
    assert spawned == [1]
    assert capfd.readouterr().err == ""
    assert _program_digest(CRASH) not in _markers(cache)
    _refused(lambda: Network(CRASH), CRASH)  # refused again, never trusted
    assert spawned == [1, 1]


def test_reproducer_crashes_a_bare_deserializer() -> None:
    """What the check is for: deserialized without it, the reproducer's program takes
    its process down (skipped once jaxlib reads it safely: the refusal test above then
    sees an ordinary parse error)."""
    code = (
        "import sys, zipfile, jax.export\n"
        f"data = zipfile.ZipFile(sys.argv[1]).read({PROGRAM!r})\n"
        "jax.export.deserialize(bytearray(data)).mlir_module()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(CRASH)], capture_output=True, check=False
    )
    if result.returncode >= 0:
        pytest.skip(f"this jaxlib reads the reproducer (exit status {result.returncode})")
    assert result.returncode in (-11, -7, -6)  # SIGSEGV (or SIGBUS / SIGABRT)


def test_good_package_is_checked_once(
    tmp_path: Path, cache: Path, spawned: list[int]
) -> None:
    path = _package(tmp_path)
    network = Network(path)
    assert spawned == [1]
    assert _markers(cache) == {_program_digest(path)}
    network.inputs[0].assign(np.arange(4, dtype=np.float32))
    np.testing.assert_allclose(network.predict()[0].to_numpy(), [1.0, 3.0, 5.0, 7.0])
    Network(path)  # remembered: no checking process
    Network(path)
    assert spawned == [1]
    marker = next(cache.glob("*/*"))
    assert marker.stat().st_size == 0 and (marker.stat().st_mode & 0o777) == 0o600
    assert not any(p.name.startswith(".") for p in marker.parent.iterdir())


def test_converted_programs_are_registered(
    tmp_path: Path, cache: Path, spawned: list[int]
) -> None:
    """Convert then run on one machine: the converter registered its programs (the
    layers' too), so neither loading nor profiling spawns a checking process."""
    result = synapc.convert(
        REPO / "examples/tiny_classifier.onnx",
        "VS680",
        tmp_path / "out",
        meta=REPO / "examples/tiny_classifier.yaml",
        profiling=True,
    )
    network = Network(result.package)
    network.inputs[0].assign(np.full(network.inputs[0].shape, 128, np.uint8))
    network.predict()
    assert network.profile()
    assert spawned == []
    assert _program_digest(result.package) in _markers(cache)


def test_trust_setting(
    tmp_path: Path, cache: Path, spawned: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SYNAPC_TRUST_PROGRAMS=1 skips the check and the cache; any value but 0 / 1 is
    an error rather than a silent choice."""
    path = _package(tmp_path)
    monkeypatch.setenv(program_check.TRUST_VARIABLE, "1")
    Network(path)
    assert spawned == [] and _markers(cache) == set()
    for value in ("yes", "true", "2"):
        monkeypatch.setenv(program_check.TRUST_VARIABLE, value)
        with pytest.raises(SynapcError, match=f"SYNAPC_TRUST_PROGRAMS='{value}'"):
            Network(path)
    monkeypatch.setenv(program_check.TRUST_VARIABLE, "0")
    Network(path)
    assert spawned == [1]


def test_unusable_cache_only_means_checking_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[int]
) -> None:
    """A cache folder that cannot be created (under a file): every load checks, and
    loads."""
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    monkeypatch.setenv(program_check.DIR_VARIABLE, str(blocker / "programs"))
    monkeypatch.delenv(program_check.TRUST_VARIABLE, raising=False)
    path = _package(tmp_path)
    Network(path)
    Network(path)
    assert spawned == [1, 1]


def test_markers_must_be_the_users_own_files(tmp_path: Path, cache: Path) -> None:
    """A link in place of a marker does not count (nor is followed when the marker is
    written), and neither does a marker folder others may write to."""
    digest = "ab" * 32
    program_check.register_programs([b"made by synapc"])
    folder = next(cache.iterdir())
    target = tmp_path / "elsewhere"
    target.write_bytes(b"keep")
    (folder / digest).symlink_to(target)
    fd = program_check._open_cache(create=False)
    assert fd is not None
    try:
        assert not program_check._is_cached(fd, digest)
        program_check._remember(fd, digest)  # replaces the link, does not follow it
        assert program_check._is_cached(fd, digest)
    finally:
        os.close(fd)
    assert target.read_bytes() == b"keep" and not (folder / digest).is_symlink()
    folder.chmod(0o777)
    try:
        assert program_check._open_cache(create=True) is None
    finally:
        folder.chmod(0o700)
    assert program_check._open_cache(create=False) is not None


def test_checker_that_hangs_or_cannot_start(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program the checking process never finishes is refused after the time limit;
    a checking process that cannot start at all is a SynapcError (not the package's
    fault) naming the setting that skips the check."""
    path = _package(tmp_path)
    hang = (
        "import time\n"
        "print('synapc-program-check ready')\n"
        "print('synapc-program-check start 0', flush=True)\n"
        "time.sleep(60)\n"
    )
    monkeypatch.setattr(program_check, "TIMEOUT_SECONDS", 1.0)
    monkeypatch.setattr(
        program_check, "_command", lambda memory: [sys.executable, "-c", hang]
    )
    message = _refused(lambda: Network(path), path)
    assert "longer than the time limit of 1 s" in message
    broken = "import sys; sys.exit('no module named jax')"
    monkeypatch.setattr(
        program_check, "_command", lambda memory: [sys.executable, "-c", broken]
    )
    with pytest.raises(SynapcError, match=r"did not start.*no module named jax") as error:
        Network(path)
    assert not isinstance(error.value, PackageError)
    assert "SYNAPC_TRUST_PROGRAMS=1" in str(error.value)
    assert _markers(cache) == set()


SPIN = REPO / "tests/data/fuzz/hang-09228-program.synap"


def test_program_that_makes_the_deserializer_spin_is_refused_in_time(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The package campaign's case 09228: jaxlib's reader loops on the damaged program;
    the checking process is killed at its time limit (shortened here to keep the suite
    fast) and the package refused with one line, nothing remembered."""
    monkeypatch.setattr(program_check, "TIMEOUT_SECONDS", 8.0)
    message = _refused(lambda: Network(SPIN), SPIN)
    assert "longer than the time limit of 8 s" in message or "does not parse" in message
    assert capfd.readouterr().err == ""
    assert _program_digest(SPIN) not in _markers(cache)
