"""The whole graph at a glance: its nodes ranked by degree, shown a page at a time.

A neighbourhood never reads the whole brain; an overview ranks all of it. A brain of schema
4 keeps each node's degree in `memgui_degrees` (kept by triggers, whoever writes), whose
index is in rank order: a page is a seek. An older brain, or one read-only, is counted from
the link and edge indexes alone (`GROUP BY` over an index, never a row of `memory_traces`)
and ranked in SQLite. Either way one page — the `size` busiest nodes after `page · size` —
is read with the edges among them. The answer says how many
linked nodes there are, for the view's "showing X of Y" badge. Nodes without any link are
left out: an overview shows how memories hang together.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memgui.core.graph_view import rows
from memgui.core.graph_view.shapes import Neighbourhood
from memgui.core.model import check_int_range
from memgui.core.storage import degrees as kept_degrees

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.storage.db import Database

MAX_PAGE_SIZE = 20_000


@dataclass
class Overview:
    found: Neighbourhood
    linked: int  # nodes with at least one link or edge: what the pages rank
    page: int
    size: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.linked // self.size))


def overview(brain: Brain | SharedBrain, page: int = 0, size: int = 2_000) -> Overview:
    """Page `page` of the nodes ranked by degree (highest first; ties by id)."""
    check_int_range("size", size, 1, MAX_PAGE_SIZE)
    check_int_range("page", page, 0, 2**31)
    from memgui.core.shared_brain import SharedBrain

    if isinstance(brain, SharedBrain):
        return _shared_overview(brain, page, size)
    db, bid, now = brain.db, brain.brain_id, brain.now()
    with db.lock:
        ranked = _ranked_page(db, bid, page, size)
        degrees = {node_id: degree for node_id, degree, _linked in ranked}
        linked = ranked[0][2] if ranked else _linked(db, bid)
        nodes = rows.graph_nodes(db, bid, list(degrees), now)
        found = Neighbourhood()
        found.nodes = {
            i: replace(nodes[i], degree=degree)
            for i, degree in degrees.items()
            if i in nodes and not nodes[i].deleted
        }
        found.edges = rows.edges_among(db, bid, found.nodes)
    return Overview(found, linked, page, size)


def _shared_overview(brain: SharedBrain, page: int, size: int) -> Overview:
    """The same page of a shared brain, in one read-only snapshot: its degrees counted from
    the link and edge indexes (a shared brain keeps no degrees of its own)."""
    now = brain.now()
    with brain.graph_rows() as src:
        ranked = src.ranked_page(page, size)
        degrees = {node_id: degree for node_id, degree, _linked in ranked}
        linked = ranked[0][2] if ranked else src.linked()
        nodes = src.graph_nodes(list(degrees), now)
        found = Neighbourhood()
        found.nodes = {
            i: replace(nodes[i], degree=degree)
            for i, degree in degrees.items()
            if i in nodes and not nodes[i].deleted
        }
        found.edges = src.edges_among(found.nodes)
    return Overview(found, linked, page, size)


def _ends(db: Database) -> str:
    """Each linked node with its count of links or edges, per index: one row per node per index."""
    parts = []
    if rows.has_links(db):
        parts += [
            "SELECT from_id, count(*) FROM memory_links WHERE brain_id = ?1 GROUP BY from_id",
            "SELECT to_id, count(*) FROM memory_links WHERE brain_id = ?1 GROUP BY to_id",
        ]
    if rows.has_graph(db):
        parts += [
            "SELECT source_id, count(*) FROM knowledge_edges WHERE brain_id = ?1 "
            "GROUP BY source_id",
            "SELECT target_id, count(*) FROM knowledge_edges WHERE brain_id = ?1 "
            "GROUP BY target_id",
        ]
    return " UNION ALL ".join(parts)


def _ranked_page(db: Database, bid: str, page: int, size: int) -> list[tuple[str, int, int]]:
    """One page of (id, degree, how many nodes are linked), ranked in SQLite, not in Python.

    Kept degrees: a walk of their rank index. Else each index is grouped in its own order
    (no sorter); only the sum per node and the top `(page + 1) · size` of them are sorted,
    and the window count rides on the same pass.
    """
    if kept_degrees.is_kept(db.tables, db.triggers):
        linked = _kept_linked(db, bid)
        return [
            (str(node_id), int(degree), linked)
            for node_id, degree in db.conn.execute(
                "SELECT node_id, degree FROM memgui_degrees INDEXED BY idx_memgui_degrees_rank "
                "WHERE brain_id = ?1 ORDER BY degree DESC, node_id LIMIT ?2 OFFSET ?3",
                (bid, size, page * size),
            )
        ]
    ends = _ends(db)
    if not ends:
        return []
    sql = (
        f"WITH ends(id, n) AS ({ends}) "
        "SELECT id, sum(n) AS degree, count(*) OVER () FROM ends GROUP BY id "
        "ORDER BY degree DESC, id LIMIT ?2 OFFSET ?3"
    )
    return list(db.conn.execute(sql, (bid, size, page * size)))


def _linked(db: Database, bid: str) -> int:
    """How many nodes are linked, for a page past the last one (its query returns no row)."""
    if kept_degrees.is_kept(db.tables, db.triggers):
        return _kept_linked(db, bid)
    ends = _ends(db)
    if not ends:
        return 0
    sql = f"WITH ends(id, n) AS ({ends}) SELECT count(DISTINCT id) FROM ends"
    row = db.conn.execute(sql, (bid,)).fetchone()
    return int(row[0]) if row else 0


def _kept_linked(db: Database, bid: str) -> int:
    """How many nodes have a kept degree (a count of the rank index's entries)."""
    count = db.conn.execute("SELECT count(*) FROM memgui_degrees WHERE brain_id = ?", (bid,)).get
    return int(count) if isinstance(count, int) else 0
