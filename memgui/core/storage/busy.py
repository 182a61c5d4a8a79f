"""Who holds a brain's write lock, when the system can tell.

SQLite takes a brain's write lock as a POSIX lock on one byte: in WAL mode byte 120 of the
`-shm` file (the first of the unix VFS's shared-memory locks), in rollback-journal mode the
RESERVED byte of the file itself. Linux lists every such lock with its process in
`/proc/locks`; no file of the brain is opened to look (closing a descriptor of a file would
drop the locks this process's own connections hold on it). Elsewhere the holder is unknown.
"""

from __future__ import annotations

import os
from pathlib import Path

WAL_WRITE_BYTE = 120
RESERVED_BYTE = 0x40000001
PROC_LOCKS = Path("/proc/locks")
_COMMAND_CHARS = 80


def write_lock_holder(path: Path) -> int | None:
    """The id of the process holding the brain's write lock, or None when unknown."""
    candidates = []
    for target, byte in ((Path(f"{path}-shm"), WAL_WRITE_BYTE), (path, RESERVED_BYTE)):
        try:
            info = os.stat(target)
        except OSError:
            continue
        device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
        candidates.append((device, byte))
    if not candidates:
        return None
    try:
        lines = PROC_LOCKS.read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        # "1: POSIX  ADVISORY  WRITE 11799 fe:00:4243462 120 120"
        fields = line.split()
        if len(fields) < 8 or fields[1] != "POSIX" or fields[3] != "WRITE":
            continue
        try:
            pid, start = int(fields[4]), int(fields[6])
            end = int(fields[7]) if fields[7] != "EOF" else 2**63
        except ValueError:
            continue
        if pid > 0 and any(
            fields[5] == device and start <= byte <= end for device, byte in candidates
        ):
            return pid
    return None


def describe_holder(pid: int | None) -> str:
    """Who holds the lock, in words: a process by its id and command line, when known."""
    if pid is None:
        return "another program"
    if pid == os.getpid():
        return f"another connection of this process (pid {pid})"
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"another program (pid {pid})"
    words = raw.replace(b"\0", b" ").decode(errors="replace").split()  # no line breaks
    command = " ".join(words)
    if len(command) > _COMMAND_CHARS:
        command = command[: _COMMAND_CHARS - 1] + "…"
    return f"another program (pid {pid}: {command})" if command else f"another program (pid {pid})"
