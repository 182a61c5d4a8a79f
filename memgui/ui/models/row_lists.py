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
from typing import Any

_SLICE = 20_000
_PAUSE_S = 0.002
_DISCARDED: queue.SimpleQueue[Any] = queue.SimpleQueue()
_DISCARD_LOCK = threading.Lock()
_discarder: threading.Thread | None = None


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


def discard_later(*containers: Any) -> None:
    """Free big lists and dicts in a worker thread, a slice at a time.

    Freeing a 1M-id list and its id → row map is one C call of ~50 ms that holds the GIL;
    done on the GUI thread it froze the window at every new query. In slices, with a pause
    between them (see `row_map`), the worker lets the GUI thread run.
    """
    for container in containers:
        if container:
            _DISCARDED.put(container)
    global _discarder
    with _DISCARD_LOCK:
        if _discarder is None:
            _discarder = threading.Thread(target=_discard_forever, name="discard", daemon=True)
            _discarder.start()


def _discard_forever() -> None:
    while True:
        container = _DISCARDED.get()
        # Empty it only once it is held here alone (the model lets go right after handing
        # it over); a container somebody else keeps is left whole to them.
        for _ in range(20):
            if sys.getrefcount(container) <= 2:  # this name and getrefcount's argument
                break
            time.sleep(0.05)
        if sys.getrefcount(container) <= 2:
            if isinstance(container, list):
                while container:
                    del container[-_SLICE:]
                    time.sleep(_PAUSE_S)
            elif isinstance(container, dict):
                popitem = container.popitem
                while container:
                    for _ in range(min(_SLICE // 10, len(container))):
                        popitem()
                    time.sleep(_PAUSE_S)
        del container
