"""The acceptance run of `synapc convert`'s output folder under concurrency and kill -9
(the protocol is in synapc/convert/output.py).

1. Concurrency: `--processes` (8) `synapc convert` processes, half converting
   examples/tiny_classifier.onnx (model A) and half the same graph with other weights
   (model B), all into one output folder (and so one cache), started together; repeated
   `--rounds` (20) times into the same folder. Each process must exit 0 (it converted,
   or the cache served the same conversion) or 1 with the one line ``another synapc
   conversion wrote ...``; after each round the folder must hold one complete package
   whose checksums verify, the model info of the same model, byte-identical to that
   model's output converted alone, and no temporary, lock or journal file.
2. kill -9: `--kills` (20) conversions of model B with ``--profiling`` killed at a random
   moment (three in four while the process holds the output folder: the cache check,
   the conversion and the commit; the rest anywhere in the run), alternately into a
   folder holding model A's output and into a new folder. Right after the kill the folder
   must hold the previous output byte for byte, or the killed conversion's complete output
   (it had committed), or a commit journal (killed among its renames); a new folder holds
   no partial `model.synap`. The next conversion (model A) must then succeed and leave
   exactly model A's output, with no stale file.

Prints one table per part (markdown).

    python benchmarks/concurrency.py [--rounds 20] [--processes 8] [--kills 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import onnx
from onnx import numpy_helper

from synapc.backends.package import PackageError, read_package

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny_classifier.onnx"
META = REPO / "examples" / "tiny_classifier.yaml"
LOCK, JOURNAL = ".synapc.lock", ".synapc.commit"
#: How long one process may take before the run counts it as hung.
TIMEOUT = 600


def _second_model(folder: Path) -> Path:
    """Model A's graph with another fc.bias: another hash, another package."""
    proto = onnx.load(MODEL)
    for index, tensor in enumerate(proto.graph.initializer):
        if tensor.name == "fc.bias":
            bias = numpy_helper.from_array(numpy_helper.to_array(tensor) + 1.0, "fc.bias")
            proto.graph.initializer[index].CopyFrom(bias)
    path = folder / "tiny_classifier_b.onnx"
    onnx.save(proto, path)
    return path


def _args(model: Path, out: Path, *extra: str) -> list[str]:
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


def _spawn(model: Path, out: Path, work: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _args(model, out, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=work,  # not the repository: `-m` puts the working folder on sys.path
        env={**os.environ, "SYNAPC_JAX_CACHE_DIR": str(work / "jax-cache")},
    )


def _run(model: Path, out: Path, work: Path, *extra: str) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    process = _spawn(model, out, work, *extra)
    stdout, stderr = process.communicate(timeout=TIMEOUT)
    return process.returncode, stdout, stderr, time.perf_counter() - start


def _tree(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _hidden(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob(".*"))


def _consistent(out: Path) -> bool:
    """One complete package whose checksums verify, and the model info of its model."""
    try:
        package = read_package(out / "model.synap")
        info = (out / "model_info.txt").read_text()
    except (PackageError, OSError, UnicodeDecodeError):
        return False
    return f"model sha256: {package.bundle['source']['sha256']}" in info.splitlines()


def _which(tree: dict[str, bytes], outputs: dict[str, dict[str, bytes]]) -> str | None:
    for name, output in outputs.items():
        if all(tree.get(n) == output[n] for n in ("model.synap", "model_info.txt")):
            return name
    return None


def _reference(model: Path, work: Path, name: str, *extra: str) -> dict[str, bytes]:
    out = work / f"reference-{name}"
    code, _, stderr, _ = _run(model, out, work, *extra)
    if code != 0:
        raise SystemExit(f"reference conversion of {model} failed: {stderr}")
    return _tree(out)


def concurrency(
    models: dict[str, Path],
    references: dict[str, dict[str, bytes]],
    work: Path,
    rounds: int,
    processes: int,
    rng: random.Random,
) -> bool:
    """Part 1; prints its table, returns whether every check held."""
    out = work / "concurrent"
    print(
        f"\n## {processes} concurrent conversions of 2 models into one folder, "
        f"{rounds} rounds\n"
    )
    print(
        "| round | converted | cached | conflict (exit 1) | other | folder holds "
        "| consistent | byte-identical | stray files | seconds |"
    )
    print("|---:|---:|---:|---:|---:|---|---|---|---:|---:|")
    totals: Counter[str] = Counter()
    good = True
    for index in range(rounds):
        names = ["A", "B"] * (processes // 2) + ["A"] * (processes % 2)
        rng.shuffle(names)
        start = time.perf_counter()
        running = [_spawn(models[n], out, work, "--verbose") for n in names]
        counts: Counter[str] = Counter()
        for process in running:
            stdout, stderr = process.communicate(timeout=TIMEOUT)
            lines = stderr.strip().splitlines()
            if process.returncode == 0 and not lines:
                cached = "using the cached conversion" in stdout
                counts["cached" if cached else "converted"] += 1
            elif (
                process.returncode == 1
                and len(lines) == 1
                and lines[0].startswith("synapc: error: ")
                and "another synapc conversion" in lines[0]
            ):
                counts["conflict"] += 1
            else:
                counts["other"] += 1
                print(f"<!-- exit {process.returncode}: {stderr.strip()!r} -->")
        seconds = time.perf_counter() - start
        tree = _tree(out)
        holds = _which(tree, references)
        consistent = _consistent(out)
        identical = holds is not None and tree == references[holds]
        stray = _hidden(out)
        ok = (
            holds is not None
            and consistent
            and identical
            and not stray
            and not counts["other"]
            and counts["converted"] + counts["cached"] > 0
        )
        good &= ok
        totals.update(counts)
        totals[f"holds {holds}"] += 1
        totals["consistent"] += consistent
        totals["identical"] += identical
        totals["stray"] += bool(stray)
        print(
            f"| {index + 1} | {counts['converted']} | {counts['cached']} "
            f"| {counts['conflict']} | {counts['other']} | {holds or 'neither'} "
            f"| {'yes' if consistent else 'NO'} | {'yes' if identical else 'NO'} "
            f"| {len(stray)} | {seconds:.1f} |"
        )
    print(
        f"| **all** | {totals['converted']} | {totals['cached']} | {totals['conflict']} "
        f"| {totals['other']} | A {totals['holds A']}, B {totals['holds B']} "
        f"| {totals['consistent']}/{rounds} | {totals['identical']}/{rounds} "
        f"| {totals['stray']} rounds | |"
    )
    return good


def _timing(model: Path, out: Path, work: Path) -> tuple[float, float]:
    """Seconds from the start of an uninterrupted conversion into a new folder to the
    moment its lock file appears (it holds the folder), and to its end."""
    start = time.perf_counter()
    process = _spawn(model, out, work, "--profiling")
    held = None
    while process.poll() is None:
        if held is None and (out / LOCK).exists():
            held = time.perf_counter() - start
        time.sleep(0.002)
    end = time.perf_counter() - start
    process.communicate()
    return (end if held is None else held), end


def kills(
    models: dict[str, Path],
    references: dict[str, dict[str, bytes]],
    work: Path,
    count: int,
    rng: random.Random,
) -> bool:
    """Part 2; prints its table, returns whether every check held."""
    new = _reference(models["B"], work, "B-profiling", "--profiling")
    held, duration = _timing(models["B"], work / "timing", work)
    outputs = {"previous": references["A"], "new": new}
    print(
        f"\n## kill -9 at {count} random moments\n\nAn uninterrupted run takes "
        f"{duration:.2f} s and holds its folder from {held:.2f} s on. Three kills in "
        "four come at a random moment while the process holds the folder (after its lock "
        "file appears: the cache check, the conversion, the commit), the fourth at a "
        "random moment of the whole run.\n"
    )
    print(
        "| kill | folder | moment | killed at (s) | exit | right after the kill "
        "| leftovers | next run | next output | stale after |"
    )
    print("|---:|---|---|---:|---:|---|---:|---:|---|---:|")
    outcomes: Counter[str] = Counter()
    good = True
    for index in range(count):
        fresh = index % 2 == 1
        out = work / f"kill-{index}"
        if not fresh:
            shutil.copytree(work / "reference-A", out)
        anywhere = index % 4 == 3
        start = time.perf_counter()
        process = _spawn(models["B"], out, work, "--profiling")
        if anywhere:
            moment = "any"
            time.sleep(rng.uniform(0.0, duration))
        else:
            moment = "holding"
            delay = rng.uniform(0.0, max(duration - held, 0.0))
            while not (out / LOCK).exists() and process.poll() is None:
                time.sleep(0.001)
            time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        killed_at = time.perf_counter() - start
        process.communicate(timeout=TIMEOUT)
        tree = _tree(out)
        leftovers = _hidden(out)
        if (out / JOURNAL).exists():
            state, ok = "killed among its renames (journal)", True
        elif fresh:
            if not out.exists():
                state, ok = "no folder yet", True
            elif "model.synap" not in tree:
                state, ok = "no model.synap", True
            else:
                which = _which(tree, outputs)
                state = "new output, whole" if which == "new" else "PARTIAL model.synap"
                ok = which == "new" and _consistent(out)
        else:
            which = _which(tree, outputs)
            state = {
                "previous": "previous output intact",
                "new": "new output, whole",
            }.get(which or "", "MIXED")
            ok = which is not None and _consistent(out)
        code, _, stderr, _ = _run(models["A"], out, work)
        after = _tree(out)
        stale = _hidden(out)
        next_ok = code == 0 and after == references["A"] and not stale
        good &= ok and next_ok
        outcomes[state] += 1
        outcomes["next run ok"] += next_ok
        print(
            f"| {index + 1} | {'new' if fresh else 'with output'} | {moment} "
            f"| {killed_at:.2f} | {process.returncode} | {state} | {len(leftovers)} "
            f"| {code} | {'model A, whole' if after == references['A'] else 'WRONG'} "
            f"| {len(stale)} |"
        )
        if code != 0:
            print(f"<!-- next run: {stderr.strip()!r} -->")
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items()))
    print(f"\n{summary}")
    return good


def main() -> None:
    """Run both parts in a temporary folder and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="synapc-concurrency-") as name:
        work = Path(name)
        models = {"A": MODEL, "B": _second_model(work)}
        references = {n: _reference(m, work, n) for n, m in models.items()}
        good = True
        if args.rounds:
            good &= concurrency(models, references, work, args.rounds, args.processes, rng)
        if args.kills:
            good &= kills(models, references, work, args.kills, rng)
    print(f"\nall checks held: {'yes' if good else 'NO'}")
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
