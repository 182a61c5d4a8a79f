"""The right-hand pane: the editor and the Links, Neighbours, History, Metadata, Similar and
Conversation tabs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTabWidget, QWidget

from memgui.core.model import Trace
from memgui.ui.views.conversation_view import ConversationTab
from memgui.ui.views.detail_tabs import DetailTab, HistoryTab, LinksTab, MetadataTab, NeighboursTab
from memgui.ui.views.similar_view import SimilarTab
from memgui.ui.views.trace_editor import TraceEditor

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.ui.jobs import JobRunner


class DetailPane(QTabWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("detail_pane")
        self.setAccessibleName("Memory details")
        self.editor = TraceEditor()
        self.links = LinksTab()
        self.neighbours = NeighboursTab()
        self.history = HistoryTab()
        self.metadata = MetadataTab()
        self.similar = SimilarTab()
        self.conversation = ConversationTab()
        # Alt letters no other visible control of the window uses (menus F/E/V/H; filters
        # Y/O/A; editor N/G/T/C/S/P/X/R): 24 captions share 21 letters, so Conversation
        # (Ctrl+Tab in the pane), Save (Ctrl+S) and Trash (Ctrl+Shift+D) go without one.
        self.addTab(self.editor, "&Memory")
        self.addTab(self.links, "Lin&ks")
        self.addTab(self.neighbours, "Neigh&bours")
        self.addTab(self.history, "H&istory")
        self.addTab(self.metadata, "Meta&data")
        self.addTab(self.similar, "Simi&lar")
        self.addTab(self.conversation, "Conversation")
        self._brain: Brain | None = None
        self._stale: set[DetailTab] = set()
        self.currentChanged.connect(self._refresh_current)

    @property
    def trace(self) -> Trace | None:
        return self.editor.trace

    def _tabs(self) -> tuple[DetailTab, ...]:
        return (
            self.links,
            self.neighbours,
            self.history,
            self.metadata,
            self.similar,
            self.conversation,
        )

    def set_runner(self, runner: JobRunner) -> None:
        """Run the slower lookups (similar memories) as jobs of `runner`."""
        self.similar.runner = runner

    def show_trace(self, brain: Brain | None, trace: Trace | None) -> None:
        """Show `trace` in the editor; the tabs reload when they are looked at."""
        self._brain = brain
        self.editor.load(trace)
        self._show_conversation_tab(trace)
        self.mark_stale()

    def start_new(self, brain: Brain) -> None:
        self._brain = brain
        self.setCurrentWidget(self.editor)
        self.editor.load(None, new=True)
        self._show_conversation_tab(None)
        self.mark_stale()
        self.editor.content.setFocus()

    def trace_changed(self, fresh: Trace, actor: str) -> None:
        """The shown trace changed (here or elsewhere): refresh without losing an edit."""
        self.editor.external_change(fresh, actor)
        self._show_conversation_tab(self.editor.trace)
        self.mark_stale()

    def own_change(self, fresh: Trace) -> None:
        """This window changed the shown trace under an unsaved edit (its undo, a bulk tag)."""
        self.editor.absorb(fresh)
        self.mark_stale()

    def trace_gone(self, actor: str) -> bool:
        """The shown trace left the brain: keep an unsaved edit (False: there was none)."""
        if not self.editor.trace_gone(actor):
            return False
        self._show_conversation_tab(None)
        self.mark_stale()
        return True

    def _show_conversation_tab(self, trace: Trace | None) -> None:
        # Only a memory imported from a chat has a conversation; the tab is left out for the
        # others so that the rest fit the pane's width without scroll arrows.
        conversation_id = trace.metadata.get("conversation_id") if trace is not None else None
        wanted = isinstance(conversation_id, str) and bool(conversation_id)
        index = self.indexOf(self.conversation)
        if wanted == self.isTabVisible(index):
            return
        if not wanted and self.currentWidget() is self.conversation:
            self.setCurrentWidget(self.editor)
        self.setTabVisible(index, wanted)

    def mark_stale(self) -> None:
        self._stale = set(self._tabs())
        self._refresh_current()

    def _refresh_current(self, *_args: object) -> None:
        tab = self.currentWidget()
        if tab in self._stale and self._brain is not None:
            self._stale.discard(tab)
            tab.show_trace(self._brain, self.editor.trace)
