"""The Agent activity view's undoable edits: revert changes or batches, mark them reviewed.

Each is a `CoreCommand`: done once in `execute()` by one core call whose returned `Changes`
names the journal batch it wrote, undone by reverting that batch (the core's compare-and-set
revert: a later change is a conflict, nothing is overwritten), redone by reverting the undo.
"""

from __future__ import annotations

from collections.abc import Sequence

from memgui.core.model import Changes
from memgui.ui.activity.activity_text import changes_word
from memgui.ui.commands import CoreCommand
from memgui.ui.session import ACTOR, BrainSession


class RevertChangesCommand(CoreCommand):
    """Revert a whole batch (`entry_ids` None) or some of its changes, as a new batch."""

    def __init__(
        self,
        session: BrainSession,
        batch_id: str,
        actor: str,
        entry_ids: Sequence[int] | None = None,
    ) -> None:
        what = "batch" if entry_ids is None else changes_word(len(entry_ids))
        super().__init__(session, f"Revert {what} by {actor}")
        self.reverted_batch = batch_id
        self.entry_ids = list(entry_ids) if entry_ids is not None else None

    def _perform(self) -> tuple[Changes, Changes]:
        brain = self.session.brain
        changes = brain.revert(self.reverted_batch, actor=ACTOR, entry_ids=self.entry_ids)
        return changes, changes


class MarkReviewedCommand(CoreCommand):
    """Mark batches reviewed, or (`through`) every change up to a journal id."""

    def __init__(
        self,
        session: BrainSession,
        batch_ids: Sequence[str] = (),
        through: int | None = None,
        text: str = "",
    ) -> None:
        default = "Mark all reviewed" if through is not None else "Mark reviewed"
        super().__init__(session, text or default)
        self.batch_ids = list(batch_ids)
        self.through = through

    def _perform(self) -> tuple[Changes, Changes]:
        changes = self.session.brain.mark_reviewed(self.batch_ids, self.through, actor=ACTOR)
        return changes, changes
