"""The editor of one trace: content, tags, type, category, scope, scope id, TTL.

Values are checked as they are typed with the core's own validators, and the message shows
under the field. Save asks the window for a compare-and-set update of the fields that
changed against the version that was loaded; a conflict swaps in the `ConflictView`.
"""

from __future__ import annotations

import html
import re
from typing import Any

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from memgui.core.errors import InvalidArgument
from memgui.core.model import (
    CATEGORIES,
    INGEST_CATEGORIES,
    SCOPES,
    TYPES,
    Trace,
    check_content,
    check_tags,
    check_ttl,
    now_ms,
)
from memgui.ui.models.trace_columns import format_ms
from memgui.ui.theme import colours
from memgui.ui.views.conflict_view import ConflictView
from memgui.ui.views.field_words import in_field_words
from memgui.ui.views.tag_editor import TagEditor
from memgui.ui.views.undo_keys import is_redo, is_undo

UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800, "y": 31_557_600}
_TTL = re.compile(r"^\s*(\d+)\s*([smhdwy]?)\s*$")
ERROR_STYLE = f"color: {colours.ERROR};"


def parse_ttl(text: str) -> int | None:
    """'' → no expiry; '90', '30m', '12h', '7d', '2w', '1y' → seconds (bounds checked)."""
    if not text.strip():
        return None
    match = _TTL.match(text.lower())
    if match is None:
        raise InvalidArgument(
            "ttl_secs", f"must be seconds or a number with s, m, h, d, w or y (got {text!r})", text
        )
    return check_ttl(int(match.group(1)) * UNITS[match.group(2)])


def format_ttl(expires_at: int | None, now_ms: int) -> str:
    """The time left until `expires_at`, in the largest whole unit (editor display)."""
    if expires_at is None:
        return ""
    # Rounded up: read back just after a save, "5m" has 299.9 s left, which is still 5m.
    seconds = max(1, -(-(expires_at - now_ms) // 1000))
    if seconds >= 3600:
        # Whole minutes: the few seconds since the save would turn "7d" into "168h".
        seconds = -(-seconds // 60) * 60
    for unit in ("y", "w", "d", "h", "m"):
        if seconds % UNITS[unit] == 0 or seconds >= UNITS[unit] * 10:
            return f"{round(seconds / UNITS[unit])}{unit}"
    return str(seconds)


class TermHighlighter(QSyntaxHighlighter):
    """Marks the current search words in the content editor."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._pattern: re.Pattern[str] | None = None
        self._format = QTextCharFormat()
        self._format.setBackground(QColor(colours.HIGHLIGHT))
        self._format.setForeground(QColor(colours.BLACK))

    def set_terms(self, terms: list[str]) -> None:
        joined = "|".join(re.escape(t) for t in terms)
        self._pattern = re.compile(joined, re.IGNORECASE) if terms else None
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        if self._pattern is None:
            return
        for match in self._pattern.finditer(text):
            self.setFormat(match.start(), match.end() - match.start(), self._format)


class TraceEditor(QWidget):
    save_requested = Signal(object, dict, int)  # (trace id or None for new, fields, version)
    dirty_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace: Trace | None = None  # the version the edit is based on
        self._latest: Trace | None = None  # the stored version, when it moved under an edit
        self._gone_id: str | None = None  # the memory removed under an unsaved edit
        self.read_only = False
        self._loading = False
        self._dirty = False
        self._new = False
        self._build_form()
        self.conflict = ConflictView()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.form_page)
        self.stack.addWidget(self.conflict)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)
        self._theirs: Trace | None = None  # the other version while a conflict shows
        self.conflict.take_theirs.connect(self._take_theirs)
        self.conflict.keep_mine.connect(self._keep_mine)
        self.conflict.edit_again.connect(self._edit_again)
        self.highlighter = TermHighlighter(self.content.document())
        self.load(None)

    def _build_form(self) -> None:
        self.form_page = QWidget()
        self.banner_box = QFrame()
        self.banner_box.setObjectName("editor_banner_box")
        self.banner_box.setStyleSheet(
            f"#editor_banner_box {{ background: {colours.BANNER}; }}"
            f"#editor_banner_box QLabel {{ color: {colours.BANNER_TEXT}; }}"
        )
        self.banner = QLabel()
        self.banner.setObjectName("editor_banner")
        self.banner.setWordWrap(True)
        # Shown only when the memory was removed under an unsaved edit: the text has no
        # memory left to save into, so the person chooses where it goes.
        self.save_new_button = QPushButton("Save as new memory")
        self.save_new_button.setToolTip("Save the text kept here as a new memory (Ctrl+S)")
        self.discard_button = QPushButton("Discard")
        self.discard_button.setToolTip("Drop the text kept here")
        banner_buttons = QHBoxLayout()
        banner_buttons.addStretch(1)
        banner_buttons.addWidget(self.save_new_button)
        banner_buttons.addWidget(self.discard_button)
        banner_column = QVBoxLayout(self.banner_box)
        banner_column.setContentsMargins(4, 4, 4, 4)
        banner_column.addWidget(self.banner)
        banner_column.addLayout(banner_buttons)
        self._hide_banner()
        self.content = QPlainTextEdit()
        self.content.setObjectName("content_edit")
        self.content.setAccessibleName("Content")
        self.content.setToolTip("The memory's text")
        self.content.setTabChangesFocus(True)
        self.content.installEventFilter(self)
        self.tags = TagEditor()
        self.type_box = self._combo("Type", TYPES)
        self.category_box = self._combo("Category", ("",) + CATEGORIES + INGEST_CATEGORIES)
        self.scope_box = self._combo("Scope", SCOPES)
        self.scope_id_edit = QLineEdit()
        self.scope_id_edit.setAccessibleName("Scope id")
        self.scope_id_edit.setToolTip("Who or what the scope is about (a user id, a thread id…)")
        self.ttl_edit = QLineEdit()
        self.ttl_edit.setAccessibleName("TTL")
        self.ttl_edit.setPlaceholderText("never")
        self.ttl_edit.setToolTip("Time to live: seconds, or 30m, 12h, 7d, 2w, 1y. Empty: never.")
        self.info = QLabel()
        self.info.setObjectName("editor_info")
        self.info.setWordWrap(True)
        self.save_button = QPushButton("Save")
        self.save_button.setToolTip("Save the changes (Ctrl+S)")
        self.revert_button = QPushButton("&Revert")
        self.revert_button.setToolTip("Drop unsaved changes")
        self.errors: dict[str, QLabel] = {}

        form = QFormLayout()
        # A row holding an error label under its field gets a label of its own: the
        # form's label would take the holder widget as buddy, which cannot take focus.
        form.addRow(_label("Co&ntent", self.content), self._with_error("content", self.content))
        form.addRow(_label("Ta&gs", self.tags.field), self._with_error("tags", self.tags))
        form.addRow("&Type", self.type_box)
        form.addRow("&Category", self.category_box)
        form.addRow("&Scope", self.scope_box)
        form.addRow("Sco&pe id", self.scope_id_edit)
        form.addRow(
            _label("E&xpires in", self.ttl_edit), self._with_error("ttl_secs", self.ttl_edit)
        )
        buttons = QHBoxLayout()
        buttons.addWidget(self.info, 1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self.form_page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.banner_box)
        layout.addLayout(form, 1)
        layout.addLayout(buttons)

        self.content.textChanged.connect(self._on_edited)
        self.tags.tags_changed.connect(self._on_edited)
        for box in (self.type_box, self.category_box, self.scope_box):
            box.currentIndexChanged.connect(self._on_edited)
        for edit in (self.scope_id_edit, self.ttl_edit):
            edit.textChanged.connect(self._on_edited)
        self.save_button.clicked.connect(self.request_save)
        self.revert_button.clicked.connect(self.revert)
        self.save_new_button.clicked.connect(self.request_save)
        self.discard_button.clicked.connect(self.revert)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # The content box claims Ctrl+Z even when its own history is empty (just after a
        # load or a save): let the window's undo have the keys then.
        if (
            watched is self.content
            and event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
        ):
            document = self.content.document()
            if is_undo(event) and not document.isUndoAvailable():
                return True  # left unaccepted: the window's shortcut runs
            if is_redo(event) and not document.isRedoAvailable():
                return True
        return super().eventFilter(watched, event)

    @staticmethod
    def _combo(name: str, choices: tuple[str, ...]) -> QComboBox:
        box = QComboBox()
        box.addItems(list(choices))
        box.setAccessibleName(name)
        return box

    def _with_error(self, field: str, widget: QWidget) -> QWidget:
        holder = QWidget()
        column = QVBoxLayout(holder)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        column.addWidget(widget)
        label = QLabel()
        label.setObjectName(f"error_{field}")
        label.setStyleSheet(ERROR_STYLE)
        label.setWordWrap(True)
        label.hide()
        column.addWidget(label)
        self.errors[field] = label
        return holder

    # --- loading ------------------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        return self._dirty

    @property
    def is_new(self) -> bool:
        return self._new

    @property
    def is_gone(self) -> bool:
        """The memory was removed under an unsaved edit; the text waits in the form."""
        return self._gone_id is not None

    def load(self, trace: Trace | None, new: bool = False) -> None:
        """Show `trace` (None: nothing selected, or a blank new memory when `new`)."""
        self._loading = True
        self._new = trace is None and new
        self._latest = None
        self._gone_id = None
        try:
            self.trace = trace
            self.content.setPlainText(trace.content if trace else "")
            self.tags.set_tags(trace.tags if trace else ())
            self.type_box.setCurrentText(trace.type if trace else "semantic")
            self.category_box.setCurrentText((trace.category or "") if trace else "")
            self.scope_box.setCurrentText(trace.scope if trace else "user")
            self.scope_id_edit.setText(trace.scope_id if trace else "")
            self.ttl_edit.setText(format_ttl(trace.expires_at, now_ms()) if trace else "")
            self._loaded_ttl_text = self.ttl_edit.text()
        finally:
            self._loading = False
        self._hide_banner()
        for label in self.errors.values():
            label.hide()
        self.stack.setCurrentWidget(self.form_page)
        self.setEnabled(trace is not None or new)
        self._show_info()
        self._set_dirty(False)

    def _show_info(self) -> None:
        trace = self.trace
        if trace is None and self._gone_id is not None:
            self.info.setText(f"<small>{self._gone_id} · removed from the brain</small>")
            return
        if trace is None:
            self.info.setText("New memory" if self._new else "No memory selected")
            return
        parts = [trace.id, f"version {trace.version}", f"created {format_ms(trace.created_at)}"]
        if trace.title:
            parts.insert(0, f"<b>{html.escape(trace.title)}</b>")
        if trace.expires_at:
            parts.append(f"expires {format_ms(trace.expires_at)}")
        if trace.deleted:
            parts.append("in the trash")
        self.info.setText("<small>" + " · ".join(parts) + "</small>")

    def external_change(self, fresh: Trace, actor: str) -> None:
        """The loaded trace changed elsewhere: reload, or keep the edit and flag it."""
        if self.trace is None or fresh.id != self.trace.id or fresh.version == self.trace.version:
            return
        if not self._dirty:
            self.load(fresh)
            return
        self._latest = fresh  # what Revert shows: the memory as it is stored now
        self._show_banner(
            f"This memory changed elsewhere (by {actor or 'another program'}, now version "
            f"{fresh.version}). Your unsaved edit is kept; saving will show both versions."
        )

    def trace_gone(self, actor: str) -> bool:
        """The loaded trace left the brain (purged). An unsaved edit stays, flagged, as a
        new memory the person may save or discard; returns False when there was none."""
        if self.trace is None or not self._dirty:
            return False
        self._gone_id = self.trace.id
        self.trace = None
        self._latest = None
        self._new = True  # Save creates a memory from the form, as for Ctrl+N
        self._show_banner(
            f"This memory was removed from the brain (by {actor or 'another program'}). "
            "Your unsaved text is kept here: save it as a new memory, or discard it.",
            gone=True,
        )
        self._show_info()
        self._set_dirty(True)
        return True

    def absorb(self, fresh: Trace) -> None:
        """This window changed the loaded trace under an unsaved edit (its own undo, redo, a
        tag on the selection): the fields the person has not touched take the new values,
        the touched ones stay, and the next save is based on `fresh`. It is not someone
        else's change, so no note, and no conflict with oneself on save."""
        if self.trace is None or fresh.id != self.trace.id:
            return
        touched = self._touched()
        self._loading = True
        try:
            if "content" not in touched and self.content.toPlainText() != fresh.content:
                self.content.setPlainText(fresh.content)
            if "tags" not in touched:
                self.tags.set_tags(fresh.tags)
            if "type" not in touched:
                self.type_box.setCurrentText(fresh.type)
            if "category" not in touched:
                self.category_box.setCurrentText(fresh.category or "")
            if "scope" not in touched:
                self.scope_box.setCurrentText(fresh.scope)
            if "scope_id" not in touched:
                self.scope_id_edit.setText(fresh.scope_id)
            if "ttl" not in touched:
                self.ttl_edit.setText(format_ttl(fresh.expires_at, now_ms()))
        finally:
            self._loading = False
        self.rebase(fresh)
        self.validate()

    def _touched(self) -> set[str]:
        """The fields the person changed since the load (the TTL by its text: no parsing)."""
        values = self.values()
        touched = {"ttl"} if values.pop("ttl") != self._loaded_ttl_text else set()
        for key, value in values.items():
            stored = getattr(self.trace, key)
            if (list(stored) if key == "tags" else stored) != value:
                touched.add(key)
        return touched

    def revert(self) -> None:
        """Drop the unsaved edit: show the memory as stored now (nothing, if it is gone)."""
        if self._gone_id is not None:
            self.load(None)
        else:
            self.load(self._latest or self.trace)

    def _show_banner(self, text: str, gone: bool = False) -> None:
        self.banner.setText(text)
        self.save_new_button.setVisible(gone)
        self.discard_button.setVisible(gone)
        self.banner_box.show()

    def _hide_banner(self) -> None:
        self.banner_box.hide()

    # --- values and validation ----------------------------------------------------------

    def values(self) -> dict[str, Any]:
        return {
            "content": self.content.toPlainText(),
            "tags": self.tags.tags(),
            "type": self.type_box.currentText(),
            "category": self.category_box.currentText() or None,
            "scope": self.scope_box.currentText(),
            "scope_id": self.scope_id_edit.text().strip(),
            "ttl": self.ttl_edit.text().strip(),
        }

    def validate(self) -> dict[str, str]:
        """Check the form with the core's validators; show and return the messages."""
        values = self.values()
        problems: dict[str, str] = {}
        for field, check, value in (
            ("content", check_content, values["content"]),
            ("tags", check_tags, values["tags"]),
            ("ttl_secs", parse_ttl, values["ttl"]),
        ):
            try:
                check(value)
            except InvalidArgument as exc:
                problems[field] = in_field_words(exc)
        for field, label in self.errors.items():
            label.setText(problems.get(field, ""))
            label.setVisible(field in problems)
        self.save_button.setEnabled(not problems and (self._dirty or self.is_new))
        return problems

    def show_core_error(self, exc: InvalidArgument) -> None:
        """Put an error the core raised on save under its field (or the content field)."""
        field = exc.field.split("[", 1)[0]
        label = self.errors.get(field, self.errors["content"])
        label.setText(in_field_words(exc))
        label.show()

    def changes(self) -> dict[str, Any]:
        """For a loaded trace: the patch of fields that differ. For a new one: all fields."""
        values = self.values()
        ttl_text = values.pop("ttl")
        trace = self.trace
        if trace is None:
            return dict(values, ttl_secs=parse_ttl(ttl_text))
        touched = self._touched()
        patch = {key: value for key, value in values.items() if key in touched}
        if "ttl" in touched:
            patch["ttl_secs"] = parse_ttl(ttl_text)
        return patch

    def set_read_only(self, read_only: bool) -> None:
        """A brain opened read-only: its memories show (text still selectable), unchangeable."""
        self.read_only = read_only
        self.content.setReadOnly(read_only)
        for edit in (self.scope_id_edit, self.ttl_edit):
            edit.setReadOnly(read_only)
        for widget in (self.tags, self.type_box, self.category_box, self.scope_box):
            widget.setEnabled(not read_only)
        self.save_button.setVisible(not read_only)
        self.revert_button.setVisible(not read_only)

    def request_save(self) -> None:
        if self.read_only or self.validate() or not (self._dirty or self.is_new):
            return
        version = self.trace.version if self.trace else 0
        self.save_requested.emit(self.trace.id if self.trace else None, self.changes(), version)

    def show_conflict(self, theirs: Trace, actor: str) -> None:
        mine = self.values()
        mine["theirs_ttl"] = format_ttl(theirs.expires_at, now_ms())
        self._theirs = theirs
        self.conflict.show_conflict(theirs, mine, actor)
        self.stack.setCurrentWidget(self.conflict)

    def rebase(self, theirs: Trace) -> None:
        """Keep the form's values but base the next save on `theirs` (its version)."""
        self.trace = theirs
        self._latest = None
        self._loaded_ttl_text = format_ttl(theirs.expires_at, now_ms())
        self._hide_banner()
        self._show_info()
        self.stack.setCurrentWidget(self.form_page)
        self._set_dirty(self._differs())

    def _take_theirs(self) -> None:
        if self._theirs is not None:
            self.load(self._theirs)

    def _keep_mine(self) -> None:
        if self._theirs is not None:
            self.rebase(self._theirs)
            self.request_save()

    def _edit_again(self) -> None:
        if self._theirs is not None:
            self.rebase(self._theirs)

    def _on_edited(self, *_args: object) -> None:
        # Nothing loaded (no memory chosen): the empty form is no edit to check. The search
        # highlighter restyling the empty text reports it as a change.
        if self._loading or (self.trace is None and not self._new):
            return
        # Compare with what was loaded: format-only changes (the search highlighter) and
        # edits undone by hand leave the editor clean.
        self._set_dirty(self._differs())
        self.validate()

    def _differs(self) -> bool:
        if self.trace is None:
            values = self.values()
            return bool(values["content"].strip() or values["tags"])
        try:
            return bool(self.changes())
        except InvalidArgument:
            return True  # a TTL that does not parse is still an edit

    def _set_dirty(self, dirty: bool) -> None:
        changed = dirty != self._dirty
        self._dirty = dirty
        self.save_button.setEnabled(dirty or self.is_new)
        self.revert_button.setEnabled(dirty and (self.trace is not None or self.is_gone))
        if changed:
            self.dirty_changed.emit(dirty)


def _label(text: str, buddy: QWidget) -> QLabel:
    label = QLabel(text)
    label.setBuddy(buddy)
    return label
