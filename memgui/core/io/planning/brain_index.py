"""What the planner compares records with: the brain's trace hashes, ids and graph, read once.

Loading every hash of the brain into dicts costs one scan (about 0.1 s per 100k traces) and
spares the planner a SELECT per record. Duplicates follow seed 000 "SHA-256 Deduplication":
a trace of the same scope, scope id and user whose text is the record's, or whose metadata
names the text's SHA-256 as `import_hash` or `content_hash`. Where the brain holds a live and
a forgotten trace of one key, the live one is what a record duplicates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import apsw
import orjson

from memgui.core.storage import store
from memgui.core.storage.db import Database

if TYPE_CHECKING:
    from memgui.core.brain import Brain

CHUNK = 500  # ids per `IN (...)` query


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _meta(path: str) -> str:
    return f"CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.{path}') END"


def _meta_unchecked(path: str) -> str:
    # json_valid parses the text once more per key: 3x slower over 100k rows. A row whose
    # metadata does not parse fails the whole statement, which then runs checked (_meta).
    return f"json_extract(metadata, '$.{path}')"


def scope_id_sql(trace_columns: set[str]) -> str:
    """The scope id of a row; an AgentOS brain not yet migrated keeps it in the metadata."""
    if "scope_id" in trace_columns:
        return "scope_id"
    return (
        "coalesce(CASE WHEN json_valid(metadata) AND json_type(metadata, '$.scopeId') = 'text' "
        "THEN json_extract(metadata, '$.scopeId') END, '')"
    )


def user_of(metadata: Any) -> str | None:
    """A trace's user: its metadata's `turnUserId`, else the session owner's (None)."""
    if isinstance(metadata, dict):
        user = metadata.get("turnUserId")
        if isinstance(user, str) and user:
            return user
    return None


Key = tuple[str, str, str | None, str]  # scope, scope id, user, hash

# agent-memory's duplicate key (source, type, content) has no scope: its keys live apart.
AGENT_MEMORY_WHERE: tuple[str, str, None] = ("", "", None)


def agent_memory_key(category: Any, source: Any, text_hash: str) -> str | None:
    """agent-memory's (source, type, content) as one key; None for a trace it cannot name
    (no agent-memory type, or a `source` that is not text)."""
    if not isinstance(category, str) or not (source is None or isinstance(source, str)):
        return None
    return f"agent-memory\x00{category}\x00{orjson.dumps(source).decode()}\x00{text_hash}"


class Match(NamedTuple):
    """A trace a dedup key names (a tuple: one is made per trace of the brain and the plan)."""

    trace_id: str
    deleted: bool
    via: str  # "text" | "import_hash" | "key" (agent-memory's)


@dataclass
class TraceIndex:
    """The brain's traces by dedup key, and every trace id it holds."""

    keys: dict[Key, Match] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)

    def add(self, key: Key, match: Match) -> None:
        held = self.keys.get(key)
        if held is None or (held.deleted and not match.deleted):
            self.keys[key] = match  # a live trace wins over a forgotten twin

    def find(
        self, scope: str, scope_id: str, user: str | None, hashes: Iterable[str]
    ) -> Match | None:
        found: Match | None = None
        for digest in hashes:
            match = self.keys.get((scope, scope_id, user, digest))
            if match is not None and (found is None or (found.deleted and not match.deleted)):
                found = match
        return found


def load_traces(brain: Brain, *, agent_memory_keys: bool = False) -> TraceIndex:
    """The brain's traces by seed 000's keys; with `agent_memory_keys`, by agent-memory's
    (source, type, content) too (what an agent-memory JSONL import dedups on)."""
    if "memory_traces" not in brain.db.tables:
        return TraceIndex()
    return index_of(trace_key_rows(brain, agent_memory_keys), agent_memory_keys)


def trace_key_rows(
    brain: Brain,
    agent_memory_keys: bool,
    where: str = "",
    params: tuple[Any, ...] = (),
    table: str = "memory_traces",
) -> list[tuple[Any, ...]]:
    """The columns the dedup keys are made of, a row per trace of the brain (and `where`;
    `table` may name how to read it, e.g. `memory_traces NOT INDEXED` for a rowid range)."""
    rows = _trace_key_rows(brain, agent_memory_keys, _meta_unchecked, where, params, table)
    if rows is None:  # checked, the read that met bad metadata never answers None
        rows = _trace_key_rows(brain, agent_memory_keys, _meta, where, params, table) or []
    return rows


def index_of(rows: list[tuple[Any, ...]], agent_memory_keys: bool) -> TraceIndex:
    """The traces of `trace_key_rows` by their dedup keys."""
    index = TraceIndex()
    keys, ids = index.keys, index.ids
    sources: dict[Any, str] = {}  # a JSON form per distinct `source`: a few in a brain

    def keep(key: Key, match: Match) -> None:  # TraceIndex.add, without a method call
        held = keys.get(key)
        if held is None or (held.deleted and not match.deleted):
            keys[key] = match

    for trace_id, scope, scope_id, deleted, content_hash, import_hash, user, content, *am in rows:
        ids.add(trace_id)
        user = user if isinstance(user, str) and user else None
        scope_id = scope_id or ""
        deleted = bool(deleted)
        text_hash = content_hash if isinstance(content_hash, str) else sha256(content or "")
        keep((scope, scope_id, user, text_hash), Match(trace_id, deleted, "text"))
        if isinstance(import_hash, str) and import_hash != text_hash:
            keep((scope, scope_id, user, import_hash), Match(trace_id, deleted, "import_hash"))
        if agent_memory_keys:
            category, source = am
            if isinstance(category, str) and (source is None or isinstance(source, str)):
                named = sources.get(source)
                if named is None:
                    named = sources[source] = orjson.dumps(source).decode()
                key = f"agent-memory\x00{category}\x00{named}\x00{text_hash}"
                keep((*AGENT_MEMORY_WHERE, key), Match(trace_id, deleted, "key"))
    return index


def _trace_key_rows(
    brain: Brain,
    agent_memory_keys: bool,
    meta: Callable[[str], str],
    where: str,
    params: tuple[Any, ...],
    table: str,
) -> list[tuple[Any, ...]] | None:
    """`trace_key_rows`; None when unchecked metadata (`meta`) met a row whose metadata
    does not parse."""
    db = brain.db
    category = "category" if "category" in db.trace_columns else "NULL"
    source = meta("source") if agent_memory_keys else "NULL"
    sql = (
        f"SELECT id, scope, {scope_id_sql(db.trace_columns)}, deleted, {meta('content_hash')}, "
        f"{meta('import_hash')}, {meta('turnUserId')}, "
        f"CASE WHEN {meta('content_hash')} IS NULL THEN content END, {category}, {source} "
        f"FROM {table} WHERE brain_id = ? {'AND (' + where + ')' if where else ''}"
    )
    try:
        with db.lock:
            return db.conn.execute(sql, (brain.brain_id, *params)).fetchall()
    except apsw.SQLError as exc:
        if meta is _meta or "malformed JSON" not in str(exc):
            raise
        return None


def chunks(values: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    for value in values:
        batch.append(value)
        if len(batch) == CHUNK:
            yield batch
            batch = []
    if batch:
        yield batch


def taken_ids(
    db: Database, brain_id: str, ids: Iterable[str], table: str = "memory_traces"
) -> set[str]:
    found: set[str] = set()
    for batch in chunks(ids):
        marks = ",".join("?" * len(batch))
        found.update(
            r[0]
            for r in db.conn.execute(
                f"SELECT id FROM {table} WHERE brain_id = ? AND id IN ({marks})",
                (brain_id, *batch),
            )
        )
    return found


def trace_rows(brain: Brain, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Snapshots of the named traces (those the brain holds), a few queries in all."""
    db = brain.db
    out: dict[str, dict[str, Any]] = {}
    cols = store.select_columns(db)
    with db.lock:
        for batch in chunks(sorted(set(ids))):
            marks = ",".join("?" * len(batch))
            for row in db.conn.execute(
                f"SELECT {cols} FROM memory_traces WHERE brain_id = ? AND id IN ({marks})",
                (brain.brain_id, *batch),
            ):
                snap = store.row_to_snapshot(row)
                snap["rowid"] = row[0]
                out[snap["id"]] = snap
    return out


def existing_ids(brain: Brain, table: str, ids: Iterable[str]) -> set[str]:
    """Which of `ids` the brain's `table` holds."""
    db = brain.db
    if table not in db.tables:
        return set()
    found: set[str] = set()
    with db.lock:
        for batch in chunks(sorted(set(ids))):
            marks = ",".join("?" * len(batch))
            found.update(
                r[0]
                for r in db.conn.execute(
                    f"SELECT id FROM {table} WHERE brain_id = ? AND id IN ({marks})",
                    (brain.brain_id, *batch),
                )
            )
    return found


@dataclass
class GraphIndex:
    """The brain's knowledge graph: nodes by id and by (label, type), edges by their ends."""

    node_ids: set[str] = field(default_factory=set)
    by_label_type: dict[tuple[str, str], str] = field(default_factory=dict)
    by_label: dict[str, str] = field(default_factory=dict)
    edge_ids: set[str] = field(default_factory=set)
    edges: dict[tuple[str, str, str], str] = field(default_factory=dict)
    targets: dict[str, set[str]] = field(default_factory=dict)  # source node -> target labels

    def add_node(self, node_id: str, label: str, node_type: str) -> None:
        self.node_ids.add(node_id)
        self.by_label_type.setdefault((label, node_type), node_id)
        if node_type != "memory_graph":
            self.by_label.setdefault(label, node_id)

    def add_edge(self, edge_id: str, source: str, target: str, edge_type: str) -> None:
        self.edge_ids.add(edge_id)
        self.edges.setdefault((source, target, edge_type), edge_id)


def load_graph(brain: Brain) -> GraphIndex:
    graph = GraphIndex()
    db = brain.db
    if "knowledge_nodes" not in db.tables:
        return graph
    labels: dict[str, str] = {}
    with db.lock:
        for node_id, label, node_type in db.conn.execute(
            "SELECT id, label, type FROM knowledge_nodes WHERE brain_id = ? ORDER BY created_at",
            (brain.brain_id,),
        ):
            graph.add_node(node_id, label, node_type)
            labels[node_id] = label
        for edge_id, source, target, edge_type in db.conn.execute(
            "SELECT id, source_id, target_id, type FROM knowledge_edges WHERE brain_id = ?",
            (brain.brain_id,),
        ):
            graph.add_edge(edge_id, source, target, edge_type)
            graph.targets.setdefault(source, set()).add(labels.get(target, target))
    return graph


def marks(brain: Brain) -> tuple[int, int]:
    """The brain's last journal id and last trace rowid: what was written after them is
    what a commit checks again (`io/recheck.py`)."""
    db = brain.db
    with db.lock:
        journal = (
            db.conn.execute("SELECT max(id) FROM memgui_journal").get
            if "memgui_journal" in db.tables
            else None
        )
        rowid = (
            db.conn.execute("SELECT max(rowid) FROM memory_traces").get
            if "memory_traces" in db.tables
            else None
        )
    return int(journal or 0), int(rowid or 0)
