"""Opening a brain by its address, on either engine, and copying one between them.

A path is a SQLite file (`Brain`); `postgresql://…?brain_id=NAME` is a shared brain
(`SharedBrain`). Both are a `storage.engine.BrainStore`, which is what a caller that must
work on both takes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export import export
from memgui.core.io.exporters.export_common import ExportOptions, ExportResult, link_into_place
from memgui.core.progress import Job
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage import postgres_copy, postgres_to_file
from memgui.core.storage.engine import BrainStore, is_postgres_address, parse_postgres_address


def open_store(
    address: str | os.PathLike[str], brain_id: str | None = None, *, actor: str = "cli"
) -> BrainStore:
    """The brain at `address`: a SQLite file, made if missing, or a PostgreSQL brain."""
    if isinstance(address, str) and is_postgres_address(address):
        return SharedBrain.open(address, brain_id, actor=actor)
    return Brain.open(address, brain_id, actor=actor)


def copy_brain(
    source: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    brain_id: str | None = None,
    *,
    read_only: bool = False,
) -> Job[int]:
    """A job: copy a brain between a file and PostgreSQL, either way, every row as stored
    (docs/shared-brains.md); returns how many traces it copied.

    File to PostgreSQL: the file's one brain (or `brain_id`) into an empty shared brain.
    PostgreSQL to file: the shared brain into a new file (an existing path is refused); with
    `read_only` the file is left without write permission (`memgui snapshot`)."""
    if isinstance(source, str) and is_postgres_address(source):
        if isinstance(destination, str) and is_postgres_address(destination):
            raise InvalidArgument(
                "destination", "must be a brain file when the source is PostgreSQL", destination
            )
        return (yield from _copy_to_new_file(source, brain_id, Path(destination), read_only))
    if read_only:
        raise InvalidArgument("source", "must be a postgresql:// address for a snapshot", source)
    if not (isinstance(destination, str) and is_postgres_address(destination)):
        raise InvalidArgument(
            "destination", "must be a postgresql:// address with a brain_id", str(destination)
        )
    if not os.path.isfile(source):
        raise InvalidArgument("source", f"must be an existing brain file (got {source})", source)
    with (
        Brain.open(source, brain_id, actor="copy", create=False) as from_brain,
        SharedBrain.open(destination, actor="copy") as to_brain,
    ):
        copied = yield from postgres_copy.copy_to_postgres(
            from_brain.db, from_brain.brain_id, to_brain.conn, to_brain.address
        )
        # Statistics of the rows just copied, now rather than at autovacuum's next turn:
        # without them the planner guessed a few hundred rows and sorted a 100k-trace brain
        # for the window's first page (300 ms) instead of reading its index.
        to_brain.conn.execute("ANALYZE memory_traces, memory_links, memgui_journal")
        return copied


def _copy_to_new_file(
    source: str, brain_id: str | None, destination: Path, read_only: bool
) -> Job[int]:
    """Made under a temporary name beside `destination` and linked into place only when
    complete: the path never holds a partial brain, and is never replaced."""
    parsed = parse_postgres_address(source, brain_id)  # checked before anything is made
    if os.path.lexists(destination):
        raise InvalidArgument(
            "destination", f"must be a new file ({destination} already exists)", str(destination)
        )
    if not destination.parent.is_dir():
        raise InvalidArgument(
            "destination",
            f"must be in an existing folder ({destination.parent} is not one)",
            str(destination),
        )
    tmp = destination.parent / f".{destination.name}.copy-tmp-{os.getpid()}"
    try:
        with (
            SharedBrain.open(source, brain_id, actor="copy") as from_brain,
            Brain.open(tmp, parsed.brain_id, actor="copy") as to_brain,
        ):
            done = yield from postgres_to_file.copy_into_file(
                from_brain.conn, from_brain.address, to_brain.db
            )
        if read_only:
            tmp.chmod(0o444)
        if not link_into_place(tmp, destination):
            raise InvalidArgument(
                "destination",
                f"must be a new file ({destination} appeared during the copy)",
                str(destination),
            )
    finally:
        for leftover in (tmp, *(tmp.with_name(tmp.name + end) for end in ("-wal", "-shm"))):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
    return done


def export_store(
    store: BrainStore,
    dest: str | Path | BinaryIO,
    format: str,
    options: ExportOptions | None = None,
) -> Job[ExportResult]:
    """A job: export a brain on either engine in any export format (`io.exporters.export`).

    A shared brain is first copied, in one read snapshot of the server, into a file in a
    private temporary folder, which the file's exporter then writes out, so every format
    says what a file's export says, of one moment of the brain; the copy is removed after."""
    if isinstance(store, Brain):
        return (yield from export(store, dest, format, options))
    if not isinstance(store, SharedBrain):
        raise InvalidArgument("brain", f"must be a Brain or a SharedBrain (got {store!r})")
    folder = Path(tempfile.mkdtemp(prefix="memgui-export-"))
    try:
        staged = folder / "brain.sqlite"
        with Brain.open(staged, store.brain_id, actor=store.actor) as to_brain:
            yield from postgres_to_file.copy_into_file(store.conn, store.address, to_brain.db)
            return (yield from export(to_brain, dest, format, options))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
