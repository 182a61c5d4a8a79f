"""How long an app test waits for the signal or state it needs before it gives up.

A test waits for what it needs, never for a fixed time; this bound only ends a wait that
can no longer succeed. It is far above what any wait takes: on a loaded 2-core machine the
app's workers, which run ten steps nicer than the GUI thread, may get a few percent of a
core, and a job of a few milliseconds then takes seconds.
"""

from __future__ import annotations

WAIT_MS = 60_000
WAIT_S = WAIT_MS / 1000
