"""The startup heap leaves the garbage collector's full passes."""

from __future__ import annotations

import gc

from memgui.ui import heap


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_settle_collects_garbage_then_freezes_what_lives() -> None:
    freed = []
    gc.unfreeze()
    try:
        garbage = Node()
        gc.callbacks.append(
            lambda phase, info: freed.append(info["collected"]) if phase == "stop" else None
        )
        del garbage
        kept = Node()
        heap.settle()
        assert any(freed)  # the cycle was collected, not frozen for good
        assert gc.get_freeze_count() > 0
        assert not any(obj is kept for obj in gc.get_objects())  # out of every generation
    finally:
        gc.callbacks.pop()
        gc.unfreeze()
