"""Where the graph view placed each node of a brain, kept between sessions.

One JSON file per brain (named from a hash of the file's path and the brain id; a shared
brain's: of its address as memgui shows it, its password never in it, and the brain id) in a
folder the app chooses. At most `MAX_KEPT` positions are kept: the ones placed longest ago go first.

The caller's thread (the GUI's) only hands positions over: `place()` queues a layout's ids
and coordinates, `save()` asks for the file to be written, and both return at once. One
writer thread per process (a serial executor, so writes of one file never overlap) folds
them into the kept positions, encodes those in slices (orjson holds the GIL for a whole
call: one call for 100,000 positions would hold the GUI thread as long), writes them to a
temporary file of its own in the same folder (a name no other window or process can pick),
syncs it and renames it over the file: a crash leaves the old file or the new one. The
interpreter's exit waits for the writer; `flush()` waits sooner, and a store reading the
same file waits for the writes queued before it. If another program (or a store of another
process) rewrote the file since this store read or wrote it, the writer reads it again and
lays only the positions this store placed over it: nobody's placements are lost to a stale
copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import orjson

from memgui.core.storage.engine import is_postgres_address, parse_postgres_address

MAX_KEPT = 100_000
SLICE = 5_000  # positions encoded at a time: ~1 ms each, then the GIL may pass
Point = tuple[float, float]
Stamp = tuple[int, int, int] | None  # the file's inode, size and mtime when last seen

_writer_lock = threading.Lock()
_writer: ThreadPoolExecutor | None = None
_last_write: dict[Path, Future[None]] = {}  # per file: the write queued last
_WRITER_NAME = "graph positions"


def _where(brain: str | os.PathLike[str], brain_id: str) -> str:
    """What names a brain's place: a file's resolved path, or a shared brain's address
    without its password (the same file whatever the password, the working folder or the
    order of the address's options)."""
    text = os.fspath(brain)
    if isinstance(text, str) and is_postgres_address(text):
        parts = urlsplit(str(parse_postgres_address(text, brain_id)))
        user = f"{parts.username}@" if parts.username else ""
        host = parts.netloc.rpartition("@")[2]
        query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
        return urlunsplit(parts._replace(netloc=user + host, query=query))
    return str(Path(text).resolve())


def _executor() -> ThreadPoolExecutor:
    global _writer
    with _writer_lock:
        if _writer is None:
            _writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_WRITER_NAME)
            _writer.submit(lambda: None)  # its thread starts now, not at a layout's end
        return _writer


def _on_writer() -> bool:
    return threading.current_thread().name.startswith(_WRITER_NAME)


class PositionStore:
    def __init__(
        self, folder: str | os.PathLike[str], brain_path: str | os.PathLike[str], brain_id: str
    ):
        key = f"{_where(brain_path, brain_id)}\0{brain_id}".encode("utf-8", "surrogatepass")
        self.path = Path(folder) / f"{hashlib.sha1(key).hexdigest()[:20]}.json"
        self._lock = threading.RLock()  # the fields below: the caller's and the writer's
        self._positions: dict[str, Point] | None = None
        self._placed: set[str] = set()  # ids this store placed: laid over another's file
        self._queued: list[tuple[Sequence[str], np.ndarray]] = []  # placed, not folded in
        self._scheduled = False  # a write is queued and has not started
        self._future: Future[None] | None = None
        self._seen: Stamp = None
        self.error: OSError | None = None  # the last write's failure, if it failed
        _executor()

    def _wait_for_writes(self) -> None:
        """Before this store first reads the file: the writes queued for it (by any store of
        this process) are done. Not under `_lock`: one of them may be this store's."""
        if self._positions is not None or _on_writer():
            return  # read already; or the writer itself, which did what it queued earlier
        with _writer_lock:
            before = _last_write.get(self.path)
        if before is not None:
            before.exception()

    def _loaded(self) -> dict[str, Point]:
        """The kept positions, read on first use, with what `place` queued folded in (the
        caller holds `_lock`, after `_wait_for_writes`)."""
        with self._lock:
            if self._positions is None:
                self._positions, self._seen = _read(self.path)
            if self._queued:
                for ids, xy in self._queued:
                    self._apply(dict(zip(ids, map(tuple, xy.tolist()), strict=True)))
                self._queued = []
            return self._positions

    def get(self, ids: Iterable[str]) -> dict[str, Point]:
        self._wait_for_writes()
        with self._lock:
            known = self._loaded()
            return {i: known[i] for i in ids if i in known}

    def update(self, positions: Mapping[str, Point]) -> None:
        self._wait_for_writes()
        with self._lock:
            self._loaded()
            self._apply(positions)

    def place(self, ids: Sequence[str], xy: np.ndarray) -> None:
        """Keep a layout's positions (rows of `xy` in the order of `ids`) and write them: the
        caller pays for a copy of the array, the writer thread for the rest."""
        with self._lock:
            self._queued.append((ids, np.array(xy, dtype=np.float64).reshape(-1, 2)))
        self.save()

    def _apply(self, positions: Mapping[str, Point]) -> None:
        known = self._positions
        assert known is not None
        for node_id, point in positions.items():
            known.pop(node_id, None)  # re-inserted: the newest
            known[node_id] = (float(point[0]), float(point[1]))
            self._placed.add(node_id)
        while len(known) > MAX_KEPT:
            self._placed.discard(oldest := next(iter(known)))
            del known[oldest]

    def save(self) -> None:
        """Have the writer thread write the positions; return at once."""
        with self._lock:
            if (self._positions is None and not self._queued) or self._scheduled:
                return  # nothing to write, or a write not yet begun will take it all
            self._scheduled = True
            writer = _executor()
            with _writer_lock:
                self._future = writer.submit(self._write_now)
                _last_write[self.path] = self._future

    def when_written(self, callback: Callable[[], object]) -> None:
        """Call `callback` once the writes queued so far are done (on the writer thread; at
        once, on this one, when none is pending)."""
        future = self._future
        if future is None:
            callback()
            return
        future.add_done_callback(lambda _done: callback())

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for this store's writes (at most `timeout` seconds); True when all are done."""
        future = self._future
        if future is None:
            return True
        with contextlib.suppress(TimeoutError):
            future.exception(timeout)
        return future.done()

    def _write_now(self) -> None:
        with self._lock:
            self._scheduled = False
            snapshot = dict(self._loaded())
            placed = frozenset(self._placed)
        try:
            self._write(snapshot, placed)
        except OSError as exc:
            self.error = exc
        else:
            self.error = None

    def _write(self, snapshot: dict[str, Point], placed: frozenset[str]) -> None:
        if _stamp(self.path) != self._seen:  # another program or process wrote it meanwhile
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
    """The JSON object of `positions`, in slices of `SLICE` entries."""
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


def _is_point(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int | float) and math.isfinite(v) for v in value)
    )
