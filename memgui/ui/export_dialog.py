"""File ▸ Export…: choose a format, a destination, options and what to export; run it as a job.

What to export is everything, the traces the table shows now (its filter and search), or
the selected ones. The export reads its own snapshot of the brain file, so the window goes on
working while it runs; Cancel stops it and leaves no partial file. Afterwards the dialog
lists every trace the exporter refused (an unsafe name, a type the format cannot hold) with
the field and the problem, and can save that list as CSV or JSON.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memgui.core.brain import Brain
from memgui.core.errors import MemguiError
from memgui.core.io.export import FORMATS, ExportIncomplete, ExportOptions, ExportResult, export
from memgui.core.progress import Progress
from memgui.ui.import_jobs import on_own_connection
from memgui.ui.import_report import REPORT_FILTER, save_export_report
from memgui.ui.jobs import Job

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow

EXPORT_JOB = "export"
LABELS = {
    "sqlite": "SQLite brain file",
    "json": "AgentOS JSON",
    "jsonl": "agent-memory JSONL",
    "markdown": "Markdown folder",
    "obsidian": "Obsidian vault",
}
SUFFIXES = {"sqlite": ".sqlite", "json": ".json", "jsonl": ".jsonl"}
FOLDER_FORMATS = ("markdown", "obsidian")
EVERYTHING, SHOWN, SELECTED = 0, 1, 2


class ExportDialog(QDialog):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Export")
        self.resize(760, 560)
        self.job: Job | None = None
        self.result: ExportResult | None = None
        self.format_box = QComboBox()
        self.format_box.setObjectName("export_format_box")
        for name in FORMATS:
            self.format_box.addItem(LABELS.get(name, name), name)
        self.dest_edit = QLineEdit()
        self.dest_edit.setObjectName("dest_edit")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.browse)
        self.embeddings_check = QCheckBox("Include embeddings")
        self.embeddings_check.setObjectName("embeddings_check")
        self.conversations_check = QCheckBox("Include conversations")
        self.conversations_check.setObjectName("conversations_check")
        self.conversations_check.setChecked(True)
        self.scope_group = QButtonGroup(self)
        self.scope_buttons = self._scope_buttons()
        self.progress = QProgressBar()
        self.progress.setObjectName("export_progress")
        self.status = QLabel()
        self.status.setObjectName("export_status")
        self.status.setWordWrap(True)
        self.refused_table = QTableWidget(0, 3)
        self.refused_table.setObjectName("refused_table")
        self.refused_table.setHorizontalHeaderLabels(["Trace", "Field", "Problem"])
        self.refused_table.horizontalHeader().setStretchLastSection(True)
        self.refused_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.save_button = QPushButton("Save refused list…")
        self.save_button.setObjectName("save_refused_button")
        self.save_button.clicked.connect(lambda: self.save_refused())
        self.export_button = QPushButton("Export")
        self.export_button.setObjectName("export_button")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start_export)
        self.cancel_button = QPushButton("Close")
        self.cancel_button.setObjectName("export_cancel_button")
        self.cancel_button.clicked.connect(self._cancel_or_close)
        self._layout(browse)
        self.format_box.currentIndexChanged.connect(self._format_changed)
        self._format_changed()
        self._show_refused(())

    def _scope_buttons(self) -> list[QRadioButton]:
        model = self.window_.model
        shown = model.rowCount() if model is not None else 0
        selected = len(self.window_.selected_ids())
        buttons = [
            QRadioButton("Everything in this brain"),
            QRadioButton(f"The {shown} memories the table shows (its filter and search)"),
            QRadioButton(f"The {selected} selected memories"),
        ]
        for number, button in enumerate(buttons):
            button.setObjectName(f"scope_{number}")
            self.scope_group.addButton(button, number)
        buttons[EVERYTHING].setChecked(True)
        buttons[SHOWN].setEnabled(shown > 0)
        buttons[SELECTED].setEnabled(selected > 0)
        return buttons

    def _layout(self, browse: QPushButton) -> None:
        dest_row = QHBoxLayout()
        dest_row.addWidget(self.dest_edit, 1)
        dest_row.addWidget(browse)
        form = QFormLayout()
        form.addRow("Format", self.format_box)
        form.addRow("Destination", dest_row)
        options = QHBoxLayout()
        options.addWidget(self.embeddings_check)
        options.addWidget(self.conversations_check)
        options.addStretch(1)
        form.addRow("Options", options)
        scope = QVBoxLayout()
        for button in self.scope_buttons:
            scope.addWidget(button)
        form.addRow("What", scope)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.refused_table, 1)
        layout.addLayout(buttons)

    # --- choices ------------------------------------------------------------------------

    @property
    def format(self) -> str:
        return str(self.format_box.currentData())

    def _format_changed(self, *_args: object) -> None:
        is_json = self.format == "json"
        self.embeddings_check.setEnabled(is_json)
        self.conversations_check.setEnabled(is_json)
        text = self.dest_edit.text().strip()
        if text:
            path = Path(text)
            suffix = SUFFIXES.get(self.format, "")
            self.dest_edit.setText(str(path.with_suffix(suffix) if path.suffix or suffix else path))

    def browse(self) -> None:
        start = self.dest_edit.text() or str(self.window_.session.path.parent / "export")
        if self.format in FOLDER_FORMATS:
            path = QFileDialog.getExistingDirectory(self, "Export into folder", start)
        else:
            suffix = SUFFIXES[self.format]
            path, _ = QFileDialog.getSaveFileName(
                self, "Export to", str(Path(start).with_suffix(suffix)), f"*{suffix}"
            )
        if path:
            self.dest_edit.setText(path)

    def options(self) -> ExportOptions:
        which = self.scope_group.checkedId()
        selection: Any = None
        if which == SHOWN and self.window_.model is not None:
            selection = self.window_.model.ids()
        elif which == SELECTED:
            selection = self.window_.selected_ids()
        return ExportOptions(
            include_embeddings=self.embeddings_check.isChecked(),
            include_conversations=self.conversations_check.isChecked(),
            selection=selection,
        )

    # --- the job ------------------------------------------------------------------------

    def start_export(self) -> Job | None:
        session = self.window_.session
        dest = self.dest_edit.text().strip()
        if session is None or not dest:
            self.status.setText("Choose a destination first.")
            return None
        fmt, options = self.format, self.options()

        def work(brain: Brain) -> Generator[Progress, None, ExportResult]:
            return export(brain, dest, fmt, options)

        self._show_refused(())
        self.status.setText(f"Exporting to {dest}…")
        self.progress.setRange(0, 0)
        self.export_button.setEnabled(False)
        self.cancel_button.setText("Cancel")
        job = self.window_.runner.start(EXPORT_JOB, lambda: on_own_connection(session, work, False))
        self.job = job
        job.progress.connect(self._on_progress)
        job.finished.connect(self._on_finished)
        job.failed.connect(self._on_failed)
        job.cancelled.connect(self._on_cancelled)
        return job

    def _on_progress(self, event: Progress) -> None:
        if event.total:
            self.progress.setRange(0, event.total)
            self.progress.setValue(min(event.done, event.total))
        if event.message:
            self.status.setText(event.message)

    def _ended(self) -> None:
        self.job = None
        self.progress.setRange(0, 1)
        self.export_button.setEnabled(True)
        self.cancel_button.setText("Close")

    def _on_finished(self, result: ExportResult) -> None:
        self._ended()
        self.progress.setValue(1)
        self.result = result
        refused = len(result.refused)
        self.status.setText(
            f"Exported {result.exported} to {self.dest_edit.text()}; "
            + (f"{refused} refused (listed below)." if refused else "nothing refused.")
        )
        self._show_refused(result.refused)
        self.window_.show_message(f"Exported {result.exported} memories ({refused} refused)")

    def _on_failed(self, exc: BaseException) -> None:
        self._ended()
        self.status.setText(f"The export failed: {exc}")
        if isinstance(exc, ExportIncomplete):
            self.result = exc.result
            self._show_refused(exc.result.refused)

    def _on_cancelled(self) -> None:
        self._ended()
        self.status.setText("The export was cancelled; no file was left behind.")

    def _show_refused(self, refused: tuple[Any, ...]) -> None:
        self.refused_table.setRowCount(len(refused))
        for row, item in enumerate(refused):
            for column, text in enumerate((item.id, item.field, item.problem)):
                self.refused_table.setItem(row, column, QTableWidgetItem(text))
        self.save_button.setEnabled(bool(refused))

    def save_refused(self, path: str | None = None) -> Path | None:
        if self.result is None:
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Save refused list", "", REPORT_FILTER)
            if not path:
                return None
        try:
            return save_export_report(self.result.refused, path)
        except (MemguiError, OSError) as exc:
            self.status.setText(f"Could not save the refused list {path}: {exc}")
            return None

    def _cancel_or_close(self) -> None:
        if self.job is not None:
            self.job.cancel()
        else:
            self.close()

    def closeEvent(self, event) -> None:
        if self.job is not None:
            self.job.cancel()
        super().closeEvent(event)


def open_export(window: MainWindow, parent: QWidget | None = None) -> ExportDialog | None:
    if window.session is None:
        window.show_error("Open a brain first; the export reads the open brain.")
        return None
    dialog = ExportDialog(window)
    dialog.show()
    return dialog
