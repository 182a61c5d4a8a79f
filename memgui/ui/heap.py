"""Short full passes of the garbage collector, so the GUI thread never waits long for one.

A full (generation 2) collection walks every container object the interpreter tracks and
holds the GIL throughout; with Qt's wrappers, the loaded modules and their caches that is
~90 ms here, and a collection that a worker's allocations trigger stalls the GUI thread
as much as one on the GUI thread itself. What exists once the window is up lives as long
as the app, so it is moved to the permanent generation, which collections skip (reference
counting still frees what is released).

The import window's code is not loaded at start-up (a quarter of its CPU). Loaded on the GUI
thread when a person first imports, it took 40–50 ms of that thread's CPU and the full
collections its new objects set off, 60–150 ms on a busy machine, in the middle of the
import. `preload` loads it on a thread of its own once the window is up, with the collector
paused, and freezes it with the rest. A module listed may have a `warm_up()`, run there too:
what its first use would make on the GUI thread (the review table's first brush made
PySide6's gradient enums, 7–13 ms, in the middle of the import's first paint).
"""

from __future__ import annotations

import gc
import importlib
import threading

from memgui.core.progress import gc_paused

PRELOADED = ("memgui.ui.importing.import_dialog", "memgui.ui.models.import_plan_model")
PRELOAD_AFTER_MS = 1500  # after the window's first paint: never in the way of start-up


def settle() -> None:
    """Exclude every object that exists now from future collections."""
    gc.collect()  # what is garbage now would otherwise be kept for good
    gc.freeze()


def preload() -> threading.Thread:
    """Load the windows a person opens later (PRELOADED) on a thread of its own, and exclude
    what they made from future collections; returns the started thread."""
    thread = threading.Thread(target=_load, name="memgui preload", daemon=True)
    thread.start()
    return thread


def _load() -> None:
    with gc_paused():
        for name in PRELOADED:
            warm_up = getattr(importlib.import_module(name), "warm_up", None)
            if warm_up is not None:
                warm_up()
    gc.freeze()  # a module lives as long as the app
