"""The app's trace table on a large brain (issue 4): first paint, jumps, filters, stalls.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.bench.bench_ui [--traces 1000000] [--runs 5]

The brain is built once in bulk under memgui-bench/ in the temp folder, then reused (`bench_brain`:
`bulk_rows.insert_traces` writes each chunk of 50k rows with their journal entries and full-text
marks in a few statements, and the full text is indexed as each write closes; a valid brain,
the same as one built with `brain.add`, in ~3 min for 1M instead of ~10).

Each run opens it in a fresh main window and measures, in milliseconds:
- `open_first_rows`: from opening the brain until the table has painted its first rows;
- `jump_middle`: scrolling to a row in the middle and painting it (after the list arrived);
- `filter_first_rows`: from changing the type filter until the first rows of the new result
  are painted;
- `longest_stall`: the longest gap between ticks of a 5 ms QTimer on the GUI thread while
  background jobs run (the query, the counts), across opening, filtering and sorting.
Also `idle_longest_gap` (the same timer with nothing running: what the machine's load alone
costs) and the six longest gaps with the step they fell in. Prints one JSON document with
the medians over the runs and the machine's load.
Targets: ≤ 200, ≤ 50, ≤ 200 and ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from memgui.core.io.planning.validate import trace_snapshot  # noqa: E402
from memgui.core.model import TraceFilter  # noqa: E402
from memgui.ui import heap  # noqa: E402
from memgui.ui.main_window import MainWindow  # noqa: E402
from memgui.ui.session import BrainSession  # noqa: E402
from tests.bench.common import cached_brain, emit, fill_traces  # noqa: E402
from tests.bench.qt_wait import wait_until  # noqa: E402

PROBE_MS = 5
CHUNK = 50_000
START_MS = 1_700_000_000_000
TYPES = ("episodic", "semantic", "procedural", "prospective")
SCOPES = ("user", "thread", "persona", "organization")
WORDS = (
    "release build deploy cache index query table memory agent user prefers dark mode "
    "meeting notes project budget review tests flaky network timeout retry config "
    "database schema migration backup restore search vector embedding model prompt"
).split()


def bench_brain(traces: int) -> Path:
    """The path of a brain holding `traces` live traces, built once and reused."""

    def fill(path: Path) -> None:
        rng = random.Random(7)
        fill_traces(path, traces, lambda i: _snapshot(rng, i), CHUNK).close()

    return cached_brain(f"ui-{traces}", fill)


def _snapshot(rng: random.Random, i: int) -> dict:
    words = " ".join(rng.choices(WORDS, k=rng.randint(6, 18)))
    fields = {
        "content": f"{words} #{i}",
        "type": TYPES[i % len(TYPES)],
        "scope": SCOPES[(i // 4) % len(SCOPES)],
        "tags": [WORDS[i % 7], WORDS[7 + i % 5]],
        "strength": round(rng.uniform(0.2, 1.0), 3),
        "created_at": START_MS + i * 1000,
    }
    return trace_snapshot(fields, f"bench-{i:07d}", START_MS + i * 1000)


class StallProbe(QObject):
    """A 5 ms timer on the GUI thread; records the longest gap while jobs run."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__()
        self.window = window
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(PROBE_MS)
        self.timer.timeout.connect(self._tick)
        self.longest_ms = 0.0
        self.last = 0
        self.was_busy = False
        self.phase = "idle"
        self.gaps: list[tuple[float, str]] = []  # (gap, phase) of gaps over 30 ms

    def start(self) -> None:
        self.clock.start()
        self.last = self.clock.nsecsElapsed()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        now = self.clock.nsecsElapsed()
        gap = (now - self.last) / 1e6 - PROBE_MS
        self.last = now
        busy_now = self.window.runner.active_jobs or (self.window.model and self.window.model.busy)
        # A gap counts when a job was already running as it began (opening the brain, on
        # the GUI thread before any job, is `open_brain_ms`).
        busy, self.was_busy = bool(busy_now and self.was_busy), bool(busy_now)
        if (busy or self.phase == "idle") and gap > 30:
            self.gaps.append((round(gap, 1), self.phase))
        if busy:
            self.longest_ms = max(self.longest_ms, gap)

    def idle_stall(self, app: QApplication, seconds: float) -> float:
        """The longest gap with nothing running: what the machine's load alone costs."""
        self.phase = "idle"
        longest, end = 0.0, time.perf_counter() + seconds
        last = time.perf_counter()
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(PROBE_MS / 1000)
            now = time.perf_counter()
            longest = max(longest, (now - last) * 1000 - PROBE_MS)
            last = now
        return longest


class PaintWatch(QObject):
    """Counts paints of the table's viewport that showed at least one row."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__()
        self.window = window
        self.painted_rows = 0
        window.table.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            model = self.window.model
            if model is not None and model.rowCount() > 0:
                self.painted_rows += 1
        return False


def wait(app: QApplication, until, timeout_s: float = 120.0) -> None:
    wait_until(app, until, timeout_s)


def settled(window: MainWindow) -> bool:
    return not window.runner.active_jobs and window.model is not None and not window.model.busy


def one_run(app: QApplication, path: Path, scratch: Path) -> dict[str, float]:
    settings = QSettings(str(scratch / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings, live=True)
    window.resize(1280, 800)
    window.show()
    app.processEvents()
    heap.settle()  # as `memgui` does once its window is up
    probe = StallProbe(window)
    watch = PaintWatch(window)
    probe.start()
    idle_ms = probe.idle_stall(app, 2.0)
    probe.phase = "open"
    began = time.perf_counter()
    session = BrainSession.open(path)
    brain_ms = (time.perf_counter() - began) * 1000
    window.set_session(session)
    wait(app, lambda: watch.painted_rows > 0)
    open_ms = (time.perf_counter() - began) * 1000
    wait(app, lambda: settled(window))
    model = window.model
    rows = model.rowCount()
    jumps = []
    for fraction in (0.5, 0.37, 0.61, 0.44, 0.55):
        row = int(rows * fraction)
        began = time.perf_counter()
        window.table.scrollTo(model.index(row, 0))
        window.table.viewport().repaint()
        jumps.append((time.perf_counter() - began) * 1000)
    window.table.scrollToTop()
    app.processEvents()
    filters = []
    for kind in ("semantic", "procedural", None):
        probe.phase = f"filter {kind}"
        painted = watch.painted_rows
        began = time.perf_counter()
        model.set_filter(TraceFilter(type=kind))

        def new_rows_painted(kind=kind, painted=painted) -> bool:
            first = model.trace_at(0) if model.rowCount() else None
            shown = first is not None and (kind is None or first.type == kind)
            return shown and model.query.filter.type == kind and watch.painted_rows > painted

        wait(app, new_rows_painted)
        filters.append((time.perf_counter() - began) * 1000)
        wait(app, lambda: settled(window))
    probe.phase = "sort"
    model.sort(2, Qt.SortOrder.AscendingOrder)  # a sort re-runs the query in the background
    wait(app, lambda: settled(window))
    probe.stop()
    result = {
        "rows": rows,
        "open_first_rows_ms": open_ms,
        "open_brain_ms": brain_ms,  # Brain.open alone (the core), part of open_first_rows
        "jump_middle_ms": statistics.median(jumps),
        "jump_middle_max_ms": max(jumps),
        "filter_first_rows_ms": statistics.median(filters),
        "filter_first_rows_max_ms": max(filters),
        "longest_stall_ms": probe.longest_ms,
        "idle_longest_gap_ms": idle_ms,
        "stalls_over_30ms": sorted(probe.gaps, reverse=True)[:6],
    }
    window.close()
    window.deleteLater()
    app.processEvents()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    began = time.perf_counter()
    path = bench_brain(args.traces)
    build_s = time.perf_counter() - began
    load_before = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(args.runs):
            runs.append(one_run(app, path, Path(scratch)))
    keys = [k for k in runs[0] if k not in ("rows", "stalls_over_30ms")]
    medians = {k: round(statistics.median(r[k] for r in runs), 1) for k in keys}
    emit(
        "bench_ui",
        {
            "traces": args.traces,
            "brain": str(path),
            "fixture_seconds": round(build_s, 1),
            "load_average_before": load_before,
            "median": medians,
            "runs": runs,
            "targets_ms": {
                "open_first_rows_ms": 200,
                "jump_middle_ms": 50,
                "filter_first_rows_ms": 200,
                "longest_stall_ms": 50,
            },
        },
    )


if __name__ == "__main__":
    main()
