"""What a killed job left behind, found and removed by the next job of its kind.

Every temporary file or folder memgui makes names the process that made it (`…-<pid>…`).
A job that is interrupted removes its own; one killed outright (`kill -9`, a power cut)
cannot, so the next job that would make the same kind of file removes those whose process
is gone. A process that is still running (this one included: the app may run two jobs at
once) keeps its files, and so does one whose id was taken by another program since: a file
kept too long is harmless, one removed under a running job is not.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from pathlib import Path

log = logging.getLogger(__name__)

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def process_gone(pid: int) -> bool:
    """Whether no process of this id runs on this machine now."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it runs, as another user
        return False
    return False


def stale_names(names: list[str], pattern: re.Pattern[str]) -> list[str]:
    """The names `pattern` matches (its group `pid` naming the process) whose process is gone."""
    out = []
    for name in names:
        found = pattern.fullmatch(name)
        if found is not None and process_gone(int(found.group("pid"))):
            out.append(name)
    return out


def remove_stale_files(folder: Path, pattern: re.Pattern[str]) -> list[str]:
    """Remove the files in `folder` that `pattern` names and whose process is gone (never a
    link's target, never a folder); returns their names. A folder that cannot be listed
    (gone, no permission) has nothing to remove."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    removed = []
    for name in stale_names(names, pattern):
        path = folder / name
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                continue
            path.unlink()
        except OSError as error:
            log.warning("could not remove %s, left by a job that was killed: %s", path, error)
            continue
        removed.append(name)
    if removed:
        log.info("removed %d file(s) left in %s by a job that was killed", len(removed), folder)
    return removed


def remove_stale_folders(root_fd: int, pattern: re.Pattern[str]) -> list[str]:
    """Remove the folders directly in the folder `root_fd` that `pattern` names and whose
    process is gone, with the plain files they hold (reached through descriptors, never a
    link: a folder holding anything else is left as it is)."""
    removed = []
    for name in stale_names(os.listdir(root_fd), pattern):
        try:
            fd = os.open(
                name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=root_fd
            )
        except OSError:
            continue  # not a folder (or a link to one): not ours
        try:
            for entry in os.scandir(fd):
                if entry.is_file(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=fd)
            os.rmdir(name, dir_fd=root_fd)
        except OSError as error:
            log.warning("could not remove %s, left by a job that was killed: %s", name, error)
            continue
        finally:
            os.close(fd)
        removed.append(name)
    return removed
