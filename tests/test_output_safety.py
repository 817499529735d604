"""The output folder of `synapc convert` under concurrency, kill -9 and hostile content:
one lock per folder (and so per cache key), unique temporaries, all-or-nothing commits
that a killed conversion cannot leave half done, stale temporaries removed by the next
run (only synapc's own, only regular files), no deletion or write through a symbolic
link, and cache entries checked before they are copied (see synapc/convert/output.py)."""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from onnx import numpy_helper

import synapc
from synapc.backends.package import read_package
from synapc.cli import main
from synapc.convert.output import open_output
from synapc.errors import SynapcError
from synapc.files import JOURNAL, LOCK, locked_folder, temporary_name

REPO = Path(__file__).resolve().parents[1]
MODEL_A = REPO / "examples" / "tiny_classifier.onnx"
META = REPO / "examples" / "tiny_classifier.yaml"
#: How long a subprocess may take before the test gives up on it.
TIMEOUT = 180
#: What synapc writes into an output folder (without --preserve).
OUTPUT = {
    "model.synap",
    "model_info.txt",
    "cache/key.json",
    "cache/model.synap",
    "cache/model_info.txt",
}

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks, signals")

Tree = dict[str, bytes]


# -- helpers ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two small models with one metafile: the example classifier, and the same graph
    with other weights (another model hash, another package)."""
    folder = tmp_path_factory.mktemp("models")
    proto = onnx.load(MODEL_A)
    for index, tensor in enumerate(proto.graph.initializer):
        if tensor.name == "fc.bias":
            array = numpy_helper.to_array(tensor) + 1.0
            proto.graph.initializer[index].CopyFrom(
                numpy_helper.from_array(array, "fc.bias")
            )
    second = folder / "tiny_classifier_b.onnx"
    onnx.save(proto, second)
    return {"A": MODEL_A, "B": second}


@pytest.fixture(scope="module")
def references(
    models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Tree]:
    """The complete output folder of each model, converted alone."""
    result = {}
    for name, model in models.items():
        out = tmp_path_factory.mktemp(f"reference_{name}")
        synapc.convert(model, "VS680", out, META)
        result[name] = _tree(out)
        assert set(result[name]) == OUTPUT
    assert result["A"]["model.synap"] != result["B"]["model.synap"]
    return result


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a `synapc` process: unbuffered, a JAX cache of this module."""
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "SYNAPC_JAX_CACHE_DIR": str(tmp_path_factory.mktemp("jax-cache")),
    }


def _tree(folder: Path) -> Tree:
    """Every regular file under `folder` (links not followed), by relative name."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _hidden(folder: Path) -> list[str]:
    """Hidden files (temporaries, lock, journal) under `folder`."""
    return sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob(".*") if p.name != "."
    )


def _write_tree(folder: Path, tree: Tree) -> None:
    """Put `tree` into `folder` as a conversion would (new files renamed over)."""
    for name, data in tree.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f"{target.name}.new")
        temporary.write_bytes(data)
        os.replace(temporary, target)


def _which(tree: Tree, references: dict[str, Tree]) -> str | None:
    """Which reference model's complete output `tree` (model.synap and model_info.txt)
    is, None when it is neither."""
    for name, reference in references.items():
        if all(tree.get(n) == reference[n] for n in ("model.synap", "model_info.txt")):
            return name
    return None


def _consistent(out: Path) -> None:
    """The folder holds one complete package whose checksums verify, with the model
    info of the same model."""
    package = read_package(out / "model.synap")
    sha = package.bundle["source"]["sha256"]
    info = (out / "model_info.txt").read_text()
    assert f"model sha256: {sha}" in info.splitlines()


def _cli_args(model: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "synapc.cli",
        "convert",
        "--model",
        str(model),
        "--meta",
        str(META),
        "--target",
        "VS680",
        "--out-dir",
        str(out),
        *extra,
    ]


def _spawn(
    model: Path, out: Path, env: dict[str, str], cwd: Path, *extra: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _cli_args(model, out, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,  # not the repository: `-m` puts the working folder on sys.path
    )


def _wait_for(condition: Callable[[], bool], process: subprocess.Popen[str]) -> bool:
    """Poll `condition` until it holds (True) or `process` ends first (False)."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if process.poll() is not None:
            return False
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("timed out")
        time.sleep(0.002)
    return True


def _convert(model: Path, out: Path, *, preserve: bool = False) -> tuple[bool, list[str]]:
    """Convert in this process; whether the cache served it, and what it said."""
    said: list[str] = []
    result = synapc.convert(model, "VS680", out, META, preserve=preserve, log=said.append)
    return result.cached, said


def _one_line_error(code: int, err: str, *words: str) -> str:
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("synapc: error: "), err
    for word in words:
        assert word in lines[0], (word, err)
    return lines[0]


# -- the cache: checked before it is copied -----------------------------------------

BAD_RECORDS = {
    "list": b"[1]",
    "string": b'"key"',
    "number": b"5",
    "empty object": b"{}",
    "key not a string": b'{"key": 5}',
    "not json": b"{not json",
    "not utf-8": b"\xff\xfe\x00",
    "deeply nested": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("content", list(BAD_RECORDS.values()), ids=list(BAD_RECORDS))
def test_malformed_key_json_is_rebuilt_with_a_warning(
    content: bytes, tmp_path: Path, models: dict[str, Path], references: dict[str, Tree]
) -> None:
    # finding: key.json `[1]` raised AttributeError ('list' object has no attribute 'get')
    out = tmp_path / "out"
    _write_tree(out, references["A"])
    (out / "cache" / "key.json").write_bytes(content)
    cached, said = _convert(models["A"], out)
    assert not cached
    warnings = [s for s in said if s.startswith("warning:")]
    assert len(warnings) == 1 and "cache/key.json" in warnings[0], said
    assert "\n" not in warnings[0]
    assert _tree(out) == references["A"]


def _record(tree: Tree) -> dict[str, object]:
    return json.loads(tree["cache/key.json"])


def _with_record(tree: Tree, change: Callable[[dict[str, object]], None]) -> Tree:
    record = _record(tree)
    change(record)
    return {**tree, "cache/key.json": json.dumps(record).encode()}


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1 :]


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _corruptions(references: dict[str, Tree]) -> dict[str, Tree]:
    """Cache entries of model A that must not be copied."""
    a, b = references["A"], references["B"]
    flipped = _flip(a["cache/model.synap"], len(a["cache/model.synap"]) // 2)
    info_b = b["cache/model_info.txt"]

    def members(package: bytes, info: bytes) -> Callable[[dict[str, object]], None]:
        def change(record: dict[str, object]) -> None:
            record["members"] = {"model.synap": _sha(package), "model_info.txt": _sha(info)}

        return change

    def profiling(record: dict[str, object]) -> None:
        record["profiling"] = False

    def wrong_key(record: dict[str, object]) -> None:
        record["target"] = "VS640"  # the key no longer hashes the fields

    without_package = {k: v for k, v in a.items() if k != "cache/model.synap"}
    without_info = {k: v for k, v in a.items() if k != "cache/model_info.txt"}
    return {
        # a flipped byte: the recorded SHA-256 catches it
        "flipped package": {**a, "cache/model.synap": flipped},
        # ... and with a record that matches it, read_package does
        "flipped package, matching record": _with_record(
            {**a, "cache/model.synap": flipped},
            members(flipped, a["cache/model_info.txt"]),
        ),
        "package of another model": _with_record(
            {**a, "cache/model.synap": b["cache/model.synap"]},
            members(b["cache/model.synap"], a["cache/model_info.txt"]),
        ),
        "model info of another model": _with_record(
            {**a, "cache/model_info.txt": info_b},
            members(a["cache/model.synap"], info_b),
        ),
        "truncated package": {**a, "cache/model.synap": a["cache/model.synap"][:100]},
        "package missing": without_package,
        "model info missing": without_info,
        "field of the wrong type": _with_record(a, profiling),
        "key not the hash of the fields": _with_record(a, wrong_key),
    }


@pytest.mark.parametrize(
    "case",
    [
        "flipped package",
        "flipped package, matching record",
        "package of another model",
        "model info of another model",
        "truncated package",
        "package missing",
        "model info missing",
        "field of the wrong type",
        "key not the hash of the fields",
    ],
)
def test_corrupt_cache_entry_is_rebuilt_not_copied(
    case: str, tmp_path: Path, models: dict[str, Path], references: dict[str, Tree]
) -> None:
    # finding: a corrupted cache entry was copied into the output with exit code 0
    out = tmp_path / "out"
    out.mkdir()
    _write_tree(out, _corruptions(references)[case])
    cached, said = _convert(models["A"], out)
    assert not cached, case
    warnings = [s for s in said if s.startswith("warning:")]
    assert len(warnings) == 1 and "/cache/" in warnings[0], said
    assert _tree(out) == references["A"]


def test_a_good_cache_entry_is_used(
    tmp_path: Path, models: dict[str, Path], references: dict[str, Tree]
) -> None:
    out = tmp_path / "out"
    _write_tree(out, references["A"])
    cached, said = _convert(models["A"], out)
    assert cached and not [s for s in said if s.startswith("warning:")], said
    assert _tree(out) == references["A"]


# -- links: never written, read or deleted through ------------------------------------


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    (victim / "model.synap").write_bytes(b"not yours")
    (victim / "key.json").write_text("{}")
    return victim


@pytest.mark.parametrize(
    "link", ["cache", "cache/key.json", "cache/model.synap", "model.synap"]
)
def test_links_in_the_output_are_refused_and_their_targets_untouched(
    link: str,
    tmp_path: Path,
    models: dict[str, Path],
    references: dict[str, Tree],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # finding: a cache/ that is a symlink had its target folder's files deleted
    victim = _victim(tmp_path)
    before = _tree(victim)
    out = tmp_path / "out"
    _write_tree(out, references["B"])
    if link == "cache":
        shutil.rmtree(out / "cache")
        (out / "cache").symlink_to(victim, target_is_directory=True)
    else:
        (out / link).unlink()
        (out / link).symlink_to(victim / Path(link).name)
    args = ["convert", "--model", str(models["A"]), "--meta", str(META)]
    code = main([*args, "--target", "VS680", "--out-dir", str(out)])
    _one_line_error(code, capsys.readouterr().err, str(out / link), "symbolic link")
    assert _tree(victim) == before
    assert (out / link).is_symlink()
    assert _hidden(out) == []


def test_a_linked_intermediate_folder_is_refused(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    victim = _victim(tmp_path)
    before = _tree(victim)
    out = tmp_path / "out"
    out.mkdir()
    (out / "intermediate").symlink_to(victim, target_is_directory=True)
    with pytest.raises(SynapcError, match="intermediate: is a symbolic link"):
        _convert(models["A"], out, preserve=True)
    assert _tree(victim) == before
    assert sorted(p.name for p in out.iterdir()) == ["intermediate"]


# -- stale temporaries: only synapc's own, only regular files -----------------------


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_stale_temporaries_removed_and_nothing_else(
    tmp_path: Path, models: dict[str, Path], references: dict[str, Tree]
) -> None:
    out = tmp_path / "out"
    _write_tree(out, references["B"])
    outside = tmp_path / "outside.txt"
    outside.write_text("outside")
    token = "0123456789abcdef"
    dead = _dead_pid()
    stale = [
        f".model.synap.tmp-{dead}-{token}",
        f".model_info.txt.tmp-1-{token}",
        f"cache/.key.json.tmp-2-{token}",
        f"cache/.model.synap.tmp-{os.getpid()}-{token}",  # under the lock: stale too
        f".model.synap.tmp-{dead}",  # an older synapc's, of a dead process
        f".synapc-write-test-{dead}",  # an older synapc's write probe
        LOCK,  # left by a killed conversion
    ]
    kept = [
        f".notes.txt.tmp-1-{token}",  # not a name synapc writes
        f".model.synap.tmp-{os.getpid()}",  # an older synapc's, of a live process
        "cache/notes.txt",  # not synapc's: the old pruning deleted it
        "notes.txt",
    ]
    for name in stale + kept:
        (out / name).write_bytes(b"x")
    link = out / f".model_info.txt.tmp-3-{token}"
    link.symlink_to(outside)
    folder = out / f".model.synap.tmp-4-{token}"
    folder.mkdir()
    (folder / "inside").write_text("inside")

    cached, _ = _convert(models["A"], out)
    assert not cached
    for name in stale:
        assert not (out / name).exists(), name
    for name in kept:
        assert (out / name).read_bytes() == b"x", name
    assert link.is_symlink() and outside.read_text() == "outside"
    assert (folder / "inside").read_text() == "inside"
    tree = _tree(out)
    assert {n: tree[n] for n in references["A"]} == references["A"]


# -- the lock -----------------------------------------------------------------------


def test_the_lock_keeps_writers_apart(tmp_path: Path) -> None:
    out = tmp_path / "out"
    events: list[str] = []
    inside, waiting = threading.Event(), threading.Event()

    def first() -> None:
        with locked_folder(out):
            events.append("first in")
            inside.set()
            assert waiting.wait(TIMEOUT)
            time.sleep(0.05)  # the second one stays blocked meanwhile
            events.append("first out")

    def second() -> None:
        assert inside.wait(TIMEOUT)

        def wait() -> None:
            events.append("second waits")
            waiting.set()

        with locked_folder(out, on_wait=wait):
            events.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert events == ["first in", "second waits", "first out", "second in"]
    assert list(out.iterdir()) == []  # the lock file goes with the last writer


def test_a_failed_writer_removes_only_an_empty_folder_it_created(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(RuntimeError), locked_folder(out) as folder:
        assert folder.created
        raise RuntimeError
    assert not out.exists()
    with pytest.raises(RuntimeError), locked_folder(out) as folder:
        (out / "someone-elses.txt").write_text("x")  # e.g. another conversion's
        raise RuntimeError
    assert [p.name for p in out.iterdir()] == ["someone-elses.txt"]


def _hold_lock(out: Path) -> int:
    out.mkdir(exist_ok=True)
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


@pytest.mark.parametrize("meanwhile", ["A", "B"])
def test_a_conversion_that_waited_reports_only_its_own_output(
    meanwhile: str,
    tmp_path: Path,
    models: dict[str, Path],
    references: dict[str, Tree],
    env: dict[str, str],
) -> None:
    # finding: processes reported success while another model overwrote their output
    out = tmp_path / "out"
    _write_tree(out, references["A"])
    lock = _hold_lock(out)  # another conversion holds the folder
    try:
        process = _spawn(models["B"], out, env, tmp_path, "--verbose")
        assert process.stdout is not None
        line = process.stdout.readline()  # the known point: it waits for the lock
        assert line.startswith("waiting for another synapc conversion"), line
        # the other conversion writes model `meanwhile` (all new files), then ends
        _write_tree(out, references[meanwhile])
    finally:
        os.close(lock)
    stdout, stderr = process.communicate(timeout=TIMEOUT)
    if meanwhile == "B":  # the same conversion: served from the cache, byte for byte
        assert process.returncode == 0, stderr
        assert stderr == "" and "using the cached conversion" in stdout
    else:
        _one_line_error(process.returncode, stderr, str(out), "another synapc conversion")
    assert _tree(out) == references[meanwhile]
    assert _hidden(out) == []


# -- concurrency --------------------------------------------------------------------

#: Concurrent conversions per round, and rounds.
PROCESSES, ROUNDS = 4, 3


def test_concurrent_converts_of_two_models_into_one_folder(
    tmp_path: Path,
    models: dict[str, Path],
    references: dict[str, Tree],
    env: dict[str, str],
) -> None:
    # findings: a sibling deleted another's temporary file; processes reported success
    # while another model overwrote their output
    out = tmp_path / "out"
    rng = random.Random(4)
    outcomes: dict[str, int] = {}
    for _ in range(ROUNDS):
        names = ["A", "B"] * (PROCESSES // 2)
        rng.shuffle(names)
        processes = [_spawn(models[n], out, env, tmp_path) for n in names]
        for process in processes:
            _, stderr = process.communicate(timeout=TIMEOUT)
            if process.returncode == 0:
                assert stderr == "", stderr
                outcomes["ok"] = outcomes.get("ok", 0) + 1
            else:
                _one_line_error(process.returncode, stderr, "another synapc conversion")
                outcomes["conflict"] = outcomes.get("conflict", 0) + 1
        tree = _tree(out)
        assert set(tree) == OUTPUT, sorted(tree)
        winner = _which(tree, references)
        assert winner is not None
        assert tree == references[winner]  # the cache too
        _consistent(out)
        assert _hidden(out) == []
    assert outcomes.get("ok", 0) >= ROUNDS, outcomes


# -- kill -9 ------------------------------------------------------------------------

#: Kills a process that has SIGKILLed itself at the `at`-th os.replace of a commit of
#: the files of folder `source` (in the order a conversion writes them) into `out`.
KILLED_COMMIT = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from synapc.files import locked_folder
    out, source, at = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    files = {p.relative_to(source).as_posix(): p.read_bytes()
             for p in sorted(source.rglob("*")) if p.is_file()}
    order = sorted(n for n in files if n.startswith("cache/"))
    order += ["model_info.txt", "model.synap"]
    real, calls = os.replace, [0]
    def replace(*args, **kwargs):
        calls[0] += 1
        if calls[0] == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    os.replace = replace
    with locked_folder(out) as folder:
        folder.commit({name: files[name] for name in order})
    """
)


@pytest.mark.parametrize("at", [1, 2, 5, 6])
def test_kill_inside_a_commit(
    at: int,
    tmp_path: Path,
    models: dict[str, Path],
    references: dict[str, Tree],
) -> None:
    """os.replace call 1 installs the journal, 2..6 rename the five files: killed
    before the journal, the old output stays and its temporaries are stale; killed
    among the renames, the next run completes them."""
    source = tmp_path / "source"
    _write_tree(source, references["B"])
    out = tmp_path / "out"
    _write_tree(out, references["A"])
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_COMMIT, str(out), str(source), str(at)],
        cwd=tmp_path,
        timeout=TIMEOUT,
    )
    assert killed.returncode == -signal.SIGKILL
    assert len(_hidden(out)) > 1  # the lock file and temporaries (and the journal)
    if at == 1:
        assert _which(_tree(out), references) == "A"
        assert not (out / JOURNAL).exists()
    else:
        assert (out / JOURNAL).exists()
    again = tmp_path / "again"
    shutil.copytree(out, again, symlinks=True)
    said: list[str] = []
    with open_output(out, said.append):
        pass  # the next conversion takes the folder: completes, then cleans up
    assert _hidden(out) == []
    assert _tree(out) == references["A" if at == 1 else "B"]
    assert len(said) == (at > 1) and all(s.startswith("warning:") for s in said), said
    # a whole conversion after it: completing the killed commit is no conflict
    _, said = _convert(models["A"], again)
    assert len([s for s in said if s.startswith("warning:")]) == (at > 1), said
    assert _hidden(again) == []
    assert _tree(again) == references["A"]


#: Random kill moments, in seconds after the conversion took its output folder.
KILLS = 5


def test_kill_9_at_random_moments(
    tmp_path: Path,
    models: dict[str, Path],
    references: dict[str, Tree],
    env: dict[str, str],
) -> None:
    # finding: kill -9 mid-convert left `.model.synap.tmp-PID` and an empty new out-dir
    new = tmp_path / "new"  # what the killed conversion writes when it gets that far
    synapc.convert(models["B"], "VS680", new, META, profiling=True)
    outputs = {"previous": references["A"], "new": _tree(new)}
    rng = random.Random(9)
    out = tmp_path / "out"
    _write_tree(out, references["A"])
    for _ in range(KILLS):
        process = _spawn(models["B"], out, env, tmp_path, "--profiling")
        _wait_for((out / LOCK).exists, process)  # the known point: the folder is held
        time.sleep(rng.uniform(0.0, 0.5))
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=TIMEOUT)
        if not (out / JOURNAL).exists():  # (else killed among the renames)
            # the previous output byte for byte, or (killed after its commit) the new
            # one, whole
            assert _which(_tree(out), outputs) is not None
            _consistent(out)
        if process.returncode == 0:  # it finished before the signal
            assert _hidden(out) == []
        # the next run: any leftovers go, the output is whole
        _convert(models["A"], out)
        assert _hidden(out) == []
        assert _tree(out) == references["A"]


def test_kill_9_in_a_new_folder(
    tmp_path: Path, models: dict[str, Path], env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    process = _spawn(models["B"], out, env, tmp_path)
    assert _wait_for((out / LOCK).exists, process)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=TIMEOUT)
    # no partial model.synap: nothing but the lock file (and perhaps temporaries)
    assert not (out / "model.synap").exists()
    assert LOCK in [p.name for p in out.iterdir()]
    assert all(p.name.startswith(".") for p in out.iterdir())
    # the next conversion fails too: the folder the killed one created goes
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(SynapcError):
        _convert(bad, out)
    assert not out.exists()


def test_temporary_names_are_unique() -> None:
    names = {temporary_name("model.synap") for _ in range(1000)}
    assert len(names) == 1000
    assert all(n.startswith(f".model.synap.tmp-{os.getpid()}-") for n in names)
