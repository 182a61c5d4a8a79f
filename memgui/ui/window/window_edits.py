"""Every edit the window offers, each pushed as an undoable command over the core.

Errors never open a dialog: a bad value shows under its field, a conflict swaps the
editor for theirs-vs-mine, anything else goes to the status bar. Dialogs only ask (which
tag, which trace to link, "purge for good?"); tests answer them through `self.ask`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QInputDialog, QMessageBox

from memgui.core.errors import Conflict, InvalidArgument, MemguiError, NotFound
from memgui.core.model import JournalEntry, RelatedSummary, Trace
from memgui.ui import commands as cmd
from memgui.ui.dialogs.merge_dialog import MergeDialog
from memgui.ui.dialogs.trace_picker import TracePicker
from memgui.ui.models.memory_names import name_of

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.ui.main_window import MainWindow
    from memgui.ui.session import BrainSession


class Asker:
    """The questions edits ask; a test replaces this object with fixed answers."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window

    def unsaved_edit(self) -> str:
        """'save', 'discard' or 'cancel'."""
        box = QMessageBox.question(
            self.window,
            "Unsaved edit",
            "The memory you are editing has unsaved changes.",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
        )
        return {
            QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard",
        }.get(box, "cancel")

    def confirm_purge(self, count: int) -> bool:
        noun = "this memory" if count == 1 else f"these {count} memories"
        answer = QMessageBox.warning(
            self.window,
            "Purge for good",
            f"Remove {noun} from the brain for good?\n\nThis cannot be undone: purged "
            "memories are not in the trash and Undo cannot bring them back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def migration(self, plan: Any) -> bool:
        """May memgui's first write migrate this older brain (what changes, the backup)?"""
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Information)
        box.setWindowTitle("Migrate this brain?")
        what = (
            "an AgentOS brain" if plan.agentos else f"a memgui brain of schema {plan.from_version}"
        )
        box.setText(
            f"This is {what}. Your first change migrates it to memgui's schema "
            f"{plan.to_version}, once; after that it opens as it is."
        )
        changes = "".join(f"<li>{change}</li>" for change in plan.changes)
        box.setInformativeText(
            f"<ul>{changes}</ul>Before anything changes, a backup of the whole file is "
            f"written to<br><b>{plan.backup}</b>"
        )
        migrate = box.addButton("Migrate and save", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Keep it as it is", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(migrate)
        box.exec()
        return box.clickedButton() is migrate

    def tag(self, title: str, choices: list[str] | None) -> str | None:
        if choices:
            text, ok = QInputDialog.getItem(self.window, title, "Tag:", choices, 0, True)
        else:
            text, ok = QInputDialog.getText(self.window, title, "Tag:")
        return text.strip() if ok and text.strip() else None

    def merge(self, traces: list[Trace]) -> tuple[str, str] | None:
        """(the id of the memory to keep, the merged text), or None when cancelled."""
        dialog = MergeDialog(traces, self.window)
        return (dialog.survivor_id(), dialog.merged_content()) if dialog.exec() else None

    def link_target(self, brain: Brain, exclude: str) -> tuple[str, str] | None:
        window = self.window
        if window.session is None:
            return None
        open_reader = window.semantic.reader_factory(window.session)
        picker = TracePicker(
            brain, exclude, window, runner=window.query_runner, open_reader=open_reader
        )
        return picker.choice() if picker.exec() else None


class WindowEdits(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.ask = Asker(window)
        a = window.window_actions
        a.new_memory.triggered.connect(self.new_memory)
        a.save.triggered.connect(window.detail.editor.request_save)
        a.delete.triggered.connect(lambda: self.set_deleted(True))
        a.restore.triggered.connect(lambda: self.set_deleted(False))
        a.purge.triggered.connect(self.purge_selected)
        a.merge.triggered.connect(self.merge_selected)
        a.add_tag.triggered.connect(lambda: self.tag_selected(add=True))
        a.remove_tag.triggered.connect(lambda: self.tag_selected(add=False))
        a.add_link.triggered.connect(self.add_link)
        detail = window.detail
        detail.editor.save_requested.connect(self.save)
        detail.links.add_requested.connect(self.add_link)
        detail.links.remove_requested.connect(self.remove_link)
        detail.links.open_requested.connect(self.open_trace)
        detail.history.restore_requested.connect(self.restore_version)
        window.welcome.new_memory_requested.connect(self.new_memory)

    @property
    def session(self) -> BrainSession:
        """The open brain's (every edit needs one: its actions are off while none is open)."""
        session = self.window.session
        if session is None:
            raise RuntimeError("no brain is open")
        return session

    def _push(self, command: cmd.CoreCommand) -> Any:
        """Run a command; report a refusal in the status bar. Returns None on failure."""
        try:
            return cmd.push(self.session, command)
        except MemguiError as exc:
            self.window.show_error(str(exc))
            return None

    # --- the editor ---------------------------------------------------------------------

    def new_memory(self) -> None:
        if self.window.session is None or not self.settle_unsaved_edit():
            return
        self.window.pages.setCurrentWidget(self.window.splitter)
        self.window.detail.start_new(self.session.brain)

    def save(self, trace_id: str | None, fields: dict[str, Any], version: int) -> None:
        editor = self.window.detail.editor
        if trace_id is None:
            command: cmd.CoreCommand = cmd.NewTraceCommand(self.session, fields)
        elif not fields:
            editor.load(editor.trace)
            return
        else:
            command = cmd.SaveTraceCommand(self.session, trace_id, fields, version)
        try:
            saved = cmd.push(self.session, command)
        except Conflict as exc:
            theirs = self.session.brain.get(exc.trace_id)
            history = self.session.brain.history(exc.trace_id)
            editor.show_conflict(theirs, history[-1].actor if history else "")
            return
        except InvalidArgument as exc:
            editor.show_core_error(exc)
            return
        except MemguiError as exc:
            self.window.show_error(str(exc))
            return
        editor.load(saved)
        self.window.detail.mark_stale()
        self.window.show_message(f"Saved “{saved.label}” (version {saved.version})")
        if trace_id is None:
            self.window.select_when_ready(saved.id)

    def settle_unsaved_edit(self) -> bool:
        """Before the editor shows something else: save, discard, or stay (False)."""
        editor = self.window.detail.editor
        if not editor.dirty:
            return True
        answer = self.ask.unsaved_edit()
        if answer == "cancel":
            return False
        if answer == "save":
            editor.request_save()
            return not editor.dirty
        editor.revert()  # the memory as stored now, not the version the edit began from
        return True

    # --- the selection ------------------------------------------------------------------

    def set_deleted(self, deleted: bool) -> None:
        ids = self.window.selected_ids()
        if not ids or not self.settle_unsaved_edit():
            return  # an unsaved edit of a memory about to go is saved, dropped, or kept
        after = self._row_after(ids)
        try:
            cmd.push(self.session, cmd.SetDeletedCommand(self.session, ids, deleted))
        except MemguiError as exc:
            self.window.show_error(str(exc))
            return
        verb = "Moved to the trash" if deleted else "Restored from the trash"
        self.window.show_message(f"{verb}: {cmd.memories(len(ids))} (Ctrl+Z undoes)")
        if after is not None:
            self.window.select_when_ready(after)  # the rows leave the list: go on below

    def _row_after(self, ids: list[str]) -> str | None:
        """The row the table moves to when `ids` leave it: the next one, else the one before."""
        model = self.window.model
        if model is None:
            return None
        rows = [model.row_of(i) for i in ids]
        below, above = max(rows) + 1, min(rows) - 1
        for row in (below, above):
            trace_id = model.id_at(row) if 0 <= row < model.rowCount() else None
            if trace_id is not None and trace_id not in ids:
                return trace_id
        return None

    def purge_selected(self) -> None:
        ids = self.window.selected_ids()
        if not ids or not self.settle_unsaved_edit() or not self.ask.confirm_purge(len(ids)):
            return
        brain = self.session.brain
        try:
            # Not a command: a purge leaves the brain for good and the undo stack with it.
            _, changes = self.session.batched(lambda: [brain.purge(i) for i in ids])
        except MemguiError as exc:
            self.window.show_error(str(exc))
            return
        self.session.publish(changes, self)
        self.window.show_message(f"Purged {len(ids)} for good (this cannot be undone)")

    def merge_selected(self) -> None:
        ids = self.window.selected_ids()
        if len(ids) < 2 or not self.settle_unsaved_edit():
            return  # as for Delete: the merged text is built from what is saved
        traces = [t for t in (self.session.brain.get_many(ids).get(i) for i in ids) if t]
        choice = self.ask.merge(traces)
        if choice is None:
            return
        keep, content = choice
        survivor = self._push(cmd.MergeCommand(self.session, ids, content, keep))
        if survivor is not None:
            self.window.show_message(f"Merged {len(ids)} memories into “{survivor.label}”")
            self.window.select_when_ready(survivor.id)

    def tag_selected(self, add: bool) -> None:
        ids = self.window.selected_ids()
        if not ids:
            return
        choices = None
        if not add:
            found = self.session.brain.get_many(ids).values()
            choices = sorted({tag for trace in found for tag in trace.tags})
        tag = self.ask.tag("Add tag" if add else "Remove tag", choices)
        if tag:
            self._push(cmd.TagCommand(self.session, ids, tag, add))

    # --- links and history --------------------------------------------------------------

    def add_link(self) -> None:
        trace = self.window.detail.trace
        if trace is None or trace.deleted:
            return  # a memory in the trash takes no new links (as the Links tab says)
        choice = self.ask.link_target(self.session.brain, trace.id)
        if choice is not None:
            other, kind = choice
            self._push(cmd.LinkCommand(self.session, trace.id, other, kind, add=True))

    def remove_link(self, link: RelatedSummary) -> None:
        trace = self.window.detail.trace
        if trace is None:
            return
        ends = (trace.id, link.id) if link.direction == "out" else (link.id, trace.id)
        self._push(cmd.LinkCommand(self.session, *ends, link.stored_kind, add=False))

    def open_trace(self, trace_id: str) -> None:
        if self.window.select_id(trace_id):
            return
        found = self.session.brain.get_many([trace_id]).get(trace_id)
        if found is None:
            self.window.show_message("That memory is no longer in the brain")
        elif found.deleted and not self.window.filter_bar.trash_check.isChecked():
            self.window.show_message(
                f"“{name_of(found)}” is in the trash (Ctrl+Shift+D shows the trash)"
            )
        else:
            self.window.show_message(
                f"“{name_of(found)}” is not in the list: the search or a filter hides it "
                "(Esc in the filter bar clears them)"
            )

    def restore_version(self, entry: JournalEntry) -> None:
        try:
            current = self.session.brain.get(entry.trace_id)
        except NotFound as exc:
            self.window.show_error(str(exc))
            return
        snapshot = entry.after or {}
        version = snapshot.get("version", "?")
        command = cmd.RestoreVersionCommand(self.session, current, snapshot)
        if self._push(command) is None:
            return  # refused: the status bar says why
        if command.changed_something:
            self.window.show_message(f"Restored version {version}")
        else:
            self.window.show_message(f"The memory already holds version {version} as it was")
