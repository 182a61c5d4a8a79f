"""The startup heap leaves the garbage collector's full passes."""

from __future__ import annotations

import gc
import weakref

from memgui.ui import heap


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_settle_collects_garbage_then_freezes_what_lives() -> None:
    gc.unfreeze()
    try:
        garbage = Node()
        gone = weakref.ref(garbage)
        del garbage
        kept = Node()
        heap.settle()
        assert gone() is None  # the cycle was collected, not frozen for good
        assert gc.get_freeze_count() > 0
        assert not any(obj is kept for obj in gc.get_objects())  # out of every generation
    finally:
        gc.unfreeze()
