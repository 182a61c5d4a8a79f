"""The review page of an import: what the plan would do, record by record, before commit.

Counts per verdict are toggle buttons that filter the table; the table shows each record's
source, kind, verdict, reason and first line, with a check box on the records the commit
would write. Selecting a record shows its detail (`RecordDetail`). The person can un-accept
records one by one or every shown one at once, fix a refused record, save the refusal
report, change the options (which re-plans), and commit.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from memgui.core.brain import Brain
from memgui.core.io.plan import ImportPlan
from memgui.core.io.records import ERROR, NEW, REFUSED, UPDATE
from memgui.ui.import_record_editor import can_edit
from memgui.ui.import_review_parts import PlanOptionsBar, RecordDetail
from memgui.ui.models.import_plan_model import (
    ALL_VERDICTS,
    Column,
    ImportPlanModel,
    PlanFilterProxy,
)

COLUMN_WIDTHS = {Column.SOURCE: 260, Column.KIND: 96, Column.VERDICT: 80, Column.REASON: 300}


class ImportReviewPage(QWidget):
    options_changed = Signal(object)  # ImportOptions: re-plan
    commit_requested = Signal()
    fix_requested = Signal(int)  # plan row of the record to fix
    save_report_requested = Signal()
    revert_requested = Signal()
    close_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.brain: Brain | None = None
        self.model = ImportPlanModel(self)
        self.model.dataChanged.connect(lambda *_: self.update_commit_button())
        self.proxy = PlanFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.options_bar = PlanOptionsBar()
        self.options_bar.options_changed.connect(self.options_changed)
        self.source_label = QLabel()
        self.source_label.setObjectName("source_label")
        self.source_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label = QLabel()
        self.summary_label.setObjectName("summary_label")
        self.summary_label.setWordWrap(True)
        self.revert_button = QPushButton("Revert this import")
        self.revert_button.setObjectName("revert_button")
        self.revert_button.clicked.connect(self.revert_requested)
        self.toggles: dict[str, QToolButton] = {}
        self.not_read_label = QLabel()
        self.not_read_label.setObjectName("not_read_label")
        self.table = self._build_table()
        self.detail = RecordDetail()
        self._build_layout()
        self.set_committed(None)

    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setObjectName("plan_table")
        table.setModel(self.proxy)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setWordWrap(False)
        # Sources differ at their end (`…/Note.md:12`, `…#conversation/node`), reasons name
        # the trace at theirs: elide the middle (done by Qt, no Python call per cell).
        table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        table.setAlternatingRowColors(True)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(22)
        header = table.horizontalHeader()
        header.setStretchLastSection(True)
        for column, width in COLUMN_WIDTHS.items():
            header.resizeSection(column, width)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        table.selectionModel().currentRowChanged.connect(self._on_current)
        table.doubleClicked.connect(lambda _index: self._fix_current())
        return table

    def _build_layout(self) -> None:
        toggles = QHBoxLayout()
        toggles.addWidget(QLabel("Show:"))
        for verdict in ALL_VERDICTS:
            button = QToolButton()
            button.setObjectName(f"toggle_{verdict}")
            button.setCheckable(True)
            button.setChecked(True)
            button.toggled.connect(lambda on, v=verdict: self.proxy.set_verdict_shown(v, on))
            self.toggles[verdict] = button
            toggles.addWidget(button)
        toggles.addStretch(1)
        toggles.addWidget(self.not_read_label)
        banner = QHBoxLayout()
        banner.addWidget(self.summary_label, 1)
        banner.addWidget(self.revert_button)
        self.accept_button = self._button("Accept shown", "accept_button", self.accept_shown)
        self.unaccept_button = self._button(
            "Un-accept shown", "unaccept_button", self.unaccept_shown
        )
        self.fix_button = self._button("Fix record…", "fix_button", self._fix_current)
        self.report_button = self._button(
            "Save refusal report…", "report_button", self.save_report_requested.emit
        )
        self.close_button = self._button("Close", "close_button", self.close_requested.emit)
        self.commit_button = self._button("Commit", "commit_button", self.commit_requested.emit)
        self.commit_button.setDefault(True)
        buttons = QHBoxLayout()
        for button in (self.accept_button, self.unaccept_button, self.fix_button):
            buttons.addWidget(button)
        buttons.addWidget(self.report_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.commit_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.source_label)
        layout.addWidget(self.options_bar)
        layout.addLayout(banner)
        layout.addLayout(toggles)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)

    def _button(self, text: str, name: str, slot) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    # --- showing a plan -----------------------------------------------------------------

    def set_plan(self, plan: ImportPlan, brain: Brain | None) -> None:
        self.brain = brain
        self.model.set_plan(plan)
        self.source_label.setText(f"<b>{plan.source}</b> — read as {plan.format}")
        self.options_bar.set_options(plan.options, detected=plan.format)
        not_read = len(plan.not_read)
        self.not_read_label.setText(f"{not_read} not read" if not_read else "")
        self.not_read_label.setToolTip(
            "\n".join(f"{r.source}: {r.reason}" for r in plan.not_read[:40])
        )
        self._show_committed(None)
        self.refresh_counts()
        self.detail.show_record(None, None)

    def refresh_counts(self) -> None:
        plan = self.model.plan
        counts = plan.counts if plan else {}
        for verdict, button in self.toggles.items():
            count = counts.get(verdict, 0)
            button.setText(f"{verdict} {count}")
            button.setVisible(count > 0 or verdict != "skipped")
        self.update_commit_button()

    def accepted_count(self) -> int:
        plan = self.model.plan
        if plan is None:
            return 0
        return sum(1 for r in plan.records if r.accepted and r.verdict in (NEW, UPDATE))

    def update_commit_button(self) -> None:
        plan, accepted = self.model.plan, self.accepted_count()
        refused = plan is not None and any(r.verdict in (REFUSED, ERROR) for r in plan.records)
        self.commit_button.setText(f"Commit {accepted} record{'s' if accepted != 1 else ''}")
        done = self._committed
        self.commit_button.setEnabled(plan is not None and accepted > 0 and not done)
        self.report_button.setEnabled(refused or bool(plan and plan.not_read))
        for widget in (self.accept_button, self.unaccept_button, self.options_bar):
            widget.setEnabled(not done)
        record = self.model.record(self.current_row())
        self.fix_button.setEnabled(can_edit(record) and not done)

    def set_committed(self, summary: str | None) -> None:
        """After a commit: show its summary and the revert button; editing ends."""
        self._show_committed(summary)
        if self.model.plan is not None:
            self.model.refresh_all()  # the commit may have refused a record it re-checked
            self.refresh_counts()

    def _show_committed(self, summary: str | None) -> None:
        self._committed = summary is not None
        self.summary_label.setText(summary or "")
        self.summary_label.setVisible(self._committed)
        self.revert_button.setVisible(self._committed)

    # --- acting on records --------------------------------------------------------------

    def selected_rows(self) -> list[int]:
        rows = {self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()}
        return sorted(rows)

    def current_row(self) -> int:
        index = self.table.currentIndex()
        return self.proxy.mapToSource(index).row() if index.isValid() else -1

    def accept_shown(self) -> int:
        changed = self.model.set_accepted(self.proxy.source_rows(), True)
        self.update_commit_button()
        return changed

    def unaccept_shown(self) -> int:
        changed = self.model.set_accepted(self.proxy.source_rows(), False)
        self.update_commit_button()
        return changed

    def record_fixed(self, row: int) -> None:
        self.model.record_changed(row)
        self.refresh_counts()
        self._on_current()

    def _fix_current(self) -> None:
        row = self.current_row()
        if row >= 0 and can_edit(self.model.record(row)) and not self._committed:
            self.fix_requested.emit(row)

    def _on_current(self, *_args: object) -> None:
        record = self.model.record(self.current_row())
        self.fix_button.setEnabled(can_edit(record) and not self._committed)
        self.detail.show_record(record, self.brain)
