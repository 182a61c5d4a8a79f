"""The writes of one import commit, inside the caller's transaction and journal batch.

New traces go in bulk through `bulk_rows.insert_rows` (journaled, indexed for search as they
are written), edited ones through `store.update_trace` (journaled, full-text rows marked);
other rows through `journal_rows.insert_row` (journaled with an op of their kind, so a
revert removes them). Parents are written before children: traces, nodes, edges, documents,
chunks, images, conversations, messages; then trace links and Obsidian wikilinks
(`commit_links`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import apsw

from memgui.core.errors import InvalidArgument
from memgui.core.io.planning import brain_index
from memgui.core.io.planning.brain_index import sha256, user_of
from memgui.core.io.planning.validate import check_trace_fields, fresh_text, trace_snapshot
from memgui.core.io.readers.jsonl_fields import MemoryFields
from memgui.core.io.records import (
    CHUNK,
    CONVERSATION,
    DOCUMENT,
    DUPLICATE,
    EDGE,
    IMAGE,
    MESSAGE,
    NODE,
    TRACE,
    UPDATE,
    ImportRecord,
    built_afresh,
    plain_fields,
)
from memgui.core.io.writing import trace_rows
from memgui.core.io.writing.commit_links import (
    CONCEPT,
    RELATED_TO,
    concept_node,
    note_index,
    note_path,
    related_edge,
    write_trace_links,
)
from memgui.core.io.writing.wikilinks import NoteIndex
from memgui.core.merge_moves import memory_graph_node
from memgui.core.model import new_trace_id
from memgui.core.search import vectors
from memgui.core.search.vectors import VectorIndexUnavailable, sync_rows
from memgui.core.storage import bulk_rows, journal_rows, store
from memgui.core.storage.bulk_rows import EMBEDDING, ID
from memgui.core.storage.db import WriteBatch
from memgui.core.storage.transaction import extended_code

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.io.planning.plan import ImportPlan
    from memgui.core.io.writing.commit import ImportResult

ORDER = {TRACE: 0, NODE: 1, EDGE: 2, DOCUMENT: 3, CHUNK: 4, IMAGE: 5, CONVERSATION: 6, MESSAGE: 7}
OPS = {
    NODE: "node",
    EDGE: "edge",
    DOCUMENT: "document",
    CHUNK: "chunk",
    IMAGE: "image",
    CONVERSATION: "conversation",
    MESSAGE: "message",
}
BULK_ROWS = 5000  # traces per bulk insert
# Formats whose sources say nothing of when a memory was last used.
ACCESS_UNKNOWN = frozenset({"markdown", "obsidian", "chatgpt", "csv", "gsd"})
# A new trace queued for the bulk insert: record index, its row (`trace_rows`), its tags
# and title for the full-text indexes, and its snapshot (None for a JSONL memory's checked
# row, which needs none: it has no wikilinks).
Pending = tuple[int, trace_rows.Row, trace_rows.Texts, dict[str, Any] | None]


def trace_exists(brain: Brain, trace_id: str) -> bool:
    return store.fetch_row(brain.db, brain.brain_id, trace_id) is not None


def find_trace(brain: Brain, fields: Mapping[str, Any]) -> str | None:
    """A trace of the record's scope, scope id and user holding its text (live first)."""
    db = brain.db
    digest = sha256(fields["content"])
    sid = brain_index.scope_id_sql(db.trace_columns)
    with db.lock:
        rows = list(
            db.conn.execute(
                f"SELECT id, metadata FROM memory_traces WHERE brain_id = ? AND scope = ? "
                f"AND {sid} = ? AND (content = ? OR (json_valid(metadata) AND "
                "(json_extract(metadata, '$.content_hash') = ? OR "
                "json_extract(metadata, '$.import_hash') = ?))) ORDER BY deleted",
                (
                    brain.brain_id,
                    fields.get("scope") or "user",
                    fields.get("scope_id") or "",
                    fields["content"],
                    digest,
                    digest,
                ),
            )
        )
    user = user_of(fields.get("metadata"))
    for trace_id, metadata in rows:
        if user_of(store._loads(metadata, {})) == user:
            return trace_id
    return None


class RowWriter:
    """Writes one plan's chosen records; remembers what each source id became."""

    def __init__(
        self, brain: Brain, plan: ImportPlan, batch: WriteBatch, result: ImportResult
    ) -> None:
        self.brain, self.plan, self.batch, self.result = brain, plan, batch, result
        self.db = brain.db
        self.now = brain.now()
        self.trace_ids: dict[str, str] = {}  # source trace id -> id in the brain
        self.inserted: set[str] = set()  # ids of the traces this import wrote
        self.embedded: list[int] = []
        self.embedding_models: set[str | None] = set()  # what the sources say made them
        self.graph: brain_index.GraphIndex | None = None
        self.new_nodes: list[dict[str, Any]] = []  # wikilink nodes and edges, written at the end
        self.new_edges: list[dict[str, Any]] = []
        # Wikilinks wait until every note has its trace: (trace, label, linking note's path).
        self.wikilinks: list[tuple[dict[str, Any], str, str]] = []
        self.record_traces: dict[int, str] = {}  # record index -> the trace it is in the brain
        self.wrote_any = False
        self.written: set[int] = set()  # record indexes written (or queued to be)
        self.pending: list[Pending] = []
        self.indexed = 0  # new traces entered in the full-text indexes as they were written
        self.pending_rows: list[tuple[int, dict[str, Any]]] = []  # new messages to write
        self._map_duplicates()

    def _map_duplicates(self) -> None:
        for i, record in enumerate(self.plan.records):
            if record.kind == TRACE and record.existing_id is not None:
                self.record_traces[i] = record.existing_id
                source_id = record.fields.get("id")
                if isinstance(source_id, str):
                    self.trace_ids.setdefault(source_id, record.existing_id)

    def ordered(self, chosen: list[int]) -> list[int]:
        records = self.plan.records
        return sorted(chosen, key=lambda i: ORDER.get(records[i].kind, 9))

    def write(self, i: int) -> None:
        record = self.plan.records[i]
        if record.kind == TRACE and record.verdict != UPDATE:  # most of a big import
            fields = record.fields
            if (
                type(fields) is MemoryFields
                and fields.checked
                and not (record.links and _wikilinks(record))
            ):
                # Checked by its reader and not edited since: its row straight away.
                wanted = self._wanted(i, fields.trace_id)
                row, texts = trace_rows.checked_row(fields, self.brain.brain_id, wanted, self.now)
                self._queue(i, row, texts, None)
            else:
                afresh = built_afresh(fields)
                fields = plain_fields(fields)  # built once (lazy fields), checked, written
                try:
                    check_trace_fields(fields)
                except InvalidArgument as error:
                    record.refuse(error.field, f"{error.field} {error.problem}", error.value)
                    return
                self._trace(i, fields, afresh)
            self.written.add(i)
            return
        if self.pending:
            self._flush_traces()  # rows that name traces come after them
        if record.kind == MESSAGE and record.verdict != UPDATE:  # the rest of a big import
            self.pending_rows.append((i, self._row_values(i, "message")))
            if len(self.pending_rows) >= BULK_ROWS:
                self._flush_messages()
            return
        if self.pending_rows:
            self._flush_messages()
        if self._write(i):
            self.written.add(i)

    def _write(self, i: int) -> bool:
        record = self.plan.records[i]
        resolved = self.plan.resolved.get(i, {})
        try:
            if record.kind == TRACE:
                return self._trace_update(i)  # `write` queues new ones
            if record.kind == CONVERSATION and record.verdict == UPDATE:
                before = dict(resolved.get("before", {}), id=record.fields["id"])
                after = {k: record.fields[k] for k in ("id", "title", "updated_at")}
                journal_rows.update_row(
                    self.db, self.batch, self.brain.brain_id, "conversation", before, after
                )
                return True
            if record.kind in OPS:
                return self._row(i, OPS[record.kind])
        except apsw.ConstraintError as error:
            record.fail(f"could not be written: {_constraint(error)}")
        return False

    # --- traces ------------------------------------------------------------------------

    def _wanted(self, i: int, source_id: Any) -> str:
        """The id a new trace is written under (planning chose it; see `classify`)."""
        resolved = self.plan.resolved.get(i)
        if resolved is None:  # planned under its own id
            return source_id if isinstance(source_id, str) and source_id else new_trace_id()
        return resolved.get("id") or new_trace_id()

    def _trace(self, i: int, fields: dict[str, Any], afresh: bool) -> None:
        """Checked; queued and written in bulk (see `bulk_rows.insert_rows`)."""
        snapshot = trace_snapshot(fields, self._wanted(i, fields.get("id")), self.now, afresh)
        if snapshot["last_accessed"] is None and self.plan.format in ACCESS_UNKNOWN:
            # A note or a chat of last year would arrive with its strength decayed to 0:
            # it starts decaying when it arrives, as if recalled then (AgentOS reads it so).
            snapshot["last_accessed"] = self.now
        row, texts = trace_rows.snapshot_row(self.brain.brain_id, snapshot, fields.get("embedding"))
        self._queue(i, row, texts, snapshot)

    def _queue(
        self, i: int, row: trace_rows.Row, texts: trace_rows.Texts, snap: dict[str, Any] | None
    ) -> None:
        self.pending.append((i, row, texts, snap))
        if len(self.pending) >= BULK_ROWS:
            self._flush_traces()

    def _flush_traces(self) -> None:
        items, self.pending = self.pending, []
        bid = self.brain.brain_id
        taken = brain_index.taken_ids(self.db, bid, [row[ID] for _, row, _, _ in items])
        keep = self._free_of(items, taken) if taken else items
        rowids = bulk_rows.insert_rows(
            self.db,
            self.batch,
            bid,
            [row for _, row, _, _ in keep],
            [texts for _, _, texts, _ in keep],
            "import",
        )
        self.indexed += len(rowids)
        records, resolved, trace_ids = self.plan.records, self.plan.resolved, self.trace_ids
        for (i, row, _, snap), rowid in zip(keep, rowids, strict=True):
            trace_id = row[ID]
            record = records[i]
            source_id = record.fields.get("id")
            if i in resolved:
                resolved[i]["id"] = trace_id
            elif trace_id != source_id:  # written under its own id: `plan.trace_id` finds it
                resolved[i] = {"id": trace_id}
            if isinstance(source_id, str):
                trace_ids[source_id] = trace_id
            trace_ids.setdefault(trace_id, trace_id)
            self.record_traces[i] = trace_id
            self.inserted.add(trace_id)
            if row[EMBEDDING] is not None:
                self.embedded.append(rowid)
                self.embedding_models.add(record.embedding_model)
            if snap is not None and record.links:  # a checked row has no wikilinks
                for link in record.links:
                    if "target" in link:
                        self.wikilinks.append((snap, link["target"], note_path(record.fields)))

    def _free_of(self, items: list[Pending], taken: set[str]) -> list[Pending]:
        """The queued traces whose ids are still free; others get a new id (or are dropped)."""
        keep = []
        for i, row, texts, snap in items:
            trace_id = row[ID]
            if trace_id in taken:
                if self.plan.format == "chatgpt" and self.plan.options.dedup:
                    # a ChatGPT pair is named after its text: the brain holds it since planning
                    record = self.plan.records[i]
                    record.verdict, record.existing_id = DUPLICATE, trace_id
                    record.reason = f"the brain holds trace {trace_id} (written since planning)"
                    self.written.discard(i)
                    continue
                new_id = new_trace_id()
                row = (row[0], new_id, *row[ID + 1 :])
                if snap is not None:
                    snap["id"] = new_id
            keep.append((i, row, texts, snap))
        return keep

    def _trace_update(self, i: int) -> bool:
        record = self.plan.records[i]
        change = self.plan.resolved.get(i, {})
        trace_id = record.existing_id
        row = None if trace_id is None else store.fetch_row(self.db, self.brain.brain_id, trace_id)
        if row is None:
            record.fail(f"trace {record.existing_id} is gone since planning")
            return False
        before = store.row_to_snapshot(row)
        tags = list(before["tags"])
        tags += [t for t in change.get("add_tags", []) if t not in tags]
        after = dict(before, tags=tags, version=before["version"] + 1, updated_at=self.now)
        after["metadata"] = dict(before["metadata"])
        if change.get("created_at", 0) > before["created_at"]:
            after["created_at"] = change["created_at"]
        store.update_trace(
            self.db, self.batch, self.brain.brain_id, row[0], before, after, "import"
        )
        for label in change.get("add_links", []):
            self.wikilinks.append((after, label, note_path(record.fields)))
        return True

    # --- other rows --------------------------------------------------------------------

    def _row_values(self, i: int, op: str) -> dict[str, Any]:
        fields = self.plan.records[i].fields
        if built_afresh(fields):
            row = plain_fields(fields)  # built for this write: new text, ASCII ids
        else:
            row = {name: fresh_text(value) for name, value in fields.items()}
        row.update({k: v for k, v in self.plan.resolved.get(i, {}).items() if k != "before"})
        if op == "chunk" and row.get("trace_id") is not None:
            trace_id = self.trace_ids.get(row["trace_id"], row["trace_id"])
            row["trace_id"] = trace_id if trace_exists(self.brain, trace_id) else None
        if op == "edge":
            row["bidirectional"] = int(bool(row.get("bidirectional")))
        return row

    def _row(self, i: int, op: str, row: dict[str, Any] | None = None) -> bool:
        row = self._row_values(i, op) if row is None else row
        if journal_rows.insert_row(self.db, self.batch, self.brain.brain_id, op, row):
            self.wrote_any = True
            return True
        record = self.plan.records[i]
        record.verdict, record.existing_id = DUPLICATE, row["id"]
        record.reason = f"the brain holds a {record.kind} of this id (written since planning)"
        return False

    def _flush_messages(self) -> None:
        """The queued messages in two statements, as `_row` writes them one by one."""
        items, self.pending_rows = self.pending_rows, []
        bid = self.brain.brain_id
        held = brain_index.taken_ids(self.db, bid, (row["id"] for _, row in items), "messages")
        fresh: dict[str, tuple[int, dict[str, Any]]] = {}
        repeated = []  # ids held or repeated, and rows shaped unlike the first (edited)
        shape = items[0][1].keys()
        for i, row in items:
            if row["id"] in held or row["id"] in fresh or row.keys() != shape:
                repeated.append((i, row))
            else:
                fresh[row["id"]] = (i, row)
        rows = [row for _, row in fresh.values()]
        try:
            with self.db.conn:  # a savepoint: a row that fails leaves none of them written
                journal_rows.insert_new_rows(self.db, self.batch, bid, "message", rows)
        except apsw.ConstraintError:  # e.g. a conversation not in the brain: one by one
            repeated = [*fresh.values(), *repeated]
        else:
            self.written.update(i for i, _ in fresh.values())
            self.wrote_any = self.wrote_any or bool(rows)
        for i, row in repeated:  # written one by one: each says why it was not
            if self._write_row(i, row):
                self.written.add(i)

    def _write_row(self, i: int, row: dict[str, Any]) -> bool:
        try:
            return self._row(i, "message", row)
        except apsw.ConstraintError as error:
            self.plan.records[i].fail(f"could not be written: {_constraint(error)}")
            return False

    # --- links -------------------------------------------------------------------------

    def _wikilink(self, trace: dict[str, Any], label: str, note: str, notes: NoteIndex) -> None:
        """A `related_to` edge from the trace's memory-graph node to the note `label` names
        (its trace's memory-graph node), else to the concept node of `label`."""
        if self.graph is None:
            self.graph = brain_index.load_graph(self.brain)
        graph = self.graph
        source = trace["id"]
        named = notes.resolve(label, note) if notes else None
        if named == source:
            return  # a note's link to itself draws nothing
        if named is not None and not self._graph_copy(named):
            named = None
        if source not in graph.node_ids:
            self.new_nodes.append(memory_graph_node(trace, self.now))
            graph.add_node(source, source, "memory_graph")
        target = named if named is not None else graph.by_label.get(label)
        if target is None:
            node = concept_node(label, self.now)
            target = node["id"]
            self.new_nodes.append(node)
            graph.add_node(target, label, CONCEPT)
        if (source, target, RELATED_TO) in graph.edges:
            return
        edge = related_edge(source, target, self.now)
        self.new_edges.append(edge)
        graph.add_edge(edge["id"], source, target, RELATED_TO)
        self.wrote_any = True

    def _graph_copy(self, trace_id: str) -> bool:
        """Make sure a live trace stands in the graph (its memory-graph node); False when
        the trace is not there to link to."""
        assert self.graph is not None
        if trace_id in self.graph.node_ids:
            return True
        row = store.fetch_row(self.db, self.brain.brain_id, trace_id)
        if row is None:
            return False
        snap = store.row_to_snapshot(row)
        if snap["deleted"]:
            return False
        self.new_nodes.append(memory_graph_node(snap, self.now))
        self.graph.add_node(trace_id, trace_id, "memory_graph")
        return True

    def _held(self, trace_id: str) -> bool:
        return trace_id in self.inserted or trace_exists(self.brain, trace_id)

    def finish(self) -> None:
        if self.pending:
            self._flush_traces()
        if self.pending_rows:
            self._flush_messages()
        if self.wikilinks:
            notes = note_index(self.plan.records, self.record_traces)
            for trace, label, note in self.wikilinks:
                self._wikilink(trace, label, note, notes)
        bid = self.brain.brain_id
        journal_rows.insert_new_rows(self.db, self.batch, bid, "node", self.new_nodes)
        journal_rows.insert_new_rows(self.db, self.batch, bid, "edge", self.new_edges)
        if write_trace_links(
            self.db, self.batch, bid, self.plan, self.trace_ids, self._held, self.now
        ):
            self.wrote_any = True
        if self.embedded:
            self._index_vectors()

    def _index_vectors(self) -> None:
        """Index the imported vectors, under the model the source names; vectors of another
        model than the brain's wait to be embedded again, never mixed with its own."""
        conn, bid = self.db.conn, self.brain.brain_id
        named = [m for m in self.embedding_models if m]
        model = named[0] if len(named) == 1 and None not in self.embedding_models else None
        if model is not None:
            try:
                vectors.check_pin(conn, bid, model, None)
            except vectors.EmbeddingModelMismatch:
                conn.executemany(
                    "UPDATE memory_traces SET embedding_status = 0 WHERE rowid = ?",
                    [(rowid,) for rowid in self.embedded],
                )
                return
        try:
            sync_rows(conn, bid, self.embedded)
        except VectorIndexUnavailable:
            pass  # the BLOBs are stored; `memgui embed --reindex` indexes them later
        pinned_model, dimensions = vectors.pinned_model(conn, bid)
        if model is not None and pinned_model is None and dimensions is not None:
            vectors.pin_model(conn, bid, model, dimensions)


def _wikilinks(record: ImportRecord) -> bool:
    return any("target" in link for link in record.links)


def _constraint(error: apsw.ConstraintError) -> str:
    text = str(error)
    if extended_code(error) == apsw.SQLITE_CONSTRAINT_TRIGGER:  # memgui's own never refuse
        return f"a trigger memgui did not make refused it ({text})"
    if "FOREIGN KEY" in text:
        return "a row it names (its node, document or conversation) is not in the brain"
    return text.split(":", 1)[-1].strip() or "a constraint failed"
