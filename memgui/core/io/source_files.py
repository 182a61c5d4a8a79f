"""Which entries of a source folder are read, and reading one file of it within bounds.

A folder to import is someone else's: it may hold links, devices, pipes and sockets. Only a
regular file that resolves inside the folder is read; every other entry is listed, unread,
with why (a link to a file outside the source, a link to a folder, a broken link, a device,
a pipe, a socket). A file is opened without following a link and without blocking, checked
to be the regular file the walk saw, and read up to a bound: a bigger one is refused, naming
its size and the bound, and never read whole.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_NOTE_BYTES = 16 * 1024 * 1024  # a Markdown note or a STATE.md: a long document still fits
_READ_CHUNK = 1024 * 1024
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a pipe swapped in after the walk: open returns at once
    | getattr(os, "O_NOFOLLOW", 0)  # a link swapped in after the walk: not followed
    | getattr(os, "O_CLOEXEC", 0)
)


class FileRefused(Exception):
    """A file that is not read: too big, or not the regular file it was (a race, a pipe)."""

    def __init__(self, reason: str, size: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.size = reason, size


@dataclass(frozen=True)
class WalkEntry:
    path: str  # what to open: the file itself, or the file a link inside the folder names
    relative: str  # POSIX path below the root, what a person sees
    wanted: bool  # a regular file of the reader's format (else listed as unread)
    why_unread: str = ""
    identity: tuple[int, int] | None = None  # (device, inode) the walk saw


def special_kind(mode: int) -> str:
    """What an entry that is no regular file or folder is, for the person reading the list."""
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(os.path.join(root, ""))


def _entry(
    entry: os.DirEntry[str], relative: str, root: str, wanted: Callable[[str], bool], what: str
) -> WalkEntry:
    """The walk's verdict on one entry that is not a folder (see the module docstring)."""
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as error:  # gone since the folder was listed: reading it says so
        if wanted(entry.name):
            return WalkEntry(entry.path, relative, True)
        return WalkEntry(entry.path, relative, False, f"could not be read: {error.strerror}")
    path = entry.path
    if stat.S_ISLNK(info.st_mode):
        path = os.path.realpath(entry.path)
        try:
            info = os.stat(path)
        except OSError:
            return WalkEntry(entry.path, relative, False, "broken link, not read")
        if stat.S_ISDIR(info.st_mode):
            return WalkEntry(entry.path, relative, False, "link to a folder, not followed")
        if not _inside(path, root):
            why = "link to a file outside the source folder, not read"
            return WalkEntry(entry.path, relative, False, why)
    if not stat.S_ISREG(info.st_mode):
        return WalkEntry(entry.path, relative, False, f"{special_kind(info.st_mode)}, not read")
    if not wanted(entry.name):
        suffix = os.path.splitext(entry.name)[1].lower() or "no extension"
        return WalkEntry(entry.path, relative, False, f"not a {what} ({suffix}), not read")
    return WalkEntry(path, relative, True, identity=(info.st_dev, info.st_ino))


def walk_folder(
    root: Path, wanted: Callable[[str], bool], what: str = "note"
) -> Iterator[WalkEntry]:
    """Every entry below `root` in a stable order, one directory read at a time.

    Hidden files and folders (`.obsidian`, `.git`, `.DS_Store`) and links to folders are
    listed once, unread, and not entered: a vault's settings are not notes, and a linked
    folder may loop or lead outside the vault. Other entries as the module docstring says.
    """
    top = os.fspath(root)
    real_root = os.path.realpath(top)
    cut = len(os.path.join(top, ""))
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as error:
            relative = folder[cut:].replace(os.sep, "/")
            yield WalkEntry(folder, relative, False, f"folder could not be read: {error.strerror}")
            continue
        subfolders: list[str] = []
        for entry in entries:
            relative = entry.path[cut:].replace(os.sep, "/")
            if entry.name.startswith("."):
                kind = "folder" if entry.is_dir() else "file"
                yield WalkEntry(entry.path, relative, False, f"hidden {kind}, not read")
            elif entry.is_dir(follow_symlinks=False):
                subfolders.append(entry.path)
            else:
                yield _entry(entry, relative, real_root, wanted, what)
        stack.extend(reversed(subfolders))


def count_wanted(root: Path, wanted: Callable[[str], bool]) -> int:
    """How many files a walk will read: the total of the Progress events."""
    return sum(1 for entry in walk_folder(root, wanted) if entry.wanted)


def named_file(path: Path, wanted: Callable[[str], bool]) -> WalkEntry:
    """The entry of a file named as the source itself (a link the person chose is followed)."""
    return WalkEntry(os.path.realpath(path), path.name, wanted(path.name))


def read_bounded(path: str, limit: int, identity: tuple[int, int] | None = None) -> bytes:
    """A regular file's bytes, at most `limit` of them; raises FileRefused or OSError.

    Opened without blocking and without following a link, so nothing put in the file's
    place since the walk (a pipe, a device, a link) is read or waited on.
    """
    descriptor = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{special_kind(info.st_mode)}, not read")
        if identity is not None and (info.st_dev, info.st_ino) != identity:
            raise FileRefused("replaced by another file while the folder was read, not read")
        if info.st_size > limit:
            raise FileRefused(too_big(info.st_size, limit), info.st_size)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(descriptor, min(_READ_CHUNK, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while being read
                raise FileRefused(too_big(None, limit), total)
    finally:
        os.close(descriptor)


def too_big(size: int | None, limit: int) -> str:
    held = f"is {size:,} bytes" if size is not None else f"holds more than {limit:,} bytes"
    return f"the file {held}; a file over {limit:,} bytes is not read"


def read_head(path: Path, size: int) -> bytes | None:
    """The first `size` bytes of a regular file, or None (not one, or not readable)."""
    try:
        descriptor = os.open(path, _OPEN_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return os.read(descriptor, size)
    except OSError:
        return None
    finally:
        os.close(descriptor)
