"""Big id lists off the GUI thread: numbering them, and freeing them in a worker.

Pure-Python work in a worker takes the GIL for whole switch intervals each time the GUI
thread gives it up, and a paint gives it up at every call into the model; one long C call
(freeing a 1M-item list) holds it throughout. Both are done here a slice at a time, with a
short sleep between slices that hands the GIL back.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any

from memgui.ui.jobs import lower_thread_priority

_SLICE = 20_000
_PAUSE_S = 0.002
_BURST = 1_000  # ids numbered between two pauses: ~0.15 ms holding the GIL
_BURST_PAUSE_S = 0.001
_HOLDER_LOOKS = 20  # how often the worker looks whether a container's other holders let go
_HOLDER_PAUSE_S = 0.05  # between two looks: ~1 s in all, then it is left to them
_DISCARDED: queue.SimpleQueue[Any] = queue.SimpleQueue()
_DISCARD_LOCK = threading.Lock()
_discarder: threading.Thread | None = None
_handed_over = 0  # containers given to the worker and not yet dealt with
_dealt_with = threading.Condition()


def row_map(ids: list[str]) -> dict[str, int]:
    """{id: row} for `ids`, built in slices with a pause between them.

    Pure-Python work in a worker takes the GIL for whole switch intervals (5 ms) each time
    the GUI thread gives it up, and a paint gives it up at every `data()` call: a worker
    busy for 100 ms made paints wait for most of it. A short sleep per slice hands the GIL
    back.
    """
    rows: dict[str, int] = {}
    for start in range(0, len(ids), _SLICE):
        rows.update(zip(ids[start : start + _SLICE], range(start, start + _SLICE), strict=False))
        time.sleep(_PAUSE_S)
    return rows


class RowMap:
    """{id: row} for a long list, kept in SHARDS dicts chosen by the id's hash.

    One dict of 1M ids grew by resizes that each ran as a single C call holding the GIL
    (50 ms of CPU at 700k entries, 160 ms of a paint's time on a busy machine); a shard
    stays a few thousand entries, so the worker filling it hands the GIL back often.
    """

    SHARDS = 128

    def __init__(self) -> None:
        self.shards: list[dict[str, int]] = [{} for _ in range(self.SHARDS)]

    def get(self, trace_id: str, default: int = -1) -> int:
        return self.shards[hash(trace_id) % self.SHARDS].get(trace_id, default)

    def __len__(self) -> int:
        return sum(len(shard) for shard in self.shards)

    def add(self, ids: list[str], first_row: int) -> None:
        """Number `ids` from `first_row`, pausing after each thousand (see `row_map`)."""
        shards, count = self.shards, self.SHARDS
        for start in range(0, len(ids), _BURST):
            for row, trace_id in enumerate(ids[start : start + _BURST], first_row + start):
                shards[hash(trace_id) % count][trace_id] = row
            time.sleep(_BURST_PAUSE_S)


def gather_slices(slices: Iterable[list[str]]) -> tuple[list[str], RowMap]:
    """The ids of `slices` joined in order, and their row map, with pauses between: the
    core's `list_id_slices` builds each slice without the GIL, so this loop is the query
    job's only Python work per id."""
    ids: list[str] = []
    rows = RowMap()
    for part in slices:
        rows.add(part, len(ids))
        ids.extend(part)
    return ids, rows


def discard_later(*containers: Any) -> None:
    """Free big lists and dicts in a worker thread, a slice at a time.

    Freeing a 1M-id list and its id → row map is one C call of ~50 ms that holds the GIL;
    done on the GUI thread it froze the window at every new query. In slices, with a pause
    between them (see `row_map`), the worker lets the GUI thread run.
    """
    for container in containers:
        if isinstance(container, RowMap):
            shards, container.shards = container.shards, []
            for shard in shards:
                _hand_over(shard)
        elif container:
            _hand_over(container)
    global _discarder
    with _DISCARD_LOCK:
        if _discarder is None:
            _discarder = threading.Thread(target=_discard_forever, name="discard", daemon=True)
            _discarder.start()


def wait_discarded(timeout_s: float | None = None) -> bool:
    """Wait until every container handed to `discard_later` so far was emptied or left to
    its other holders; False when `timeout_s` passed first."""
    with _dealt_with:
        return _dealt_with.wait_for(lambda: _handed_over == 0, timeout_s)


def _hand_over(container: Any) -> None:
    global _handed_over
    with _dealt_with:
        _handed_over += 1
    _DISCARDED.put(container)


def _discard_forever() -> None:
    global _handed_over
    lower_thread_priority()
    while True:
        container = _DISCARDED.get()
        # Empty it only once it is held here alone (the model lets go right after handing
        # it over); a container somebody else keeps is left whole to them.
        for _ in range(_HOLDER_LOOKS):
            if sys.getrefcount(container) <= 2:  # this name and getrefcount's argument
                break
            time.sleep(_HOLDER_PAUSE_S)
        if sys.getrefcount(container) <= 2:
            if isinstance(container, list):
                while container:
                    del container[-_SLICE:]
                    time.sleep(_PAUSE_S)
            elif isinstance(container, dict) and len(container) <= _SLICE:
                container.clear()  # a row map's shard: one short C call
            elif isinstance(container, dict):
                popitem = container.popitem
                while container:
                    for _ in range(min(_SLICE // 10, len(container))):
                        popitem()
                    time.sleep(_PAUSE_S)
        del container
        with _dealt_with:
            _handed_over -= 1
            _dealt_with.notify_all()
