"""Changes other processes make to the open brain, shown within a second.

A QTimer asks SQLite for `PRAGMA data_version` (it moves only when another connection
commits); when it moved, the watcher reads the new journal rows, skips the batches this
window wrote itself, and publishes one `Changes` per actor on the bus with a summary such
as "cli added 1 memory". Each poll reads at most one page of journal rows on the GUI
thread; when more wait (an import's thousands), the next page is read a moment later, so the
window is never held for more than one small page (1,000 rows held it for 15–25 ms).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from PySide6.QtCore import QObject, QTimer, Signal

from memgui.core.errors import BrainFileLost, MemguiError
from memgui.core.model import Changes, JournalEntry, LinkKey
from memgui.ui.session import BrainSession

POLL_MS = 300
PAGE = 200
NEXT_PAGE_MS = 10  # a full page was read: the next one soon, after the window had a turn

_VERBS = {
    "add": "added",
    "update": "updated",
    "forget": "deleted",
    "restore": "restored",
    "purge": "purged",
    "merge": "merged",
    "revert": "reverted",
    "link": "linked",
    "unlink": "unlinked",
}


def summarize(actor: str, entries: list[JournalEntry]) -> str:
    """'cli added 2 memories, updated 1' — one phrase per operation, in journal order."""
    ops = Counter(e.op for e in entries)
    parts = []
    for op, count in ops.items():
        verb = _VERBS.get(op, op)
        noun = "link" if op in ("link", "unlink") else "memory"
        plural = "memories" if noun == "memory" else "links"
        parts.append(f"{verb} {count} {noun if count == 1 else plural}")
    return f"{actor or 'another program'} {', '.join(parts)}"


_ADDS, _REMOVES = frozenset({"add"}), frozenset({"purge", "expire"})
_OTHER_ROWS = frozenset(
    {"document", "chunk", "image", "conversation", "message", "feedback", "review"}
)


def changes_of(entries: list[JournalEntry]) -> Changes:
    """What another process's journal rows changed. They are read without a trace's states
    (`journal_since(states=False)`), so an op that may add or edit (an import, a revert)
    names its trace as edited: a view reads it again by id either way."""
    added: set[str] = set()
    edited: set[str] = set()
    removed: set[str] = set()
    links: dict[bool, set[LinkKey]] = {True: set(), False: set()}
    rows: dict[str, set[str]] = {"node": set(), "edge": set()}
    others: set[tuple[str, str]] = set()
    for entry in entries:
        link = entry.after or entry.before
        if entry.op in ("link", "unlink") and link:
            key = LinkKey(link["from_id"], link["to_id"], link["kind"])
            links[entry.op == "link"].add(key)
        elif entry.op in rows:
            rows[entry.op].add(entry.trace_id)
        elif entry.op in _OTHER_ROWS:
            others.add((entry.op, entry.trace_id))
        elif entry.trace_id:
            (added if entry.op in _ADDS else removed if entry.op in _REMOVES else edited).add(
                entry.trace_id
            )
    actor = entries[-1].actor if entries else ""
    return Changes(
        kind="external",
        actor=actor,
        added=frozenset(added),
        edited=frozenset(edited - added - removed),
        removed=frozenset(removed - added),
        links_added=frozenset(links[True]),
        links_removed=frozenset(links[False]),
        nodes=frozenset(rows["node"]),
        edges=frozenset(rows["edge"]),
        rows=frozenset(others),
    )


# Journal rows that change no memory: a person's review mark (core.activity).
NOT_MEMORY_OPS = frozenset({"review"})


class LiveWatcher(QObject):
    external_changed = Signal(object, str)  # (Changes, summary)
    journal_moved = Signal()  # another connection wrote journal rows (or wrote unjournaled)
    file_lost = Signal(str)  # why the open file can no longer be written (then it stops)

    def __init__(self, session: BrainSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.poll)
        self._next_page = QTimer(self)
        self._next_page.setSingleShot(True)
        self._next_page.setInterval(NEXT_PAGE_MS)
        self._next_page.timeout.connect(self.poll)
        self._version = session.brain.data_version()
        self._last_id = session.brain.last_journal_id()
        self._paged_at: int | None = None  # the data version a full page was read at
        # The data version moves for this process's own checkpoints and second connections
        # too: commits counted at the last look tell another program's change from those.
        self._counts = session.brain.commit_counts()
        self._suspected = False  # another program seemed to write: confirmed at the next look

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._next_page.stop()

    @property
    def paging(self) -> bool:
        """A full page of journal rows was read: the next is read soon, before anything new."""
        return self._next_page.isActive()

    def poll(self) -> None:
        """Look once for other processes' changes; publish what they did."""
        brain = self.session.brain
        if self.session.writes_in_flight:
            return  # this window's import is writing: its rows are read once it has announced them
        try:
            lost = brain.file_lost()
            if lost is not None:
                raise BrainFileLost(str(brain.path), lost)
            version = brain.data_version()
            if version == self._version:
                return
            self._version = version
            # Ids and ops only: an import's thousands of before/after states stay on disk.
            entries = brain.journal_since(self._last_id, limit=PAGE, states=False)
        except BrainFileLost:
            self.stop()
            self.file_lost.emit(brain.file_lost() or "cannot be read any more")
            return
        except MemguiError:
            return  # a locked file: try again on the next tick
        paged_at, self._paged_at = self._paged_at, None
        if not entries and paged_at == version:
            return  # the pages of a write ended at a page's edge: nothing else changed
        if not entries:
            self._unjournaled_change()
            return
        self._counts, self._suspected = brain.commit_counts(), False  # the journal tells
        self._last_id = entries[-1].id
        if len(entries) == PAGE:
            # More rows may wait: read the next page soon. An empty one then means nothing
            # else changed, as long as the data version is still the one read here.
            self._paged_at = version
            self._version = -1
            self._next_page.start()
        self._publish(entries)

    def _unjournaled_change(self) -> None:
        """The data version moved with no journal row: this process's own checkpoint or
        indexing (nothing to do), another program writing without a journal (an AgentOS
        agent: re-read all and say so), or another program closing the file (which may have
        written first: re-read all, quietly)."""
        brain = self.session.brain
        now = brain.commit_counts()
        who = brain.who_changed(self._counts, now)
        if who == "others" and not self._suspected:
            # This process's commit on another connection may be counted a moment late.
            self._suspected = True
            self._version = -1  # look again at the next tick, moved or not
            return
        self._counts, self._suspected = now, False
        if who == "nobody":
            return
        self.session.bus.publish_external(Changes(kind="reset", actor="another program"))
        if who == "others":
            self.external_changed.emit(Changes(kind="reset"), "the brain changed on disk")
        self.journal_moved.emit()

    def _publish(self, entries: list[JournalEntry]) -> None:
        by_actor: dict[str, list[JournalEntry]] = defaultdict(list)
        for entry in entries:
            if entry.op in NOT_MEMORY_OPS:
                continue
            if not self.session.bus.is_own_batch(entry.batch_id):
                by_actor[entry.actor].append(entry)
        for actor, own_entries in by_actor.items():
            changes = changes_of(own_entries)
            self.session.bus.publish_external(changes)
            self.external_changed.emit(changes, summarize(actor, own_entries))
        self.journal_moved.emit()
