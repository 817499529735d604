"""Writing a conversion's files: all or nothing, and the cache that makes converting the
same model again immediate.

Files are created with the ordinary mode (0666 less the umask). Ctrl-C anywhere leaves
no temporary file behind: cleanups and the final renames run with `deferred_interrupts`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from contextlib import suppress
from pathlib import Path

from synapc.errors import SynapcError

# in the command line's module, which uses it before it imports JAX (this package does)
from synapc.interrupts import deferred_interrupts

#: The cache folder inside the output folder.
CACHE = "cache"
_KEY = "key.json"


def prepare_out_dir(out_dir: Path) -> bool:
    """Create `out_dir` if needed and check it takes files; returns whether it was
    created (so a failed conversion can remove it again)."""
    created = not out_dir.exists()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = out_dir / f".synapc-write-test-{os.getpid()}"
        with deferred_interrupts():  # never leave the probe behind
            probe.write_bytes(b"")
            probe.unlink()
    except OSError as error:
        reason = error.strerror or str(error)
        raise SynapcError(
            f"{out_dir}: cannot write to the output folder: {reason}"
        ) from None
    return created


def write_files(out_dir: Path, files: dict[str, bytes]) -> None:
    """Write `files` (relative names) under `out_dir`: each to a temporary name first,
    renamed only once all are written, so a failure or Ctrl-C leaves no half-written
    output and no temporary file."""
    staged: list[tuple[Path, Path]] = []
    try:
        for name, data in files.items():
            target = out_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.tmp-{os.getpid()}")
            staged.append((temporary, target))  # before it exists: removed on failure
            temporary.write_bytes(data)
        with deferred_interrupts():  # Ctrl-C cannot leave a mix of old and new files
            for temporary, target in staged:
                os.replace(temporary, target)
    except BaseException as error:
        with deferred_interrupts():
            for temporary, _ in staged:
                with suppress(OSError):
                    temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise SynapcError(f"{out_dir}: cannot write the output: {error}") from None
        raise


def cache_key(**fields: str) -> str:
    """The cache key of a conversion: a hash over what determines its output."""
    text = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def read_cache(out_dir: Path, key: str, names: list[str]) -> dict[str, bytes] | None:
    """The cached files of a conversion with `key`, or None when the cache holds another
    conversion (model, metafile, target or synapc version changed; `prune_cache` wipes it
    once the new conversion is written)."""
    cache = out_dir / CACHE
    if not cache.is_dir():
        return None
    try:
        stored = json.loads((cache / _KEY).read_text())
        if stored.get("key") == key:
            return {name: (cache / name).read_bytes() for name in names}
    except (OSError, ValueError):
        pass
    return None


def prune_cache(out_dir: Path, keep: set[str]) -> None:
    """Remove everything in the cache folder but the relative names `keep`."""
    cache = out_dir / CACHE
    for path in sorted(cache.rglob("*"), reverse=True):
        name = path.relative_to(out_dir).as_posix()
        if name in keep:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def cache_files(
    key: str, fields: dict[str, str], files: dict[str, bytes]
) -> dict[str, bytes]:
    """The members of the cache folder for a conversion, as relative names."""
    record = json.dumps({"key": key, **fields}, sort_keys=True, indent=1).encode()
    return {f"{CACHE}/{name}": data for name, data in {**files, _KEY: record}.items()}


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
