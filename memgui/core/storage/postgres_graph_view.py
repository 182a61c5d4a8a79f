"""The graph view's reads on a PostgreSQL brain (`graph_view/rows.py`'s `GraphRows`): a set of
ids in, rows out, each id a seek in an index — the primary keys of `memory_traces`,
`knowledge_nodes` and `memory_links`, the index on a link's `to_id`, and the two on an edge's
ends. A neighbourhood's reads share one read-only snapshot (`reading`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from memgui.core.decay import finite_number
from memgui.core.graph_view.rows import Incident, graph_edge, link_edge, trace_node
from memgui.core.graph_view.shapes import NODE, GraphEdge, GraphNode

if TYPE_CHECKING:
    import psycopg

_META = "(CASE WHEN t.metadata IS JSON OBJECT THEN t.metadata::jsonb END)"
_TRACE_COLUMNS = (
    "t.id, t.type, t.scope, t.scope_id, t.category, t.tags, t.strength, t.created_at, "
    "t.last_accessed, t.retrieval_count, t.deleted, "
    f"CASE WHEN jsonb_typeof({_META} #> '{{decay,stability}}') = 'number' "
    f"THEN ({_META} #>> '{{decay,stability}}')::float8 END, "
    f"{_META} ->> 'title', {_META} ->> 'source_file', substr(t.content, 1, 240), "
    "EXISTS (SELECT 1 FROM memory_links s WHERE s.brain_id = t.brain_id AND s.to_id = t.id "
    "AND s.kind = 'supersedes')"
)
_EDGE = "e.id, e.source_id, e.target_id, e.type, e.weight, e.bidirectional"


class PostgresGraphRows:
    """A shared brain's rows for the graph view, read over `conn` (in one transaction)."""

    def __init__(self, conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> None:
        self.conn = conn
        self.brain_id = brain_id

    def _rows(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, {"b": self.brain_id, **params}).fetchall()

    def incident(self, ids: Iterable[str], among: Collection[str] | None = None) -> list[Incident]:
        """Every link and knowledge edge touching one of `ids`, seen from that end (with
        `among`, only those whose other end is one of `among`)."""
        array = list(ids)
        out: list[Incident] = []
        for owner, from_id, to_id, kind in self._rows(
            "SELECT j.v, l.from_id, l.to_id, l.kind FROM unnest(%(ids)s::text[]) j(v) "
            "JOIN memory_links l ON l.brain_id = %(b)s AND l.from_id = j.v UNION ALL "
            "SELECT j.v, l.from_id, l.to_id, l.kind FROM unnest(%(ids)s::text[]) j(v) "
            "JOIN memory_links l ON l.brain_id = %(b)s AND l.to_id = j.v",
            ids=array,
        ):
            out.append(
                (owner, to_id if owner == from_id else from_id, link_edge(from_id, to_id, kind))
            )
        for owner, edge_id, source, target, kind, weight, both in self._rows(
            f"SELECT j.v, {_EDGE} FROM unnest(%(ids)s::text[]) j(v) JOIN knowledge_edges e "
            "ON e.brain_id = %(b)s AND e.source_id = j.v UNION ALL "
            f"SELECT j.v, {_EDGE} FROM unnest(%(ids)s::text[]) j(v) JOIN knowledge_edges e "
            "ON e.brain_id = %(b)s AND e.target_id = j.v",
            ids=array,
        ):
            if source == target:
                continue  # a loop draws nothing useful
            edge = graph_edge(edge_id, source, target, kind, weight, both)
            out.append((owner, target if owner == source else source, edge))
        if among is None:
            return out
        wanted = set(among)
        return [found for found in out if found[1] in wanted]

    def incident_within(self, node_id: str, others: set[str]) -> list[Incident]:
        """The edges between `node_id` (a hub) and the ids of `others`, a seek per id."""
        if not others:
            return []
        array = sorted(others)
        out: list[Incident] = []
        for from_id, to_id, kind in self._rows(
            "SELECT l.from_id, l.to_id, l.kind FROM unnest(%(ids)s::text[]) j(v) "
            "JOIN memory_links l ON l.brain_id = %(b)s AND l.from_id = %(n)s AND l.to_id = j.v "
            "UNION ALL SELECT l.from_id, l.to_id, l.kind FROM unnest(%(ids)s::text[]) j(v) "
            "JOIN memory_links l ON l.brain_id = %(b)s AND l.from_id = j.v AND l.to_id = %(n)s",
            ids=array,
            n=node_id,
        ):
            edge = link_edge(from_id, to_id, kind)
            out.append((node_id, to_id if node_id == from_id else from_id, edge))
        for edge_id, source, target, kind, weight, both in self._rows(
            f"SELECT {_EDGE} FROM unnest(%(ids)s::text[]) j(v) JOIN knowledge_edges e "
            "ON e.brain_id = %(b)s AND e.source_id = j.v WHERE e.target_id = %(n)s UNION ALL "
            f"SELECT {_EDGE} FROM unnest(%(ids)s::text[]) j(v) JOIN knowledge_edges e "
            "ON e.brain_id = %(b)s AND e.target_id = j.v WHERE e.source_id = %(n)s",
            ids=array,
            n=node_id,
        ):
            if source == target:
                continue
            edge = graph_edge(edge_id, source, target, kind, weight, both)
            out.append((node_id, target if node_id == source else source, edge))
        return out

    def degrees(self, ids: Iterable[str]) -> dict[str, int]:
        """How many links and knowledge edges each id has (counted in the indexes)."""
        wanted = list(ids)
        out = dict.fromkeys(wanted, 0)
        if not wanted:
            return out
        for node_id, count in self._rows(
            "SELECT j.v, "
            "(SELECT count(*) FROM memory_links WHERE brain_id = %(b)s AND from_id = j.v) + "
            "(SELECT count(*) FROM memory_links WHERE brain_id = %(b)s AND to_id = j.v) + "
            "(SELECT count(*) FROM knowledge_edges WHERE brain_id = %(b)s AND source_id = j.v) + "
            "(SELECT count(*) FROM knowledge_edges WHERE brain_id = %(b)s AND target_id = j.v) "
            "FROM unnest(%(ids)s::text[]) j(v)",
            ids=wanted,
        ):
            out[node_id] = int(count)
        return out

    def graph_nodes(self, ids: Iterable[str], now: int) -> dict[str, GraphNode]:
        """The nodes `ids` name: a trace where one has the id, else the knowledge node."""
        wanted = list(ids)
        found: dict[str, GraphNode] = {}
        for row in self._rows(
            f"SELECT {_TRACE_COLUMNS} FROM unnest(%(ids)s::text[]) j(v) "
            "JOIN memory_traces t ON t.brain_id = %(b)s AND t.id = j.v",
            ids=wanted,
        ):
            node = trace_node(row, now)
            found[node.id] = node
        rest = [i for i in wanted if i not in found]
        if not rest:
            return found
        for node_id, node_type, label, confidence, created_at in self._rows(
            "SELECT n.id, n.type, n.label, n.confidence, n.created_at "
            "FROM unnest(%(ids)s::text[]) j(v) "
            "JOIN knowledge_nodes n ON n.brain_id = %(b)s AND n.id = j.v",
            ids=rest,
        ):
            found[node_id] = GraphNode(
                id=node_id,
                kind=NODE,
                label=str(label or node_id),
                type=str(node_type),
                strength=finite_number(confidence, 1.0),
                created_at=int(finite_number(created_at, 0.0)),
            )
        return found

    def edge_ends(self, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        return {
            str(edge_id): (str(source), str(target))
            for edge_id, source, target in self._rows(
                "SELECT e.id, e.source_id, e.target_id FROM unnest(%(ids)s::text[]) j(v) "
                "JOIN knowledge_edges e ON e.brain_id = %(b)s AND e.id = j.v",
                ids=list(ids),
            )
        }

    def edges_among(self, ids: Iterable[str]) -> dict[str, GraphEdge]:
        """Every link and knowledge edge with both ends in `ids`, each read once (from its
        source's side, by the index on it)."""
        wanted = set(ids)
        array = sorted(wanted)
        out: dict[str, GraphEdge] = {}
        for from_id, to_id, kind in self._rows(
            "SELECT l.from_id, l.to_id, l.kind FROM unnest(%(ids)s::text[]) j(v) "
            "JOIN memory_links l ON l.brain_id = %(b)s AND l.from_id = j.v",
            ids=array,
        ):
            if to_id in wanted:
                edge = link_edge(from_id, to_id, kind)
                out[edge.key] = edge
        for edge_id, source, target, kind, weight, both in self._rows(
            f"SELECT {_EDGE} FROM unnest(%(ids)s::text[]) j(v) JOIN knowledge_edges e "
            "ON e.brain_id = %(b)s AND e.source_id = j.v",
            ids=array,
        ):
            if target in wanted and target != source:
                edge = graph_edge(edge_id, source, target, kind, weight, both)
                out[edge.key] = edge
        return out

    def ranked_page(self, page: int, size: int) -> list[tuple[str, int, int]]:
        """One page of (id, degree, how many nodes are linked) of the linked nodes, busiest
        first (ties by id, in byte order as on a file): each end index grouped on its own."""
        return [
            (str(node_id), int(degree), int(linked))
            for node_id, degree, linked in self._rows(
                f"WITH ends(id, n) AS ({_ENDS}) SELECT id, sum(n) AS degree, count(*) OVER () "
                'FROM ends GROUP BY id ORDER BY degree DESC, id COLLATE "C" '
                "LIMIT %(size)s OFFSET %(skip)s",
                size=size,
                skip=page * size,
            )
        ]

    def linked(self) -> int:
        """How many nodes have a link or an edge (a page past the last has no row to say)."""
        row = self._rows(f"WITH ends(id, n) AS ({_ENDS}) SELECT count(DISTINCT id) FROM ends")
        return int(row[0][0]) if row else 0

    # --- the whole graph, a page at a time (an export), each page after the last one's key

    def trace_page(self, after: str, limit: int, now: int) -> list[GraphNode]:
        """Live traces after id `after`, in id order."""
        ids = [
            str(r[0])
            for r in self._rows(
                "SELECT id FROM memory_traces WHERE brain_id = %(b)s AND deleted = 0 "
                "AND id > %(after)s ORDER BY id LIMIT %(n)s",
                after=after,
                n=limit,
            )
        ]
        found = self.graph_nodes(ids, now)
        return [found[i] for i in ids if i in found]

    def node_page(self, after: str, limit: int) -> list[GraphNode]:
        """Knowledge nodes after id `after` that are not a memory's copy (the memory stands
        for it)."""
        ids = [
            str(r[0])
            for r in self._rows(
                "SELECT n.id FROM knowledge_nodes n WHERE n.brain_id = %(b)s AND n.id > %(after)s "
                "AND NOT EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = %(b)s "
                "AND t.id = n.id) ORDER BY n.id LIMIT %(n)s",
                after=after,
                n=limit,
            )
        ]
        found = self.graph_nodes(ids, 0)
        return [found[i] for i in ids if i in found]

    def link_page(self, after: tuple[str, str, str], limit: int) -> list[GraphEdge]:
        """Links between live traces after the key `after` (from, to, kind), in key order."""
        return [
            link_edge(a, b, k)
            for a, b, k in self._rows(
                "SELECT l.from_id, l.to_id, l.kind FROM memory_links l WHERE l.brain_id = %(b)s "
                "AND (l.from_id, l.to_id, l.kind) > (%(f)s, %(t)s, %(k)s) "
                f"AND {_LIVE.format('l.from_id')} AND {_LIVE.format('l.to_id')} "
                "ORDER BY l.from_id, l.to_id, l.kind LIMIT %(n)s",
                f=after[0],
                t=after[1],
                k=after[2],
                n=limit,
            )
        ]

    def edge_page(self, after: str, limit: int) -> list[GraphEdge]:
        """Knowledge edges after id `after` whose ends are shown (a live trace, or a node
        that is no trace's), loops left out."""
        ends = " AND ".join(_NODE.format(c, c, c) for c in ("e.source_id", "e.target_id"))
        return [
            graph_edge(i, s, t, k, w, both)
            for i, s, t, k, w, both in self._rows(
                f"SELECT {_EDGE} FROM knowledge_edges e WHERE e.brain_id = %(b)s "
                f"AND e.id > %(after)s AND {ends} AND e.source_id != e.target_id "
                "ORDER BY e.id LIMIT %(n)s",
                after=after,
                n=limit,
            )
        ]


_LIVE = (
    "EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = %(b)s AND t.id = {} "
    "AND t.deleted = 0)"
)
_NODE = (
    "(" + _LIVE + " OR (NOT EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = %(b)s "
    "AND t.id = {}) AND EXISTS (SELECT 1 FROM knowledge_nodes n WHERE n.brain_id = %(b)s "
    "AND n.id = {})))"
)

_ENDS = " UNION ALL ".join(
    f"SELECT {end}, count(*) FROM {table} WHERE brain_id = %(b)s GROUP BY {end}"
    for table, end in (
        ("memory_links", "from_id"),
        ("memory_links", "to_id"),
        ("knowledge_edges", "source_id"),
        ("knowledge_edges", "target_id"),
    )
)


@contextmanager
def reading(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str
) -> Iterator[PostgresGraphRows]:
    """The rows, every read of the block in one read-only snapshot of the brain."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield PostgresGraphRows(conn, brain_id)
