"""Indexing the rows writers left marked, off their path: the upkeep's part.

A connection that indexes later (`Database.index_later`: the app's, whose writes run on the
GUI thread) only marks rows for the full-text indexes. The upkeep thread, on a connection of
its own, indexes them here a small batch at a time, each batch a write transaction of its
own (`fulltext.flush_step`), a gap between two: a write of the GUI thread that finds the
lock taken waits for one batch at most. The batch's size follows its time: halved when a
batch took longer than `STEP_TARGET_S` (a big brain, long texts), doubled when it took less
than half of it, so that a burst of marks (an edit of many traces in one batch) is not left
waiting long either.
"""

from __future__ import annotations

import logging
import threading
import time

from memgui.core.errors import BrainBusy
from memgui.core.search import fulltext
from memgui.core.storage.db import Database

log = logging.getLogger(__name__)

STEP_TARGET_S = 0.005  # a batch's transaction: what a waiting writer may wait for
FIRST_ROWS, MIN_ROWS, MAX_ROWS = 16, 1, 512
GAP_S = 0.01  # between two batches: a waiting writer's busy handler finds the lock free
STEP_WAIT_S = 0.5  # for the write lock: past it, the rows wait for the next pass
PASS_BUDGET_S = 2.0  # one pass at most, before the upkeep looks at its other work


class Indexer:
    """Indexes a brain's marked rows in small batches (`index_pass`); keeps the batch size
    it learnt from one pass to the next."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.rows = FIRST_ROWS
        self.batches = 0
        self.indexed = 0
        self.longest_s = 0.0  # the write lock held longest by a batch so far (s)
        self.most_cpu_s = 0.0  # the most CPU a batch took

    def index_pass(
        self, stop: threading.Event | None = None, budget_s: float = PASS_BUDGET_S
    ) -> bool:
        """Index batch after batch until none waits (True), `stop` is set, `budget_s` has
        passed or another connection holds the lock past `STEP_WAIT_S` (False: rows may wait)."""
        ends = time.monotonic() + budget_s
        while True:
            try:
                done, took, cpu = fulltext.flush_step(self.db, self.rows, STEP_WAIT_S)
            except BrainBusy:
                log.info("%s: indexing waits: the brain is busy", self.db.path)
                return False
            if done == 0:
                return True
            self.batches += 1
            self.indexed += done
            self.longest_s = max(self.longest_s, took)
            self.most_cpu_s = max(self.most_cpu_s, cpu)
            # Sized by CPU: on a loaded machine the clock also counts the other programs.
            if cpu > STEP_TARGET_S:
                self.rows = max(MIN_ROWS, self.rows // 2)
            elif cpu < STEP_TARGET_S / 2 and done == self.rows:
                self.rows = min(MAX_ROWS, self.rows * 2)
            if time.monotonic() >= ends:
                return False
            if stop is None:
                time.sleep(GAP_S)
            elif stop.wait(GAP_S):
                return False
