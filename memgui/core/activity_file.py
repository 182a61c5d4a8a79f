"""Agent activity's way into a brain file: its reads under the brain's lock in one read
transaction, the review mark written in one write (`core/activity.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from memgui.core import journal
from memgui.core.activity import MarkWrite
from memgui.core.model import JournalEntry
from memgui.core.storage.activity_rows import FileActivityRows

if TYPE_CHECKING:
    from memgui.core.brain import Brain


class FileActivity:
    def __init__(self, brain: Brain) -> None:
        self.brain = brain

    def _page(self, batch_id: str, after_id: int, limit: int) -> list[JournalEntry]:
        return journal.batch_page(self.brain, batch_id, after_id, limit)

    @contextmanager
    def reading(self, purpose: str) -> Iterator[FileActivityRows]:
        db = self.brain.db
        with db.lock, db.reading(purpose):
            yield FileActivityRows(db, self.brain.brain_id, self._page)

    @contextmanager
    def writing(self, actor: str | None) -> Iterator[MarkWrite]:
        write = self.brain.write("review", kind="review", actor=actor)
        with write as batch:
            rows = FileActivityRows(self.brain.db, self.brain.brain_id, self._page, batch)
            done = MarkWrite(rows)
            yield done
        done.changes = write.changes
