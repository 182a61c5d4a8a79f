"""The import window: plan (a job), review, commit (a job), then a summary with revert.

`ImportDialog` is modeless, so the main window stays usable while a plan runs. Its first
page (`import_working.WorkingPage`) shows the running job — a progress bar, the file being
read, Cancel — and its second is the review page. Closing it cancels a running plan; a
running commit is cancelled only after asking (cancelling rolls it back: the brain stays as
it was).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QMessageBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from memgui.core.errors import MemguiError
from memgui.core.io import ImportOptions, ImportPlan, ImportResult, fix_changes
from memgui.ui.dialogs.settings_dialog import chat_model_of
from memgui.ui.importing.import_jobs import APPLIED, REVERTED, UNDONE, ImportRun
from memgui.ui.importing.import_record_editor import RecordEditor
from memgui.ui.importing.import_report import REPORT_FILTER, save_import_report
from memgui.ui.importing.import_review import ImportReviewPage
from memgui.ui.importing.import_working import WorkingPage
from memgui.ui.importing.review_tools import same_cause
from memgui.ui.session import MigrationDeclined

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow

READ_ONLY_IMPORT = (
    "This brain's file is read-only (no write permission, or read-only media): "
    "nothing can be imported into it. Open a writable brain to import."
)


class ImportDialog(QDialog):
    def __init__(
        self, window: MainWindow, source: str | Path, options: ImportOptions | None = None
    ) -> None:
        super().__init__(window)
        self.window_ = window
        session = window.session
        if session is None:
            raise RuntimeError("no brain is open")
        self.session = session
        self.source = Path(source)
        self._summary = ""  # the commit's summary line
        self._replanned_because = ""  # shown over the next plan: why it was made again
        self.setWindowTitle(f"Import {self.source.name}")
        self.resize(1180, 760)
        self.run = ImportRun(window.runner, session, self.source, options, self)
        # Its brain closes (another one is opened): the import cannot go on into it.
        session.closing.connect(self.abandon)
        self.working = WorkingPage()
        self.review = ImportReviewPage()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.working)
        self.pages.addWidget(self.review)
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)
        self._connect()

    def _connect(self) -> None:
        run, review = self.run, self.review
        run.progress.connect(self.working.show_progress)
        run.planned.connect(self._on_planned)
        run.committed.connect(self._on_committed)
        run.failed.connect(self._on_failed)
        run.outdated.connect(self._on_outdated)
        run.cancelled.connect(self._on_cancelled)
        run.state_changed.connect(self._show_import_state)
        self.working.cancel_button.clicked.connect(self._cancel_or_close)
        self.working.back_button.clicked.connect(self._back_to_review)
        self.working.format_chosen.connect(self._plan_as)
        review.options_changed.connect(self.replan)
        review.commit_requested.connect(self.commit)
        review.fix_requested.connect(self.fix_record)
        review.fix_alike_requested.connect(lambda row: self.fix_record(row, alike=True))
        review.save_report_requested.connect(self.save_report)
        review.revert_requested.connect(self.revert)
        review.close_requested.connect(self.close)

    # --- steps --------------------------------------------------------------------------

    def start(self) -> None:
        self.working.start(f"Reading {self.source.name}…")
        self.pages.setCurrentWidget(self.working)
        self.run.start_plan()

    def replan(self, options: ImportOptions) -> None:
        if options.extract_facts and options.facts_llm is None:
            # The app's Ollama, and the chat model Edit ▸ Consolidate… uses.
            options.facts_llm = chat_model_of(self.window_.settings)
        self.working.start(f"Planning {self.source.name} again…")
        self.pages.setCurrentWidget(self.working)
        # The person's fixes go with it: the plan job lays them over the new plan.
        self.run.start_plan(options, self.review.collect_fixes())

    def commit(self) -> None:
        session = self.window_.session
        if session is not None and not session.agree_to_migration():
            self.window_.show_error(str(MigrationDeclined()))
            return
        count = self.review.accepted_count()
        self.working.start(f"Writing {count} records from {self.source.name}…")
        self.pages.setCurrentWidget(self.working)
        self.run.start_commit()

    def revert(self) -> None:
        try:
            self.run.revert()
        except MemguiError as exc:
            self.review.summary_label.setText(f"Could not revert the import: {exc}")
            return
        self.window_.show_message(f"Reverted the import of {self.source.name}")

    def fix_record(self, row: int, alike: bool = False) -> None:
        """Fix one record in the editor; with `alike`, then the others refused for the same
        reason, the same way, in a job (`review_tools.fix_alike`)."""
        record = self.review.model.record(row)
        plan = self.run.plan
        if record is None or plan is None:
            return
        others = same_cause(plan, row) if alike else []
        before, reason = dict(record.fields), record.reason
        editor = RecordEditor(
            record, lambda _record, done, failed: self.run.check_record(row, done, failed), self
        )
        if others:
            editor.note_alike(len(others))
        fixed = editor.exec() == RecordEditor.DialogCode.Accepted
        self.review.record_fixed(row)
        if fixed and others:
            self._fix_others(others, fix_changes(before, record.fields), reason)

    def _fix_others(self, rows: list[int], changes: dict[str, Any], reason: str) -> None:
        self.review.fixes_label.setText(f"Fixing {len(rows)} more records the same way…")
        self.review.fixes_label.setStyleSheet("")
        self.review.fixes_label.show()

        def done(counts: tuple[int, int]) -> None:
            passed, failed = counts
            for row in rows:
                self.review.model.record_changed(row)
            self.review.refresh_counts()
            still = f"; {failed} still refused (fix them one by one)" if failed else ""
            self.review.fixes_label.setText(
                f"Fixed {passed + 1} records refused for “{reason}” the same way{still}."
            )

        def failed(why: str) -> None:
            self.review.fixes_label.setText(f"Could not fix the others: {why}")

        self.run.fix_records(rows, changes, done, failed)

    def save_report(self, path: str | None = None) -> Path | None:
        plan = self.run.plan
        if plan is None:
            return None
        if path is None:
            suggested = str(self.source.with_name(f"{self.source.stem}-refused.csv"))
            path, _ = QFileDialog.getSaveFileName(
                self, "Save refusal report", suggested, REPORT_FILTER
            )
            if not path:
                return None
        try:
            saved = save_import_report(plan, path)
        except (MemguiError, OSError) as exc:
            self.window_.show_error(f"Could not save the refusal report {path}: {exc}")
            return None
        self.window_.show_message(f"Saved the refusal report to {saved}")
        return saved

    # --- job reports --------------------------------------------------------------------

    def _on_planned(self, plan: ImportPlan) -> None:
        self.review.set_plan(plan, self.session.brain)
        if self._replanned_because:
            self.review.summary_label.setText(self._replanned_because)
            self.review.summary_label.show()
            self._replanned_because = ""
        self._show_review_next_turn()

    def _show_review_next_turn(self) -> None:
        """The review page is shown (laid out and painted, 15–25 ms of the GUI thread) in a
        turn of the event loop of its own, after the one that filled it (5 ms): at load 7 a
        turn doing both stalled the window 80–110 ms."""
        QTimer.singleShot(0, self, self._show_review)

    def _show_review(self) -> None:
        if self.run.running:  # the person went on (re-plan, commit) meanwhile
            return
        self.pages.setCurrentWidget(self.review)

    def _on_outdated(self, message: str) -> None:
        """Nothing was written: the brain got some of these memories since they were
        planned. Planned again, the review shows them as duplicates."""
        self._replanned_because = (
            f"Nothing was written: {message.split(';')[0]}. Planned again: review and commit."
        )
        self.replan(self.run.options)

    def _on_committed(self, result: ImportResult) -> None:
        errors = len(result.errors)
        summary = (
            f"Imported {result.imported}, skipped {result.skipped}"
            + (f" ({result.updated} updated existing memories)" if result.updated else "")
            + f", refused {result.refused}, errors {errors}."
        )
        self._summary = summary
        self.review.set_committed(summary)
        self.review.revert_button.setEnabled(bool(result.batch_id))
        self._show_review_next_turn()
        self.window_.show_message(f"{self.source.name}: {summary}", 12_000)

    def _show_import_state(self, state: str) -> None:
        """The import was undone, reverted or redone (here or with Edit ▸ Undo / Redo)."""
        self.review.revert_button.setEnabled(state == APPLIED)
        back = {
            UNDONE: "  Reverted (Edit ▸ Redo brings it back).",
            REVERTED: "  Reverted (Edit ▸ Undo brings it back).",
        }
        self.review.summary_label.setText(self._summary + back.get(state, ""))

    def _on_failed(self, message: str) -> None:
        planned = self.run.plan is not None
        # Nothing planned yet: the review page and its format box are out of reach, so the
        # page offers the format the error asks the person to name.
        tried = None if planned or self.run.step != "plan" else self.run.options.format
        self.working.stopped(f"Could not go on: {message}", planned, choose_format=tried)

    def _plan_as(self, fmt: str) -> None:
        self.replan(replace(self.run.options, format=fmt))

    def _on_cancelled(self, step: str) -> None:
        if step == "commit":
            self.review.summary_label.setText("The commit was cancelled; nothing was written.")
            self.review.summary_label.show()
            self._back_to_review()
        elif self.run.plan is not None:
            self._back_to_review()  # a re-plan stopped: the earlier plan still holds
        else:
            self.window_.show_message(f"Import of {self.source.name} cancelled; nothing written")
            self.close()

    def _back_to_review(self) -> None:
        if self.run.plan is not None:
            self.review.options_bar.set_options(self.run.plan.options, self.run.plan.format)
            self.pages.setCurrentWidget(self.review)

    def _cancel_or_close(self) -> None:
        if self.run.running:
            self.working.cancel_button.setEnabled(False)
            self.working.message.setText("Cancelling…")
            self.run.cancel()
        else:
            self.close()

    # --- closing ------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.run.running and self.run.step == "commit":
            answer = QMessageBox.question(
                self,
                "Import running",
                "The import is being written. Cancel it? Nothing of it will be kept.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return
        self.run.cancel()
        super().closeEvent(event)
        self._dispose()

    def abandon(self) -> None:
        """Stop and go without a question: the brain it imports into is closing (the
        person agreed to cancel a running import when they opened another brain)."""
        self.run.cancel()
        self.hide()
        self._dispose()

    def _dispose(self) -> None:
        # A job that is still stopping reports to `run`, a child: go once it has.
        # A shared brain's staged files go with it (`ImportRun.dispose`).
        if self.run.running:
            for signal in (self.run.cancelled, self.run.failed, self.run.committed):
                signal.connect(lambda *_: self._go())
            self.run.planned.connect(lambda *_: self._go())
        else:
            self._go()

    def _go(self) -> None:
        self.run.dispose()
        self.deleteLater()

    def reject(self) -> None:
        self.close()  # Escape goes through the same question as the close button


def choose_source(parent: QWidget, folder: bool) -> str | None:
    if folder:
        path = QFileDialog.getExistingDirectory(parent, "Import a folder")
    else:
        path, _ = QFileDialog.getOpenFileName(
            parent,
            "Import a file",
            "",
            "Importable files (*.json *.jsonl *.csv *.md *.sqlite *.sqlite3 *.db);;All files (*)",
        )
    return path or None


def open_import(window: MainWindow, source: str | Path) -> ImportDialog | None:
    """Show the import window for `source` and start planning it."""
    if window.session is None:
        window.show_error("Open or create a brain first; imports go into the open brain.")
        return None
    if window.session.read_only:
        window.show_error(READ_ONLY_IMPORT)
        return None
    dialog = ImportDialog(window, source)
    dialog.show()
    dialog.start()
    return dialog


def run_import_dialog(window: MainWindow, folder: bool = False) -> ImportDialog | None:
    """File ▸ Import…: ask for a file (or a folder) and open the import window for it."""
    if window.session is not None and window.session.read_only:
        window.show_error(READ_ONLY_IMPORT)
        return None
    source = choose_source(window, folder)
    return open_import(window, source) if source else None
