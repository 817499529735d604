"""The command lines' rough edges, as users meet them: Ctrl-C (one line `interrupted`,
exit code 130, no half-written output), `synapc-opt` targets that work on synap IR,
diagnostics kept off the IR on stdout, `--version`, and the permissions of written
files."""

from __future__ import annotations

import errno
import importlib.metadata
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from synapc.mlir_io import parse_module
from synapc.weights import WeightStore

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny_classifier.onnx"
META = REPO / "examples" / "tiny_classifier.yaml"
CNN = REPO / "examples" / "tiny_cnn.mlir"
#: How long a subprocess may take before the test gives up on it.
TIMEOUT = 120

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="POSIX signals, FIFOs and permissions"
)


@pytest.fixture(autouse=True)
def _sigint_reaches_children() -> Iterator[None]:
    """A shell that starts the test run in the background (``pytest &`` without job
    control) leaves SIGINT ignored, and a child inherits an ignored signal: the Ctrl-C
    these tests send would then do nothing. Give the children the default handling."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _env(tmp_path: Path) -> dict[str, str]:
    """The environment of a tool run: unbuffered output (so a test can wait for a line)
    and a JAX compilation cache of the test's own."""
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "SYNAPC_JAX_CACHE_DIR": str(tmp_path / "jax-cache"),
    }


def _convert_args(out: Path, *extra: str) -> list[str]:
    return [
        str(BIN / "synapc"),
        "convert",
        "--model",
        str(MODEL),
        "--meta",
        str(META),
        "--target",
        "VS680",
        "--out-dir",
        str(out),
        *extra,
    ]


def _wait_for(
    condition: Callable[[], bool], process: subprocess.Popen[str], what: str
) -> bool:
    """Poll `condition` until it holds (True) or `process` ends first (False)."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if process.poll() is not None:
            return False
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.002)
    return True


def _interrupt(process: subprocess.Popen[str], delay: float) -> tuple[str, str]:
    """Send SIGINT to `process` after `delay` seconds (unless it ended) and collect its
    output."""
    time.sleep(delay)
    process.send_signal(signal.SIGINT)  # a no-op once the process has ended
    try:
        return process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("the interrupted process did not end")


def _leftovers(folder: Path) -> list[str]:
    """Temporary or probe files that synapc writes before renaming them."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.name.startswith(".") and "jax-cache" not in p.parts
    )


def _assert_interrupted(code: int | None, stdout: str, stderr: str) -> None:
    assert (code, stderr) == (130, "interrupted\n"), (code, stdout, stderr)


# -- 1. Ctrl-C ---------------------------------------------------------------------


#: When to press Ctrl-C, in seconds after the conversion created its output folder.
DELAYS = (0.0, 0.02, 0.05, 0.1, 0.2)


def test_ctrl_c_during_convert_leaves_no_output_folder(tmp_path: Path) -> None:
    interrupted = 0
    for i, delay in enumerate(DELAYS):
        out = tmp_path / f"out{i}"
        process = subprocess.Popen(
            _convert_args(out),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(tmp_path),
        )
        # a known point inside `synapc convert`: it creates the output folder first
        _wait_for(out.exists, process, "the output folder")
        stdout, stderr = _interrupt(process, delay)
        if process.returncode == 0:  # the conversion ended before the signal
            assert stderr == "", stderr
            assert (out / "model.synap").is_file() and (out / "model_info.txt").is_file()
        else:
            _assert_interrupted(process.returncode, stdout, stderr)
            # the steps it began ("[1/4] import: ..."), no success line
            assert all(line.startswith("[") for line in stdout.splitlines()), stdout
            assert not out.exists(), sorted(out.rglob("*"))
            interrupted += 1
        assert _leftovers(tmp_path) == []
    assert interrupted > 0, "no run was interrupted"


def test_ctrl_c_during_reconversion_keeps_the_existing_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = subprocess.run(
        _convert_args(out), capture_output=True, text=True, env=_env(tmp_path)
    )
    assert first.returncode == 0, first.stderr
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    interrupted = 0
    for delay in (0.0, 0.05, 0.1):
        # toggling --profiling changes the cache key: a full conversion over the files
        key = json.loads((out / "cache" / "key.json").read_text())
        profiling = ["--profiling"] if key["profiling"] == "False" else []
        process = subprocess.Popen(
            _convert_args(out, *profiling, "--verbose"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(tmp_path),
        )
        assert process.stdout is not None
        line = process.stdout.readline()  # "[1/4] import ...", then "imported ..."
        while line.startswith("["):
            line = process.stdout.readline()
        assert line.startswith("imported"), line
        _, stderr = _interrupt(process, delay)
        if process.returncode == 0:
            assert stderr == "", stderr
        else:
            _assert_interrupted(process.returncode, "", stderr)
            interrupted += 1
        assert _leftovers(tmp_path) == []
        now = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
        assert set(names) <= set(now), now
        for name in ("model.synap", "model_info.txt"):
            assert (out / name).stat().st_size > 0
    assert interrupted > 0, "no run was interrupted"


def _maps_jaxlib(pid: int) -> bool:
    """Whether process `pid` has mapped a jaxlib library (Linux's /proc/PID/maps)."""
    try:
        return "/jaxlib/" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def test_ctrl_c_while_jaxlib_loads(tmp_path: Path) -> None:
    if not Path("/proc/self/maps").exists():
        pytest.skip("needs Linux's /proc/PID/maps")
    out = tmp_path / "out"
    process = subprocess.Popen(
        _convert_args(out),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
    )
    # the known point: jaxlib's native modules are loading (a Ctrl-C there used to
    # abort the process or crash it)
    assert _wait_for(lambda: _maps_jaxlib(process.pid), process, "jaxlib to load")
    stdout, stderr = _interrupt(process, 0.0)
    _assert_interrupted(process.returncode, stdout, stderr)
    assert not out.exists()


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example converted once, for the benchmark tests."""
    out = tmp_path_factory.mktemp("package")
    result = subprocess.run(
        _convert_args(out / "out"),
        capture_output=True,
        text=True,
        env=_env(out),
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    return out / "out" / "model.synap"


@pytest.mark.parametrize("after", ["Graph:", "Running"])
def test_ctrl_c_during_benchmark(tmp_path: Path, package: Path, after: str) -> None:
    process = subprocess.Popen(
        [
            str(BIN / "synapc"),
            "benchmark",
            "--model",
            str(package),
            "--num-runs",
            "100000000",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
    )
    assert process.stdout is not None
    printed = ""
    while not printed.startswith(after):
        printed = process.stdout.readline()
        assert printed, "the benchmark ended before it printed " + after
    stdout, stderr = _interrupt(process, 0.05)
    _assert_interrupted(process.returncode, stdout, stderr)
    assert "Traceback" not in stdout


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A named pipe to give `synapc-opt` as its input file."""
    path = tmp_path / "input.mlir"
    os.mkfifo(path)
    yield path


def _open_for_writing(path: Path) -> int | None:
    """The write end of the FIFO `path`, or None while no reader has it open."""
    try:
        return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ENXIO:
            return None
        raise


def test_ctrl_c_while_opt_waits_for_its_input_file(tmp_path: Path, fifo: Path) -> None:
    out = tmp_path / "out.mlir"
    process = subprocess.Popen(
        [str(BIN / "synapc-opt"), str(fifo), "-p", "canonicalize", "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
    )
    writer: list[int] = []

    def opened() -> bool:
        fd = _open_for_writing(fifo)
        if fd is not None:
            writer.append(fd)
        return fd is not None

    # the known point: synapc-opt opened its input and now waits for the text
    assert _wait_for(opened, process, "synapc-opt to open its input")
    try:
        stdout, stderr = _interrupt(process, 0.1)
    finally:
        os.close(writer[0])
    _assert_interrupted(process.returncode, stdout, stderr)
    assert stdout == ""
    assert not out.exists()
    assert _leftovers(tmp_path) == []


#: The number of the read() system call, by machine.
READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}


def _reads_stdin(pid: int) -> bool:
    """Whether process `pid` is blocked in read(0, ...) (Linux's /proc/PID/syscall)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return fields[:2] == [READ_SYSCALL[os.uname().machine], "0x0"]


def test_ctrl_c_while_opt_waits_on_stdin(tmp_path: Path) -> None:
    try:
        Path("/proc/self/syscall").read_text()
    except OSError:
        pytest.skip("needs Linux's /proc/PID/syscall")
    if os.uname().machine not in READ_SYSCALL:
        pytest.skip(f"read()'s system call number on {os.uname().machine}")
    process = subprocess.Popen(
        [str(BIN / "synapc-opt")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
    )
    assert _wait_for(lambda: _reads_stdin(process.pid), process, "a read of stdin")
    stdout, stderr = _interrupt(process, 0.05)
    _assert_interrupted(process.returncode, stdout, stderr)
    assert stdout == ""


# -- 2. synapc-opt targets ----------------------------------------------------------


def _run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        **kwargs,  # type: ignore[call-overload]
    )


def _offered_targets() -> list[str]:
    result = _run("synapc-opt", "--help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    found = re.search(r"Available targets are: (\S+)", text)
    assert found, text
    return found.group(1).split(",")


def test_opt_offers_only_targets_that_work_on_synap_ir() -> None:
    targets = _offered_targets()
    assert targets == ["mlir"]
    for target in targets:
        result = _run("synapc-opt", str(CNN), "-t", target)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        parse_module(result.stdout, WeightStore())


@pytest.mark.parametrize("spelling", [["-t", "llvm"], ["--target=riscv-asm"]])
def test_opt_refuses_other_targets_in_one_line(spelling: list[str]) -> None:
    result = _run("synapc-opt", str(CNN), *spelling)
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("synapc-opt: error: ")
    assert spelling[-1].split("=")[-1] in lines[0] and "mlir" in lines[0]


@pytest.mark.parametrize("spelling", [["-t", "mlir{"], ["-p", "cse{"]])
def test_opt_malformed_spec_is_an_error_not_a_traceback(spelling: list[str]) -> None:
    result = _run("synapc-opt", str(CNN), *spelling)
    assert result.returncode == 1
    assert result.stderr.startswith("synapc-opt: error: ")
    assert "Traceback" not in result.stderr


# -- 3. diagnostics on stderr -------------------------------------------------------


def test_time_passes_goes_to_stderr() -> None:
    plain = _run("synapc-opt", str(CNN), "-p", "canonicalize")
    timed = _run("synapc-opt", str(CNN), "-p", "canonicalize", "--time-passes")
    assert plain.returncode == 0 and timed.returncode == 0, timed.stderr
    assert timed.stdout == plain.stdout
    parse_module(timed.stdout, WeightStore())
    assert re.search(r"^Pass canonicalize took \S+ seconds$", timed.stderr, re.M)


def test_print_between_passes_goes_to_stderr() -> None:
    plain = _run("synapc-opt", str(CNN), "-p", "canonicalize,cse")
    traced = _run(
        "synapc-opt", str(CNN), "-p", "canonicalize,cse", "--print-between-passes"
    )
    assert plain.returncode == 0 and traced.returncode == 0, traced.stderr
    assert traced.stdout == plain.stdout
    assert "IR after canonicalize:" in traced.stderr
    assert "synap.conv2d" in traced.stderr


# -- 4. versions ------------------------------------------------------------------


def test_versions_agree_with_the_installed_package() -> None:
    expected = importlib.metadata.version("synapc")
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, synapc; print(synapc.__version__); "
            "print([m for m in sys.modules if m.startswith(('xdsl', 'jax'))])",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert probe.stdout.splitlines() == [expected, "[]"]
    for tool in ("synapc", "synapc-opt"):
        result = _run(tool, "--version")
        assert result.returncode == 0, result.stderr
        assert result.stdout.split()[:2] == [tool, expected], result.stdout
    forwarded = _run("synapc", "opt", "--version")
    assert forwarded.stdout.split()[:2] == ["synapc-opt", expected]


# -- 5. permissions ---------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o027], ids=["022", "027"])
def test_written_files_honor_the_umask(tmp_path: Path, umask: int) -> None:
    expected = 0o666 & ~umask
    out = tmp_path / "out"
    result = subprocess.run(
        _convert_args(out),
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        umask=umask,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    written = [out / "model.synap", out / "model_info.txt", *(out / "cache").iterdir()]
    assert len(written) == 5
    assert {p.name: _mode(p) for p in written} == {p.name: expected for p in written}
    mlir = tmp_path / "model.mlir"
    result = _run("synapc", "import", str(MODEL), "-o", str(mlir), umask=umask)
    assert result.returncode == 0, result.stderr
    assert _mode(mlir) == expected
    opt = tmp_path / "opt.mlir"
    result = _run(
        "synapc-opt", str(mlir), "-p", "canonicalize", "-o", str(opt), umask=umask
    )
    assert result.returncode == 0, result.stderr
    assert _mode(opt) == expected
    assert _leftovers(tmp_path) == []


def test_import_replaces_its_output_whole(tmp_path: Path) -> None:
    mlir = tmp_path / "model.mlir"
    mlir.write_text("old")
    result = _run("synapc", "import", str(tmp_path / "missing.onnx"), "-o", str(mlir))
    assert result.returncode != 0
    assert mlir.read_text() == "old"
    result = _run("synapc", "import", str(MODEL), "-o", str(mlir))
    assert result.returncode == 0, result.stderr
    parse_module(mlir.read_text(), WeightStore())
    assert _leftovers(tmp_path) == []


def test_native_extension_modules_load_with_ctrl_c_held_back() -> None:
    """A Ctrl-C inside a C++ module's initialization crashed `synapc convert` with
    SIGSEGV (onnx's module, imported lazily by the ONNX importer): under a command, an
    extension module is created and executed with SIGINT deferred."""
    code = """
import importlib, os, signal, sys, _bz2
from synapc import interrupts
folder = os.path.dirname(_bz2.__file__)  # the standard library's extension modules
fresh = sorted(
    n.split(".")[0] for n in os.listdir(folder)
    if n.endswith(".so") and n.split(".")[0] not in sys.modules
)[0]
delivered = []
def work():
    signal.signal(signal.SIGINT, lambda *a: delivered.append(1))
    real = interrupts.deferred_interrupts
    held = []
    def spy():
        held.append(1)
        return real()
    interrupts.deferred_interrupts = spy
    importlib.import_module(fresh)
    interrupts.deferred_interrupts = real
    spec = interrupts._ShieldNativeImports().find_spec(fresh, None)
    print(len(held) >= 2, type(spec.loader).__name__)
    return 0
sys.exit(interrupts.run_interruptible(work, exit_now=False))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "_ShieldedExtensionLoader"]
