"""One consolidation at a time per brain file, across processes.

AgentOS guards its consolidation loop with a flag in its own process; memgui's run may come
from the app, the command line and any number of agents' servers at once, so the guard is an
exclusive `flock` on a small file beside the brain (`.<name>.consolidating`). The system
releases it when its process ends, however it ends: a killed run never blocks the next.
The file holds the process id of the holder, so a refused run can say who holds it. Where
`fcntl` does not exist (Windows) the guard is this process's alone.

The file stays beside the brain (hidden): removing it on release would let a third process
lock a new file while a second one still holds the old one.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_local_holders: set[str] = set()
_local_lock = threading.Lock()


def lock_path(brain_path: Path) -> Path:
    return brain_path.with_name(f".{brain_path.name}.consolidating")


class ConsolidationLock:
    """`with ConsolidationLock(path) as held:` — `held` is None when this run holds the
    brain's consolidation, else who does ("process 4242")."""

    def __init__(self, brain_path: Path) -> None:
        self.path = lock_path(Path(brain_path))
        self._fd: int | None = None
        self._key = str(self.path.resolve()) if self.path.parent.exists() else str(self.path)
        self._local = False

    def acquire(self) -> str | None:
        """Take the lock; None when taken, else a description of the holder."""
        with _local_lock:
            if self._key in _local_holders:
                return f"process {os.getpid()} (this one)"
            _local_holders.add(self._key)
            self._local = True
        if fcntl is None:
            return None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError:
            # A folder memgui may not write (a read-only brain): nothing can be applied there
            # anyway, and a plan writes nothing; this process's guard is enough.
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            self._release_local()
            return holder
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return None

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            os.close(fd)  # closing releases the flock
        self._release_local()

    def _release_local(self) -> None:
        if self._local:
            with _local_lock:
                _local_holders.discard(self._key)
            self._local = False

    def __enter__(self) -> str | None:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"process {text}" if text.isdigit() else "another process"
