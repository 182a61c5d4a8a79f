"""The filter bar above the trace table: type, scope, category, tag, scope id, trash."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QWidget,
)

from memgui.core.model import CATEGORIES, INGEST_CATEGORIES, SCOPES, TYPES, Facets, TraceFilter
from memgui.ui.views.flow_layout import FlowLayout

ANY = "Any"
TEXT_DEBOUNCE_MS = 300


def _choice_box(name: str, choices: tuple[str, ...], tip: str) -> QComboBox:
    box = QComboBox()
    box.addItem(ANY, None)
    for choice in choices:
        box.addItem(choice, choice)
    box.setAccessibleName(name)
    box.setToolTip(tip)
    box.setObjectName(f"filter_{name.lower().replace(' ', '_')}")
    # Shrink with the window instead of forcing a wide minimum.
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(8)  # "Any (22)"; the list shows each choice with its count
    return box


class FilterBar(QWidget):
    """Emits `filter_changed(TraceFilter)` whenever a control changes (text is debounced)."""

    filter_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.type_box = _choice_box("Type", TYPES, "Show only traces of this memory type")
        self.scope_box = _choice_box("Scope", SCOPES, "Show only traces of this scope")
        self.category_box = _choice_box(
            "Category", CATEGORIES + INGEST_CATEGORIES, "Show only traces of this category"
        )
        self.scope_id_edit = QLineEdit()
        self.scope_id_edit.setPlaceholderText("scope id")
        self.scope_id_edit.setAccessibleName("Scope id")
        self.scope_id_edit.setToolTip("Exact scope id (a user, thread, persona or organization)")
        self.scope_id_edit.setClearButtonEnabled(True)
        self.scope_id_edit.setFixedWidth(120)
        self.tag_edit = QLineEdit()
        self.tag_edit.setPlaceholderText("tag")
        self.tag_edit.setAccessibleName("Tag")
        self.tag_edit.setToolTip("Exact tag, case-sensitive")
        self.tag_edit.setClearButtonEnabled(True)
        self.tag_edit.setFixedWidth(120)
        self.tag_model = QStringListModel(self)
        completer = QCompleter(self.tag_model, self.tag_edit)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setModelSorting(QCompleter.ModelSorting.UnsortedModel)
        self.tag_edit.setCompleter(completer)
        self.trash_check = QCheckBox("Trash")
        self.trash_check.setAccessibleName("Trash view")
        self.trash_check.setToolTip(
            "Show deleted traces (the trash) instead of live ones (Ctrl+Shift+D)"
        )

        # Pairs of caption and control wrap as a unit when the window is narrow.
        layout = FlowLayout(self, spacing=8)
        for label, widget in (
            ("T&ype", self.type_box),
            ("Sc&ope", self.scope_box),
            ("C&ategory", self.category_box),
        ):
            caption = QLabel(label)
            caption.setBuddy(widget)
            pair = QWidget()
            row = QHBoxLayout(pair)
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(caption)
            row.addWidget(widget)
            layout.addWidget(pair)
        layout.addWidget(self.scope_id_edit)
        layout.addWidget(self.tag_edit)
        layout.addWidget(self.trash_check)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

        self._text_timer = QTimer(self)
        self._text_timer.setSingleShot(True)
        self._text_timer.setInterval(TEXT_DEBOUNCE_MS)
        self._text_timer.timeout.connect(self._emit)
        for box in (self.type_box, self.scope_box, self.category_box):
            box.currentIndexChanged.connect(self._emit)
        self.trash_check.toggled.connect(self._emit)
        for edit in (self.scope_id_edit, self.tag_edit):
            edit.textChanged.connect(self._text_timer.start)
            edit.returnPressed.connect(self._emit)

    def set_facets(self, facets: Facets) -> None:
        """Show beside each choice how many memories of the view have it, and complete the
        tag field with the tags in use (the most used first)."""
        for box, counts in (
            (self.type_box, facets.types),
            (self.scope_box, facets.scopes),
            (self.category_box, facets.categories),
        ):
            box.setItemText(0, f"{ANY} ({facets.total})")
            for index in range(1, box.count()):
                value = box.itemData(index)
                box.setItemText(index, f"{value} ({counts.get(value, 0)})")
        self.tag_model.setStringList(list(facets.tags))

    def current_filter(self) -> TraceFilter:
        return TraceFilter(
            type=self.type_box.currentData(),
            scope=self.scope_box.currentData(),
            category=self.category_box.currentData(),
            scope_id=self.scope_id_edit.text().strip() or None,
            tag=self.tag_edit.text().strip() or None,
            deleted=self.trash_check.isChecked(),
        )

    def set_filter(self, value: TraceFilter) -> None:
        """Show `value` in the controls and emit once."""
        widgets = (self.type_box, self.scope_box, self.category_box, self.trash_check)
        for widget in widgets:
            widget.blockSignals(True)
        try:
            for box, wanted in (
                (self.type_box, value.type),
                (self.scope_box, value.scope),
                (self.category_box, value.category),
            ):
                box.setCurrentIndex(max(0, box.findData(wanted)))
            self.trash_check.setChecked(value.deleted)
        finally:
            for widget in widgets:
                widget.blockSignals(False)
        self.scope_id_edit.setText(value.scope_id or "")
        self.tag_edit.setText(value.tag or "")
        self._emit()

    def _emit(self) -> None:
        self._text_timer.stop()
        self.filter_changed.emit(self.current_filter())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.set_filter(TraceFilter())
            return
        super().keyPressEvent(event)
