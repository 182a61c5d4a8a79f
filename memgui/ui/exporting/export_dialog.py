"""File ▸ Export…: choose a format, a destination, options and what to export; run it as a job.

What to export is everything, the traces the table shows now (its filter and search), or
the selected ones. The export reads its own snapshot of the brain file, so the window goes on
working while it runs; Cancel stops it and leaves no partial file. Afterwards the dialog
lists the first few hundred traces the exporter refused (an unsafe name, a type the format
cannot hold) with the memory's first line, the field and the problem, says how many more
there are, and can save the whole list as CSV or JSON. A typed destination that is an
existing file is replaced only after a question (`confirm_replace`); the counts of shown and
selected memories follow the table while the dialog is open, also when another brain is
opened (the window's `session_changed`).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractItemModel, QItemSelectionModel, QUrl
from PySide6.QtGui import QCloseEvent, QDesktopServices, QShowEvent
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
    QMessageBox,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from memgui.core.brain import Brain
from memgui.core.engines import export_store
from memgui.core.errors import MemguiError
from memgui.core.io import EXPORT_FORMATS, ExportIncomplete, ExportOptions, ExportResult
from memgui.core.progress import Progress
from memgui.ui.exporting.export_refused import RefusedList
from memgui.ui.importing.import_jobs import on_own_connection
from memgui.ui.importing.import_report import REPORT_FILTER, save_export_report
from memgui.ui.jobs import Job

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow
    from memgui.ui.session import BrainSession

EXPORT_JOB = "export"
FORMAT_KEY = "export/format"  # the last export's format and folder, offered next time
FOLDER_KEY = "export/folder"
LIVE_ONLY = ("jsonl", "markdown", "obsidian")  # formats that hold no memory of the trash
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


def _model_signals(model: QAbstractItemModel) -> tuple[Any, ...]:
    """The signals of a table model after which its row count may differ."""
    return (model.modelReset, model.rowsInserted, model.rowsRemoved, model.layoutChanged)


class ExportDialog(QDialog):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Export")
        self.resize(760, 560)
        self.job: Job | None = None
        self.export_result: ExportResult | None = None
        self.format_box = QComboBox()
        self.format_box.setObjectName("export_format_box")
        for name in EXPORT_FORMATS:
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
        self.refused_list = RefusedList()
        self.refused_table = self.refused_list.table
        self.save_button = QPushButton("Save refused list…")
        self.save_button.setObjectName("save_refused_button")
        self.save_button.clicked.connect(lambda: self.save_refused())
        self.export_button = QPushButton("Export")
        self.export_button.setObjectName("export_button")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start_export)
        self.open_button = QPushButton("Open folder")
        self.open_button.setObjectName("open_folder_button")
        self.open_button.setToolTip("Show the exported files in the file manager")
        self.open_button.clicked.connect(self.open_folder)
        self.open_button.hide()
        self.cancel_button = QPushButton("Close")
        self.cancel_button.setObjectName("export_cancel_button")
        self.cancel_button.clicked.connect(self._cancel_or_close)
        # The table and selection whose changes re-count the scope buttons (see _follow_table).
        self._followed: tuple[QAbstractItemModel | None, QItemSelectionModel | None] = (None, None)
        self._layout(browse)
        self._offer_last_choice()
        self.format_box.currentIndexChanged.connect(self._format_changed)
        self._format_changed()
        self._show_refused(())
        self.refresh_counts()
        window.session_changed.connect(self._brain_changed)

    def _scope_buttons(self) -> list[QRadioButton]:
        buttons = [QRadioButton("Everything in this brain"), QRadioButton(), QRadioButton()]
        for number, button in enumerate(buttons):
            button.setObjectName(f"scope_{number}")
            self.scope_group.addButton(button, number)
        buttons[EVERYTHING].setChecked(True)
        return buttons

    def refresh_counts(self, *_args: object) -> None:
        """Count the memories the table shows and the selected ones, as they are now."""
        model = self.window_.model
        shown = model.rowCount() if model is not None else 0
        selected = len(self.window_.selected_ids())
        self.scope_buttons[SHOWN].setText(
            f"The {shown} memories the table shows (its filter and search)"
        )
        self.scope_buttons[SELECTED].setText(f"The {selected} selected memories")
        self.scope_buttons[SHOWN].setEnabled(shown > 0)
        self.scope_buttons[SELECTED].setEnabled(selected > 0)
        checked = self.scope_group.checkedButton()
        if checked is not None and not checked.isEnabled():
            self.scope_buttons[EVERYTHING].setChecked(True)  # what it named is gone

    def _follow_table(self) -> None:
        """Listen to the window's current table model and selection (a new brain or a new
        search replaces them), so the counts never go stale while the dialog is open."""
        model, selection = self.window_.model, self.window_.table.selectionModel()
        old_model, old_selection = self._followed
        if model is old_model and selection is old_selection:
            return
        try:
            if old_model is not None:
                for signal in _model_signals(old_model):
                    signal.disconnect(self.refresh_counts)
            if old_selection is not None:
                old_selection.selectionChanged.disconnect(self.refresh_counts)
        except (RuntimeError, TypeError):
            pass  # already deleted with the brain it showed: nothing left to disconnect
        if model is not None:
            for signal in _model_signals(model):
                signal.connect(self.refresh_counts)
        if selection is not None:
            selection.selectionChanged.connect(self.refresh_counts)
        self._followed = (model, selection)

    def showEvent(self, event: QShowEvent) -> None:
        self._follow_table()
        self.refresh_counts()
        super().showEvent(event)

    def _brain_changed(self) -> None:
        """Another brain is open (or none): count its table, and drop the refused list of
        the last export, which named the other brain's memories."""
        if self.job is None:  # a running export was cancelled with its brain; it ends soon
            self.export_result = None
            self._show_refused(())
            self.status.setText("")
        self._follow_table()
        self.refresh_counts()

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
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.refused_list, 1)
        layout.addLayout(buttons)

    # --- choices ------------------------------------------------------------------------

    def _offer_last_choice(self) -> None:
        """The last export's format, and a destination in its folder named after the brain."""
        settings = self.window_.settings
        fmt = settings.value(FORMAT_KEY, "")
        index = self.format_box.findData(fmt) if isinstance(fmt, str) else -1
        if index >= 0:
            self.format_box.setCurrentIndex(index)
        folder = settings.value(FOLDER_KEY, "")
        session = self.window_.session
        if isinstance(folder, str) and folder and Path(folder).is_dir() and session is not None:
            name = f"{_brain_stem(session)}-{self.format}"
            self.dest_edit.setText(str(_with_format_suffix(Path(folder) / name, self.format)))

    def _remember_choice(self, dest: Path) -> None:
        settings = self.window_.settings
        settings.setValue(FORMAT_KEY, self.format)
        settings.setValue(FOLDER_KEY, str(dest.parent))

    def exported_folder(self) -> Path:
        """Where the export's files are: the folder of a folder format, else the file's."""
        dest = Path(self.dest_edit.text().strip())
        return dest if self.format in FOLDER_FORMATS else dest.parent

    def open_folder(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.exported_folder())))

    @property
    def format(self) -> str:
        return str(self.format_box.currentData())

    def _format_changed(self, *_args: object) -> None:
        is_json = self.format == "json"
        self.embeddings_check.setEnabled(is_json)
        self.conversations_check.setEnabled(is_json)
        text = self.dest_edit.text().strip()
        if text:
            self.dest_edit.setText(str(_with_format_suffix(Path(text), self.format)))

    def browse(self) -> None:
        session = self.window_.session
        start = self.dest_edit.text() or (str(_start_folder(session) / "export") if session else "")
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

    def confirm_replace(self, path: Path) -> bool:
        """Ask before an export replaces an existing file (tests answer it themselves)."""
        answer = QMessageBox.question(
            self,
            "Replace file?",
            f"{path} already exists. Replace it with this export?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def start_export(self) -> Job | None:
        session = self.window_.session
        dest = self.dest_edit.text().strip()
        if session is None or not dest:
            self.status.setText("Choose a destination first.")
            return None
        fmt, options = self.format, self.options()
        # The SQLite export refuses an existing file itself; JSON and JSONL would replace it.
        replaces = fmt not in FOLDER_FORMATS and fmt != "sqlite" and Path(dest).is_file()
        if replaces and not self.confirm_replace(Path(dest)):
            self.status.setText(f"Not exported: {dest} exists and was kept.")
            return None

        def work(brain: Brain) -> Generator[Progress, None, ExportResult]:
            # A shared brain is staged into a file first (`export_store`), as the CLI does.
            return export_store(brain, dest, fmt, options)

        self._show_refused(())
        self._remember_choice(Path(dest))
        self.open_button.hide()
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
        self.export_result = result
        refused = len(result.refused)
        self.status.setText(
            f"Exported {result.exported} to {self.dest_edit.text()}; "
            + (f"{refused} refused (listed below)." if refused else "nothing refused.")
            + self._trash_note()
        )
        self.open_button.setVisible(self.exported_folder().is_dir())
        self._show_refused(result.refused)
        self.window_.show_message(f"Exported {result.exported} memories ({refused} refused)")

    def _trash_note(self) -> str:
        """Why the count differs from the brain's: what happened to the memories in the
        trash, when the whole brain was exported."""
        info = self.window_.summary.info
        trashed = int(info["deleted"]) if info else 0
        if not trashed or self.scope_group.checkedId() != EVERYTHING:
            return ""
        them = (
            f"{trashed} memory in the trash is"
            if trashed == 1
            else f"{trashed} memories in the trash are"
        )
        if self.format in LIVE_ONLY:
            label = LABELS.get(self.format, self.format)
            return f" The {them} not exported: {label} holds live memories only."
        return f" The {them} included, marked deleted."

    def _on_failed(self, exc: BaseException) -> None:
        self._ended()
        self.status.setText(f"The export failed: {exc}")
        if isinstance(exc, ExportIncomplete):
            self.export_result = exc.result
            self._show_refused(exc.result.refused)

    def _on_cancelled(self) -> None:
        self._ended()
        self.status.setText("The export was cancelled; no file was left behind.")

    def _show_refused(self, refused: tuple[Any, ...]) -> None:
        session = self.window_.session
        self.refused_list.show_refused(refused, session.brain if session else None)
        self.save_button.setEnabled(bool(refused))

    def save_refused(self, path: str | None = None) -> Path | None:
        if self.export_result is None:
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Save refused list", "", REPORT_FILTER)
            if not path:
                return None
        try:
            return save_export_report(self.export_result.refused, path)
        except (MemguiError, OSError) as exc:
            self.status.setText(f"Could not save the refused list {path}: {exc}")
            return None

    def _cancel_or_close(self) -> None:
        if self.job is not None:
            self.job.cancel()
        else:
            self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.job is not None:
            self.job.cancel()
        super().closeEvent(event)


def _with_format_suffix(path: Path, fmt: str) -> Path:
    """`path` with the suffix of `fmt`: a file format's suffix replaces another file
    format's and is added to anything else; a folder format only drops a file format's.
    Any other dot is part of the name (a folder "notes.v2" stays "notes.v2")."""
    known = {s.lower() for s in SUFFIXES.values()}
    base = path.with_suffix("") if path.suffix.lower() in known else path
    return base.with_name(base.name + SUFFIXES.get(fmt, "")) if base.name else path


def open_export(window: MainWindow, parent: QWidget | None = None) -> ExportDialog | None:
    if window.session is None:
        window.show_error("Open a brain first; the export reads the open brain.")
        return None
    dialog = ExportDialog(window)
    dialog.show()
    return dialog


def _brain_stem(session: BrainSession) -> str:
    """What an export is named after: the brain file's name, or a shared brain's id."""
    return session.brain_id if session.shared else Path(session.path).stem


def _start_folder(session: BrainSession) -> Path:
    """Where the destination is first looked for: beside the brain file (a shared brain's
    address is no folder: the home folder)."""
    return Path.home() if session.shared else session.path.parent
