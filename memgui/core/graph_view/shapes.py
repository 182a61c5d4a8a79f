"""What the graph view shows: nodes (traces and knowledge-graph nodes), edges, a neighbourhood.

A trace and its knowledge-graph copy (AgentOS's `memory_graph` node, whose id is the trace's)
are one node: the trace. Every other knowledge node (a concept, a person) is a node of its
own. Edges are memgui's links (`relates_to` undirected, `supersedes`, `caused_by`) and the
knowledge graph's edges, by their type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TRACE = "trace"  # GraphNode.kind of a memory
NODE = "node"  # GraphNode.kind of a knowledge-graph node
LINK = "link"  # GraphEdge.origin of a memgui link
GRAPH = "graph"  # GraphEdge.origin of a knowledge-graph edge

HUB_DEGREE = 200  # above this many edges a node is drawn as a hub badge, never auto-expanded
EXPAND_LIMIT = 100  # neighbours an expand brings at most (the rest: a "+N more" node)
PRUNE_THRESHOLD = 0.05  # AgentOS's consolidation prunes a trace weaker than this
LABEL_CHARS = 48


@dataclass(frozen=True, slots=True)
class GraphNode:
    id: str
    kind: str  # TRACE or NODE
    label: str  # a memory's title, else a short summary of its text; a node's label
    type: str  # the trace's type (episodic…) or the node's type (concept, person…)
    scope: str = ""
    scope_id: str = ""
    category: str | None = None
    tags: tuple[str, ...] = ()
    strength: float = 1.0  # decayed now; a knowledge node's confidence
    retrieval_count: int = 0
    created_at: int = 0
    last_accessed: int | None = None
    deleted: bool = False
    superseded: bool = False  # a `supersedes` link points at it
    degree: int = 0  # its links and knowledge edges, whatever the view shows of them

    @property
    def below_prune(self) -> bool:
        return self.kind == TRACE and self.strength < PRUNE_THRESHOLD

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "type": self.type,
            "scope": self.scope,
            "scope_id": self.scope_id,
            "category": self.category,
            "tags": list(self.tags),
            "strength": round(self.strength, 6),
            "retrieval_count": self.retrieval_count,
            "created_at": self.created_at,
            "last_accessed": self.last_accessed,
            "deleted": self.deleted,
            "superseded": self.superseded,
            "degree": self.degree,
        }


def with_degree(node: GraphNode, degree: int) -> GraphNode:
    """`node` with its degree: `dataclasses.replace` but ~5× faster (it looks the fields up
    each call), which a 1,500-node neighbourhood calls for every node it ranks."""
    return GraphNode(
        node.id,
        node.kind,
        node.label,
        node.type,
        node.scope,
        node.scope_id,
        node.category,
        node.tags,
        node.strength,
        node.retrieval_count,
        node.created_at,
        node.last_accessed,
        node.deleted,
        node.superseded,
        degree,
    )


@dataclass(frozen=True, slots=True)
class GraphEdge:
    key: str  # `link|from|to|kind` for a link, `edge|id` for a knowledge edge
    source: str
    target: str
    kind: str  # the link kind or the knowledge edge's type
    origin: str  # LINK or GRAPH
    directed: bool = True
    weight: float = 1.0

    def other(self, node_id: str) -> str:
        return self.target if node_id == self.source else self.source

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "source": self.source,
            "target": self.target,
            "kind": self.kind,
            "origin": self.origin,
            "directed": self.directed,
            "weight": self.weight,
        }


def link_key(from_id: str, to_id: str, kind: str) -> str:
    return f"link|{from_id}|{to_id}|{kind}"


def edge_key(edge_id: str) -> str:
    return f"edge|{edge_id}"


@dataclass
class Neighbourhood:
    """Nodes and the edges among them; `walked` = the nodes whose neighbours were brought
    (expanded), `pending[id]` = the ids of a walked node's neighbours not brought yet, best
    first, for the next "+N more"; `more[id]` = edges of `id` the neighbourhood lacks."""

    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: dict[str, GraphEdge] = field(default_factory=dict)
    more: dict[str, int] = field(default_factory=dict)
    pending: dict[str, list[str]] = field(default_factory=dict)
    walked: set[str] = field(default_factory=set)
    centre: str | None = None

    def merge(self, other: Neighbourhood) -> None:
        self.nodes.update(other.nodes)
        self.edges.update(other.edges)
        self.more.update(other.more)
        self.pending.update(other.pending)
        self.walked.update(other.walked)


def summary(text: str, chars: int = LABEL_CHARS) -> str:
    """A short label from a memory's text: its first line that holds words, cut at a word."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = line.lstrip("#>*- \t").strip() or line
    if len(line) <= chars:
        return line
    cut = line.rfind(" ", 0, chars)
    return (line[: cut if cut > chars // 2 else chars]).rstrip(" ,;:.") + "…"


def trace_label(title: object, source_file: object, content: str) -> str:
    """What names a memory in the graph: its title, else its note's name (a note of an
    imported vault), else a short summary of its text — never its id."""
    if isinstance(title, str) and title.strip():
        return summary(title)
    if isinstance(source_file, str) and source_file.strip():
        name = source_file.rsplit("/", 1)[-1]
        return summary(name[:-3] if name.lower().endswith(".md") else name)
    return summary(content) or "(empty)"
