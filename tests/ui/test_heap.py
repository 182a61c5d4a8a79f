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


def test_preload_loads_the_import_window_off_the_gui_thread_and_freezes_it() -> None:
    import subprocess
    import sys

    probe = (
        "import gc, sys, threading\n"
        "from memgui.ui import heap\n"
        "loaded_on = []\n"
        "def record(name, *args, **kwargs):\n"
        "    if name.startswith('memgui.ui.importing'):\n"
        "        loaded_on.append(threading.current_thread() is threading.main_thread())\n"
        "    return real_import(name, *args, **kwargs)\n"
        "import builtins\n"
        "real_import = builtins.__import__\n"
        "builtins.__import__ = record\n"
        "before = gc.get_freeze_count()\n"
        "heap.preload().join()\n"
        "builtins.__import__ = real_import\n"
        "print(all(m in sys.modules for m in heap.PRELOADED), bool(loaded_on), any(loaded_on),\n"
        "      gc.get_freeze_count() > before, gc.isenabled())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "False", "True", "True"]
