"""The review page of an import: what the plan would do, record by record, before commit.

Counts per verdict are toggle buttons that filter the table; the table shows each record's
source, kind, verdict, reason and first line, with a check box on the records the commit
would write. Selecting a record shows its detail (`RecordDetail`). The person can un-accept
records one by one or every shown one at once, fix a refused record, save the refusal
report, change the options (which re-plans), and commit.

A chat export's conversations are listed beside the table (`ConversationList`): searched by
title, each with its date and counts; choosing one shows only its records.

Fixes made by hand survive a re-plan (`core.io.Fixes`): before the re-plan, the page
collects what the person changed in each record's fields; the plan job lays it over the
record of the same source in the new plan and checks that again against the brain; the page
then says which fixes it kept and which it had to drop (no single memory of that source any
more).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from memgui.core.brain import Brain
from memgui.core.io import Fixes, ImportPlan, ImportRecord, RecordKind, Verdict
from memgui.ui.importing.import_conversations import WIDTH as CONVERSATIONS_WIDTH
from memgui.ui.importing.import_conversations import ConversationList
from memgui.ui.importing.import_record_editor import can_edit, why_not_editable
from memgui.ui.importing.import_review_parts import ElidedLabel, PlanOptionsBar, RecordDetail
from memgui.ui.importing.review_tools import (
    EndElideDelegate,
    FormatNote,
    NotReadDialog,
    same_cause,
)
from memgui.ui.models.import_plan_model import (
    ALL_VERDICTS,
    Column,
    ImportPlanModel,
    PlanFilterProxy,
)
from memgui.ui.theme import colours

COLUMN_WIDTHS = {Column.SOURCE: 260, Column.KIND: 96, Column.VERDICT: 80, Column.REASON: 300}
# Beside the conversations: a chat's records seldom have a reason, and their text says most.
CHAT_COLUMN_WIDTHS = {Column.SOURCE: 250, Column.KIND: 96, Column.VERDICT: 70, Column.REASON: 140}


class ImportReviewPage(QWidget):
    options_changed = Signal(object)  # ImportOptions: re-plan
    commit_requested = Signal()
    fix_requested = Signal(int)  # plan row of the record to fix
    fix_alike_requested = Signal(int)  # ... and every other refused for the same reason
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
        self.format_note = FormatNote()
        self.format_note.format_chosen.connect(self._read_as)
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
        # What was not read opens as a list (a tooltip of hundreds of lines outgrew the
        # screen).
        self.not_read_label = QLabel()
        self.not_read_label.setObjectName("not_read_label")
        self.not_read_label.setTextFormat(Qt.TextFormat.RichText)
        self.not_read_label.setToolTip("Click for the list of what was not read")
        self.not_read_label.linkActivated.connect(lambda _link: self.show_not_read())
        self.fixes_label = QLabel()
        self.fixes_label.setObjectName("fixes_label")
        self.fixes_label.setWordWrap(True)
        self.fixes_label.hide()
        self.fix_hint = ElidedLabel()  # never widens the window: the tooltip holds it all
        self.fix_hint.setObjectName("fix_hint")
        self.fix_hint.setStyleSheet("color: palette(placeholder-text);")
        # Per source: the fields the person changed by hand, laid over each new plan.
        self._fixes = Fixes()
        # Per plan row: the fields the plan gave an editable record (the editor replaces
        # the object on Apply, so a different object there means an edit).
        self._originals: dict[int, Any] = {}
        self.last_menu: QMenu | None = None
        self._committed = False
        self.table = self._build_table()
        self.conversations = ConversationList(self.model)
        self.conversations.conversation_chosen.connect(self.proxy.set_conversation)
        self.detail = RecordDetail()
        self._build_layout()
        self.set_committed(None)

    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setObjectName("plan_table")
        table.setModel(self.proxy)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Arrow keys move between cells; Tab leaves for the detail and the buttons below,
        # as in the main window's table (cell-by-cell Tab trapped keyboard users here).
        table.setTabKeyNavigation(False)
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
        # A reason says first what went wrong: cut at its end, the whole on hover.
        table.setItemDelegateForColumn(Column.REASON, EndElideDelegate(table))
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._context_menu)
        return table

    def _build_layout(self) -> None:
        toggles = QHBoxLayout()
        toggles.addWidget(QLabel("Show:"))
        for verdict in ALL_VERDICTS:
            toggle = QToolButton()
            toggle.setObjectName(f"toggle_{verdict}")
            toggle.setCheckable(True)
            toggle.setChecked(True)
            toggle.toggled.connect(lambda on, v=verdict: self.proxy.set_verdict_shown(v, on))
            self.toggles[verdict] = toggle
            toggles.addWidget(toggle)
        self.only_refused_button = QToolButton()
        self.only_refused_button.setObjectName("only_refused")
        self.only_refused_button.setText("Only refused")
        self.only_refused_button.setToolTip("Show only the refused and error records")
        self.only_refused_button.clicked.connect(self.show_only_refused)
        self.show_all_button = QToolButton()
        self.show_all_button.setObjectName("show_all")
        self.show_all_button.setText("All")
        self.show_all_button.setToolTip("Show every record")
        self.show_all_button.clicked.connect(self.show_all)
        toggles.addSpacing(12)
        toggles.addWidget(self.only_refused_button)
        toggles.addWidget(self.show_all_button)
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
        self.fix_alike_button = self._button(
            "Fix all like this…", "fix_alike_button", self._fix_alike_current
        )
        self.fix_alike_button.hide()
        self.report_button = self._button(
            "Save refusal report…", "report_button", self.save_report_requested.emit
        )
        self.close_button = self._button("Close", "close_button", self.close_requested.emit)
        self.commit_button = self._button("Commit", "commit_button", self.commit_requested.emit)
        self.commit_button.setDefault(True)
        buttons = QHBoxLayout()
        for button in (
            self.accept_button,
            self.unaccept_button,
            self.fix_button,
            self.fix_alike_button,
        ):
            buttons.addWidget(button)
        buttons.addWidget(self.report_button)
        buttons.addWidget(self.fix_hint, 1)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.commit_button)
        records = QSplitter(Qt.Orientation.Horizontal)
        records.addWidget(self.conversations)
        records.addWidget(self.table)
        records.setStretchFactor(0, 1)
        records.setStretchFactor(1, 3)
        records.setSizes([CONVERSATIONS_WIDTH, 880])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(records)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.source_label)
        layout.addWidget(self.options_bar)
        layout.addWidget(self.format_note)
        layout.addLayout(banner)
        layout.addWidget(self.fixes_label)
        layout.addLayout(toggles)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)

    def _button(self, text: str, name: str, slot: Callable[[], object]) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    # --- showing a plan -----------------------------------------------------------------

    def set_plan(self, plan: ImportPlan, brain: Brain | None) -> None:
        """Show a plan; a re-plan's fixes were laid over it in its job (`collect_fixes`)."""
        self.brain = brain
        self._originals = {
            i: r.fields
            for i, r in enumerate(plan.records)
            if r.kind == RecordKind.TRACE and can_edit(r)
        }
        carried = plan.carried_fixes
        if carried is None:
            self._show_fixes([], [])
        else:
            self._originals.update(carried.originals)  # a later edit is measured from these
            self._fixes = carried.fixes
            self._show_fixes([plan.records[row] for row in carried.kept], list(carried.dropped))
        self.proxy.set_conversation(None)
        self.model.set_plan(plan)
        chats = bool(self.model.chats.row_of)
        self.conversations.setVisible(chats)
        # A chat's records are named by its title, which says most at its start; a file's
        # differ at their end (`…/Note.md:12`).
        mode = Qt.TextElideMode.ElideRight if chats else Qt.TextElideMode.ElideMiddle
        self.table.setTextElideMode(mode)
        widths = CHAT_COLUMN_WIDTHS if chats else COLUMN_WIDTHS
        for column, width in widths.items():
            self.table.horizontalHeader().resizeSection(column, width)
        self.source_label.setText(f"<b>{plan.source}</b> — read as {plan.format}")
        self.options_bar.set_options(plan.options, detected=plan.format)
        self.format_note.show_plan(plan)
        not_read = len(plan.not_read)
        self.not_read_label.setText(
            f'<a href="not-read">{not_read} not read…</a>' if not_read else ""
        )
        self._show_committed(None)
        self.refresh_counts()
        self.detail.show_record(None, None)

    # --- fixes across a re-plan ---------------------------------------------------------

    def collect_fixes(self) -> Fixes:
        """The person's fixes so far, for the re-plan to lay over its plan (no brain read)."""
        if self.model.plan is not None:
            self._fixes.collect(self.model.plan, self._originals)
        return self._fixes

    def _show_fixes(self, kept: list[ImportRecord], dropped: list[str]) -> None:
        parts = []
        if kept:
            listed = ", ".join(f"{r.source} (now {r.verdict})" for r in kept)
            parts.append(f"Kept your fixes across the re-plan: {listed}.")
        if dropped:
            parts.append(
                "Dropped your fixes to "
                + ", ".join(dropped)
                + ": the new plan has no single memory from that source."
            )
        self.fixes_label.setText(" ".join(parts))
        self.fixes_label.setStyleSheet(f"color: {colours.REFUSED};" if dropped else "")
        self.fixes_label.setVisible(bool(parts))

    def refresh_counts(self) -> None:
        plan = self.model.plan
        counts = plan.counts if plan else {}
        for verdict, button in self.toggles.items():
            count = counts.get(verdict, 0)
            label = verdict
            if self._committed and verdict in (Verdict.NEW, Verdict.UPDATE) and plan is not None:
                written = sum(1 for i in plan.written if plan.records[i].verdict == verdict)
                label = f"imported ({verdict})"
                count = written
            button.setText(f"{label} {count}")
            button.setVisible(count > 0 or verdict != "skipped")
        self.update_commit_button()

    def accepted_count(self) -> int:
        plan = self.model.plan
        if plan is None:
            return 0
        return sum(
            1 for r in plan.records if r.accepted and r.verdict in (Verdict.NEW, Verdict.UPDATE)
        )

    def _accept_chosen(self, accepted: bool) -> None:
        self.model.set_accepted(self.selected_rows(), accepted)
        self.update_commit_button()

    def update_commit_button(self) -> None:
        plan, accepted = self.model.plan, self.accepted_count()
        refused = plan is not None and any(
            r.verdict in (Verdict.REFUSED, Verdict.ERROR) for r in plan.records
        )
        self.commit_button.setText(f"Commit {accepted} record{'s' if accepted != 1 else ''}")
        done = self._committed
        self.commit_button.setEnabled(plan is not None and accepted > 0 and not done)
        self.report_button.setEnabled(refused or bool(plan and plan.not_read))
        for widget in (self.accept_button, self.unaccept_button, self.options_bar):
            widget.setEnabled(not done)
        self._show_fix_state(self.model.record(self.current_row()))

    def _show_fix_state(self, record: ImportRecord | None) -> None:
        """Enable "Fix record…" for the current record, or say why it is off."""
        why = "The import is committed." if self._committed else why_not_editable(record)
        self.fix_button.setEnabled(not why)
        self.fix_button.setToolTip(why or "Edit this record and check it again")
        # Spelled out beside the button for a refused record that cannot be fixed here.
        unfixable = (
            record is not None and record.verdict in (Verdict.REFUSED, Verdict.ERROR) and bool(why)
        )
        self.fix_hint.set_full_text(why if unfixable else "")
        alike = [] if why else same_cause(self.model.plan, self.current_row())
        self.fix_alike_button.setText(f"Fix all {len(alike) + 1} like this…")
        self.fix_alike_button.setToolTip(
            f"Fix this record, then the {len(alike)} others refused for the same reason the "
            "same way (your field changes; their own text where none was read)"
        )
        self.fix_alike_button.setVisible(bool(alike))

    def set_committed(self, summary: str | None) -> None:
        """After a commit: show its summary and the revert button; editing ends."""
        shown_before = self.model.committed
        self._show_committed(summary)
        if self.model.plan is not None:
            if self.model.committed == shown_before:  # else every row was just redrawn
                self.model.refresh_all()  # the commit may have refused a record it re-checked
            self.refresh_counts()

    def _show_committed(self, summary: str | None) -> None:
        self._committed = summary is not None
        self.model.set_committed(self._committed)
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

    def _fix_alike_current(self) -> None:
        row = self.current_row()
        if row >= 0 and can_edit(self.model.record(row)) and not self._committed:
            self.fix_alike_requested.emit(row)

    def _read_as(self, fmt: str) -> None:
        plan = self.model.plan
        if plan is not None and fmt:
            self.options_changed.emit(replace(plan.options, format=fmt))

    def show_only_refused(self) -> None:
        for verdict, button in self.toggles.items():
            button.setChecked(verdict in (Verdict.REFUSED, Verdict.ERROR))

    def show_all(self) -> None:
        for button in self.toggles.values():
            button.setChecked(True)

    def show_not_read(self) -> NotReadDialog | None:
        plan = self.model.plan
        if plan is None or not plan.not_read:
            return None
        dialog = NotReadDialog(plan.not_read, self)
        dialog.open()
        return dialog

    def _context_menu(self, pos: Any) -> None:
        index = self.table.indexAt(pos)
        if index.isValid() and not self.table.selectionModel().isRowSelected(index.row()):
            self.table.selectRow(index.row())
        self.last_menu = self.record_menu()
        self.last_menu.popup(self.table.viewport().mapToGlobal(pos))

    def record_menu(self) -> QMenu:
        """What can be done with the chosen records: the buttons' actions, and copying."""
        menu = QMenu(self.table)
        rows = self.selected_rows()
        open_ = not self._committed
        accept = menu.addAction("Accept chosen")
        unaccept = menu.addAction("Un-accept chosen")
        for action, value in ((accept, True), (unaccept, False)):
            action.setEnabled(open_ and bool(rows))
            action.triggered.connect(lambda _c=False, v=value: self._accept_chosen(v))
        fix = menu.addAction("Fix record…")
        fix.setEnabled(self.fix_button.isEnabled())
        fix.triggered.connect(self._fix_current)
        if self.fix_alike_button.isVisible():
            alike = menu.addAction(self.fix_alike_button.text())
            alike.triggered.connect(self._fix_alike_current)
        menu.addSeparator()
        menu.addAction("Show only refused").triggered.connect(self.show_only_refused)
        menu.addAction("Show all").triggered.connect(self.show_all)
        menu.addSeparator()
        record = self.model.record(self.current_row())
        copy = menu.addAction("Copy reason")
        copy.setEnabled(record is not None and bool(record.reason))
        if record is not None:
            copy.triggered.connect(lambda: QGuiApplication.clipboard().setText(record.reason))
        return menu

    def _on_current(self, *_args: object) -> None:
        record = self.model.record(self.current_row())
        self._show_fix_state(record)
        self.detail.show_record(record, self.brain, self.model.plan)
