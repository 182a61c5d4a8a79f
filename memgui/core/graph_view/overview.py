"""The whole graph at a glance: its nodes ranked by degree, shown a page at a time.

A neighbourhood never reads the whole brain; an overview must, once: the degree of every
node is counted from the link and edge indexes alone (`GROUP BY` over an index, never a
row of `memory_traces`), the nodes are ranked by it, and one page — the `size` busiest
nodes after `page · size` — is read with the edges among them. The answer says how many
linked nodes there are, for the view's "showing X of Y" badge. Nodes without any link are
left out: an overview shows how memories hang together.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memgui.core.graph_view import rows
from memgui.core.graph_view.shapes import Neighbourhood
from memgui.core.model import check_int_range

if TYPE_CHECKING:
    from memgui.core.brain import Brain

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


def overview(brain: Brain, page: int = 0, size: int = 2_000) -> Overview:
    """Page `page` of the nodes ranked by degree (highest first; ties by id)."""
    check_int_range("size", size, 1, MAX_PAGE_SIZE)
    check_int_range("page", page, 0, 2**31)
    db, bid, now = brain.db, brain.brain_id, brain.now()
    counts: Counter[str] = Counter()
    with db.lock:
        statements = []
        if rows.has_links(db):
            statements += [
                "SELECT from_id, count(*) FROM memory_links WHERE brain_id = ? GROUP BY from_id",
                "SELECT to_id, count(*) FROM memory_links WHERE brain_id = ? GROUP BY to_id",
            ]
        if rows.has_graph(db):
            statements += [
                "SELECT source_id, count(*) FROM knowledge_edges WHERE brain_id = ? "
                "GROUP BY source_id",
                "SELECT target_id, count(*) FROM knowledge_edges WHERE brain_id = ? "
                "GROUP BY target_id",
            ]
        for sql in statements:
            for node_id, count in db.conn.execute(sql, (bid,)):
                counts[node_id] += count
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        chosen = [node_id for node_id, _count in ranked[page * size : (page + 1) * size]]
        nodes = rows.graph_nodes(db, bid, chosen, now)
        found = Neighbourhood()
        found.nodes = {
            i: replace(nodes[i], degree=counts[i])
            for i in chosen
            if i in nodes and not nodes[i].deleted
        }
        found.edges = rows.edges_among(db, bid, found.nodes)
    return Overview(found, len(ranked), page, size)
