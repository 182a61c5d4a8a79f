"""Where the graph view placed each node of a brain, kept between sessions.

One JSON file per brain (named from a hash of the file's path and the brain id) in a folder
the app chooses. At most `MAX_KEPT` positions are kept: the ones placed longest ago go first.

Writing is off the caller's thread: `save()` hands a snapshot to a writer thread of the
file's own (a later snapshot replaces one not yet written) and returns at once. The writer
encodes the snapshot in slices, so a GUI thread sharing the interpreter is never held for
more than a slice, writes it to a temporary file of its own in the same folder (a name no
other window or process can pick), syncs it and renames it over the file: a crash leaves the
old file or the new one. The writer is not a daemon, so the interpreter's exit waits for it;
`flush()` waits for it sooner, and a store opening the same file waits for it before reading.
If another window or program rewrote the file since this store read or wrote it, the writer
reads it again and lays only the positions this store placed over it: nobody's placements
are lost to a stale copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

import orjson

MAX_KEPT = 100_000
SLICE = 5_000  # positions encoded at a time: ~1 ms each, then the GIL may pass
Point = tuple[float, float]
Stamp = tuple[int, int, int] | None  # the file's inode, size and mtime when last seen

_writers_lock = threading.Lock()
_writers: dict[Path, threading.Thread] = {}  # per file: the thread writing it, if any


class PositionStore:
    def __init__(
        self, folder: str | os.PathLike[str], brain_path: str | os.PathLike[str], brain_id: str
    ):
        key = f"{Path(brain_path).resolve()}\0{brain_id}".encode("utf-8", "surrogatepass")
        self.path = Path(folder) / f"{hashlib.sha1(key).hexdigest()[:20]}.json"
        self._positions: dict[str, Point] | None = None
        self._placed: set[str] = set()  # ids this store placed: laid over another's file
        self._lock = threading.Lock()  # guards the fields below, shared with the writer
        # the snapshot waiting to be written, with the ids this store placed
        self._pending: tuple[dict[str, Point], frozenset[str]] | None = None
        self._seen: Stamp = None
        self.error: OSError | None = None  # the last write's failure, if it failed

    def _loaded(self) -> dict[str, Point]:
        if self._positions is None:
            _wait_for_writer(self.path)
            raw, self._seen = _read(self.path)
            self._positions = raw
        return self._positions

    def get(self, ids: Iterable[str]) -> dict[str, Point]:
        known = self._loaded()
        return {i: known[i] for i in ids if i in known}

    def update(self, positions: Mapping[str, Point]) -> None:
        known = self._loaded()
        for node_id, point in positions.items():
            known.pop(node_id, None)  # re-inserted: the newest
            known[node_id] = (float(point[0]), float(point[1]))
            self._placed.add(node_id)
        while len(known) > MAX_KEPT:
            self._placed.discard(oldest := next(iter(known)))
            del known[oldest]

    def save(self) -> None:
        """Hand the positions to the writer thread; return at once."""
        if self._positions is None:
            return
        snapshot = (dict(self._positions), frozenset(self._placed))
        with _writers_lock:
            with self._lock:
                self._pending = snapshot
            running = _writers.get(self.path)
            if running is not None and running.name == self._thread_name:
                return  # this store's writer takes the newest snapshot before it ends
            # Another store's writer of the same file goes first: one writer at a time.
            thread = threading.Thread(
                target=self._write_pending, args=(running,), name=self._thread_name
            )
            _writers[self.path] = thread
            thread.start()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for the writer (at most `timeout` seconds); True when nothing is left to write."""
        with _writers_lock:
            thread = _writers.get(self.path)
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    @property
    def _thread_name(self) -> str:
        return f"graph positions {id(self):x}"

    def _write_pending(self, before: threading.Thread | None) -> None:
        if before is not None:
            before.join()
        while True:
            with _writers_lock, self._lock:
                pending, self._pending = self._pending, None
                if pending is None:
                    if _writers.get(self.path) is threading.current_thread():
                        del _writers[self.path]
                    return
            try:
                self._write(*pending)
            except OSError as exc:
                self.error = exc
            else:
                self.error = None

    def _write(self, snapshot: dict[str, Point], placed: frozenset[str]) -> None:
        if _stamp(self.path) != self._seen:  # another window or program wrote it meanwhile
            theirs, _stamp_read = _read(self.path)
            for node_id in placed & snapshot.keys():
                theirs.pop(node_id, None)
                theirs[node_id] = snapshot[node_id]
            snapshot = dict(list(theirs.items())[-MAX_KEPT:])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                for chunk in _encoded(snapshot):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            os.replace(name, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
        self._seen = _stamp(self.path)


def _encoded(positions: dict[str, Point]) -> Iterable[bytes]:
    """The JSON object of `positions`, in slices of `SLICE` entries (orjson holds the GIL
    for a whole call: one call for 100,000 positions would hold a GUI thread for it)."""
    items = list(positions.items())
    yield b"{"
    for start in range(0, len(items), SLICE):
        body = orjson.dumps(dict(items[start : start + SLICE]))[1:-1]
        if body:
            yield (b"," if start else b"") + body
    yield b"}"


def _read(path: Path) -> tuple[dict[str, Point], Stamp]:
    stamp = _stamp(path)
    try:
        raw = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        raw = {}
    positions: dict[str, Point] = {}
    if isinstance(raw, dict):
        for node_id, point in raw.items():
            if _is_point(point):
                positions[node_id] = (float(point[0]), float(point[1]))
    return positions, stamp


def _stamp(path: Path) -> Stamp:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _wait_for_writer(path: Path) -> None:
    """A store of this process may be writing the file: read it once that is done."""
    with _writers_lock:
        thread = _writers.get(path)
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def _is_point(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int | float) and math.isfinite(v) for v in value)
    )
