"""Opening a brain by its address, on either engine, and copying one between them.

A path is a SQLite file (`Brain`); `postgresql://…?brain_id=NAME` is a shared brain
(`SharedBrain`). Both are a `storage.engine.BrainStore`, which is what a caller that must
work on both takes.
"""

from __future__ import annotations

import os

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.progress import Job
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage import postgres_copy
from memgui.core.storage.engine import BrainStore, is_postgres_address


def open_store(
    address: str | os.PathLike[str], brain_id: str | None = None, *, actor: str = "cli"
) -> BrainStore:
    """The brain at `address`: a SQLite file, made if missing, or a PostgreSQL brain."""
    if isinstance(address, str) and is_postgres_address(address):
        return SharedBrain.open(address, brain_id, actor=actor)
    return Brain.open(address, brain_id, actor=actor)


def copy_brain(
    source: str | os.PathLike[str], destination: str, brain_id: str | None = None
) -> Job[int]:
    """A job: copy the brain of the SQLite file `source` (its one brain, or `brain_id`) into
    the empty PostgreSQL brain `destination`, every row as stored
    (docs/shared-brains.md); returns how many traces it copied."""
    if isinstance(source, str) and is_postgres_address(source):
        raise InvalidArgument(
            "source",
            "must be a brain file: copying from PostgreSQL is not available yet",
            source,
        )
    if not is_postgres_address(destination):
        raise InvalidArgument(
            "destination", "must be a postgresql:// address with a brain_id", destination
        )
    if not os.path.isfile(source):
        raise InvalidArgument("source", f"must be an existing brain file (got {source})", source)
    with (
        Brain.open(source, brain_id, actor="copy", create=False) as from_brain,
        SharedBrain.open(destination, actor="copy") as to_brain,
    ):
        return (
            yield from postgres_copy.copy_to_postgres(
                from_brain.db, from_brain.brain_id, to_brain.conn, to_brain.address
            )
        )
