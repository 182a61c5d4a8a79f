"""What `Brain` tells about its file beyond the memories: whether another program changed
it (`storage/commit_count.py`), what its first write will migrate, its memories counted
for the app's filter lists, and the rows the graph view reads. A base of the facade, which
stays the one entry point."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgui.core import brain_info
from memgui.core.model import Facets, check_int_range
from memgui.core.storage import migration
from memgui.core.storage.commit_count import CommitCounts, who_changed
from memgui.core.storage.migration import MigrationPlan

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from memgui.core.graph_view.rows import FileGraphRows
    from memgui.core.storage.db import Database

MAX_FACET_TAGS = 2_000  # the tags a tag field completes, most used first


class BrainFile:
    db: Database
    brain_id: str

    def data_version(self) -> int:
        return self.db.data_version()

    def commit_counts(self) -> CommitCounts:
        """Commits to the file by anyone and by this process, now (`storage/commit_count`)."""
        return self.db.commit_counts()

    @staticmethod
    def who_changed(then: CommitCounts, now: CommitCounts) -> str:
        """Between two `commit_counts()`: "nobody" else (this process's own commits and
        checkpoints), "others", or "unknown" (another program closed the file)."""
        return who_changed(then, now)

    def pending_migration(self) -> MigrationPlan | None:
        """What this brain's first write will migrate (an AgentOS brain, an older memgui
        brain), with the backup's path; None when nothing will."""
        return migration.pending(self.db)

    def facets(self, deleted: bool = False, tag_limit: int = MAX_FACET_TAGS) -> Facets:
        """The live (or trashed) memories counted by type, scope, category and tag. A scan
        of the brain: run it off a GUI thread."""
        check_int_range("tag_limit", tag_limit, 1, MAX_FACET_TAGS)
        return brain_info.facets(self.db, self.brain_id, bool(deleted), tag_limit)

    def graph_rows(self) -> AbstractContextManager[FileGraphRows]:
        """What the graph view reads (`graph_view/rows.py`), under the connection's lock."""
        from memgui.core.graph_view.rows import file_rows

        return file_rows(self.db, self.brain_id)
