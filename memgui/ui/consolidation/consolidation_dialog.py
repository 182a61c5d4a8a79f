"""Edit ▸ Consolidate…: plan a consolidation (a job), review it, apply it, undo it.

The dialog plans as soon as it opens, with every step of AgentOS's loop. The plan shows by
step, each candidate with why and a check (Space toggles it); a merge cluster's members can
be left out one by one, its survivor picked and its merged text edited, a derived insight's
text too. Apply writes the checked candidates in one batch (a job: progress, Cancel rolls it
back); Edit ▸ Undo, or Undo here, reverts the whole run. A plan the brain overtook (an agent
wrote meanwhile) is refused and planned again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QSettings, Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTreeView,
    QVBoxLayout,
)

from memgui.core.consolidate import STEPS, ConsolidationOptions, ConsolidationPlan
from memgui.core.llm import OllamaChat, resolve_chat_model
from memgui.core.progress import Progress
from memgui.ui.consolidation.consolidation_detail import CandidateDetail
from memgui.ui.consolidation.consolidation_model import STEP_TITLES, ConsolidationPlanModel, Role
from memgui.ui.consolidation.consolidation_run import APPLIED, ConsolidationRun, summary
from memgui.ui.dialogs.settings_dialog import CHAT_MODEL_KEY, ollama_config

if TYPE_CHECKING:
    from memgui.core.consolidate import ConsolidationResult
    from memgui.ui.main_window import MainWindow


class ConsolidateDialog(QDialog):
    def __init__(self, window: MainWindow, plan_now: bool = True) -> None:
        super().__init__(window)
        session = window.session
        if session is None:
            raise RuntimeError("no brain is open")
        self.window_ = window
        self.session = session
        self.settings: QSettings = window.settings
        self.setWindowTitle(f"Consolidate {session.name}")
        self.resize(1100, 680)
        self.run = ConsolidationRun(window.runner, session, self)
        session.closing.connect(self._abandon)
        self.model = ConsolidationPlanModel(parent=self)
        self._replanned_because = ""  # why the plan shown was made again, if it was
        self._build()
        self._connect()
        if plan_now:
            self.start_plan()

    # --- building -------------------------------------------------------------------------

    def _build(self) -> None:
        self.step_boxes: dict[str, QCheckBox] = {}
        options = QHBoxLayout()
        options.addWidget(QLabel("Steps:"))
        for step in STEPS:
            box = QCheckBox(STEP_TITLES[step].split()[0])
            box.setChecked(True)
            box.setToolTip(STEP_TITLES[step])
            box.setObjectName(f"step_{step}")
            self.step_boxes[step] = box
            options.addWidget(box)
        self.across_scopes = QCheckBox("Merge across scopes")
        self.across_types = QCheckBox("across types")
        self.chat_model = QLineEdit(self._stored_chat_model())
        self.chat_model.setAccessibleName("Chat model")
        self.chat_model.setToolTip("The Ollama chat model that derives insights")
        self.chat_model.setMaximumWidth(140)
        self.plan_button = QPushButton("&Plan again")
        options.addSpacing(12)
        options.addWidget(self.across_scopes)
        options.addWidget(self.across_types)
        options.addSpacing(12)
        options.addWidget(QLabel("Chat model:"))
        options.addWidget(self.chat_model)
        options.addStretch(1)
        options.addWidget(self.plan_button)

        self.tree = QTreeView()
        self.tree.setObjectName("consolidation_plan")
        self.tree.setAccessibleName("Consolidation plan")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setColumnWidth(0, 430)
        self.detail = CandidateDetail()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        self.status = QLabel()
        self.status.setObjectName("consolidation_status")
        self.status.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(240)
        self.cancel_button = QPushButton("Cancel")
        self.apply_button = QPushButton("&Apply")
        self.apply_button.setDefault(True)
        self.undo_button = QPushButton("&Undo")
        self.undo_button.setToolTip("Revert the whole consolidation (as Edit ▸ Undo does)")
        self.close_button = QPushButton("Close")
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        for widget in (
            self.progress,
            self.cancel_button,
            self.undo_button,
            self.apply_button,
            self.close_button,
        ):
            buttons.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.addLayout(options)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)
        self._show_running(False)
        self.apply_button.setEnabled(False)
        self.undo_button.hide()

    def _connect(self) -> None:
        run = self.run
        run.progress.connect(self._on_progress)
        run.planned.connect(self._on_planned)
        run.applied.connect(self._on_applied)
        run.failed.connect(self._on_failed)
        run.outdated.connect(self._on_outdated)
        run.cancelled.connect(self._on_cancelled)
        run.state_changed.connect(self._on_state)
        self.plan_button.clicked.connect(self.start_plan)
        self.cancel_button.clicked.connect(run.cancel)
        self.apply_button.clicked.connect(self.start_apply)
        self.undo_button.clicked.connect(run.undo)
        self.close_button.clicked.connect(self.close)
        self.model.changed.connect(self._recount)
        self.detail.edited.connect(self._on_detail_edited)
        self.tree.selectionModel().currentChanged.connect(self._on_current)

    def _stored_chat_model(self) -> str:
        value = self.settings.value(CHAT_MODEL_KEY, "")
        return resolve_chat_model(value if isinstance(value, str) else None)

    # --- planning and applying ------------------------------------------------------------------

    def options(self) -> ConsolidationOptions:
        steps = tuple(s for s, box in self.step_boxes.items() if box.isChecked())
        llm = None
        if "derive" in steps:
            self.settings.setValue(CHAT_MODEL_KEY, self.chat_model.text().strip())
            llm = OllamaChat(ollama_config(self.settings)[0], self.chat_model.text() or None)
        return ConsolidationOptions(
            steps=steps,
            merge_across_scopes=self.across_scopes.isChecked(),
            merge_across_types=self.across_types.isChecked(),
            llm=llm,
        )

    def start_plan(self) -> None:
        options = self.options()
        if not options.steps:
            self.status.setText("Check at least one step to plan.")
            return
        self.model.set_plan(None)
        self.detail.show_candidate(None, editable=False)
        self.apply_button.setEnabled(False)
        self.status.setText("Planning…")
        self._show_running(True)
        self.run.start_plan(options)

    def start_apply(self) -> None:
        if self.run.plan is None or self.detail.problem:
            return
        self._replanned_because = ""
        self.apply_button.setEnabled(False)
        self.status.setText("Applying…")
        self._show_running(True)
        self.run.start_apply()

    def _show_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.plan_button.setEnabled(not running)
        if running:
            self.progress.setRange(0, 0)

    def _on_progress(self, event: Progress) -> None:
        if event.total:
            self.progress.setRange(0, event.total)
            self.progress.setValue(event.done)
        else:
            self.progress.setRange(0, 0)
        if event.message:
            self.status.setText(event.message[:1].upper() + event.message[1:] + "…")

    def _on_planned(self, plan: ConsolidationPlan) -> None:
        self._show_running(False)
        self.model.set_plan(plan)
        self.tree.expandToDepth(0)
        self.model.set_editable(True)
        self._recount()
        first = self.model.index(0, 0)
        if first.isValid():
            self.tree.setCurrentIndex(first)
        self.tree.setFocus()

    def _recount(self) -> None:
        plan = self.run.plan
        if plan is None:
            return
        if plan.busy:
            self.status.setText(f"Nothing planned: {plan.busy}. Plan again once it is done.")
            self.apply_button.setEnabled(False)
            return
        counts = plan.accepted_counts()
        parts = [f"{step} {counts[step]}" for step in plan.options.steps if counts[step]]
        changes = sum(counts[s] for s in plan.options.steps if s != "reindex")
        text = "Will apply: " + (", ".join(parts) if parts else "nothing to change")
        if plan.notes:
            text += " — " + "; ".join(plan.notes)
        if self.detail.problem:
            text = f"Fix the text first: {self.detail.problem}"
        elif self._replanned_because:
            text = f"Planned again: {self._replanned_because}. {text}"
        self.status.setText(text)
        writable = not self.session.read_only and self.run.state != APPLIED
        self.apply_button.setEnabled(
            writable and not self.detail.problem and bool(changes or parts)
        )

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        candidate = current.data(Role.Candidate)
        self.detail.show_candidate(
            candidate, editable=self.model.editable, member_id=current.data(Role.MemberId)
        )

    def _on_detail_edited(self) -> None:
        current = self.tree.currentIndex()
        if current.data(Role.MemberId) is not None:
            current = current.parent()
        self.model.refresh(current)
        self._recount()

    def _on_applied(self, result: ConsolidationResult) -> None:
        self._show_running(False)
        self.model.set_editable(False)
        if result.busy:
            self.status.setText(f"Nothing applied: {result.busy}.")
            self.apply_button.setEnabled(True)
            return
        self.detail.show_candidate(self.detail.candidate, editable=False)
        done = f"Applied: {summary(result)}." if result.batch_id else "Nothing needed changing."
        self.status.setText(done + (" Edit ▸ Undo reverts it." if result.batch_id else ""))
        self.undo_button.setVisible(bool(result.batch_id))
        self.window_.show_message(f"Consolidated: {summary(result)}")

    def _on_state(self, state: str) -> None:
        self.undo_button.setEnabled(state == APPLIED)
        if self.run.result is not None and state != APPLIED:
            self.status.setText(f"Undone: {summary(self.run.result)} was reverted.")

    def _on_failed(self, message: str) -> None:
        self._show_running(False)
        self.status.setText(f"Could not {self.run.step or 'plan'}: {message}")
        self._recount_if_planned()

    def _recount_if_planned(self) -> None:
        if self.run.plan is not None and self.run.result is None:
            self._recount()

    def _on_outdated(self, message: str) -> None:
        self._show_running(False)
        self._replanned_because = message
        self.start_plan()

    def _on_cancelled(self, step: str) -> None:
        self._show_running(False)
        self.status.setText(
            "Planning was cancelled." if step == "plan" else "Cancelled: nothing was written."
        )
        self._recount_if_planned()

    # --- closing ------------------------------------------------------------------------------

    def _abandon(self) -> None:
        self.run.cancel()
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.run.running and self.run.step == "apply":
            answer = QMessageBox.question(
                self,
                "Consolidation running",
                "The consolidation is being written. Cancel it? Nothing of it is kept.",
            )
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return
        self.run.cancel()
        super().closeEvent(event)


def open_consolidation(window: MainWindow) -> ConsolidateDialog | None:
    if window.session is None or window.session.read_only:
        return None
    dialog = ConsolidateDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
