"""Keep Python's cyclic garbage collector off the objects alive when a layout starts.

A shown graph of 20,000 nodes keeps a few hundred thousand Python objects (its nodes, edges,
kept positions, their ids). A full collection walks every one of them, holding the GIL —
~90 ms, measured in the positions' writer thread as a layout ended, during which the GUI
thread could not run at all. While a layout runs (and until its positions are written) the
objects alive at its start are frozen (`gc.freeze`): collections skip them; the objects made
meanwhile are collected as usual. A query job holds it too, until its scene's first frame is
painted (full collections of 80–170 ms fell inside a click's query on the 1M bench brain).
Unfrozen once the last hold is released, nothing is kept for good: a cycle that became
garbage meanwhile is collected by the next full collection.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_holds = 0


def hold() -> None:
    """Freeze what is alive now, until the matching `release` (holds nest)."""
    global _holds
    with _lock:
        if _holds == 0:
            gc.freeze()
        _holds += 1


def release() -> None:
    """End a `hold`; the last one unfreezes (from any thread)."""
    global _holds
    with _lock:
        if _holds == 0:
            return
        _holds -= 1
        if _holds == 0:
            gc.unfreeze()


def holding() -> int:
    return _holds
