"""A conversion's output folder: locked, written all or nothing, and the cache that makes
converting the same model again immediate.

The protocol (``synapc convert --out-dir OUT``; the README's "Converting models"):

- **One writer at a time.** A conversion holds an exclusive lock, ``flock`` on
  ``OUT/.synapc.lock``, from the moment it opens (or creates) OUT, through the cache
  check and the conversion, until its files are renamed into place. The lock file
  exists only while a conversion runs (one killed with ``kill -9`` leaves it; the next
  conversion reuses and removes it). The cache lives in ``OUT/cache`` and holds one key,
  so this lock is also the lock of the cache key. Where the file system has no locks,
  a warning says so and the folder is used unlocked.
- **Concurrent conversions.** A conversion notes the state of OUT when it starts. If
  another conversion wrote OUT between that moment and the moment this one got the lock
  (this one waited for it), this one succeeds only when the other wrote the same
  conversion (the same cache key: this one is then served from the cache, byte for
  byte); otherwise it fails with ``another synapc conversion wrote ... while this one
  waited for it`` and leaves the other's output alone. So of overlapping conversions
  into one folder, the first to get the lock wins, and a process never reports success
  for output that is not its own. Conversions that do not overlap simply replace the
  output (the last one wins).
- **All or nothing, even under kill -9.** Files go to temporary names (``.NAME.tmp-PID-
  RANDOM``, see `synapc.files`), are flushed, then renamed with Ctrl-C held back, the
  renames listed in a journal (``OUT/.synapc.commit``) while they run. A kill before
  the renames leaves the previous output intact; a kill among them leaves the journal,
  and the next conversion completes the renames first (the output of the killed one,
  whole). The next conversion removes stale temporaries: its own naming pattern only,
  regular files only, in OUT, ``OUT/cache`` and ``OUT/intermediate`` only. An output
  folder created by a killed conversion is removed by the next one if that fails too.
- **Only its own files, never through a link.** synapc replaces only regular files at
  the names it writes (``model.synap``, ``model_info.txt``, ``cache/*``,
  ``intermediate/*``) and deletes only its own temporaries; ``cache/``,
  ``intermediate/`` or one of those files being a symbolic link (or of another kind) is
  refused with a message naming it, never written, read or deleted through. OUT itself
  may be a link (the user chose it).
- **A cache entry is checked before use.** ``cache/key.json`` records the key, the
  fields it hashes and the SHA-256 of ``cache/model.synap`` and
  ``cache/model_info.txt`` (and ``cache/quantization_info.txt`` of a quantized
  conversion, restored with them; a conversion without one removes an earlier
  one). An entry whose record is malformed, whose members are
  missing or differ from the record, whose package `read_package` refuses or belongs to
  another model or target, or whose model info names another model is converted again
  with a warning, never copied.

Files are created with the ordinary mode (0666 less the umask).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from synapc.errors import SynapcError
from synapc.files import JOURNAL, LOCK, LockedFolder, NotOurs, locked_folder
from synapc.limits import limits

#: The files a conversion writes into its output folder.
PACKAGE = "model.synap"
MODEL_INFO = "model_info.txt"
#: The cache folder inside the output folder.
CACHE = "cache"
#: Intermediate IR files written with `preserve`.
INTERMEDIATE = "intermediate"
#: Written by a conversion with a ``quantization`` section (per-layer report).
QUANTIZATION_INFO = "quantization_info.txt"
_KEY = "key.json"
#: The files every cache entry holds.
_CACHED = (PACKAGE, MODEL_INFO)
#: The files a cache entry holds when the conversion wrote them (a conversion that
#: writes none removes an earlier conversion's, so it is never left stale).
_OPTIONAL = (QUANTIZATION_INFO,)
_MEMBERS = (*_CACHED, *_OPTIONAL)
#: Written with ``--report`` (`synapc.report`); derived from the package, never cached,
#: and removed by a conversion that does not write it (so none is left stale).
REPORT = "report.html"
#: Every file a conversion writes at the top of its output folder.
_OUTPUTS = (*_MEMBERS, REPORT)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
#: Temporaries of older synapc versions: ``.NAME.tmp-PID`` and the write probe.
_LEGACY = re.compile(r"^\.(?:(?P<name>.+)\.tmp|synapc-write-test)-(?P<pid>[0-9]+)$")


def cache_key(**fields: str) -> str:
    """The cache key of a conversion: a hash over what determines its output."""
    text = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


#: What `output_state` returns: per file, its device, inode, size, mtime and ctime.
State = tuple[tuple[int, int, int, int, int] | None, ...]


def output_state(out_dir: Path) -> State:
    """What identifies the last write into `out_dir` (each conversion writes
    ``cache/key.json`` and ``model.synap`` anew): taken when a conversion starts and
    compared once it has the lock (`Output.check_unchanged`)."""
    result = []
    for relative in (f"{CACHE}/{_KEY}", PACKAGE):
        try:
            info = os.lstat(out_dir / relative)
        except OSError:
            result.append(None)
            continue
        result.append(
            (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        )
    return tuple(result)


@contextmanager
def open_output(out_dir: Path, say: Callable[[str], None]) -> Iterator[Output]:
    """Hold the output folder `out_dir` for one conversion (created, with its parents,
    if missing; see the module's protocol): locked, with a killed conversion's commit
    completed and its temporaries removed, and the names synapc writes checked
    (`NotOurs` for a link). If the block fails, nothing is left of it, and the folder
    goes again if this conversion created it and it is empty."""
    with locked_folder(
        out_dir,
        on_wait=lambda: say(f"waiting for another synapc conversion into {out_dir}"),
        on_no_lock=lambda: say(
            f"warning: {out_dir / LOCK}: the file system does not lock files: "
            "concurrent conversions into this folder are not kept apart"
        ),
    ) as folder:
        output = Output(folder, say)
        output.tidy()
        yield output


class Output:
    """A locked output folder (`open_output`): the cache check, the conflict check and
    the all-or-nothing write of a conversion."""

    def __init__(self, folder: LockedFolder, say: Callable[[str], None]):
        self.folder = folder
        self.path = folder.path
        self._say = say
        # what the last writer left, noted as the lock is taken (before `tidy` may
        # complete a killed writer's commit: that one reported nothing)
        self._state = output_state(self.path)
        self._record = self._read_record()

    def _read_record(self) -> object:
        """The cache record as it is (None: none; {} when unreadable)."""
        try:
            data = self.folder.read(
                f"{CACHE}/{_KEY}", limits().max_json_bytes, "max_json_bytes"
            )
            return json.loads(data) if data is not None else None
        except (SynapcError, ValueError, RecursionError):
            return {}

    def tidy(self) -> None:
        """Complete a killed conversion's commit, remove stale temporaries, and refuse
        links (or other kinds of files) where synapc writes."""
        completed = self.folder.recover()
        if completed is not None:
            self._say(f"warning: {completed}")
        self.folder.remove_stale(
            "", lambda name: name in (*_OUTPUTS, JOURNAL), _legacy({*_OUTPUTS, None})
        )
        self.folder.remove_stale(
            CACHE, lambda name: name in (*_MEMBERS, _KEY), _legacy({*_MEMBERS, _KEY})
        )
        self.folder.remove_stale(INTERMEDIATE, lambda name: True, _legacy(None))
        for relative in (*_OUTPUTS, *(f"{CACHE}/{n}" for n in (*_MEMBERS, _KEY))):
            self.folder.check_replaceable(relative)

    # -- concurrent conversions -------------------------------------------------------

    def check_unchanged(self, before: State, key: str) -> None:
        """Refuse to go on when another conversion wrote this folder since `before`
        (this one waited for the lock meanwhile) and wrote something else than the
        conversion with `key`: its output stays, and this process must not report
        success for it."""
        if self._state == before:
            return
        record = self._record
        if record is None:
            return  # nothing there to keep
        if isinstance(record, dict) and record.get("key") == key:
            return  # the same conversion: served from the cache, byte for byte
        what = ""
        if isinstance(record, dict):
            model, target = record.get("model"), record.get("target")
            if isinstance(model, str) and isinstance(target, str):
                what = f" (model sha256 {model[:12]}..., target {target})"
        raise SynapcError(
            f"{self.path}: another synapc conversion wrote a different model or "
            f"settings into this folder{what} while this one waited for it; its output "
            "is kept: run again to replace it"
        )

    # -- the cache --------------------------------------------------------------------

    def read_cache(self, key: str, fields: dict[str, str]) -> dict[str, bytes] | None:
        """The cached files of the conversion with `key` and `fields`, checked; None
        when the cache holds another conversion (it is replaced once this one is
        written) or an entry that does not check out (converted again, with a
        warning). A link in the cache is `NotOurs`."""
        where = self.path / CACHE / _KEY
        try:
            data = self.folder.read(
                f"{CACHE}/{_KEY}", limits().max_json_bytes, "max_json_bytes"
            )
        except NotOurs:
            raise
        except SynapcError as error:
            return self._rebuild(str(error))
        if data is None:
            return None
        try:
            record = json.loads(data)
        except (ValueError, RecursionError) as error:
            reason = "too deeply nested" if isinstance(error, RecursionError) else error
            return self._rebuild(f"{where}: not valid JSON: {reason}")
        problem = _record_problem(record, fields)
        if problem is not None:
            return self._rebuild(f"{where}: {problem}")
        if record["key"] != key:
            return None  # another conversion's cache
        if any(record[name] != value for name, value in fields.items()):
            return self._rebuild(f"{where}: the fields do not match the key")
        if "dataset" in fields and QUANTIZATION_INFO not in record["members"]:
            # a quantized conversion (its key hashes the dataset) wrote its report
            return self._rebuild(f"{where}: no {QUANTIZATION_INFO} among the members")
        files: dict[str, bytes] = {}
        for name in record["members"]:
            limit_name = "max_package_bytes" if name == PACKAGE else "max_model_info_bytes"
            member = self.path / CACHE / name
            limit = getattr(limits(), limit_name)
            try:
                content = self.folder.read(f"{CACHE}/{name}", limit, limit_name)
            except NotOurs:
                raise
            except SynapcError as error:
                return self._rebuild(str(error))
            if content is None:
                return self._rebuild(f"{member}: missing")
            if hashlib.sha256(content).hexdigest() != record["members"][name]:
                return self._rebuild(f"{member}: its SHA-256 differs from {_KEY}'s")
            files[name] = content
        problem = self._package_problem(fields) or _model_info_problem(
            self.path / CACHE / MODEL_INFO, files[MODEL_INFO], fields
        )
        if problem is not None:
            return self._rebuild(problem)
        return files

    def _package_problem(self, fields: dict[str, str]) -> str | None:
        """Why the cached package cannot be used: what `read_package` refuses, or a
        package of another model, target or profiling switch."""
        from synapc.backends.package import PackageError, read_package

        path = self.path / CACHE / PACKAGE
        try:
            package = read_package(path)
        except PackageError as error:
            return str(error)
        source = package.bundle.get("source")
        sha = source.get("sha256") if isinstance(source, dict) else None
        if sha != fields["model"]:
            return f"{path}: a package of another model"
        if package.target != fields["target"]:
            return f"{path}: a package for {package.target}, not {fields['target']}"
        if package.has_layers != (fields["profiling"] == "True"):
            return f"{path}: the profiling switch differs"
        return None

    def _rebuild(self, problem: str) -> None:
        self._say(
            f"warning: {problem}; the cached conversion is not used: converting again"
        )
        return None

    # -- writing ----------------------------------------------------------------------

    def write(self, key: str, fields: dict[str, str], files: dict[str, bytes]) -> None:
        """Write a conversion's `files` (relative names; `PACKAGE` and `MODEL_INFO`
        among them, `QUANTIZATION_INFO` when quantized, `REPORT` when asked for) and
        its cache entry, all or nothing: the cache first, then the intermediate files,
        the report, the model info and the package. An optional file the conversion did
        not write is removed (from the folder and the cache) once the rest is in place,
        so none is left stale."""
        cached = {name: files[name] for name in _MEMBERS if name in files}
        record = {
            "key": key,
            **fields,
            "members": {n: hashlib.sha256(d).hexdigest() for n, d in cached.items()},
        }
        ordered = {f"{CACHE}/{name}": data for name, data in cached.items()}
        ordered[f"{CACHE}/{_KEY}"] = json.dumps(record, sort_keys=True, indent=1).encode()
        ordered.update((n, d) for n, d in files.items() if n not in _CACHED)
        ordered.update((name, files[name]) for name in (MODEL_INFO, PACKAGE))
        self.folder.commit(ordered)
        for name in _OPTIONAL:
            if name not in files:
                self.folder.remove(f"{CACHE}/{name}")
                self.folder.remove(name)
        if REPORT not in files:
            self.folder.remove(REPORT)


def _legacy(names: set[str | None] | None) -> Callable[[str], int | None]:
    """The process id of an older synapc's temporary for one of `names` (None: any
    name; None among them: the write probe), else None."""

    def pid(file_name: str) -> int | None:
        match = _LEGACY.match(file_name)
        if match is None:
            return None
        if names is not None and match["name"] not in names:
            return None
        return int(match["pid"])

    return pid


def _record_problem(record: Any, fields: dict[str, str]) -> str | None:
    """What is wrong with the shape of a cache record (`Output.write` writes it), or
    None."""
    expected = {"key", "members", *fields}
    if not isinstance(record, dict):
        return f"not a cache record (a JSON {type(record).__name__}, not an object)"
    if set(record) != expected:
        missing, extra = sorted(expected - set(record)), sorted(set(record) - expected)
        parts = [f"missing {', '.join(missing)}"] if missing else []
        parts += [f"unexpected {', '.join(extra)}"] if extra else []
        return f"not a cache record of this synapc ({'; '.join(parts)})"
    for name in ("key", *fields):
        if not isinstance(record[name], str):
            return f"field '{name}' is not a string"
    if not _SHA256.match(record["key"]):
        return "field 'key' is not a SHA-256"
    members = record["members"]
    if (
        not isinstance(members, dict)
        or not set(_CACHED) <= set(members)
        or not set(members) <= set(_MEMBERS)
    ):
        return (
            f"field 'members' does not list {', '.join(_CACHED)} (and optionally "
            f"{', '.join(_OPTIONAL)}) only"
        )
    for name, digest in members.items():
        if not isinstance(digest, str) or not _SHA256.match(digest):
            return f"field 'members': '{name}' is not a SHA-256"
    if cache_key(**{name: record[name] for name in fields}) != record["key"]:
        return "field 'key' is not the hash of the other fields"
    return None


def _model_info_problem(path: Path, data: bytes, fields: dict[str, str]) -> str | None:
    """Why a cached model_info.txt does not belong to the conversion of `fields`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"{path}: not UTF-8 text ({error.reason} at byte {error.start})"
    if f"model sha256: {fields['model']}" not in text.splitlines():
        return f"{path}: the model info of another model"
    return None


__all__ = [
    "CACHE",
    "INTERMEDIATE",
    "MODEL_INFO",
    "PACKAGE",
    "QUANTIZATION_INFO",
    "Output",
    "cache_key",
    "file_sha256",
    "open_output",
    "output_state",
]
