"""Neighbourhoods: a node, its neighbours by hops, the edges among them, each node's degree.

A neighbourhood grows a level at a time. Each level reads the edges of its frontier, the
rows and degrees of the nodes they lead to, and keeps the best `per_node` of each frontier
node's new neighbours (by degree or by strength); the rest wait as that node's pending list
for a "+N more". A hub (more than `hub_degree` edges) is shown but not walked through unless
it is the centre or is expanded on purpose: its thousands of neighbours would drown the rest.
Every read is an index lookup (`rows.py`); the brain is never scanned.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.graph_view import rows
from memgui.core.graph_view.shapes import (
    EXPAND_LIMIT,
    HUB_DEGREE,
    GraphEdge,
    GraphNode,
    Neighbourhood,
    with_degree,
)
from memgui.core.model import check_depth, check_id, check_int_range

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from memgui.core.graph_view.rows import GraphRows


class GraphBrain(Protocol):
    """A brain a neighbourhood reads, on either engine (`Brain`, `SharedBrain`)."""

    def now(self) -> int: ...

    def graph_rows(self) -> AbstractContextManager[GraphRows]: ...


RANKS = ("degree", "strength")
MAX_NODES = 20_000  # the most a neighbourhood may hold (the view draws 20k at 10 frames/s)
DEFAULT_MAX_NODES = 2_000
RANK_POOL = 5_000  # neighbours of one node ranked at once; a hub's others wait, unranked
MAX_PER_NODE = 1_000
MAX_PENDING = 100_000  # ids a "+N more" may hand back


@dataclass(frozen=True)
class Growth:
    per_node: int = EXPAND_LIMIT
    max_new: int = DEFAULT_MAX_NODES
    hub_degree: int = HUB_DEGREE
    rank: str = "degree"
    include_deleted: bool = False

    def checked(self) -> Growth:
        check_int_range("per_node", self.per_node, 1, MAX_PER_NODE)
        check_int_range("max_nodes", self.max_new, 1, MAX_NODES)
        check_int_range("hub_degree", self.hub_degree, 1, 2**31)
        if self.rank not in RANKS:
            raise InvalidArgument(
                "rank", f"must be one of {', '.join(RANKS)} (got {self.rank!r})", self.rank
            )
        if not isinstance(self.include_deleted, bool):
            raise InvalidArgument(
                "include_deleted", f"must be True or False (got {self.include_deleted!r})"
            )
        return self


def neighbourhood(
    brain: GraphBrain,
    centre: str,
    depth: int = 1,
    *,
    per_node: int = EXPAND_LIMIT,
    max_nodes: int = DEFAULT_MAX_NODES,
    hub_degree: int = HUB_DEGREE,
    rank: str = "degree",
    include_deleted: bool = False,
) -> Neighbourhood:
    """`centre` (a trace id or a knowledge node id) and what lies within `depth` hops (1–3)."""
    check_id("id", centre, "trace or node id")
    check_depth(depth)
    growth = Growth(per_node, max_nodes, hub_degree, rank, include_deleted).checked()
    now = brain.now()
    with brain.graph_rows() as src:
        found = src.graph_nodes([centre], now)
        node = found.get(centre)
        if node is None or (node.deleted and not include_deleted):
            raise NotFound(centre, "trace or node")
        result = Neighbourhood(centre=centre)
        result.nodes[centre] = replace(node, degree=src.degrees([centre])[centre])
        _grow(src, now, result, [centre], depth, growth, force={centre}, fresh=True)
    hidden_counts(result)
    return result


def expand(
    brain: GraphBrain,
    node_id: str,
    shown: Collection[str],
    *,
    limit: int = EXPAND_LIMIT,
    pending: list[str] | None = None,
    hub_degree: int = HUB_DEGREE,
    rank: str = "degree",
    include_deleted: bool = False,
) -> Neighbourhood:
    """The next `limit` neighbours of `node_id` not in `shown`, and every edge between them and
    `shown`. `pending` (a list an earlier expand handed back) continues a "+N more"."""
    check_id("id", node_id, "trace or node id")
    growth = Growth(limit, MAX_NODES, hub_degree, rank, include_deleted).checked()
    shown_set = _checked_ids("shown", shown)
    now = brain.now()
    with brain.graph_rows() as src:
        result = Neighbourhood(centre=node_id)
        known = {i: GraphNode(i, "", "", "") for i in shown_set}  # stand-ins: ids only
        if node_id not in known:
            found = src.graph_nodes([node_id], now)
            if node_id not in found:
                raise NotFound(node_id, "trace or node")
            known[node_id] = found[node_id]
            result.nodes[node_id] = replace(found[node_id], degree=_degree(src, node_id))
        view = Neighbourhood(nodes=dict(known))
        if pending is not None:
            ids = _checked_ids("pending", pending, MAX_PENDING)
            _take(src, now, view, {node_id: [i for i in ids if i not in known]}, growth)
            new = [i for i in view.nodes if i not in known]
            _connect(src, view, new, growth.hub_degree)
        else:
            _grow(src, now, view, [node_id], 1, growth, force={node_id})
        for key in view.nodes.keys() - known.keys():
            result.nodes[key] = view.nodes[key]
        result.edges = view.edges
        result.pending = view.pending
        result.walked = view.walked | {node_id}
    hidden_counts(result, shown_set)
    return result


def refresh(
    brain: GraphBrain, shown: Collection[str], touched: Iterable[str]
) -> tuple[dict[str, GraphNode], dict[str, GraphEdge], set[str]]:
    """What the view must redraw after a change to `touched` ids: their rows now (with
    degrees; an id absent from the answer is gone) and every edge between a touched id
    and a shown one. Returns (nodes, edges, gone ids)."""
    shown_set = _checked_ids("shown", shown)
    ids = sorted(_checked_ids("touched", list(touched)) & shown_set)
    now = brain.now()
    with brain.graph_rows() as src:
        nodes = src.graph_nodes(ids, now)
        counts = src.degrees(nodes)
        nodes = {i: with_degree(n, counts[i]) for i, n in nodes.items()}
        gone = {i for i in ids if i not in nodes}
        edges: dict[str, GraphEdge] = {}
        for owner, other, edge in _edges_to(src, nodes.values(), shown_set, HUB_DEGREE):
            if other in shown_set and owner not in gone and other not in gone:
                edges[edge.key] = edge
    return nodes, edges, gone


def arrivals(
    brain: GraphBrain,
    shown: Collection[str],
    candidates: Iterable[str],
    expanded: Collection[str],
    include_deleted: bool = False,
) -> Neighbourhood:
    """Of `candidates` (ids not shown that a change touched), the nodes that now have an edge
    to an expanded shown node — a trace linked to it, one brought back from the trash — with
    their edges to the shown. How another program's write reaches an open view."""
    shown_set = _checked_ids("shown", shown)
    wanted = sorted(_checked_ids("candidates", list(candidates)) - shown_set)
    open_ends = _checked_ids("expanded", expanded) & shown_set
    result = Neighbourhood()
    if not wanted or not open_ends:
        return result
    now = brain.now()
    with brain.graph_rows() as src:
        found = src.graph_nodes(wanted, now)
        live = {i: n for i, n in found.items() if include_deleted or not n.deleted}
        counts = src.degrees(live)
        nodes = [with_degree(n, counts[i]) for i, n in live.items()]
        joined = _edges_to(src, nodes, shown_set, HUB_DEGREE)
    arriving = {owner for owner, other, _edge in joined if other in open_ends}
    result.nodes = {n.id: n for n in nodes if n.id in arriving}
    result.edges = {e.key: e for owner, _other, e in joined if owner in arriving}
    hidden_counts(result, shown_set)
    return result


def ends_of(brain: GraphBrain, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """The ends of the knowledge edges among `ids` (ids of other things are left out)."""
    wanted = sorted(_checked_ids("ids", list(ids)))
    if not wanted:
        return {}
    with brain.graph_rows() as src:
        return src.edge_ends(wanted)


def hidden_counts(result: Neighbourhood, also_shown: Collection[str] = ()) -> None:
    """`result.more[id]`: the edges of each node the neighbourhood does not hold."""
    touching: dict[str, int] = defaultdict(int)
    for edge in result.edges.values():
        touching[edge.source] += 1
        touching[edge.target] += 1
    result.more = {
        i: n.degree - touching[i]
        for i, n in result.nodes.items()
        if n.degree - touching[i] > 0 and i not in also_shown
    }


# --- growing ----------------------------------------------------------------------------


def _grow(
    src: GraphRows,
    now: int,
    view: Neighbourhood,
    frontier: list[str],
    depth: int,
    growth: Growth,
    force: set[str],
    fresh: bool = False,
) -> None:
    """Add up to `depth` levels of neighbours of `frontier` to `view`, in place.

    `fresh`: `view` held nothing but `frontier`, so every edge between a node this walk
    reads whole and any other is found from that node's side, and only a hub's edges to
    other hubs need looking for (a seek per hub and pair, never a hub's thousands)."""
    passed_over: list[str] = []  # hubs shown but not walked through
    by_pair: dict[str, list[GraphEdge]] = defaultdict(list)  # edges to nodes not yet in view
    for _hop in range(depth):
        walk = [f for f in frontier if f in force or view.nodes[f].degree <= growth.hub_degree]
        view.walked.update(walk)
        passed_over += [f for f in frontier if f not in walk]
        candidates: dict[str, list[str]] = {owner: [] for owner in walk}
        # A neighbour two walked nodes reach is the candidate of the one walked first, not of
        # whichever row the engine returns first: the same brain gives the same neighbourhood
        # on a file and on PostgreSQL.
        walked_at = {owner: n for n, owner in enumerate(walk)}
        claimed: dict[str, str] = {}
        for owner, other, edge in src.incident(walk):
            if other in view.nodes:
                view.edges[edge.key] = edge
            else:
                by_pair[other].append(edge)
                held = claimed.get(other)
                if held is None or walked_at[owner] < walked_at[held]:
                    claimed[other] = owner
        for other in sorted(claimed):
            candidates[claimed[other]].append(other)
        before = set(view.nodes)
        _take(src, now, view, candidates, growth)
        frontier = [i for i in view.nodes if i not in before]
        for new in frontier:
            for edge in by_pair[new]:
                if edge.source in view.nodes and edge.target in view.nodes:
                    view.edges[edge.key] = edge
        if not frontier or len(view.nodes) >= growth.max_new:
            break
    if not fresh:
        _connect(src, view, frontier + passed_over, growth.hub_degree)
        return
    hubs = {i for i in frontier + passed_over if view.nodes[i].degree > growth.hub_degree}
    small = [i for i in frontier if i not in hubs]
    for _owner, other, edge in src.incident(small, among=view.nodes.keys()):
        if other in view.nodes:
            view.edges[edge.key] = edge
    # Each pair of hubs once, sought from its smaller end: a concept of 100,000 `mentions`
    # walked once per other hub cost seconds.
    rank = {i: (view.nodes[i].degree, i) for i in hubs}
    for hub in sorted(hubs):
        smaller = {i for i in hubs if rank[i] < rank[hub]}
        for _owner, _other, edge in src.incident_within(hub, smaller):
            view.edges[edge.key] = edge


def _take(
    src: GraphRows,
    now: int,
    view: Neighbourhood,
    candidates: dict[str, list[str]],
    growth: Growth,
) -> None:
    """Of each owner's candidates, add the best `per_node` to `view`; the rest are pending."""
    pools = {owner: sorted(ids)[:RANK_POOL] for owner, ids in candidates.items()}
    everyone = sorted({i for pool in pools.values() for i in pool})
    found = src.graph_nodes(everyone, now)
    live = [i for i in everyone if i in found and (growth.include_deleted or not found[i].deleted)]
    counts = src.degrees(live)
    for owner, pool in pools.items():
        ranked = [with_degree(found[i], counts[i]) for i in pool if i in counts]
        if growth.rank == "degree":
            ranked.sort(key=lambda n: (-n.degree, n.id))
        else:
            ranked.sort(key=lambda n: (-n.strength, n.id))
        room = max(0, min(growth.per_node, growth.max_new - len(view.nodes)))
        for node in ranked[:room]:
            view.nodes[node.id] = node
        rest = [n.id for n in ranked[room:]] + candidates[owner][RANK_POOL:]
        if rest:
            view.pending[owner] = rest


def _connect(src: GraphRows, view: Neighbourhood, ids: list[str], hub_degree: int) -> None:
    """The edges between each of `ids` and the rest of `view`."""
    nodes = [view.nodes[i] for i in ids if i in view.nodes]
    for _owner, other, edge in _edges_to(src, nodes, set(view.nodes), hub_degree):
        if other in view.nodes:
            view.edges[edge.key] = edge


def _edges_to(
    src: GraphRows, nodes: Iterable[GraphNode], others: set[str], hub_degree: int
) -> list[rows.Incident]:
    """Edges from each node to `others`: a small node's edges read whole and filtered, a
    hub's found by a seek per other (whichever reads fewer)."""
    small: list[str] = []
    hubs: list[str] = []
    for node in nodes:
        (hubs if node.degree > max(hub_degree, len(others)) else small).append(node.id)
    found = [inc for inc in src.incident(small, among=others) if inc[1] in others]
    for hub in hubs:
        found += src.incident_within(hub, others - {hub})
    return found


def _degree(src: GraphRows, node_id: str) -> int:
    return src.degrees([node_id])[node_id]


def _checked_ids(name: str, ids: object, most: int = MAX_NODES * 5) -> set[str]:
    if isinstance(ids, str) or not isinstance(ids, Collection):
        raise InvalidArgument(name, f"must be a collection of ids (got {ids!r:.80})", ids)
    if len(ids) > most:
        raise InvalidArgument(name, f"must hold at most {most} ids (got {len(ids)})", len(ids))
    for i in ids:
        if not isinstance(i, str):
            raise InvalidArgument(name, f"must hold id strings (got {i!r:.80})", i)
    return set(ids)
