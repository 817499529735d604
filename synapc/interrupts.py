"""Ctrl-C for synapc's commands: one line `interrupted`, exit code 130, no traceback, and
never a half-done cleanup or rename. Used by the command lines (`run_interruptible`) and
by the library code whose steps must not be cut in the middle (`deferred_interrupts`).
"""

from __future__ import annotations

import _thread
import importlib.abc
import importlib.machinery
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from importlib import import_module

#: The exit code of a command ended by Ctrl-C: 128 + SIGINT, as shells report it.
INTERRUPTED = 128 + signal.SIGINT


def run_interruptible(work: Callable[[], int], exit_now: bool) -> int:
    """Run the command `work` and return its exit code; Ctrl-C (KeyboardInterrupt) ends
    it with the one line ``interrupted`` on stderr and `INTERRUPTED`, no traceback.

    `exit_now` is for a process that is the command (the console scripts): there, an
    interrupted command ends the process at once (`os._exit`, after flushing stdout and
    stderr) instead of going through the interpreter's shutdown, which would wait for,
    or abort in, threads still running (a JAX export), and a Ctrl-C after the command
    finished is ignored rather than shown as a traceback during the shutdown.
    """
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _redeliver_interrupts(previous_hook)
    try:
        try:
            with _native_imports_shielded():
                code = work()
        finally:
            sys.unraisablehook = previous_hook
    except KeyboardInterrupt:
        while True:
            try:
                return _interrupted(exit_now)
            except KeyboardInterrupt:  # pressed again before the report was made
                continue
    if exit_now:
        _ignore_interrupts()
    return code


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) during the block and deliver it when the block ends:
    for work that must not be cut in the middle (a cleanup, a set of renames, the
    initialization of jaxlib's native modules). Outside the main thread (where Python
    handles signals) or under a handler Python did not install, a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:
        yield
        return
    received: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)  # to the handler just restored


def import_jax() -> None:
    """Import JAX, and the jaxlib native module a conversion loads later, with Ctrl-C
    held back: a KeyboardInterrupt raised while jaxlib's C++ modules initialize aborts
    the process (std::terminate) or crashes it."""
    with deferred_interrupts():
        import_module("jax")
        with suppress(ImportError):  # jaxlib's layout is not an API
            import_module("jaxlib.mlir.dialects.mhlo")


#: Every extension module a shielded import created. A Ctrl-C delivered when the
#: creation ends fails the import, and the module would be deallocated: onnx's and other
#: pybind11 modules crash (SIGSEGV) when freed. Native modules are never unloaded anyway.
_CREATED: list[object] = []


class _ShieldedExtensionLoader(importlib.machinery.ExtensionFileLoader):
    """Loads a native extension module with Ctrl-C held back and the module kept alive:
    a KeyboardInterrupt raised inside a C++ module's initialization (pybind11 modules
    call back into Python) unwinds through code not written for it, and a module
    dropped by a failed import is freed, both of which crash the process."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> object:
        with deferred_interrupts():
            module = super().create_module(spec)
            _CREATED.append(module)
        return module

    def exec_module(self, module: object) -> None:
        with deferred_interrupts():
            super().exec_module(module)  # type: ignore[arg-type]


class _ShieldNativeImports(importlib.abc.MetaPathFinder):
    """Finds modules as the finders after it do, and gives extension modules the
    `_ShieldedExtensionLoader`."""

    def find_spec(
        self, fullname: str, path: object, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            loader = spec.loader
            if type(loader) is importlib.machinery.ExtensionFileLoader:
                spec.loader = _ShieldedExtensionLoader(loader.name, loader.path)
            return spec
        return None


@contextmanager
def _native_imports_shielded() -> Iterator[None]:
    """During the block, every native extension module imports with Ctrl-C held back
    (the modules a command loads lazily: onnx's, torch's, jaxlib's)."""
    shield = _ShieldNativeImports()
    sys.meta_path.insert(0, shield)
    try:
        yield
    finally:
        with suppress(ValueError):
            sys.meta_path.remove(shield)


#: How long after a swallowed Ctrl-C it is delivered again, in seconds.
_REDELIVERY_DELAY = 0.01


def _redeliver_interrupts(
    previous: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], None]:
    """An unraisable hook that delivers a Ctrl-C again: one that arrived while Python
    ran a garbage-collection callback or a finalizer is swallowed there (it would be
    printed as "Exception ignored in ..."). It is raised again shortly after, from
    another thread, so that it lands in the command's code rather than in this hook."""

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous(unraisable)
            return
        with suppress(RuntimeError):  # no new threads once the interpreter shuts down
            # a bare thread: threading.Thread.start() would wait here, interruptibly
            _thread.start_new_thread(_interrupt_main_later, ())

    return hook


def _interrupt_main_later() -> None:
    time.sleep(_REDELIVERY_DELAY)
    _thread.interrupt_main()


def _ignore_interrupts() -> None:
    with suppress(ValueError):  # only the main thread sets signal handlers
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _interrupted(exit_now: bool) -> int:
    """Report an interrupted command; with `exit_now`, end the process."""
    if exit_now:
        _ignore_interrupts()  # a second Ctrl-C must not cut the report short
    with suppress(Exception):
        sys.stdout.flush()
    with suppress(Exception):
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
    if exit_now:
        os._exit(INTERRUPTED)
    return INTERRUPTED
