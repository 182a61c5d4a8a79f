"""Verdicts of the rows that are not traces, and of the updates a record makes to a trace.

Knowledge nodes are matched by label and type, edges by source, target and type (after the
node ids are mapped to what they are in the brain). A memory-graph node (type `memory_graph`,
whose id is its trace's) comes in with its trace alone and under that id; a node whose trace
is not written under its id is skipped, and so are the edges that name it (seed 000, SQLite).
Documents, chunks, images, conversations and messages are matched by id; a conversation the
export updated later than the brain's row updates its title and update time.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memgui.core.io.planning import brain_index
from memgui.core.io.records import (
    CHUNK,
    CONVERSATION,
    DOCUMENT,
    DUPLICATE,
    EDGE,
    IMAGE,
    MESSAGE,
    NEW,
    NODE,
    SKIPPED,
    UPDATE,
    ImportRecord,
)
from memgui.core.progress import Progress

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.io.planning.plan import ImportPlan

MEMORY_GRAPH = "memory_graph"
ROWS_AT_ONCE = 5000
ROW_TABLES = {
    DOCUMENT: "documents",
    CHUNK: "document_chunks",
    IMAGE: "document_images",
    MESSAGE: "messages",
}


def _skip(record: ImportRecord, reason: str) -> None:
    record.verdict, record.reason = SKIPPED, reason


def _duplicate(record: ImportRecord, existing: str, reason: str) -> None:
    record.verdict, record.existing_id, record.reason = DUPLICATE, existing, reason


def classify_rows(
    brain: Brain, plan: ImportPlan, id_map: dict[str, str], new_ids: set[str]
) -> Iterator[Progress]:
    kinds: dict[str, list[int]] = {}
    for i, record in enumerate(plan.records):
        if record.verdict == NEW and record.kind not in ("trace",):
            kinds.setdefault(record.kind, []).append(i)
    if not kinds:
        return
    yield Progress(0, None, "comparing graph, document and conversation rows")
    if NODE in kinds or EDGE in kinds:
        _graph(brain, plan, kinds, id_map, new_ids)
    for kind, table in ROW_TABLES.items():
        indexes = kinds.get(kind, [])
        # A part at a time: a ChatGPT message's id is built when read (see `chatgpt_fields`).
        for start in range(0, len(indexes), ROWS_AT_ONCE):
            chosen = indexes[start : start + ROWS_AT_ONCE]
            part = [(i, plan.records[i].fields["id"]) for i in chosen]
            held = brain_index.existing_ids(brain, table, (row_id for _, row_id in part))
            for i, row_id in part:
                record = plan.records[i]
                if row_id in held:
                    _duplicate(record, row_id, f"the brain holds a {kind} of this id")
                elif kind == CHUNK and record.fields.get("trace_id") is not None:
                    plan.resolved[i] = {"trace_id": id_map.get(record.fields["trace_id"])}
    _conversations(brain, plan, kinds.get(CONVERSATION, []))


def _graph(
    brain: Brain,
    plan: ImportPlan,
    kinds: dict[str, list[int]],
    id_map: dict[str, str],
    new_ids: set[str],
) -> None:
    graph = brain_index.load_graph(brain)
    dedup = plan.options.dedup
    node_map: dict[str, str | None] = {}
    for i in kinds.get(NODE, []):
        record = plan.records[i]
        fields = record.fields
        node_id, label, node_type = fields["id"], fields["label"], fields["type"]
        if node_type == MEMORY_GRAPH:
            same_id = id_map.get(node_id) == node_id
            if same_id and node_id in graph.node_ids:
                _duplicate(record, node_id, "the brain holds this trace's memory-graph node")
                node_map[node_id] = node_id
            elif same_id and node_id in new_ids:
                plan.resolved[i] = {"id": node_id}
                node_map[node_id] = node_id
                graph.add_node(node_id, label, node_type)
            else:
                _skip(record, f"its trace {node_id} is not written under its id")
                node_map[node_id] = None
            continue
        held = graph.by_label_type.get((label, node_type)) if dedup else None
        if held is not None:
            _duplicate(record, held, f"same label and type as node {held}")
            node_map[node_id] = held
            continue
        final = node_id if node_id not in graph.node_ids else f"kn_{uuid.uuid4()}"
        plan.resolved[i] = {"id": final}
        node_map[node_id] = final
        graph.add_node(final, label, node_type)
    for i in kinds.get(EDGE, []):
        record = plan.records[i]
        fields = record.fields
        names = ("source_id", "target_id")
        ends = [node_map.get(fields[name], fields[name]) for name in names]
        missing = [fields[n] for n, end in zip(names, ends, strict=True) if end is None]
        if missing:
            _skip(record, f"names node {missing[0]}, which is not imported")
            continue
        source, target = ends
        key = (source, target, fields["type"])
        if dedup and key in graph.edges:
            held = graph.edges[key]
            _duplicate(record, held, f"same source, target and type as edge {held}")
            continue
        edge_id = fields["id"] if fields["id"] not in graph.edge_ids else f"ke_{uuid.uuid4()}"
        plan.resolved[i] = {"id": edge_id, "source_id": source, "target_id": target}
        graph.add_edge(edge_id, source, target, fields["type"])


def _conversations(brain: Brain, plan: ImportPlan, indexes: list[int]) -> None:
    if not indexes or "conversations" not in brain.db.tables:
        return
    ids = [plan.records[i].fields["id"] for i in indexes]
    held: dict[str, tuple[Any, Any]] = {}
    with brain.db.lock:
        for batch in brain_index.chunks(ids):
            marks = ",".join("?" * len(batch))
            for row_id, title, updated_at in brain.db.conn.execute(
                f"SELECT id, title, updated_at FROM conversations WHERE brain_id = ? "
                f"AND id IN ({marks})",
                (brain.brain_id, *batch),
            ):
                held[row_id] = (title, updated_at)
    for i in indexes:
        record = plan.records[i]
        fields = record.fields
        if fields["id"] not in held:
            continue
        title, updated_at = held[fields["id"]]
        newer = isinstance(updated_at, int) and fields.get("updated_at", 0) > updated_at
        if newer:
            record.verdict, record.existing_id = UPDATE, fields["id"]
            record.reason = "the export updated this conversation later: its title and time"
            plan.resolved[i] = {"before": {"title": title, "updated_at": updated_at}}
        else:
            _duplicate(record, fields["id"], "the brain holds this conversation")


def _dashed(tag: str) -> str:
    return "-".join(tag.split())


def plan_updates(
    brain: Brain,
    plan: ImportPlan,
    candidates: dict[int, str],
    own_notes: dict[str, dict[str, Any]],
    trailers: dict[int, tuple[list[str], list[str]]] | None = None,
) -> None:
    """Turn duplicates that bring tags (SQLite) or tags and links (Obsidian) into updates.

    An Obsidian own note brings what its trailer holds beyond the trace's text (`trailers`:
    tag-line tags and **Related:** labels), never its front matter's tags (seed 000).
    """
    missing = {tid for tid in candidates.values() if tid not in own_notes}
    traces = dict(own_notes)
    traces.update(brain_index.trace_rows(brain, missing))
    graph = brain_index.load_graph(brain) if plan.format == "obsidian" else None
    trailers = trailers or {}
    for i, trace_id in candidates.items():
        record = plan.records[i]
        trace = traces.get(trace_id)
        if trace is None:
            continue
        held = {_dashed(t) for t in trace["tags"]}
        offered = [t for t in record.fields.get("tags") or [] if isinstance(t, str)]
        change: dict[str, Any] = {}
        if graph is not None:
            line_tags, labels = trailers.get(i, ([], []))
            spelled: dict[str, str] = {}  # a tag as the line writes it -> as the note names it
            for tag in offered:
                spelled.setdefault(_dashed(tag), tag)
            tags = [spelled.get(t, t) for t in dict.fromkeys(line_tags) if t not in held]
            linked = graph.targets.get(trace_id, set())
            labels = [label for label in dict.fromkeys(labels) if label not in linked]
            if labels:
                change["add_links"] = labels
        else:
            tags = [t for t in offered if _dashed(t) not in held]
            created = record.fields.get("created_at")
            if isinstance(created, int) and created > trace["created_at"]:
                change["created_at"] = created
        if tags:
            change["add_tags"] = tags
        if change:
            record.verdict = UPDATE
            added = [f"tags {', '.join(tags)}"] if tags else []
            added += [f"links to {', '.join(change['add_links'])}"] if "add_links" in change else []
            added += ["a later created_at"] if "created_at" in change else []
            record.reason += "; adds " + " and ".join(added)
            plan.resolved[i] = change
