"""The SQLite export of a whole file that holds one brain: its pages copied, then cleaned.

When the export has no selection and every row of the source file belongs to this brain, the
row-by-row copy would write the same rows in the same order; SQLite's backup API copies the
file's pages instead, in one read snapshot (ten times less work at 100k traces). What the
row copy guarantees is then made true on the copy: triggers memgui did not make are dropped,
memgui's are made again from its own code, the derived tables are emptied, and both
full-text indexes and the vector index are rebuilt from the rows. Like any copy of the
file, it carries the file's unused space as it is (what memgui deleted is kept in its journal,
which every export holds, so that revert can put it back).
"""

from __future__ import annotations

import logging
from pathlib import Path

import apsw

from memgui.core.io.exporters.export_common import close_snapshot, columns, open_snapshot
from memgui.core.search import vectors
from memgui.core.storage import schema

log = logging.getLogger(__name__)


def _one_brain(src: apsw.Connection, brain_id: str) -> bool:
    """Whether every row of every table naming a brain names this one."""
    names = [
        name
        for (name,) in src.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )
    ]
    for name in names:
        if "brain_id" in columns(src, name):
            other = f'SELECT 1 FROM "{name}" WHERE brain_id IS NOT ? LIMIT 1'
            if src.execute(other, (brain_id,)).fetchall():
                return False
    return True


def copy_pages(out: apsw.Connection, path: Path, brain_id: str) -> bool:
    """Copy the brain file into `out` page by page when it holds this brain only.

    False, with nothing copied, when it does not (or when it has a vector index and
    sqlite-vec does not load here, so the index could not be rebuilt).
    """
    src = open_snapshot(path)
    try:
        listed = {r[0] for r in src.execute("SELECT name FROM sqlite_master")}
        if "memory_traces" not in listed or not _one_brain(src, brain_id):
            return False
        if vectors.VEC_TABLE in listed and not vectors.vec_available(out):
            return False
        # One step: the copy is the snapshot `src` holds, whatever writes the brain meanwhile.
        with out.backup("main", src, "main") as backup:
            backup.step(-1)
    finally:
        close_snapshot(src)
    return True


def clean_copy(out: apsw.Connection, path: Path, derived: frozenset[str]) -> set[str]:
    """Make a page copy what the row copy makes; returns the names of its tables."""
    master = list(out.execute("SELECT type, name FROM sqlite_master"))
    left_out = []
    memgui_triggers = False
    for kind, name in master:
        if kind != "trigger":
            continue
        out.execute(f'DROP TRIGGER "{name}"')
        if schema.is_memgui_trigger(name):
            memgui_triggers = True
        else:
            left_out.append(name)
    if memgui_triggers:  # made from memgui's own text, whatever the file says
        out.execute(schema.MEMGUI_TRIGGERS)
    if left_out:
        log.warning(
            "%s: left out of the export: triggers memgui did not make (%s)",
            path,
            ", ".join(left_out),
        )
    names = {name for kind, name in master if kind == "table"}
    for name in derived & names:
        out.execute(f'DELETE FROM "{name}"')
    return names
