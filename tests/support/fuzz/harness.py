"""Running one fuzz case: plan the damaged source, commit what the plan accepts, roll back.

What every case must show, whatever its input:
- planning ends, within `DEADLINE_S` (a case takes milliseconds; a hang never ends), with a
  plan or a clear error about the source as a whole (`MemguiError`), never another exception;
- no record was lost to a reader's last-resort guard (`text_utils.UNEXPECTED`): every odd
  shape met is a rule's refusal, naming what it refuses;
- what the plan accepts (`new`, `update`), the commit writes: none is refused or fails then;
- the process's peak memory (RSS) grows by less than `MAX_GROWTH_BYTES` over the run (a
  bomb takes gigabytes; measuring each case's allocations doubled its time).
Each commit runs inside a transaction that is then rolled back, so every case meets the same
brain.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as CaseTimeout
from dataclasses import dataclass, field
from pathlib import Path

from memgui.core.brain import Brain
from memgui.core.errors import MemguiError
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.io.readers.text_utils import UNEXPECTED
from memgui.core.io.records import NEW, UPDATE
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end

DEADLINE_S = 60.0
MAX_GROWTH_BYTES = 1024 * 1024 * 1024
DEFAULT_CASES = 1000  # per format; MEMGUI_FUZZ_CASES runs more, from a random seed
CASES = int(os.environ.get("MEMGUI_FUZZ_CASES") or DEFAULT_CASES)
LONG_RUN = CASES != DEFAULT_CASES


@dataclass
class Tally:
    cases: int = 0
    seconds: float = 0.0
    peak_growth: int = 0  # bytes the process's peak RSS grew by while the format ran
    outcomes: Counter = field(default_factory=Counter)


TALLIES: dict[str, Tally] = {}


def peak_rss() -> int:
    """The process's peak resident memory so far, in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux counts kilobytes


def case_folder(fmt: str) -> Path:
    """Where a format's case files go: in memory (tmpfs) where the system has one."""
    memory = Path("/dev/shm")
    base = memory if memory.is_dir() and os.access(memory, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix=f"memgui-fuzz-{fmt}-", dir=base))


class _RollBack(Exception):
    """Raised inside the case's transaction to undo its commit."""


class CaseRunner:
    """Runs the cases of one format, one at a time, on a worker thread with its own brain."""

    def __init__(self, fmt: str, brain_path: Path, work: Path) -> None:
        self.fmt = fmt
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"fuzz-{fmt}")
        self.brain: Brain = self.pool.submit(Brain.open, brain_path).result()
        self.hung: str | None = None
        self.tally = TALLIES.setdefault(fmt, Tally())
        self.number = 0
        self.start_peak = peak_rss()

    def close(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
        if self.hung is None:
            self.pool.submit(self.brain.close).result()
            self.pool.shutdown()

    def folder(self) -> Path:
        """The folder for the next case's files: the same one each time, whose files each
        case writes over (making and removing folders, and rewriting files on a disk, cost
        more than a case: ext4 flushes a file rewritten from its start when it is closed)."""
        self.number += 1
        return self.work

    def run(self, source: Path, **options: object) -> None:
        assert self.hung is None, f"an earlier case never ended: {self.hung}"
        start = time.perf_counter()
        future = self.pool.submit(self._plan_and_commit, source, options)
        try:
            outcome = future.result(timeout=DEADLINE_S)
        except CaseTimeout:
            self.hung = f"{self.fmt} case {self.number} ({source})"
            raise AssertionError(f"planning {source} did not end within {DEADLINE_S} s") from None
        growth = peak_rss() - self.start_peak
        assert growth < MAX_GROWTH_BYTES, f"the process's peak memory grew by {growth:,} bytes"
        self.tally.cases += 1
        self.tally.seconds += time.perf_counter() - start
        self.tally.peak_growth = max(self.tally.peak_growth, growth)
        self.tally.outcomes[outcome] += 1

    def _plan_and_commit(self, source: Path, options: dict[str, object]) -> str:
        brain = self.brain
        try:
            the_plan = run_to_end(
                plan(brain, source, options=ImportOptions(format=self.fmt, **options))
            )  # type: ignore[arg-type]
        except MemguiError:
            return "source refused"
        guarded = [r for r in the_plan.records if UNEXPECTED in r.reason]
        assert not guarded, f"{guarded[0].source}: {guarded[0].reason}"
        accepted = {i for i, r in enumerate(the_plan.records) if r.verdict in (NEW, UPDATE)}
        written: set[int] = set()
        try:
            with brain.batch():
                run_to_end(commit(brain, the_plan))
                written = set(the_plan.written)
                raise _RollBack
        except _RollBack:
            pass
        lost = sorted(accepted - written)
        if lost:
            record = the_plan.records[lost[0]]
            raise AssertionError(
                f"planned as {record.verdict} but not written: {record.source}: "
                f"{record.verdict} {record.reason}"
            )
        if the_plan.unreadable is not None:
            return "unreadable"
        return "written" if accepted else "nothing to write"
