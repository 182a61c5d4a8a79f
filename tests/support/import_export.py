"""Helpers of the import and export app tests: drops, plans, commits, the export dialog.

Drops are real `QDragEnterEvent`/`QDropEvent`s carrying file URLs. The window they act on is
the `window` fixture of tests/ui/conftest.py: a real main window over a real brain file in
tmp_path, with import and export installed as the app installs them.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import apsw
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget

from memgui.ui.exporting.export_dialog import EXPORT_JOB, ExportDialog
from memgui.ui.importing.import_dialog import ImportDialog
from memgui.ui.importing.import_record_editor import RecordEditor
from tests.support.paths import SHARED
from tests.support.waiting import WAIT_MS, WAIT_S

CORPORA = SHARED / "corpora"
CONTENT_TABLES = (
    "memory_traces",
    "memgui_journal",
    "memory_links",
    "conversations",
    "messages",
    "knowledge_nodes",
    "knowledge_edges",
)


def brain_digest(path: Path) -> str:
    """A hash of every row of the brain's content tables, read on a connection of its own."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    digest = hashlib.sha256()
    try:
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        for table in CONTENT_TABLES:
            if table not in present:
                continue
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY rowid"):
                digest.update(repr(row).encode())
    finally:
        conn.close()
    return digest.hexdigest()


def mime_for(*paths: Path | str) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([p if isinstance(p, QUrl) else QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


_LEFT, _NO_KEYS = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
_COPY = Qt.DropAction.CopyAction
# What a file manager offers: copy or move (it moves the file away when the drop says move);
# with Shift held, or by its own default, it proposes the move.
_COPY_OR_MOVE = _COPY | Qt.DropAction.MoveAction


def _sent(target: QWidget, event: QDropEvent) -> QDropEvent:
    QApplication.sendEvent(target, event)
    return event


def drag_enter(
    target: QWidget, mime: QMimeData, actions=_COPY_OR_MOVE, keys=_NO_KEYS
) -> QDragEnterEvent:
    return _sent(target, QDragEnterEvent(QPoint(50, 50), actions, mime, _LEFT, keys))


def drag_move(
    target: QWidget, mime: QMimeData, actions=_COPY_OR_MOVE, keys=_NO_KEYS
) -> QDragMoveEvent:
    return _sent(target, QDragMoveEvent(QPoint(60, 60), actions, mime, _LEFT, keys))


def drop(target: QWidget, mime: QMimeData, actions=_COPY_OR_MOVE, keys=_NO_KEYS) -> QDropEvent:
    return _sent(target, QDropEvent(QPointF(60, 60), actions, mime, _LEFT, keys))


def drop_and_plan(qtbot, window, path: Path) -> ImportDialog:
    """Drop `path` on the trace table and wait for the review page."""
    mime = mime_for(path)
    target = window.table.viewport()
    assert drag_enter(target, mime).isAccepted()
    drag_move(target, mime)
    drop(target, mime)
    dialog = window.import_export.last_import
    assert dialog is not None
    wait_for_plan(qtbot, dialog)
    return dialog


def open_and_plan(qtbot, window, path: Path) -> ImportDialog:
    dialog = window.import_export.import_path(path)
    assert dialog is not None
    wait_for_plan(qtbot, dialog)
    return dialog


def wait_for_plan(qtbot, dialog: ImportDialog) -> None:
    qtbot.waitUntil(
        lambda: not dialog.run.running and dialog.pages.currentWidget() is dialog.review,
        timeout=WAIT_MS,
    )


def commit_and_wait(qtbot, dialog: ImportDialog):
    with qtbot.waitSignal(dialog.run.committed, timeout=WAIT_MS) as blocker:
        dialog.review.commit_button.click()
    # The review page comes back in the next turn of the event loop (`_show_review_next_turn`).
    qtbot.waitUntil(lambda: dialog.pages.currentWidget() is dialog.review, timeout=WAIT_MS)
    return blocker.args[0]


def write_notes(folder: Path, notes: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def write_csv(path: Path, rows: int) -> Path:
    lines = ["content,tags"] + [f"Imported fact number {n},csv" for n in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_export(qtbot, dialog: ExportDialog, fmt: str, dest) -> None:
    """Export as `fmt` to `dest` through the dialog and wait for the export job's end."""
    dialog.format_box.setCurrentIndex(dialog.format_box.findData(fmt))
    dialog.dest_edit.setText(str(dest))
    # The export's own end: the window's background checks (Ollama, counts) end too.
    with qtbot.waitSignal(
        dialog.window_.runner.job_ended,
        timeout=WAIT_MS,
        check_params_cb=lambda job: job.name == EXPORT_JOB,
    ):
        dialog.export_button.click()


def make_dialog(qtbot, window) -> ExportDialog:
    dialog = ExportDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def apply_and_wait(qtbot, editor: RecordEditor) -> bool:
    """Click "Apply and check again" and wait for the check (a job): does the record pass?"""
    with qtbot.waitSignal(editor.applied, timeout=WAIT_MS) as blocker:
        editor.apply()
    return bool(blocker.args[0])


def at_next_reports(monkeypatch, runner, name: str, react) -> None:
    """Call `react(job, event)` in the worker at each progress report of the next job
    called `name` that `runner` starts, from its first report on."""
    start = runner.start

    def start_watched(job_name: str, factory, **how):
        if job_name != name:
            return start(job_name, factory, **how)
        monkeypatch.setattr(runner, "start", start)  # the next such job only
        connected = threading.Event()

        def factory_once_connected():  # runs in the worker, before the job's first step
            connected.wait(WAIT_S)
            return factory()

        job = start(job_name, factory_once_connected, **how)
        # The job re-emits progress in the GUI thread; its worker-side signal fires at the
        # yield, in the worker.
        job._worker_progress.connect(
            lambda event: react(job, event), Qt.ConnectionType.DirectConnection
        )
        connected.set()
        return job

    monkeypatch.setattr(runner, "start", start_watched)


def cancel_at(monkeypatch, runner, name: str, when) -> None:
    """Cancel the next `name` job from inside its worker, at the yield that reports
    `when(event)`."""
    at_next_reports(
        monkeypatch, runner, name, lambda job, event: job.cancel() if when(event) else None
    )
