"""Who changed a brain: another program, or this process.

`PRAGMA data_version` moves for every commit another connection makes, this process's own
included (its readers index what is pending before a search, an import commits on a
connection of its own), and whenever the WAL index changes without a commit: this process's
checkpoint thread starts the WAL over after every quiet second, and the last program to close
the file (when this process holds none of it) folds the WAL back and starts its index over.
To tell another program's write from those, a window compares two counts between its looks:

- the WAL index's `iChange`, which SQLite increments at every commit by anyone and never at
  a checkpoint (the `-shm` file's header, https://www.sqlite.org/walformat.html §2.2), and
- the commits of this process's connections to the same file, counted by their WAL hook.

More commits than this process made: another program wrote. The count going down: another
program closed the file and its index started over, so whether it wrote first cannot be
told. The hook runs just after the commit reaches the WAL index, so a commit of this
process may show in the first count a moment before the second: a caller confirms "another
program" at its next look before it acts on it.

The `-shm` is read through a descriptor kept open while this process has the brain open
(`brain_opened` … `brain_closed`): closing any descriptor of a file drops every POSIX lock
this process holds on it, and SQLite's WAL locks are POSIX locks on the `-shm`. A look that
opened and closed it dropped the write lock of a transaction open on another thread, and
another program's commit made meanwhile was overwritten by that transaction's: written,
answered as stored, and gone.
"""

from __future__ import annotations

import os
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

# WalIndexHdr: iVersion, unused, iChange, isInit, bigEndCksum, szPage, mxFrame, nPage.
_HEADER = struct.Struct("=IIIBBHII")
_HEADER_BYTES = 48  # the header is stored twice, one copy after the other
_WAL_INDEX_VERSION = 3007000
_READ_TRIES = 3  # the two copies differ while a writer updates them: read again

NOBODY, OTHERS, UNKNOWN = "nobody", "others", "unknown"

_lock = threading.Lock()
_local: dict[tuple[int, int], int] = {}
# Open brain files of this process, by (device, inode): how many connections have each.
_open_brains: dict[tuple[int, int], int] = {}
# Descriptors of `-shm` files, by the file's (device, inode): (fd, the brain it belongs to).
_shm_fds: dict[tuple[int, int], tuple[int, tuple[int, int]]] = {}
_spare_fds: list[int] = []


@dataclass(frozen=True, slots=True)
class CommitCounts:
    """Commits to one brain file: by anyone (None without a readable WAL index, as for a
    file opened immutable) and by this process's connections."""

    anyone: int | None
    here: int


def commits_in_wal_index(path: Path) -> int | None:
    """The WAL index's commit counter of the brain at `path`, or None when there is no
    readable WAL index (a file opened immutable, no `-shm` yet, another format)."""
    with _lock:
        fd = _kept_shm(Path(f"{path}-shm"), path)
        if fd is None:
            return None
        for _ in range(_READ_TRIES):
            try:
                head = os.pread(fd, 2 * _HEADER_BYTES, 0)
            except OSError:
                return None
            if len(head) < 2 * _HEADER_BYTES:
                return None
            if head[:_HEADER_BYTES] != head[_HEADER_BYTES:]:
                continue
            version, _unused, changes, initialised, *_rest = _HEADER.unpack_from(head)
            if version != _WAL_INDEX_VERSION or not initialised:
                return None
            return int(changes)
    return None


def _kept_shm(shm: Path, brain: Path) -> int | None:
    """A descriptor of the `-shm` now at `shm`, opened once and kept (see the module's
    docstring), or None when there is none. Under `_lock`."""
    try:
        found = os.stat(shm)
    except OSError:
        return None
    key = (found.st_dev, found.st_ino)
    kept = _shm_fds.get(key)
    if kept is not None:
        return kept[0]
    try:
        owner = os.stat(brain)
        fd = os.open(shm, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    opened = os.fstat(fd)
    key = (opened.st_dev, opened.st_ino)  # the file opened, should it have changed meanwhile
    if key in _shm_fds:
        # The file changed between the stat and the open, to one already kept: closing this
        # descriptor would drop the locks too, so it waits for the last brain to be closed.
        _spare_fds.append(fd)
        return _shm_fds[key][0]
    _shm_fds[key] = (fd, (owner.st_dev, owner.st_ino))
    return fd


def brain_opened(identity: tuple[int, int] | None) -> None:
    """A connection of this process opened the brain file `identity` (device, inode)."""
    if identity is None:
        return
    with _lock:
        _open_brains[identity] = _open_brains.get(identity, 0) + 1


def is_open_here(path: os.PathLike[str] | str) -> bool:
    """Whether this process has the brain file at `path` open. Such a file must never be
    opened and closed with plain file calls here: closing any descriptor of a file drops
    every lock the process holds on it, SQLite's included."""
    try:
        stat = os.stat(path)
    except OSError:
        return False
    with _lock:
        return (stat.st_dev, stat.st_ino) in _open_brains


def brain_closed(identity: tuple[int, int] | None) -> None:
    """A connection opened with `brain_opened` was closed: the `-shm` descriptors kept for
    brains this process no longer has open are closed (nothing of it holds their locks)."""
    if identity is None:
        return
    with _lock:
        left = _open_brains.get(identity, 0) - 1
        if left > 0:
            _open_brains[identity] = left
        else:
            _open_brains.pop(identity, None)
        for key, (fd, owner) in list(_shm_fds.items()):
            if owner not in _open_brains:
                del _shm_fds[key]
                os.close(fd)
        if not _open_brains:
            while _spare_fds:
                os.close(_spare_fds.pop())


def note_local_commit(identity: tuple[int, int] | None) -> None:
    """A connection of this process committed to the file `identity` (device, inode)."""
    if identity is None:
        return
    with _lock:
        _local[identity] = _local.get(identity, 0) + 1


def local_commits(identity: tuple[int, int] | None) -> int:
    """How many commits this process's connections made to the file `identity`."""
    with _lock:
        return _local.get(identity, 0) if identity is not None else 0


def who_changed(then: CommitCounts, now: CommitCounts) -> str:
    """Who changed the file between two looks that saw its data version move: `NOBODY`
    else (this process's own commits or checkpoints), `OTHERS`, or `UNKNOWN` (another
    program closed the file, and may have written before)."""
    if then.anyone is None or now.anyone is None:
        # No WAL index (a file opened immutable, which this process never writes): the
        # file itself changed, so another program wrote, unless this process did.
        return OTHERS if now.here == then.here else NOBODY
    if now.anyone < then.anyone:
        return UNKNOWN
    return OTHERS if now.anyone - then.anyone > now.here - then.here else NOBODY
