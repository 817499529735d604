"""The fuzzing harness: run mutated inputs through synapc, each in its own process with a
time limit and a memory cap, and classify what happened.

Outcomes:
- ok: synapc accepted the input;
- clear: a `SynapcError` whose message is one line, names the file and holds no Python
  exception text (what a user must get for bad input);
- traceback: any other exception, or a SynapcError whose message quotes Python's own
  exception text (`'NoneType' object ...`), spans lines or does not name the file;
- hang: not finished within the time limit;
- over-memory: resident memory above the cap (the process is killed), or MemoryError;
- crash: the process died by a signal or without reporting (segfault, abort).

Each case runs in a child forked from this process, so the modules a target imports are
loaded once; the parent never runs JAX itself (a forked child of a process whose XLA
runtime already started could deadlock). Every case that is neither ok nor clear is
written as a reproducer: the input, any files beside it and the message.
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import resource
import signal
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from synapc.errors import SynapcError

OUTCOMES = ("ok", "clear", "traceback", "hang", "over-memory", "crash")
BAD_OUTCOMES = ("traceback", "hang", "over-memory", "crash")

#: Python's own exception texts: inside a message they mean an unchecked failure.
PYTHON_TEXT = re.compile(
    r"object has no attribute|'NoneType' object|object is not (subscriptable|iterable|"
    r"callable)|unhashable type|unsupported operand|index -?\d+ is out of bounds|"
    r"(list|tuple|string) index out of range|invalid literal for|could not convert|"
    r"Traceback \(most recent|not supported between instances|positional argument|"
    r"required positional|is not JSON serializable|maximum recursion depth|"
    r"division by zero|too many values to unpack|not enough values to unpack|"
    r"\b(KeyError|ValueError|TypeError|AttributeError|IndexError|OverflowError|"
    r"RecursionError|AssertionError|ZeroDivisionError|RuntimeError|UnicodeDecodeError|"
    r"DecodeError|JaxRuntimeError|XlaRuntimeError)\b"
)


@dataclass(frozen=True)
class Case:
    """One input: the bytes of the file synapc reads (written as ``case{suffix}``) and
    files beside it (relative name -> bytes, e.g. what a metafile refers to)."""

    name: str
    data: bytes
    suffix: str
    extra: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    """A case that was neither accepted nor refused clearly."""

    case: str
    outcome: str
    message: str


@dataclass
class Report:
    """The outcome counts of a campaign and its findings."""

    target: str
    counts: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    peak_rss_mb: float = 0.0
    seconds: float = 0.0

    @property
    def bad(self) -> int:
        """Cases that ended in a traceback, a hang, over-memory or a crash."""
        return sum(self.counts[o] for o in BAD_OUTCOMES)

    def table(self) -> str:
        """The counts as a text table, with the peak resident memory of the workers."""
        total = sum(self.counts.values())
        lines = [
            f"{self.target}: {total} cases in {self.seconds:.0f} s, peak RSS of a worker "
            f"{self.peak_rss_mb:.0f} MB",
            f"  {'outcome':<12} {'cases':>7}",
        ]
        lines += [f"  {o:<12} {self.counts[o]:>7}" for o in OUTCOMES]
        return "\n".join(lines)


def classify_message(message: str, path: Path) -> str:
    """`clear` for a message a user can act on (one line, names the file `path`, no
    Python exception text), otherwise `traceback`."""
    if not message or "\n" in message.strip() or PYTHON_TEXT.search(message):
        return "traceback"
    return "clear" if path.name in message or str(path.parent) in message else "traceback"


def _write_case(case: Case, folder: Path) -> Path:
    path = folder / f"case{case.suffix}"
    path.write_bytes(case.data)
    for name, data in case.extra.items():
        target = (folder / name).resolve()
        if folder.resolve() not in target.parents:
            raise ValueError(f"case {case.name}: extra file {name!r} leaves its folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return path


def _stack_file(path: Path) -> Path:
    """Where the child of case file `path` writes its Python stacks when asked
    (SIGUSR1, before a hang is killed): beside the case's folder, not in it."""
    return path.parent.with_name(path.parent.name + ".stacks")


def _child(check: Callable[[Path], None], path: Path, out: int) -> None:
    """Run one case in the forked child and report (kind, message) through `out`."""
    stacks = open(_stack_file(path), "w", encoding="utf-8")  # noqa: SIM115 (lives until _exit)
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.chdir(path.parent)
        check(path)
        result = ["ok", ""]
    except SynapcError as error:
        result = ["synapc", str(error)]
    except MemoryError:
        result = ["over-memory", "MemoryError"]
    except BaseException as error:
        where = traceback.extract_tb(error.__traceback__)[-1:]
        place = f" at {where[0].filename}:{where[0].lineno}" if where else ""
        text = "".join(traceback.format_exception_only(error)).strip()
        result = ["traceback", f"{text[:1500]}{place}"]
    payload = json.dumps(result).encode()
    view = memoryview(payload)
    while view:
        view = view[os.write(out, view) :]
    os._exit(0)


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


@dataclass
class _Running:
    case: Case
    folder: tempfile.TemporaryDirectory[str]
    path: Path
    pid: int
    pipe: int
    started: float
    payload: bytearray = field(default_factory=bytearray)
    peak_kb: int = 0


def _start(case: Case, check: Callable[[Path], None]) -> _Running:
    folder = tempfile.TemporaryDirectory(prefix="synapc-fuzz-")
    path = _write_case(case, Path(folder.name))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns from here
        os.close(read)
        _child(check, path, write)
    os.close(write)
    os.set_blocking(read, False)
    return _Running(case, folder, path, pid, read, time.monotonic())


def _drain(run: _Running) -> None:
    while True:
        try:
            chunk = os.read(run.pipe, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            return
        run.payload += chunk


def _hang_stack(path: Path) -> str:
    """The innermost frames of the hung child's main thread, from its stack dump."""
    try:
        text = _stack_file(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    threads = text.split("\n\n")
    main = next((t for t in threads if "Current thread" in t), threads[0])
    frames = [line.strip() for line in main.splitlines() if line.strip().startswith("File")]
    return " <- ".join(frames[:4])


def _finish(run: _Running, status: int, killed_for: str | None) -> tuple[str, str]:
    _drain(run)
    os.close(run.pipe)
    stack = _hang_stack(run.path) if killed_for == "hang" else ""
    _stack_file(run.path).unlink(missing_ok=True)
    run.folder.cleanup()
    if killed_for is not None:
        return killed_for, f"killed: {killed_for}" + (f" in {stack}" if stack else "")
    if os.WIFSIGNALED(status):
        return "crash", f"died by {signal.Signals(os.WTERMSIG(status)).name}"
    try:
        kind, message = json.loads(bytes(run.payload))
    except ValueError:
        return "crash", f"exited with {os.WEXITSTATUS(status)} without a report"
    if kind == "synapc":
        return classify_message(message, run.path), message
    return kind, message


def _save_reproducer(case: Case, outcome: str, message: str, folder: Path) -> None:
    where = folder / f"{outcome}-{case.name}"
    where.mkdir(parents=True, exist_ok=True)
    _write_case(case, where)
    (where / "message.txt").write_text(message + "\n", encoding="utf-8")


def run_campaign(
    target: str,
    cases: Iterable[Case],
    check: Callable[[Path], None],
    *,
    timeout_s: float = 20.0,
    memory_mb: int = 3072,
    workers: int = 1,
    reproducers: Path | None = None,
) -> Report:
    """Run every case through `check` (in a child process each, `workers` at a time)
    and classify the outcomes; findings are written under `reproducers` if given."""
    report = Report(target)
    start = time.monotonic()
    pending = iter(cases)
    running: list[_Running] = []
    exhausted = False
    while running or not exhausted:
        while not exhausted and len(running) < workers:
            case = next(pending, None)
            if case is None:
                exhausted = True
            else:
                running.append(_start(case, check))
        time.sleep(0.002)
        for run in list(running):
            _drain(run)
            # a child that ended is never a hang, however long this process took to
            # look (drawing a case can take seconds while the other workers run)
            done, status = os.waitpid(run.pid, os.WNOHANG)
            killed_for = None
            if done == 0:
                run.peak_kb = max(run.peak_kb, _rss_kb(run.pid))
                if run.peak_kb > memory_mb * 1024:
                    killed_for = "over-memory"
                elif time.monotonic() - run.started > timeout_s:
                    killed_for = "hang"
                if killed_for is None:
                    continue
                if killed_for == "hang":  # ask for its stacks first (see _hang_stack)
                    os.kill(run.pid, signal.SIGUSR1)
                    time.sleep(0.5)
                os.kill(run.pid, signal.SIGKILL)
                _, status = os.waitpid(run.pid, 0)
            running.remove(run)
            outcome, message = _finish(run, status, killed_for)
            report.counts[outcome] += 1
            report.peak_rss_mb = max(report.peak_rss_mb, run.peak_kb / 1024)
            if outcome in BAD_OUTCOMES:
                report.findings.append(Finding(run.case.name, outcome, message))
                if reproducers is not None:
                    _save_reproducer(run.case, outcome, message, reproducers / target)
    report.seconds = time.monotonic() - start
    return report
