"""Importing into a shared brain: the flow of a file (plan → review → commit → revert) with
every reader, against a staged file of the brain.

`SharedImport(shared)` copies the brain, in one read snapshot of the server, into a file in
a private temporary folder (`stage`), plans against that file (`plan`: duplicates, ids and
updates are found as in any file) and commits the reviewed plan into it (`commit`), then
replays that batch on the server in one transaction holding the brain's advisory lock
(`storage/postgres_import.py`; `storage/postgres_locks.py`: a long operation another
session holds is refused, naming it): the same rows and journal entries, under the batch id the
result names, which `SharedBrain.revert` undoes. A trace the import changes that another
writer changed since the plan is a `Conflict`, and nothing is written on the server; the
staged file is dropped then, and the import must be planned again. A trace another writer
added meanwhile with a text the import also brings is not found a duplicate: the plan read
the brain as it was.
`close` removes the staged file.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.options import ImportOptions
from memgui.core.io.planning.plan import ImportPlan, plan
from memgui.core.io.writing.commit import ImportResult, commit
from memgui.core.progress import Job, Progress
from memgui.core.search.vectors import DIMENSIONS_KEY, MODEL_KEY
from memgui.core.storage import postgres_import, postgres_to_file, postgres_vectors

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain


class SharedImport:
    """One import into `shared`, planned and committed through a staged file of it."""

    def __init__(self, shared: SharedBrain) -> None:
        self.shared = shared
        self._folder: Path | None = None
        self.staged: Brain | None = None

    def __enter__(self) -> SharedImport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.staged is not None:
            self.staged.close()
            self.staged = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def stage(self) -> Job[Brain]:
        """A job: the brain copied into the staged file (again, when staged before: a plan
        is made against the brain as it is now); returns that file's brain."""
        self.close()
        self._folder = Path(tempfile.mkdtemp(prefix="memgui-import-"))
        shared = self.shared
        brain = Brain.open(self._folder / "brain.sqlite", shared.brain_id, actor=shared.actor)
        self.staged = brain
        yield from postgres_to_file.copy_into_file(shared.conn, shared.address, brain.db)
        return brain

    def plan(
        self,
        source: str | Path,
        format: str = "auto",
        options: ImportOptions | None = None,
        cancel_requested: Callable[[], bool] | None = None,
    ) -> Job[ImportPlan]:
        """A job: stage the brain, then plan the import of `source` against it (`io.plan`)."""
        staged = yield from self.stage()
        return (yield from plan(staged, source, format, options, cancel_requested))

    def commit(
        self,
        the_plan: ImportPlan,
        accept: Iterable[int] | None = None,
        cancel_requested: Callable[[], bool] | None = None,
    ) -> Job[ImportResult]:
        """A job: commit the reviewed plan into the staged file, then write that batch on
        the server (see the module's doc); the result names the server's batch."""
        staged = self.staged
        if staged is None:
            raise InvalidArgument(
                "plan", "must be made by this import's plan() first (nothing is staged)"
            )
        result = yield from commit(staged, the_plan, accept, cancel_requested)
        if result.batch_id is None:
            return result
        entries = staged.batch_entries(result.batch_id)
        yield Progress(0, None, f"writing {len(entries)} changes into the shared brain")
        shared = self.shared
        try:
            actor = f"import:{the_plan.format}"
            with shared.writing(actor, kind="import", lock="import") as batch:
                postgres_import.apply(shared.conn, batch, shared.brain_id, staged.db, entries)
                _carry_pin(self.shared, staged)
        except BaseException:
            # The staged file holds a batch the server refused: it is dropped, and the
            # import planned again against the brain as it is now.
            self.close()
            raise
        result.batch_id = batch.batch_id
        result.changes = batch.changes()
        return result


def _carry_pin(shared: SharedBrain, staged: Brain) -> None:
    """The embedding model an import pinned in the staged file (vectors it brought)."""
    found = dict(
        staged.db.conn.execute(
            "SELECT key, value FROM brain_meta WHERE brain_id = ? AND key IN (?, ?)",
            (staged.brain_id, MODEL_KEY, DIMENSIONS_KEY),
        )
    )
    if DIMENSIONS_KEY in found and postgres_vectors.pinned_model(shared.conn, shared.brain_id) == (
        None,
        None,
    ):
        postgres_vectors.pin_model(
            shared.conn, shared.brain_id, found.get(MODEL_KEY, ""), int(found[DIMENSIONS_KEY])
        )
