"""The graph as GraphML or GEXF (Gephi opens both): what the view shows, or the whole brain.

Nodes carry their label, kind, type, scope, category, tags, strength, retrieval count,
creation time, and whether they are superseded; edges their kind, origin (a memgui link or
a knowledge edge), weight, and direction (`relates_to` and bidirectional knowledge edges are
undirected). The whole graph is read a page at a time (by rowid, each page a range of the
primary key) and written as it is read. A file is written to a temporary name beside the
target and renamed when whole: a failed or cancelled export leaves no partial file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from memgui.core.errors import InvalidArgument
from memgui.core.graph_view import rows
from memgui.core.graph_view.shapes import (
    GraphEdge,
    GraphNode,
)
from memgui.core.progress import Cancelled, Job, Progress

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.shared_brain import SharedBrain

FORMATS = ("graphml", "gexf")
PAGE = 5_000
# XML 1.0 holds no control characters but tab, newline and carriage return, and no lone
# surrogates: a memory's text may have them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

NODE_FIELDS: tuple[tuple[str, str], ...] = (
    ("label", "string"),
    ("kind", "string"),
    ("type", "string"),
    ("scope", "string"),
    ("scope_id", "string"),
    ("category", "string"),
    ("tags", "string"),
    ("strength", "double"),
    ("retrieval_count", "int"),
    ("created_at", "long"),
    ("superseded", "boolean"),
    ("degree", "int"),
)
EDGE_FIELDS: tuple[tuple[str, str], ...] = (("kind", "string"), ("origin", "string"))


def check_format(fmt: object) -> str:
    if fmt not in FORMATS:
        raise InvalidArgument("format", f"must be one of {', '.join(FORMATS)} (got {fmt!r})", fmt)
    return str(fmt)


def _text(value: object) -> str:
    return _NOT_XML.sub("\ufffd", "" if value is None else str(value))


def _values(node: GraphNode) -> dict[str, str]:
    return {
        "label": node.label,
        "kind": node.kind,
        "type": node.type,
        "scope": node.scope,
        "scope_id": node.scope_id,
        "category": node.category or "",
        "tags": " ".join(node.tags),
        "strength": repr(float(node.strength)),
        "retrieval_count": str(node.retrieval_count),
        "created_at": str(node.created_at),
        "superseded": "true" if node.superseded else "false",
        "degree": str(node.degree),
    }


class _Writer:
    def __init__(self, out: IO[str], fmt: str) -> None:
        self.out, self.fmt, self.edges = out, fmt, 0

    def start(self) -> None:
        w = self.out.write
        w('<?xml version="1.0" encoding="UTF-8"?>\n')
        if self.fmt == "graphml":
            w('<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
            for name, kind in NODE_FIELDS:
                w(f'  <key id="n_{name}" for="node" attr.name="{name}" attr.type="{kind}"/>\n')
            for name, kind in EDGE_FIELDS:
                w(f'  <key id="e_{name}" for="edge" attr.name="{name}" attr.type="{kind}"/>\n')
            w('  <key id="e_weight" for="edge" attr.name="weight" attr.type="double"/>\n')
            w('  <graph id="memgui" edgedefault="directed">\n')
        else:
            # GEXF 1.2: what Gephi, sigma.js and networkx all read.
            w('<gexf xmlns="http://www.gexf.net/1.2draft" version="1.2">\n')
            w("  <meta><creator>memgui</creator></meta>\n")
            w('  <graph defaultedgetype="directed" mode="static">\n')
            w('    <attributes class="node">\n')
            for k, (name, kind) in enumerate(NODE_FIELDS[1:]):
                w(f'      <attribute id="{k}" title="{name}" type="{kind}"/>\n')
            w('    </attributes>\n    <attributes class="edge">\n')
            for k, (name, kind) in enumerate(EDGE_FIELDS):
                w(f'      <attribute id="{k}" title="{name}" type="{kind}"/>\n')
            w("    </attributes>\n")

    def nodes_start(self) -> None:
        if self.fmt == "gexf":
            self.out.write("    <nodes>\n")

    def node(self, node: GraphNode) -> None:
        values = _values(node)
        if self.fmt == "graphml":
            data = "".join(
                f'<data key="n_{k}">{_escape(v)}</data>' for k, v in values.items() if v != ""
            )
            self.out.write(f"    <node id={quoteattr(_text(node.id))}>{data}</node>\n")
            return
        attvalues = "".join(
            f'<attvalue for="{k}" value={quoteattr(_text(values[name]))}/>'
            for k, (name, _kind) in enumerate(NODE_FIELDS[1:])
        )
        label = quoteattr(_text(node.label))
        self.out.write(
            f"      <node id={quoteattr(_text(node.id))} label={label}>"
            f"<attvalues>{attvalues}</attvalues></node>\n"
        )

    def edges_start(self) -> None:
        if self.fmt == "gexf":
            self.out.write("    </nodes>\n    <edges>\n")

    def edge(self, edge: GraphEdge) -> None:
        self.edges += 1
        ident = quoteattr(_text(edge.key))
        ends = f"source={quoteattr(_text(edge.source))} target={quoteattr(_text(edge.target))}"
        if self.fmt == "graphml":
            directed = "" if edge.directed else ' directed="false"'
            self.out.write(
                f"    <edge id={ident} {ends}{directed}>"
                f'<data key="e_kind">{_escape(edge.kind)}</data>'
                f'<data key="e_origin">{edge.origin}</data>'
                f'<data key="e_weight">{float(edge.weight)!r}</data></edge>\n'
            )
            return
        kind = "directed" if edge.directed else "undirected"
        self.out.write(
            f'      <edge id={ident} {ends} type="{kind}" label={quoteattr(_text(edge.kind))} '
            f'weight="{float(edge.weight)!r}"><attvalues>'
            f'<attvalue for="0" value={quoteattr(_text(edge.kind))}/>'
            f'<attvalue for="1" value="{edge.origin}"/></attvalues></edge>\n'
        )

    def end(self) -> None:
        if self.fmt == "graphml":
            self.out.write("  </graph>\n</graphml>\n")
        else:
            self.out.write("    </edges>\n  </graph>\n</gexf>\n")


def _escape(value: str) -> str:
    return _text(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@contextmanager
def _whole_file(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    target = Path(path)
    if target.is_dir():
        raise InvalidArgument("path", f"is a folder, not a file (got '{target}')", str(target))
    temporary = target.with_name(f".{target.name}.export-tmp-{os.getpid()}")
    try:
        with open(temporary, "w", encoding="utf-8", newline="\n") as out:
            yield out
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def write_shown(
    path: str | os.PathLike[str], fmt: str, nodes: Iterable[GraphNode], edges: Iterable[GraphEdge]
) -> int:
    """Write the given nodes and edges (what the view shows); returns how many edges."""
    fmt = check_format(fmt)
    nodes = list(nodes)
    known = {n.id for n in nodes}
    with _whole_file(path) as out:
        writer = _Writer(out, fmt)
        writer.start()
        writer.nodes_start()
        for node in nodes:
            writer.node(node)
        writer.edges_start()
        for edge in edges:
            if edge.source in known and edge.target in known:
                writer.edge(edge)
        writer.end()
    return writer.edges


def export_whole(
    brain: Brain | SharedBrain,
    path: str | os.PathLike[str],
    fmt: str,
    cancelled: Callable[[], bool] | None = None,
) -> Job[dict[str, int]]:
    """Every live memory and knowledge node, every link and edge between them; a job."""
    fmt = check_format(fmt)
    from memgui.core.shared_brain import SharedBrain

    if isinstance(brain, SharedBrain):
        return (yield from _export_shared(brain, path, fmt, cancelled))
    counts = {"nodes": 0, "edges": 0}
    with _whole_file(path) as out:
        writer = _Writer(out, fmt)
        writer.start()
        writer.nodes_start()
        for page in _pages(brain, _trace_page):
            for node in page:
                writer.node(node)
            counts["nodes"] += len(page)
            yield Progress(counts["nodes"], None, f"wrote {counts['nodes']} nodes")
            _check(cancelled)
        for page in _pages(brain, _node_page):
            for node in page:
                writer.node(node)
            counts["nodes"] += len(page)
        writer.edges_start()
        for reader in (_link_page, _edge_page):
            for page in _pages(brain, reader):
                for edge in page:
                    writer.edge(edge)
                counts["edges"] += len(page)
                yield Progress(counts["nodes"], None, f"wrote {counts['edges']} edges")
                _check(cancelled)
        writer.end()
    return counts


def _export_shared(
    brain: SharedBrain,
    path: str | os.PathLike[str],
    fmt: str,
    cancelled: Callable[[], bool] | None,
) -> Job[dict[str, int]]:
    """`export_whole` of a shared brain: the same file, read a page at a time by key (each
    page a snapshot of its own, as each page of a file is read under its lock alone)."""
    counts = {"nodes": 0, "edges": 0}
    now = brain.now()
    with _whole_file(path) as out:
        writer = _Writer(out, fmt)
        writer.start()
        writer.nodes_start()
        after = ""
        while True:
            with brain.graph_rows() as src:
                nodes = src.trace_page(after, PAGE, now)
            if not nodes:
                break
            for node in nodes:
                writer.node(node)
            after = nodes[-1].id
            counts["nodes"] += len(nodes)
            yield Progress(counts["nodes"], None, f"wrote {counts['nodes']} nodes")
            _check(cancelled)
        after = ""
        while True:
            with brain.graph_rows() as src:
                nodes = src.node_page(after, PAGE)
            if not nodes:
                break
            for node in nodes:
                writer.node(node)
            after = nodes[-1].id
            counts["nodes"] += len(nodes)
        writer.edges_start()
        link_after = ("", "", "")
        while True:
            with brain.graph_rows() as src:
                edges = src.link_page(link_after, PAGE)
            if not edges:
                break
            for edge in edges:
                writer.edge(edge)
            last = edges[-1]
            link_after = (last.source, last.target, last.kind)
            counts["edges"] += len(edges)
            yield Progress(counts["nodes"], None, f"wrote {counts['edges']} edges")
            _check(cancelled)
        after = ""
        while True:
            with brain.graph_rows() as src:
                edges = src.edge_page(after, PAGE)
            if not edges:
                break
            for edge in edges:
                writer.edge(edge)
            after = edges[-1].key.removeprefix("edge|")
            counts["edges"] += len(edges)
            yield Progress(counts["nodes"], None, f"wrote {counts['edges']} edges")
            _check(cancelled)
        writer.end()
    return counts


def _check(cancelled: Callable[[], bool] | None) -> None:
    if cancelled is not None and cancelled():
        raise Cancelled("the export was cancelled; no file was written")


Page = tuple[int, list[Any]]


def _pages(brain: Brain, read: Callable[[Brain, int], Page]) -> Iterator[list[Any]]:
    after = -(2**63)
    while True:
        with brain.db.lock:
            after, found = read(brain, after)
        if not found:
            return
        yield found


def _trace_page(brain: Brain, after: int) -> Page:
    db, bid, now = brain.db, brain.brain_id, brain.now()
    page: list[tuple[Any, ...]] = db.conn.execute(
        "SELECT rowid, id FROM memory_traces WHERE brain_id = ? AND deleted = 0 AND rowid > ? "
        "ORDER BY rowid LIMIT ?",
        (bid, after, PAGE),
    ).fetchall()
    if not page:
        return after, []
    found = rows.trace_nodes(db, bid, [r[1] for r in page], now)
    return page[-1][0], [found[r[1]] for r in page if r[1] in found]


def _node_page(brain: Brain, after: int) -> Page:
    """Knowledge nodes that are not a memory's copy (the memory stands for it)."""
    if not rows.has_graph(brain.db):
        return after, []
    page: list[tuple[Any, ...]] = brain.db.conn.execute(
        "SELECT n.rowid, n.id FROM knowledge_nodes n WHERE n.brain_id = ?1 AND n.rowid > ?2 "
        "AND NOT EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = ?1 AND t.id = n.id) "
        "ORDER BY n.rowid LIMIT ?3",
        (brain.brain_id, after, PAGE),
    ).fetchall()
    if not page:
        return after, []
    found = rows.knowledge_nodes(brain.db, brain.brain_id, [r[1] for r in page])
    return page[-1][0], [found[r[1]] for r in page if r[1] in found]


_LIVE = (
    "EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = ?1 AND t.id = {} AND t.deleted = 0)"
)
_NODE = (
    "(" + _LIVE + " OR (NOT EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = ?1 "
    "AND t.id = {}) AND EXISTS (SELECT 1 FROM knowledge_nodes n WHERE n.brain_id = ?1 "
    "AND n.id = {})))"
)


def _link_page(brain: Brain, after: int) -> Page:
    if not rows.has_links(brain.db):
        return after, []
    page: list[tuple[Any, ...]] = brain.db.conn.execute(
        "SELECT l.rowid, l.from_id, l.to_id, l.kind FROM memory_links l WHERE l.brain_id = ?1 "
        f"AND l.rowid > ?2 AND {_LIVE.format('l.from_id')} AND {_LIVE.format('l.to_id')} "
        "ORDER BY l.rowid LIMIT ?3",
        (brain.brain_id, after, PAGE),
    ).fetchall()
    if not page:
        return after, []
    edges = [rows.link_edge(a, b, k) for _r, a, b, k in page]
    return page[-1][0], edges


def _edge_page(brain: Brain, after: int) -> Page:
    if not rows.has_graph(brain.db):
        return after, []
    ends = " AND ".join(_NODE.format(c, c, c) for c in ("e.source_id", "e.target_id"))
    page: list[tuple[Any, ...]] = brain.db.conn.execute(
        "SELECT e.rowid, e.id, e.source_id, e.target_id, e.type, e.weight, e.bidirectional "
        f"FROM knowledge_edges e WHERE e.brain_id = ?1 AND e.rowid > ?2 AND {ends} "
        "AND e.source_id != e.target_id ORDER BY e.rowid LIMIT ?3",
        (brain.brain_id, after, PAGE),
    ).fetchall()
    if not page:
        return after, []
    edges = [rows.graph_edge(i, s, t, k, w, both) for _r, i, s, t, k, w, both in page]
    return page[-1][0], edges


__all__ = ["FORMATS", "export_whole", "write_shown"]
