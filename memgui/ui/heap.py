"""Short full passes of the garbage collector, so the GUI thread never waits long for one.

A full (generation 2) collection walks every container object the interpreter tracks and
holds the GIL throughout; with Qt's wrappers, the loaded modules and their caches that is
~90 ms here, and a collection that a worker's allocations trigger stalls the GUI thread
as much as one on the GUI thread itself. What exists once the window is up lives as long
as the app, so it is moved to the permanent generation, which collections skip (reference
counting still frees what is released).
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Exclude every object that exists now from future collections."""
    gc.collect()  # what is garbage now would otherwise be kept for good
    gc.freeze()
