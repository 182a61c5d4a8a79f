"""Safe names and contained writes for the Markdown and Obsidian exports.

A trace's scope and type name its folders and its id names its file, so each must be a
safe name on every platform (the AgentOS rule, plus Windows' reserved device names); any
other is refused. Below the export folder, folders are made and opened one name at a time
relative to their parent's descriptor (`mkdir`/`open` with `dir_fd`, `O_NOFOLLOW`), so no
folder or file is ever reached through a link and nothing is written outside the folder,
even if a folder inside it is swapped for a link while the export runs. A note's place is
checked first (nothing there, or a regular file with one name: never a link, a pipe or a
device), the note is written whole under a temporary name in a hidden folder of the export's
own, one file open at a time, and all of them are moved into place (their folders made then)
when the export finishes. A cancelled or failed export removes its temporary files and the
folders it made: the folder is as before. A killed one leaves its hidden folder, which the
next export into the same folder removes.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import unicodedata
from collections import OrderedDict, deque
from dataclasses import dataclass
from pathlib import Path

from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export_common import check_folder, unwritable
from memgui.core.storage import leftovers

MAX_NAME_BYTES = 200
LINK, SPECIAL, COLLISION = "link", "special", "collision"
_RESERVED_CHARS = set('/\\:"*<>?|')
_RESERVED = re.compile(r'[/\\:"*<>?|]')
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode category Cc
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{p}{n}" for p in ("COM", "LPT") for n in "0123456789¹²³"}
)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_CACHE = 16  # folder descriptors kept open (scope and type folders)


def name_problem(name: object) -> str | None:
    """Why `name` cannot be a file or folder name, or None when it can."""
    if not isinstance(name, str):
        return f"must be text (got {name!r})"
    if not name:
        return "must not be empty"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not valid Unicode (holds a lone surrogate)"
    if _RESERVED.search(name):
        bad = sorted({ch for ch in name if ch in _RESERVED_CHARS})
        return f"must not contain {' '.join(bad)} (got {name!r})"
    if _CONTROL.search(name):
        return f"must not contain a control character (got {name!r})"
    if name.startswith("."):
        return f"must not start with a dot (got {name!r})"
    if name[0] == " " or name[-1] == " ":
        return f"must not start or end with a space (got {name!r})"
    if name.endswith("."):
        return f"must not end with a dot (got {name!r})"
    if size > MAX_NAME_BYTES:
        return f"must be at most {MAX_NAME_BYTES} bytes in UTF-8 (got {size})"
    if name.split(".", 1)[0].rstrip(" ").upper() in _WINDOWS_DEVICES:
        return f"is a device name reserved on Windows (got {name!r})"
    return None


@functools.lru_cache(maxsize=256)
def fold_folder(name: str) -> str:
    return fold(name)


def fold(name: str) -> str:
    """The form two names share when macOS or Windows take them for one: Unicode
    normalisation and simple case folding (`MT_CASE` = `mt_case`, `ſ` = `s`, `é` in NFC = NFD),
    but no full folding (`ß` and `ss` stay apart)."""
    out = []
    for ch in unicodedata.normalize("NFD", name):
        upper = ch.upper()
        ch = upper if len(upper) == 1 else ch
        lower = ch.lower()
        out.append(lower if len(lower) == 1 else ch)
    return unicodedata.normalize("NFC", "".join(out))


class Skip(Exception):  # noqa: N818 - a trace left out, not a failure
    """This trace is left out: `field` and `problem` say why."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


@dataclass
class _Seen:
    folders: dict[str, str]  # folded relative folder -> the spelling written first
    files: set[str]  # folded relative file paths written
    inodes: set[tuple[int, int]]


@dataclass(frozen=True)
class _Pending:
    """A note written under its temporary name, not yet in its place."""

    folders: tuple[str, ...]
    fields: tuple[str, ...]
    temporary: str
    name: str
    key: str  # what the caller calls it (the trace id)


# The folder of a running export's notes, in the export folder: `.memgui-export-<pid>-<hex>`.
_STAGING_PREFIX = ".memgui-export-"
_STAGING = re.compile(r"\.memgui-export-(?P<pid>\d+)-[0-9a-f]+")


class ContainedFolder:
    """Writes files `scope/type/name` below one root, never through a link or outside it.

    Notes are written whole into one hidden folder of this export in the root
    (`.memgui-export-<pid>-<hex>`), and moved to their places (whose folders are made then)
    by `finish`. An export that fails or is cancelled removes that folder; one that was
    killed leaves only it, and the next export into the same root removes it.
    """

    def __init__(self, root: Path) -> None:
        if root.exists() and not root.is_dir():
            raise InvalidArgument("path", f"is a file, not a folder (got '{root}')", str(root))
        check_folder(root, root, made=True)
        self._made_root = [p for p in (root, *root.parents) if not p.exists()]
        try:
            root.mkdir(parents=True, exist_ok=True)
            # The export folder itself may be a link: it is what the caller named.
            self.root = root.resolve()
            self._root_fd = os.open(self.root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        except OSError as error:
            raise unwritable(root, error) from None
        leftovers.remove_stale_folders(self._root_fd, _STAGING)  # what a killed export left
        self._dirs: OrderedDict[tuple[str, ...], int] = OrderedDict()
        self._seen = _Seen({}, set(), set())
        self._made: list[tuple[str, ...]] = []  # folders this export made, in order
        self._markers: list[str] = []  # folders made only when the export finishes
        self._pending: deque[_Pending] = deque()
        self._staging: tuple[str, int] | None = None  # the notes' folder: name, descriptor
        self._finished = False

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()
        if self._staging is not None:
            os.close(self._staging[1])
            self._staging = None
        os.close(self._root_fd)

    def __enter__(self) -> ContainedFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if not self._finished:
                self._discard()  # cancelled or failed: the folder as it was
        finally:
            self.close()

    def make_marker_folder(self, name: str) -> None:
        """An empty folder `name` in the root unless one is there (`.obsidian`: what makes a
        folder a vault), made when the export finishes."""
        self._markers.append(name)

    def finish(self) -> list[tuple[str, Skip]]:
        """Put every note written into place (each rename replaces its file whole); returns
        the notes that could not go there after all (a folder replaced by a link meanwhile)
        with why, by the key they were written under."""
        left_out: list[tuple[str, Skip]] = []
        for name in self._markers:
            try:
                os.mkdir(name, 0o755, dir_fd=self._root_fd)
                self._made.append((name,))
            except FileExistsError:
                pass
        while self._pending:
            note = self._pending[0]
            try:
                parent = self._folder(note.folders, note.fields, make=True)
            except Skip as skip:
                self._unlink_temporary(note)
                left_out.append((note.key, skip))
            else:
                staging = self._staging_fd()
                os.rename(note.temporary, note.name, src_dir_fd=staging, dst_dir_fd=parent)
            self._pending.popleft()
        self._remove_staging()
        self._finished = True
        return left_out

    def _discard(self) -> None:
        for note in self._pending:
            self._unlink_temporary(note)
        self._pending.clear()
        self._remove_staging()
        for parts in reversed(self._made):
            try:
                parent = self._folder(parts[:-1], ("",) * len(parts))
                if parent is not None:
                    os.rmdir(parts[-1], dir_fd=parent)
            except (OSError, Skip):
                pass  # not empty: something else was put there meanwhile
        for folder in self._made_root:
            try:
                folder.rmdir()
            except OSError:
                pass

    # --- the notes' own folder -----------------------------------------------------------

    def _staging_fd(self) -> int:
        if self._staging is None:
            name = f"{_STAGING_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
            os.mkdir(name, 0o700, dir_fd=self._root_fd)
            fd = os.open(
                name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=self._root_fd
            )
            self._staging = (name, fd)
        return self._staging[1]

    def _unlink_temporary(self, note: _Pending) -> None:
        if self._staging is not None:
            try:
                os.unlink(note.temporary, dir_fd=self._staging[1])
            except OSError:
                pass

    def _remove_staging(self) -> None:
        if self._staging is not None:
            name, fd = self._staging
            os.close(fd)
            self._staging = None
            try:
                os.rmdir(name, dir_fd=self._root_fd)
            except OSError:
                pass

    # --- folders -------------------------------------------------------------------------

    def _claim_folder(self, parts: tuple[str, ...], field: str) -> None:
        key = "/".join(fold(p) for p in parts)
        first = self._seen.folders.setdefault(key, "/".join(parts))
        if first != "/".join(parts):
            raise Skip(
                field,
                f"{COLLISION}: folder '{'/'.join(parts)}' is '{first}' on "
                "case-insensitive or normalising file systems",
            )

    def _folder(
        self, parts: tuple[str, ...], fields: tuple[str, ...], make: bool = False
    ) -> int | None:
        """The descriptor of root/parts…, opened (and with `make`, made) one name at a time;
        None when a folder on the way is not there (and not `make`)."""
        if not parts:
            return self._root_fd
        if parts in self._dirs:
            self._dirs.move_to_end(parts)
            return self._dirs[parts]
        parent = self._folder(parts[:-1], fields[:-1], make)
        name, field = parts[-1], fields[len(parts) - 1]
        self._claim_folder(parts, field)
        if parent is None:
            return None
        if make:
            try:
                os.mkdir(name, 0o755, dir_fd=parent)
                self._made.append(parts)
            except FileExistsError:
                pass
        try:
            fd = os.open(name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=parent)
        except FileNotFoundError:
            if make:
                raise
            return None
        except OSError as error:
            problem = _open_problem(name, parent, error, "folder")
            if problem is None:
                raise  # a real failure (permissions, a full disk): reported, not skipped
            raise Skip(field, problem) from None
        self._dirs[parts] = fd
        while len(self._dirs) > _DIR_CACHE:
            _, old = self._dirs.popitem(last=False)
            os.close(old)
        return fd

    # --- files ---------------------------------------------------------------------------

    def write(
        self,
        folders: tuple[str, ...],
        fields: tuple[str, ...],
        name: str,
        data: bytes,
        key: str = "",
    ) -> None:
        """Write `data` for root/folders/name; raises Skip (left out) or OSError (failed).
        `key` names the note in what `finish` returns."""
        folded = "/".join((*(fold_folder(p) for p in folders), fold(name)))
        if folded in self._seen.files:
            raise Skip(
                "id",
                f"{COLLISION}: its file would be the file of an earlier trace "
                "on case-insensitive or normalising file systems",
            )
        parent = self._folder(folders, fields)
        try:
            info = None if parent is None else os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None:
            if stat.S_ISLNK(info.st_mode):
                raise Skip("id", f"{LINK}: its file is a symbolic link")
            if not stat.S_ISREG(info.st_mode):
                raise Skip("id", f"{SPECIAL}: its file's place holds something else than a file")
            if info.st_nlink > 1:
                raise Skip("id", f"{LINK}: its file has a second name (a hard link)")
            if (info.st_dev, info.st_ino) in self._seen.inodes:
                raise Skip("id", f"{COLLISION}: its file is the file of an earlier trace")
            self._seen.inodes.add((info.st_dev, info.st_ino))
        staging = self._staging_fd()
        temporary = f"{len(self._pending)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
        fd = os.open(temporary, flags, 0o644, dir_fd=staging)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError:
            os.close(fd)
            os.unlink(temporary, dir_fd=staging)  # no half-written note is left behind
            raise
        os.close(fd)
        self._pending.append(_Pending(folders, fields, temporary, name, key))
        self._seen.files.add(folded)


def _open_problem(name: str, parent: int, error: OSError, what: str) -> str | None:
    """What an open that failed says about the place: link, special, or None (a real error)."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        return f"{LINK}: its {what} is a symbolic link"
    if error.errno in (errno.ELOOP, errno.EMLINK):
        return f"{LINK}: its {what} is a symbolic link"
    if error.errno in (errno.EISDIR, errno.ENOTDIR, errno.ENXIO, errno.ENODEV):
        return f"{SPECIAL}: its {what}'s place holds something else than a {what}"
    if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return f"{SPECIAL}: its {what}'s place holds something else than a {what}"
    return None
