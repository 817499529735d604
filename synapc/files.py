"""Writing files all or nothing: the old file or the whole new one, never a part.

- `replacing(target)`: one text file replaced whole (``synapc import -o``,
  ``synapc-opt -o``).
- `locked_folder(path)`: a folder that one writer at a time holds under an exclusive lock
  (``synapc convert``'s output folder). `LockedFolder.commit` replaces a set of files in
  it as one step that a crash (even ``kill -9``) cannot leave half done, and the next
  writer removes what a killed one left behind. It never follows a symbolic link below
  the folder: a link where it writes is refused with a message, a link where it cleans up
  is left alone.

Temporary files are named `temporary_name`: ``.NAME.tmp-PID-RANDOM`` beside ``NAME`` (the
process id and 64 random bits: concurrent writers never share, or delete, one another's
temporaries).
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from synapc.errors import SynapcError
from synapc.interrupts import deferred_interrupts
from synapc.limits import limits

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: folders are not locked
    fcntl = None  # type: ignore[assignment]

#: The lock file of a locked folder: held (``flock``, exclusive) by the writer from
#: `locked_folder`'s start to its end, and removed by it at the end; it outlives only a
#: killed writer (the next one reuses and removes it).
LOCK = ".synapc.lock"
#: The commit journal: which temporaries `LockedFolder.commit` is renaming to which
#: names. It exists only while the renames run; if a writer is killed among them, the
#: next writer completes them (rolls forward).
JOURNAL = ".synapc.commit"
#: Written into the lock file by a writer that created the folder: if it is killed, the
#: next writer inherits the folder's removal should it fail too.
_CREATED = b"created\n"

_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>[0-9]+)-[0-9a-f]{16}$")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def temporary_name(name: str) -> str:
    """A new hidden name for a file about to become `name` in the same folder: unique
    across processes and calls (process id + 64 random bits), so that concurrent
    writers never collide, and recognizable (`temporary_of`) so that a later writer can
    remove one that a killed process left behind."""
    return f".{name}.tmp-{os.getpid()}-{secrets.token_hex(8)}"


def temporary_of(file_name: str) -> tuple[str, int] | None:
    """The name and process id a `temporary_name` was made for, or None when
    `file_name` is not one."""
    match = _TEMPORARY.match(file_name)
    return None if match is None else (match["name"], int(match["pid"]))


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists (in this process's PID namespace); a process of
    another user counts as alive."""
    if pid <= 0:
        return True  # not a real process id: never treat as dead
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


@contextmanager
def replacing(target: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """A text stream whose content replaces the file `target` when the block ends, and
    is thrown away if the block fails or is interrupted: it goes to a new file beside
    `target` (0666 less the umask, like any new file), renamed over `target` at the end,
    so `target` is either the old file or the whole new one, and no temporary file is
    left behind. Through a symlink the file it points to is replaced; a target that is
    not a regular file (a FIFO, /dev/stdout) is written in place."""
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "w", encoding="utf-8") as stream:
            yield stream
        return
    path = Path(os.path.realpath(target))
    temporary = os.fspath(path.with_name(temporary_name(path.name)))
    try:
        # "x": a new file, with the mode the umask gives (mkstemp's would be 0600)
        with open(temporary, "x", encoding="utf-8") as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException as error:
        # whenever it came, the temporary file (if any) is ours, unless its name was
        # taken already
        if not (isinstance(error, FileExistsError) and error.filename == temporary):
            with suppress(OSError):
                os.unlink(temporary)
        if isinstance(error, OSError) and error.filename == temporary:
            # report the file the user named, not the temporary one
            raise type(error)(error.errno, error.strerror, os.fspath(target)) from None
        raise


class NotOurs(SynapcError):
    """A path where a `LockedFolder` would write is a symbolic link or not the kind of
    file it writes there: synapc refuses to write, read or delete through it."""


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _parts(relative: str) -> tuple[tuple[str, ...], str]:
    """A relative name's folders and file name; refuses anything leaving the folder."""
    parts = relative.split("/")
    if any(p in ("", ".", "..") or "\0" in p or "\\" in p for p in parts):
        raise ValueError(f"not a plain relative name: {relative!r}")
    return tuple(parts[:-1]), parts[-1]


class LockedFolder:
    """A folder held by one writer (`locked_folder`): reads and writes relative to it
    without following symbolic links below it, replaces sets of files all or nothing
    (`commit`), and tidies up after a killed writer (`recover`, `remove_stale`)."""

    def __init__(self, path: Path, fd: int, lock_fd: int, created: bool, locked: bool):
        self.path = path
        #: whether this writer (or a killed one it follows) created the folder: it is
        #: removed again, if empty, when the writer fails
        self.created = created
        #: False where the file system refuses locks: then nothing is removed that a
        #: live process might still write
        self.locked = locked
        self._fd = fd
        self._lock_fd = lock_fd
        self._folders: dict[tuple[str, ...], int] = {(): fd}
        self._made: list[tuple[str, ...]] = []

    # -- paths ------------------------------------------------------------------------

    def _folder(self, parts: tuple[str, ...], create: bool) -> int | None:
        """The open subfolder `parts` (None when missing and not `create`); a link or a
        file on the way is `NotOurs`."""
        if parts in self._folders:
            return self._folders[parts]
        parent = self._folder(parts[:-1], create)
        if parent is None:
            return None
        name = parts[-1]
        where = self.path.joinpath(*parts)
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(name, dir_fd=parent)
            self._made.append(parts)
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            raise NotOurs(
                f"{where}: is a symbolic link; synapc keeps this folder of its own and "
                "never reads, writes or deletes through a link: remove the link"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise NotOurs(f"{where}: not a folder; remove it (synapc writes a folder here)")
        fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=parent)
        self._folders[parts] = fd
        return fd

    def lstat(self, relative: str) -> os.stat_result | None:
        """The status of `relative` itself (a link is not followed), or None when it or
        a folder on the way is missing; a link or file on the way is `NotOurs`."""
        parts, name = _parts(relative)
        folder = self._folder(parts, create=False)
        if folder is None:
            return None
        try:
            return os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def check_replaceable(self, relative: str) -> None:
        """Refuse (`NotOurs`) when `relative`, or a folder on its way, exists but is not
        what synapc writes there (a regular file; folders): a link is never replaced,
        removed or written through."""
        info = self.lstat(relative)
        if info is None or stat.S_ISREG(info.st_mode):
            return
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        raise NotOurs(
            f"{self.path / relative}: is {kind}; synapc replaces only regular files it "
            "wrote and never writes through a link: remove it"
        )

    def read(
        self, relative: str, limit: int, limit_name: str | None = None
    ) -> bytes | None:
        """The bytes of the regular file `relative` (None when missing); a link or
        another kind of file is `NotOurs`, a file over `limit` bytes a `SynapcError`
        (naming the setting of the `synapc.limits` field `limit_name`, when given)."""
        raises = f" (SYNAPC_{limit_name.upper()} raises it)" if limit_name else ""
        parts, name = _parts(relative)
        folder = self._folder(parts, create=False)
        if folder is None:
            return None
        self.check_replaceable(relative)
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise NotOurs(f"{self.path / relative}: not a regular file")
            if info.st_size > limit:
                raise SynapcError(
                    f"{self.path / relative}: {info.st_size:,} bytes exceeds the limit "
                    f"of {limit:,}{raises}"
                )
            data = stream.read(limit + 1)
        if len(data) > limit:
            raise SynapcError(
                f"{self.path / relative}: exceeds the limit of {limit:,}{raises}"
            )
        return data

    # -- writing ----------------------------------------------------------------------

    def remove(self, relative: str) -> bool:
        """Remove the regular file `relative` if it is there (a link or another kind of
        file is `NotOurs`, never removed); whether it was."""
        self.check_replaceable(relative)
        parts, name = _parts(relative)
        folder = self._folder(parts, create=False)
        if folder is None:
            return False
        try:
            with deferred_interrupts():
                os.unlink(name, dir_fd=folder)
        except FileNotFoundError:
            return False
        return True

    def _write_new(self, folder: int, name: str, data: bytes) -> None:
        """Create the new file `name` (never through a link; 0666 less the umask) with
        `data`, flushed to the disk."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        fd = os.open(name, flags, 0o666, dir_fd=folder)
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())

    def commit(self, files: Mapping[str, bytes]) -> None:
        """Replace the files `files` (relative names, in order) all or nothing: each is
        written to a `temporary_name` beside it first; once all are on the disk, a
        journal records the renames and they run with Ctrl-C held back. A failure or
        Ctrl-C before that point removes the temporaries (the old files stay); a kill
        during the renames leaves the journal, and the next writer's `recover`
        completes them. A link (or another kind of file) at a name is refused first."""
        for relative in files:
            self.check_replaceable(relative)
        staged: list[tuple[int, str, str, str]] = []  # folder, temporary, name, journal
        journal_temporary: str | None = None
        committed = False
        try:
            for relative, data in files.items():
                parts, name = _parts(relative)
                folder = self._folder(parts, create=True)
                assert folder is not None
                temporary = temporary_name(name)
                # listed before it exists: removed on failure whatever the moment
                staged.append((folder, temporary, name, "/".join((*parts, temporary))))
                self._write_new(folder, temporary, data)
            renames = [[t, r] for (_, _, _, t), r in zip(staged, files, strict=True)]
            record = json.dumps({"renames": renames}, indent=1).encode()
            journal_temporary = temporary_name(JOURNAL)
            self._write_new(self._fd, journal_temporary, record)
            with deferred_interrupts():  # Ctrl-C cannot cut the renames in the middle
                os.replace(
                    journal_temporary, JOURNAL, src_dir_fd=self._fd, dst_dir_fd=self._fd
                )
                committed = True
                for folder, temporary, name, _ in staged:
                    os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
                self._sync({folder for folder, *_ in staged})
                os.unlink(JOURNAL, dir_fd=self._fd)
                self._sync({self._fd})
        except BaseException as error:
            if not committed:
                with deferred_interrupts():
                    for folder, temporary, _, _ in staged:
                        with suppress(OSError):
                            os.unlink(temporary, dir_fd=folder)
                    if journal_temporary is not None:
                        with suppress(OSError):
                            os.unlink(journal_temporary, dir_fd=self._fd)
            if isinstance(error, OSError):
                later = "; the next conversion completes it" if committed else ""
                raise SynapcError(
                    f"{self.path}: cannot write the output: {_reason(error)}{later}"
                ) from None
            raise

    @staticmethod
    def _sync(folders: Iterable[int]) -> None:
        for folder in folders:
            with suppress(OSError):  # some file systems cannot sync a folder
                os.fsync(folder)

    # -- tidying up after a killed writer ---------------------------------------------

    def recover(self) -> str | None:
        """Complete the renames of a writer killed inside `commit` (the journal lists
        them; a temporary already renamed, or a name that is not a regular file, is
        skipped) and say so; None when there was no such commit. A journal that is not
        one `commit` writes is removed (its temporaries then count as stale)."""
        try:
            data = self.read(JOURNAL, limits().max_json_bytes)
        except NotOurs:
            raise
        except SynapcError:
            data = b"too large"
        if data is None:
            return None
        renames = _journal(data)
        if renames is None:
            with deferred_interrupts():
                os.unlink(JOURNAL, dir_fd=self._fd)
            return f"{self.path / JOURNAL}: not a synapc commit journal: removed"
        touched: set[int] = set()
        done = 0
        with deferred_interrupts():
            for temporary, relative in renames:
                parts, name = _parts(relative)
                try:
                    folder = self._folder(parts, create=False)
                except NotOurs:
                    continue  # never through a link
                if folder is None:
                    continue
                temporary_file = _parts(temporary)[1]
                try:
                    source = os.stat(temporary_file, dir_fd=folder, follow_symlinks=False)
                except FileNotFoundError:
                    continue  # renamed before the kill
                try:
                    target = os.stat(name, dir_fd=folder, follow_symlinks=False)
                except FileNotFoundError:
                    target = None
                if not stat.S_ISREG(source.st_mode) or (
                    target is not None and not stat.S_ISREG(target.st_mode)
                ):
                    continue
                os.replace(temporary_file, name, src_dir_fd=folder, dst_dir_fd=folder)
                touched.add(folder)
                done += 1
            self._sync(touched)
            os.unlink(JOURNAL, dir_fd=self._fd)
            self._sync({self._fd})
        return (
            f"{self.path}: a conversion was killed while it renamed its files; "
            f"completed its output ({done} of {len(renames)} files were left to rename)"
        )

    def remove_stale(
        self,
        folder: str,
        names: Callable[[str], bool],
        legacy: Callable[[str], int | None] = lambda file_name: None,
    ) -> list[str]:
        """Remove the temporaries a killed writer left in the subfolder `folder` ("" for
        the folder itself): regular files named `temporary_name(n)` for a name `n` that
        `names` accepts. Under the lock no live writer has any (without a lock, only
        those of dead processes go). `legacy(file_name)` may name the process id of an
        older synapc's temporary, removed when that process is gone. Never follows a
        link, never enters another folder; returns the relative names removed."""
        parts = tuple(folder.split("/")) if folder else ()
        try:
            fd = self._folder(parts, create=False)
        except NotOurs:
            return []
        if fd is None:
            return []
        removed = []
        for file_name in sorted(os.listdir(fd)):
            temporary = temporary_of(file_name)
            if temporary is not None and names(temporary[0]):
                stale = self.locked or not process_alive(temporary[1])
            else:
                pid = legacy(file_name)
                stale = pid is not None and not process_alive(pid)
            if not stale:
                continue
            with suppress(FileNotFoundError):
                info = os.stat(file_name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    with deferred_interrupts():
                        os.unlink(file_name, dir_fd=fd)
                    removed.append("/".join((*parts, file_name)))
        return removed

    # -- the end ----------------------------------------------------------------------

    def release(self, failed: bool) -> None:
        """End the writer's hold: remove the subfolders it created that stayed empty
        (after a failure), the lock file, and the folder itself if this writer created
        it, failed and it is empty; then unlock. Runs with Ctrl-C held back."""
        with deferred_interrupts():
            try:
                if failed:
                    for parts in reversed(self._made):
                        parent = self._folders.get(parts[:-1])
                        with suppress(OSError):
                            os.close(self._folders.pop(parts, -1))
                        with suppress(OSError):
                            if parent is not None:
                                os.rmdir(parts[-1], dir_fd=parent)
                with suppress(OSError):
                    os.unlink(LOCK, dir_fd=self._fd)
                if failed and self.created:
                    with suppress(OSError):  # not empty: someone else's files stay
                        os.rmdir(self.path)
            finally:
                for fd in {*self._folders.values(), self._lock_fd}:
                    with suppress(OSError):
                        os.close(fd)
                self._folders.clear()


def _journal(data: bytes) -> list[tuple[str, str]] | None:
    """The renames a journal lists, or None when it is not one `commit` wrote: each a
    temporary named for its target, in the target's folder."""
    try:
        record = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or set(record) != {"renames"}:
        return None
    renames = record["renames"]
    if not isinstance(renames, list):
        return None
    result = []
    for entry in renames:
        if not (
            isinstance(entry, list)
            and len(entry) == 2
            and all(isinstance(e, str) for e in entry)
        ):
            return None
        temporary, relative = entry
        try:
            temporary_parts, temporary_file = _parts(temporary)
            parts, name = _parts(relative)
        except ValueError:
            return None
        made_for = temporary_of(temporary_file)
        if temporary_parts != parts or made_for is None or made_for[0] != name:
            return None
        result.append((temporary, relative))
    return result


def _open_lock(fd: int, path: Path) -> int:
    """Open (creating it) the lock file in the open folder `fd`, never through a
    link."""
    flags = os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC
    try:
        lock_fd = os.open(LOCK, flags, 0o666, dir_fd=fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotOurs(
                f"{path / LOCK}: is a symbolic link; synapc never writes through a link: "
                "remove it"
            ) from None
        raise
    if not stat.S_ISREG(os.fstat(lock_fd).st_mode):
        os.close(lock_fd)
        raise NotOurs(f"{path / LOCK}: not a regular file: remove it")
    return lock_fd


def _still_there(path: Path, fd: int, lock_fd: int) -> bool:
    """Whether the locked file is still the lock file of the folder at `path` (a
    writer that finished or failed removes it, and may remove the folder)."""
    try:
        folder = os.stat(path)
        lock = os.stat(LOCK, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    return _same_file(folder, os.fstat(fd)) and _same_file(lock, os.fstat(lock_fd))


def _lock(lock_fd: int, on_wait: Callable[[], None]) -> bool:
    """Take the exclusive lock (waiting, interruptibly, if another writer has it);
    False where the file system has no locks."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    except OSError as error:
        if error.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            return False
        raise
    on_wait()
    fcntl.flock(lock_fd, fcntl.LOCK_EX)
    return True


def _abandon(path: Path, fd: int | None, lock_fd: int | None, created: bool) -> None:
    """Clean up after an acquisition cut short (Ctrl-C, an error): unless another
    writer holds the folder, remove the lock file, and the folder if this writer
    created it and it is empty."""
    with deferred_interrupts():
        holder = lock_fd is not None and fcntl is not None
        if holder:
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[arg-type]
            except OSError:
                holder = False  # another writer has it: the folder is in use
        if holder and fd is not None and _still_there(path, fd, lock_fd):  # type: ignore[arg-type]
            with suppress(OSError):
                os.unlink(LOCK, dir_fd=fd)
        if created and (holder or lock_fd is None):
            with suppress(OSError):  # not empty: someone else's files stay
                os.rmdir(path)
        for descriptor in (lock_fd, fd):
            if descriptor is not None:
                with suppress(OSError):
                    os.close(descriptor)


def _acquire(
    path: Path,
    on_wait: Callable[[], None],
    on_no_lock: Callable[[], None],
) -> LockedFolder:
    created = False
    said: list[bool] = []

    def wait_once() -> None:
        if not said:
            said.append(True)
            on_wait()

    while True:
        fd: int | None = None
        lock_fd: int | None = None
        try:
            with deferred_interrupts():  # a folder made is a folder remembered
                if not os.path.isdir(path):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    try:
                        os.mkdir(path)
                        created = True
                    except FileExistsError:
                        pass
                fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
                lock_fd = _open_lock(fd, path)
                if created:
                    os.pwrite(lock_fd, _CREATED, 0)
            locked = _lock(lock_fd, wait_once)
            if locked and not _still_there(path, fd, lock_fd):
                # the holder we waited for removed the lock file (and maybe the folder)
                os.close(lock_fd)
                os.close(fd)
                continue
            if not locked:
                on_no_lock()
            inherited = os.pread(lock_fd, len(_CREATED), 0) == _CREATED
            return LockedFolder(path, fd, lock_fd, created or inherited, locked)
        except BaseException as error:
            _abandon(path, fd, lock_fd, created)
            if isinstance(error, OSError):
                raise SynapcError(
                    f"{path}: cannot write to the output folder: {_reason(error)}"
                ) from None
            raise


@contextmanager
def locked_folder(
    path: Path,
    *,
    on_wait: Callable[[], None] = lambda: None,
    on_no_lock: Callable[[], None] = lambda: None,
) -> Iterator[LockedFolder]:
    """Hold the folder `path` (created, with its parents, if missing) for one writer:
    an exclusive ``flock`` on ``path/.synapc.lock`` (`LOCK`), waited for if another
    writer holds it (`on_wait` is called first). When the block ends the lock file is
    removed and the lock released; if the block fails, subfolders the writer created
    and left empty go too, and so does the folder if this writer created it (or
    inherited that from a killed writer) and it is empty. Where the file system has no
    locks, `on_no_lock` is called and the folder is used unlocked. `path` itself may be
    a symbolic link (the caller chose it); nothing below it is followed."""
    folder = _acquire(path, on_wait, on_no_lock)
    try:
        yield folder
    except BaseException:
        folder.release(failed=True)
        raise
    folder.release(failed=False)
