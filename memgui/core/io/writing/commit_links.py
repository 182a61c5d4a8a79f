"""The graph rows and trace links an import commit writes after its traces.

An Obsidian wikilink becomes a `related_to` edge from the linking note's memory-graph node to
the memory-graph node of the note it names (found as Obsidian finds it: `wikilinks.py`), or,
when no note of the import has that name, to a concept node of that label — so a vault's
graph is the one Obsidian draws, its links not yet written as concept nodes (built here,
written in bulk by the commit). agent-memory JSONL links between traces are written over the
ids the traces finally took.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memgui.core.io.records import TRACE, ImportRecord
from memgui.core.io.writing.wikilinks import NoteIndex, aliases_of
from memgui.core.storage import journal_rows

if TYPE_CHECKING:
    from collections.abc import Callable

    from memgui.core.io.planning.plan import ImportPlan
    from memgui.core.storage.db import Database, WriteBatch

CONCEPT = "concept"  # the type of a node an Obsidian wikilink names
RELATED_TO = "related_to"


def concept_node(label: str, now: int) -> dict[str, Any]:
    return {
        "id": f"kn_{uuid.uuid4()}",
        "type": CONCEPT,
        "label": label,
        "properties": {},
        "confidence": 1.0,
        "source": {"type": "import"},
        "created_at": now,
    }


def related_edge(source: str, target: str, now: int) -> dict[str, Any]:
    return {
        "id": f"ke_{uuid.uuid4()}",
        "source_id": source,
        "target_id": target,
        "type": RELATED_TO,
        "weight": 1.0,
        "bidirectional": 0,
        "metadata": {},
        "created_at": now,
    }


def note_path(fields: Mapping[str, Any]) -> str:
    """The vault path of the note a trace record was read from ('' for other records)."""
    metadata = fields.get("metadata")
    path = metadata.get("source_file") if isinstance(metadata, dict) else None
    return path if isinstance(path, str) else ""


def note_index(records: list[ImportRecord], traces: dict[int, str]) -> NoteIndex:
    """The notes of an import that have a trace in the brain (new, updated or duplicate)."""
    notes = NoteIndex()
    for i, record in enumerate(records):
        trace_id = traces.get(i)
        path = note_path(record.fields) if record.kind == TRACE else ""
        if trace_id is not None and path:
            notes.add(path, trace_id, aliases_of(record.fields.get("metadata")))
    return notes


def write_trace_links(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    plan: ImportPlan,
    trace_ids: dict[str, str],
    held: Callable[[str], bool],
    now: int,
) -> bool:
    """Links between traces a source carried, over the final ids; True if any was new."""
    wrote = False
    for record in plan.records:
        for link in record.links:
            if "from_id" not in link:
                continue
            from_id, to_id = trace_ids.get(link["from_id"]), trace_ids.get(link["to_id"])
            if from_id is None or to_id is None or from_id == to_id:
                continue
            if not (held(from_id) and held(to_id)):
                continue
            if link["kind"] == "relates_to" and to_id < from_id:
                from_id, to_id = to_id, from_id
            created_at = link.get("created_at") or now
            db.conn.execute(
                "INSERT OR IGNORE INTO memory_links (brain_id, from_id, to_id, kind, "
                "created_at) VALUES (?, ?, ?, ?, ?)",
                (brain_id, from_id, to_id, link["kind"], created_at),
            )
            if db.conn.changes():
                row = {
                    "from_id": from_id,
                    "to_id": to_id,
                    "kind": link["kind"],
                    "created_at": created_at,
                }
                journal_rows.journal(db, batch, brain_id, "link", from_id, None, row)
                wrote = True
    return wrote
