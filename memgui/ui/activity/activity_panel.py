"""The Agent activity panel: the tree of unreviewed changes, what the chosen one did before
and after, and the buttons that act on it (each also a key on the tree)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from memgui.core.brain import Brain
from memgui.ui.activity import activity_text as text
from memgui.ui.activity.activity_model import NOW, WHAT, WHEN, WHO, ActivityModel, ActivityRole
from memgui.ui.theme import colours

EMPTY_TEXT = "Nothing to review: every change by agents and other programs has been reviewed."


class ActivityPanel(QWidget):
    mark_requested = Signal(list)  # batch ids
    mark_all_requested = Signal()
    edit_requested = Signal(str)  # trace id
    forget_requested = Signal(str)  # trace id
    revert_requested = Signal(str, str, object)  # batch id, actor, entry ids (None: all)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: ActivityModel | None = None
        self.brain: Brain | None = None
        self.read_only = False
        self.count_label = QLabel()
        self.count_label.setObjectName("activity_count")
        self.tree = QTreeView()
        self.tree.setObjectName("activity_tree")
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.doubleClicked.connect(lambda _index: self._edit())
        self.details = QTextBrowser()
        self.details.setObjectName("activity_details")
        self.details.setOpenLinks(False)
        self.problem = QLabel()
        self.problem.setObjectName("activity_problem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {colours.ERROR}")
        self.problem.hide()
        self._build_actions()
        self._layout()
        self.set_model(None, None)

    def _build_actions(self) -> None:
        def action(label: str, key: str, tip: str, slot: Callable[[], object]) -> QAction:
            made = QAction(label, self)
            made.setShortcut(QKeySequence(key))
            made.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            made.setToolTip(f"{tip} ({QKeySequence(key).toString()})")
            made.triggered.connect(slot)
            self.tree.addAction(made)
            return made

        self.mark_action = action(
            "Mark reviewed", "Ctrl+Return", "Mark the chosen batches reviewed", self._mark
        )
        self.mark_all_action = action(
            "Mark all reviewed",
            "Ctrl+Shift+Return",
            "Mark every change listed reviewed (what arrives later stays listed)",
            self.mark_all_requested.emit,
        )
        self.edit_action = action("Edit", "Return", "Open the memory in the editor", self._edit)
        self.forget_action = action("Forget", "Del", "Move the memory to the trash", self._forget)
        self.revert_change_action = action(
            "Revert change",
            "Ctrl+Backspace",
            "Undo this change alone (Ctrl+Z takes the revert back)",
            lambda: self._revert(whole=False),
        )
        self.revert_batch_action = action(
            "Revert batch",
            "Ctrl+Shift+Backspace",
            "Undo every change of the batch (Ctrl+Z takes the revert back)",
            lambda: self._revert(whole=True),
        )
        self.actions_in_order = [
            self.mark_action,
            self.mark_all_action,
            self.edit_action,
            self.forget_action,
            self.revert_change_action,
            self.revert_batch_action,
        ]

    def _layout(self) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(self.count_label, 1)
        self.buttons: dict[str, QPushButton] = {}
        for made in self.actions_in_order:
            button = QPushButton(made.text())
            button.setToolTip(made.toolTip())
            button.clicked.connect(made.trigger)
            self.buttons[made.text()] = button
            buttons.addWidget(button)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tree)
        split.addWidget(self.details)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 4, 6, 4)
        column.addLayout(buttons)
        column.addWidget(split, 1)
        column.addWidget(self.problem)

    # --- the model ---------------------------------------------------------------------------

    def set_model(
        self, model: ActivityModel | None, brain: Brain | None, read_only: bool = False
    ) -> None:
        self.model, self.brain, self.read_only = model, brain, read_only
        self.tree.setModel(model)
        self.show_problem("")
        if model is not None:
            header = self.tree.header()
            header.setSectionResizeMode(WHAT, QHeaderView.ResizeMode.Stretch)
            header.setStretchLastSection(False)
            self.tree.setColumnWidth(WHEN, 130)
            self.tree.setColumnWidth(WHO, 150)
            self.tree.setColumnWidth(NOW, 110)
            self.tree.selectionModel().currentChanged.connect(lambda *_: self.update_details())
            self.tree.selectionModel().selectionChanged.connect(lambda *_: self.update_actions())
            for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved):
                signal.connect(self.update_actions)
            model.dataChanged.connect(lambda *_: self.update_details())
        self.update_details()
        self.update_actions()

    def show_count(self, count: int, capped: bool) -> None:
        if count == 0:
            self.count_label.setText("No changes wait for review")
        else:
            more = " or more" if capped else ""
            word = "change waits" if count == 1 else "changes wait"
            self.count_label.setText(f"{count:,}{more} {word} for review")

    def show_problem(self, message: str) -> None:
        self.problem.setText(message)
        self.problem.setVisible(bool(message))

    # --- the selection -----------------------------------------------------------------------

    def current(self) -> QModelIndex:
        return self.tree.currentIndex().siblingAtColumn(0)

    def select(self, index: QModelIndex) -> None:
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        self.tree.selectionModel().setCurrentIndex(index, flags)

    def selected_batches(self) -> list[str]:
        if self.model is None:
            return []
        out: list[str] = []
        rows = self.tree.selectionModel().selectedRows() or [self.current()]
        for index in rows:
            for batch_id in self.model.batch_ids_of(index):
                if batch_id not in out:
                    out.append(batch_id)
        return out

    def update_actions(self) -> None:
        model, index = self.model, self.current()
        listed = model is not None and model.rowCount() > 0
        entry = model.entry_of(index) if model is not None else None
        trace_id = text.trace_of(entry) if entry is not None else None
        kind = index.data(ActivityRole.KIND) if index.isValid() else None
        writable = not self.read_only
        enabled = {
            self.mark_action: writable and bool(self.selected_batches()),
            self.mark_all_action: writable and listed,
            self.edit_action: trace_id is not None,
            self.forget_action: writable and trace_id is not None,
            self.revert_change_action: writable and entry is not None,
            self.revert_batch_action: writable and kind in ("batch", "change"),
        }
        for made, on in enabled.items():
            made.setEnabled(on)
            self.buttons[made.text()].setEnabled(on)
        if model is not None and not listed:
            self.details.setPlainText(EMPTY_TEXT)

    def update_details(self) -> None:
        model, index = self.model, self.current()
        if model is None or not index.isValid():
            self.details.setPlainText(EMPTY_TEXT if model and not model.rowCount() else "")
            return
        entry = model.entry_of(index)
        if entry is not None:
            self.details.setHtml(text.details_html(entry, model.state_of(index), self.brain))
            return
        who = index.siblingAtColumn(WHO).data()
        what = index.siblingAtColumn(WHAT).data()
        self.details.setPlainText(f"{who}: {what}\n\nExpand it to see each change.")

    # --- what the buttons ask ----------------------------------------------------------------

    def _mark(self) -> None:
        batches = self.selected_batches()
        if batches and self.mark_action.isEnabled():
            self.mark_requested.emit(batches)

    def _trace(self) -> str | None:
        entry = self.model.entry_of(self.current()) if self.model is not None else None
        return text.trace_of(entry) if entry is not None else None

    def _edit(self) -> None:
        trace_id = self._trace()
        if trace_id:
            self.edit_requested.emit(trace_id)

    def _forget(self) -> None:
        trace_id = self._trace()
        if trace_id and self.forget_action.isEnabled():
            self.forget_requested.emit(trace_id)

    def _revert(self, whole: bool) -> None:
        model, index = self.model, self.current()
        if model is None or not index.isValid() or self.read_only:
            return
        batch_id = model.batch_ids_of(index)
        actor = index.siblingAtColumn(WHO).data() or (index.parent().siblingAtColumn(WHO).data())
        entry = model.entry_of(index)
        if len(batch_id) != 1:
            return
        if whole:
            self.revert_requested.emit(batch_id[0], actor or "", None)
        elif entry is not None:
            self.revert_requested.emit(batch_id[0], actor or "", [entry.id])

    def _context_menu(self, point: QPoint) -> None:
        menu = QMenu(self)
        menu.addActions(self.actions_in_order)
        menu.exec(self.tree.viewport().mapToGlobal(point))
