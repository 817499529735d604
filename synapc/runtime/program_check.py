"""Deserialize a package's programs in a separate process before this one does.

A `model.synap` program is a `jax.export` serialization around a StableHLO portable
artifact (MLIR bytecode), and jaxlib's bytecode reader trusts that bytecode: a damaged or
hostile program can make it dereference a null pointer (a VHLO tensor attribute whose
type is not a shaped type: SIGSEGV in ``VhloBytecodeInterface::readTensorV1Attr``). No
Python exception comes out of that, the process loading the package just dies. So
before `synapc.Network` deserializes a program for the first time, the program is
deserialized the same way (`jax.export.deserialize`, then `Exported.mlir_module()`) in a
fresh Python process, ``python -m synapc.runtime.program_check``, which sets its own time
and memory limits before importing JAX. If the program kills that process (a signal,
LLVM's fatal-error exit), runs past the time limit or fails to load there, the package
is refused with one `PackageError` line naming the package and the member. All the
programs a load needs go to one process, so a load spawns at most one.

A program that passed is remembered: an empty marker file named by its SHA-256, in a
folder per checker, JAX and jaxlib version (a new jaxlib checks again) under
``SYNAPC_PROGRAM_CACHE_DIR`` (default ``~/.cache/synapc/programs``, beside JAX's
compilation cache in ``~/.cache/synapc/jax``), so later loads spawn nothing. The programs
`synapc.convert` exports are registered as it builds them, so the usual convert-then-run
path on one machine never spawns either. Markers are created atomically (a temporary
name, then a rename), no symbolic link is followed in the marker folder, and only
regular files owned by the user count; a missing, foreign or unwritable cache only
means checking again.

``SYNAPC_TRUST_PROGRAMS=1`` skips the check (and the cache): programs are deserialized in
the loading process as they are. Only for packages from a source as trusted as the
code itself; ``0`` or unset checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from synapc.errors import SynapcError

TRUST_VARIABLE = "SYNAPC_TRUST_PROGRAMS"
DIR_VARIABLE = "SYNAPC_PROGRAM_CACHE_DIR"
DEFAULT_DIR = Path("~/.cache/synapc/programs")
#: The module the checking process runs (``python -m``).
MODULE = "synapc.runtime.program_check"
#: Bumped when what the checking process does changes: earlier markers no longer count.
CHECK_VERSION = 1

_MIB = 1 << 20
#: The checking process's time limit: starting Python and importing JAX take well under
#: a second on a desktop, several on a small board; deserializing runs at hundreds of
#: MiB/s, so the limit also grows by a second per 8 MiB of programs.
TIMEOUT_SECONDS = 30.0
TIMEOUT_BYTES_PER_SECOND = 8 * _MIB
#: The checking process's memory limit (RLIMIT_DATA: Linux ignores RLIMIT_RSS, and
#: RLIMIT_AS counts the address space threads and allocators reserve without using).
#: Importing JAX and deserializing a small program use about 160 MiB; the limit grows by
#: 8 bytes per byte of programs (bytecode, MLIR objects and the printed module).
MEMORY_BYTES = 2048 * _MIB
MEMORY_PER_PROGRAM_BYTE = 8

#: Protocol lines the checking process writes on its own copy of stdout (native code
#: writing to file descriptor 1 goes to stderr instead): ``ready`` once JAX is imported,
#: then ``start I`` and ``ok I`` / ``error I STAGE`` for each program I.
_TAG = "synapc-program-check"
_LINE = re.compile(rf"{_TAG} (ready|start|ok|error)(?: (\d+))?(?: (\w+))?$")
#: Why a program that reported an error in the checking process is refused (the same
#: words as the loading process's own refusals).
_STAGES = {
    "serialization": "not a valid jax.export serialization (damaged or from another "
    "program)",
    "stablehlo": "its StableHLO does not parse",
}
#: How much of the checking process's stderr a refusal of the checker itself quotes.
_STDERR_TAIL = 2000


def trusted() -> bool:
    """Whether `SYNAPC_TRUST_PROGRAMS` says to skip the check (`SynapcError` for a
    value other than 0 or 1: a typo must not silently turn the check off, or on)."""
    raw = os.environ.get(TRUST_VARIABLE, "").strip()
    if raw in ("", "0"):
        return False
    if raw == "1":
        return True
    raise SynapcError(
        f"{TRUST_VARIABLE}='{raw}': expected 1 (deserialize packages' programs without "
        "checking them in a separate process first) or 0"
    )


# -- the cache of programs that passed -----------------------------------------------------


def _cache_folder_name() -> str:
    """The marker folder of this checker, JAX and jaxlib: a program that passed with one
    jaxlib may crash another's reader."""
    import jax
    import jaxlib

    name = f"v{CHECK_VERSION}-jax-{jax.__version__}-jaxlib-{jaxlib.__version__}"
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name)


def _open_cache(create: bool) -> int | None:
    """A descriptor of the marker folder (the caller closes it), or None when there is
    none (and `create` is off) or it cannot be used: not a folder of the user's own,
    writable by others, a symbolic link, or any OS error."""
    root = Path(os.environ.get(DIR_VARIABLE) or DEFAULT_DIR).expanduser()
    name = _cache_folder_name()
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        if create:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
        parent = os.open(root, flags)  # the configured folder itself may be a link
    except (OSError, ValueError):
        return None
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=parent)
        folder = os.open(name, flags | os.O_NOFOLLOW, dir_fd=parent)
    except OSError:
        return None
    finally:
        os.close(parent)
    try:
        info = os.fstat(folder)
    except OSError:
        info = None
    if info is None or info.st_uid != os.getuid() or info.st_mode & 0o022:
        os.close(folder)  # another user could plant markers there
        return None
    return folder


def _is_cached(folder: int, digest: str) -> bool:
    """Whether the marker of `digest` is there: a regular file of the user's own (not a
    link to one)."""
    try:
        info = os.stat(digest, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()


def _remember(folder: int, digest: str) -> None:
    """Create the marker of `digest` atomically (an exclusive temporary, then a rename
    over whatever has the name, a link included); failures are ignored."""
    temporary = f".{digest}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(
            temporary,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=folder,
        )
        os.close(fd)
        os.replace(temporary, digest, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)


def register_programs(programs: Iterable[bytes]) -> None:
    """Remember `programs` as checked: for programs synapc itself just exported (the
    converter), which a later load then deserializes without a checking process. Does
    nothing when the cache cannot be used or `SYNAPC_TRUST_PROGRAMS` is set."""
    if os.environ.get(TRUST_VARIABLE, "").strip() == "1":
        return
    folder = _open_cache(create=True)
    if folder is None:
        return
    try:
        for data in programs:
            _remember(folder, hashlib.sha256(data).hexdigest())
    finally:
        os.close(folder)


# -- the check, in the loading process ----------------------------------------------------


@dataclass(frozen=True)
class CheckerRun:
    """What the checking process said and how it ended: its protocol lines (tag
    removed), its exit status (negative: the signal that ended it), whether it ran out
    of time, the end of its stderr, and its limits."""

    lines: list[tuple[str, int | None, str | None]]
    returncode: int
    timed_out: bool
    stderr_tail: str
    timeout: float
    memory: int


def _command(memory: int) -> list[str]:
    """The command line of a checking process with a memory limit of `memory` bytes."""
    return [sys.executable, "-m", MODULE, "--memory", str(memory)]


def _run_checker(programs: Sequence[bytes]) -> CheckerRun:
    """Deserialize `programs` in a fresh ``python -m synapc.runtime.program_check``: the
    programs go to its stdin as 8-byte little-endian lengths and bytes (through an
    unnamed temporary file, so a hung child cannot block a writer); its stderr (MLIR's
    diagnostics) is kept out of this process's."""
    total = sum(len(data) for data in programs)
    timeout = TIMEOUT_SECONDS + total / TIMEOUT_BYTES_PER_SECOND
    memory = MEMORY_BYTES + MEMORY_PER_PROGRAM_BYTE * total
    command = _command(memory)
    with tempfile.TemporaryFile() as frames, tempfile.TemporaryFile() as errors:
        for data in programs:
            frames.write(len(data).to_bytes(8, "little"))
            frames.write(data)
        frames.seek(0)
        try:
            process = subprocess.Popen(
                command, stdin=frames, stdout=subprocess.PIPE, stderr=errors
            )
        except OSError as error:  # no Python to run (an embedding application)
            return CheckerRun(
                [], 127, False, f"cannot run {sys.executable!r}: {error}", 0, memory
            )
        timed_out = False
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            process.kill()
            output, _ = process.communicate()
        except BaseException:  # Ctrl-C: the child must not outlive the load
            process.kill()
            process.wait()
            raise
        size = errors.seek(0, os.SEEK_END)
        errors.seek(max(0, size - _STDERR_TAIL))
        tail = errors.read().decode("utf-8", "replace")
    lines = []
    for raw in output.decode("utf-8", "replace").splitlines():
        match = _LINE.match(raw)
        if match:
            word, index, stage = match.groups()
            lines.append((word, None if index is None else int(index), stage))
    return CheckerRun(lines, process.returncode, timed_out, tail, timeout, memory)


def _ending(run: CheckerRun) -> str:
    """How the checking process ended, in words."""
    if run.timed_out:
        return f"it ran longer than the time limit of {run.timeout:.0f} s"
    if run.returncode < 0:
        try:
            name = signal.Signals(-run.returncode).name
        except ValueError:
            name = f"signal {-run.returncode}"
        if -run.returncode in (signal.SIGABRT, signal.SIGKILL):
            name += f" (the memory limit is {run.memory // _MIB:,} MiB)"
        return f"it was killed by {name}"
    return f"it exited with status {run.returncode}"


def check_programs(
    path: str | os.PathLike[str], programs: Sequence[tuple[str, bytes]]
) -> None:
    """Make sure the package `path`'s `programs` (member name, bytes) can be
    deserialized without taking this process down: the ones not already known to be
    safe are deserialized in a checking process first, and remembered when they pass.

    A program that crashes, hangs or fails to load there raises `PackageError`
    (``<path>: <member>: cannot load the program: ...``); a checking process that cannot
    even start raises `SynapcError`. Nothing happens with ``SYNAPC_TRUST_PROGRAMS=1``.
    """
    if trusted() or not programs:
        return
    from synapc.backends.package import PackageError

    folder = _open_cache(create=False)
    try:
        pending: dict[str, tuple[str, bytes]] = {}
        for member, data in programs:
            digest = hashlib.sha256(data).hexdigest()
            if digest not in pending and not (
                folder is not None and _is_cached(folder, digest)
            ):
                pending[digest] = (member, data)
    finally:
        if folder is not None:
            os.close(folder)
    if not pending:
        return
    digests = list(pending)
    run = _run_checker([pending[d][1] for d in digests])
    words = {word for word, _, _ in run.lines}
    if "ready" not in words:
        tail = run.stderr_tail.strip().splitlines()
        raise SynapcError(
            f"{path}: cannot check its programs: the checking process (python -m "
            f"{MODULE}) did not start: {_ending(run)}"
            + (f": {tail[-1]}" if tail else "")
            + f" ({TRUST_VARIABLE}=1 skips the check, for trusted packages only)"
        )
    results = {
        index: (word, stage) for word, index, stage in run.lines if index is not None
    }
    passed = []
    failure: tuple[str, str] | None = None
    for index, digest in enumerate(digests):
        word, stage = results.get(index, ("", None))
        if word == "ok":
            passed.append(digest)
            continue
        member = pending[digest][0]
        if word == "error" and stage == "memory":
            reason = (
                "deserializing it needs more than the memory limit of "
                f"{run.memory // _MIB:,} MiB of the separate process that checks programs"
            )
        elif word == "error":
            reason = _STAGES.get(stage or "", f"deserializing it failed ({stage})")
        else:
            reason = (
                "deserializing it ended the separate process that checks programs: "
                f"{_ending(run)}; the program is damaged or hostile"
            )
        failure = (member, reason)
        break
    folder = _open_cache(create=True) if passed else None
    if folder is not None:
        try:
            for digest in passed:
                _remember(folder, digest)
        finally:
            os.close(folder)
    if failure is not None:
        raise PackageError(f"{path}: {failure[0]}: cannot load the program: {failure[1]}")


# -- the checking process -----------------------------------------------------------------


def _limit_resources(memory: int) -> None:
    """This process's limits: `memory` bytes of data, no core dump of a crash (where
    the hard limits allow)."""
    import resource

    for kind, value in ((resource.RLIMIT_DATA, memory), (resource.RLIMIT_CORE, 0)):
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        with contextlib.suppress(ValueError, OSError):  # a platform without the limit
            resource.setrlimit(kind, (value, hard))


def _say(channel: TextIO, line: str) -> None:
    channel.write(f"{_TAG} {line}\n")
    channel.flush()


def _read_frame(source: BinaryIO) -> bytes | None:
    """The next program from stdin, or None at the end (or a cut-off frame)."""
    header = source.read(8)
    if len(header) != 8:
        return None
    size = int.from_bytes(header, "little")
    data = source.read(size)
    return data if len(data) == size else None


def _deserialize(data: bytes) -> str | None:
    """Deserialize `data` as `synapc.Network` does before anything else touches it; the
    stage that raised (a key of `_STAGES`), or None when both went through."""
    import jax.export

    try:
        exported = jax.export.deserialize(bytearray(data))
    except MemoryError:
        return "memory"
    except Exception:  # the flatbuffer reader's own exceptions, any kind
        return "serialization"
    try:
        exported.mlir_module()
    except MemoryError:
        return "memory"
    except Exception:  # the MLIR bytecode reader's errors, any kind
        return "stablehlo"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """The checking process: ``--memory BYTES``, programs framed on stdin, protocol
    lines on the original stdout (see `_LINE`). Limits are set before JAX is imported."""
    args = list(sys.argv[1:] if argv is None else argv)
    memory = int(args[1]) if len(args) == 2 and args[0] == "--memory" else MEMORY_BYTES
    _limit_resources(memory)
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what native code prints must not pass for protocol lines
    import jax.export  # noqa: F401  (imported before `ready`: a failure here is ours)

    _say(channel, "ready")
    index = 0
    while (data := _read_frame(sys.stdin.buffer)) is not None:
        _say(channel, f"start {index}")
        stage = _deserialize(data)
        _say(channel, f"ok {index}" if stage is None else f"error {index} {stage}")
        index += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
