"""JAX's persistent compilation cache for `synapc.Network` (and calibration).

A package's programs compile on the first inference; with the cache on, XLA's compiled
executable is written to disk and a later process loading the same package skips
compilation. Set up once per process, before the first compilation, from:

- `SYNAPC_JAX_CACHE_DIR`: the cache folder (default ``~/.cache/synapc/jax``);
- `SYNAPC_JAX_CACHE_MAX_BYTES`: the cache's size cap in bytes (default 1 GiB; JAX evicts
  the least recently used entries beyond it); ``0`` disables the cache.

A cache the user configured for JAX (`jax_compilation_cache_dir` set, e.g. through
`JAX_COMPILATION_CACHE_DIR`, or `jax_enable_compilation_cache` off) is left as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import jax

from synapc.errors import SynapcError

DIR_VARIABLE = "SYNAPC_JAX_CACHE_DIR"
MAX_BYTES_VARIABLE = "SYNAPC_JAX_CACHE_MAX_BYTES"
DEFAULT_DIR = Path("~/.cache/synapc/jax")
DEFAULT_MAX_BYTES = 1 << 30


@dataclass(frozen=True)
class CacheSettings:
    """What `configure` decided: the folder JAX caches in (None: no cache) and why."""

    directory: Path | None
    max_bytes: int
    reason: str


_settings: CacheSettings | None = None


def settings_from_environment() -> tuple[Path, int]:
    """The cache folder and size cap the environment asks for (`SynapcError` when
    `SYNAPC_JAX_CACHE_MAX_BYTES` is not a non-negative integer)."""
    raw = os.environ.get(MAX_BYTES_VARIABLE, "").strip()
    try:
        max_bytes = int(raw) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        max_bytes = -1
    if max_bytes < 0:
        raise SynapcError(
            f"{MAX_BYTES_VARIABLE}='{raw}': expected a number of bytes "
            "(0 disables the cache)"
        )
    directory = Path(os.environ.get(DIR_VARIABLE) or DEFAULT_DIR).expanduser()
    return directory, max_bytes


def configure() -> CacheSettings:
    """Turn on JAX's persistent compilation cache as the environment says; once per
    process (later calls return the first decision)."""
    global _settings
    if _settings is not None:
        return _settings
    directory, max_bytes = settings_from_environment()
    if max_bytes == 0:
        _settings = CacheSettings(None, 0, f"disabled by {MAX_BYTES_VARIABLE}=0")
    elif not jax.config.jax_enable_compilation_cache:
        _settings = CacheSettings(None, 0, "disabled in the JAX configuration")
    elif jax.config.jax_compilation_cache_dir:
        user = Path(jax.config.jax_compilation_cache_dir)
        _settings = CacheSettings(
            user,
            jax.config.jax_compilation_cache_max_size,
            "configured by the user for JAX",
        )
    else:
        jax.config.update("jax_compilation_cache_dir", str(directory))
        # cache every program, however fast it compiled and however small it is
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        jax.config.update("jax_compilation_cache_max_size", max_bytes)
        _settings = CacheSettings(directory, max_bytes, f"from {DIR_VARIABLE} / default")
    return _settings
