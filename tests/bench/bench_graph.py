"""The graph view on a large brain: click to paint, layout stalls, pan and zoom, overview.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.bench.bench_graph [--traces 1000000]
        [--overview-traces 100000] [--runs 5]

The brains are built once under memgui-bench/ in the temp folder and reused (`graph_brain`):
`bulk_rows.insert_traces` for the traces (50k a write), then plain bulk inserts for the graph —
each trace linked to the next (relates_to), one in five to one within ±1,000 (caused_by),
one in ten superseding the one before; 50 hubs linked to 2,000 traces each; 10 regions (a
centre linked to 15 traces, each of them to 100 more: a depth-2 neighbourhood of ~1,500
nodes, the size a click is measured on); 20,000 concept
nodes and one trace in five with its memory-graph copy and two `mentions` edges to concepts
drawn from a power law (a few concepts are hubs of tens of thousands of edges). ~3–5 min
for 1M traces.

It measures, in one process, on the real graph window (offscreen):
- `click_to_paint_ms`: from asking for a neighbourhood (depth 2, ≤ 2,000 nodes: a region's
  centre, ~1,500) until the canvas has painted it (query + seed layout + first paint), p50
  and max over the runs, with the query alone (`query_ms`), the seed (`seed_ms`) and the
  paint (`paint_ms`); `small_click_to_paint_ms` the same on ordinary memories (a few nodes);
- `layout_20k_longest_gap_ms`: the longest gap of a 5 ms timer on the GUI thread while a
  layout of 20,000 nodes runs in its job (and `idle_longest_gap_ms`, the same with nothing
  running: what the machine's load alone costs), and the layout's own time;
- `pan_zoom_fps_20k`: frames per second of a pan-and-zoom gesture over 20,000 visible
  nodes, a frame being one step then the canvas drawn into an offscreen image as the app
  draws it (the first in full, the others the last full frame moved until the gesture
  settles); `pan_zoom_full_frames_fps_20k` the same with every frame drawn in full, and
  `pan_zoom_settled_frame_ms_20k` the full frame drawn once a gesture settles;
- `filter_ms_20k`: applying a filter (mask, canvas and both lists) at 20,000 nodes;
- `overview_ms`: from asking for the overview until its first page (2,000 nodes) is painted,
  on a brain of `--overview-traces` (100k) and on the big one.
Targets: ≤ 150 ms, ≤ 50 ms, ≥ 10 frames/s, ≤ 100 ms, ≤ 2 s.

Each is set against a floor measured in the same run (`floors`, and `ratios`: ours over the
floor, or the floor's frames over ours for the frame rate): the bare index lookups of the
same neighbourhood's ids (`query_floor_ms`: what any neighbourhood of these tables pays, no
degrees, ranking or rows), the plain way to paint the same 20,000 nodes and their edges
into the same image (`plain_paint_fps`: one `drawLines`, one `drawPoints` with a round pen,
no level of detail; a peer rather than a floor), the GUI thread's longest timer gap with
nothing running (`idle_longest_gap_ms`: the machine's load alone), and the four `GROUP BY`
statements an overview ranks by (`overview_floor_ms`). Prints one JSON document with the
machine and its load.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QEventLoop, QLineF, QPointF, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter, QPen  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from memgui.core import graph_view  # noqa: E402
from memgui.core.brain import Brain  # noqa: E402
from memgui.core.io.planning.validate import trace_snapshot  # noqa: E402
from memgui.ui.graph.graph_filters import GraphFilter  # noqa: E402
from memgui.ui.graph.graph_window import GraphWindow  # noqa: E402
from memgui.ui.session import BrainSession  # noqa: E402
from tests.bench.common import cached_brain, emit, fill_traces  # noqa: E402
from tests.bench.qt_wait import wait_until  # noqa: E402

CHUNK = 50_000
START_MS = 1_700_000_000_000
HUBS, HUB_LINKS = 50, 2_000
# Regions: a centre with SPOKES neighbours, each linked to FAN traces of its own — a depth-2
# neighbourhood of ~1,500 nodes whose nodes are all walked (no hub among them).
REGIONS, SPOKES, FAN = 10, 15, 100
HUB_DEGREE = graph_view.HUB_DEGREE
CONCEPTS = 20_000
TYPES = ("episodic", "semantic", "procedural", "prospective", "relational")
SCOPES = ("user", "thread", "persona", "organization")
WORDS = "release deploy cache index query memory agent budget review tests retry schema".split()
PROBE_MS = 5


def trace_id(i: int) -> str:
    return f"gb-{i:07d}"


def graph_brain(traces: int) -> Path:
    """A brain of `traces` traces with links and a knowledge graph, built once and reused."""

    def fill(path: Path) -> None:
        rng = random.Random(11)
        with fill_traces(path, traces, lambda i: _snapshot(rng, i), CHUNK) as brain:
            _links(brain, traces, rng)
            _knowledge(brain, traces, rng)

    return cached_brain(f"graph-regions-{traces}", fill)


def _snapshot(rng: random.Random, i: int) -> dict:
    words = " ".join(rng.choices(WORDS, k=rng.randint(5, 12)))
    fields = {
        "content": f"{words} {i}",
        "type": TYPES[i % len(TYPES)],
        "scope": SCOPES[(i // 5) % len(SCOPES)],
        "tags": [WORDS[i % 7]],
        "strength": round(rng.uniform(0.02, 1.0), 3),
        "retrieval_count": int(rng.paretovariate(1.5)) - 1,
        "created_at": START_MS + i * 1000,
    }
    return trace_snapshot(fields, trace_id(i), START_MS + i * 1000)


def _insert(brain: Brain, sql: str, rows: list[tuple]) -> None:
    with brain.write("bench graph", kind="import"):
        brain.db.conn.executemany(sql, rows)


def _links(brain: Brain, traces: int, rng: random.Random) -> None:
    sql = "INSERT OR IGNORE INTO memory_links VALUES (?, ?, ?, ?, ?)"
    rows: list[tuple] = []
    bid = brain.brain_id

    def flush() -> None:
        _insert(brain, sql, rows)
        rows.clear()

    for i in range(traces - 1):
        a, b = sorted((trace_id(i), trace_id(i + 1)))
        rows.append((bid, a, b, "relates_to", START_MS))
        if i % 5 == 0:
            other = min(traces - 1, max(0, i + rng.randint(-1000, 1000)))
            if other != i:
                rows.append((bid, trace_id(i), trace_id(other), "caused_by", START_MS))
        if i % 10 == 9:
            rows.append((bid, trace_id(i + 1), trace_id(i), "supersedes", START_MS))
        if len(rows) >= 200_000:
            flush()
    for hub in range(HUBS):
        hub_id = trace_id(hub * (traces // HUBS))
        for _ in range(HUB_LINKS):
            rows.append((bid, hub_id, trace_id(rng.randrange(traces)), "caused_by", START_MS))
    for centre in region_centres(traces):
        for _ in range(SPOKES):
            spoke = trace_id(rng.randrange(traces))
            rows.append((bid, centre, spoke, "caused_by", START_MS))
            for _ in range(FAN):
                rows.append((bid, spoke, trace_id(rng.randrange(traces)), "caused_by", START_MS))
    flush()


def region_centres(traces: int) -> list[str]:
    """The centres of the regions: away from the hubs, spread over the brain."""
    step = traces // REGIONS
    return [trace_id(r * step + step // 2 + 3) for r in range(REGIONS)]


def _knowledge(brain: Brain, traces: int, rng: random.Random) -> None:
    bid = brain.brain_id
    node_sql = "INSERT OR IGNORE INTO knowledge_nodes (brain_id, id, type, label, created_at) "
    node_sql += "VALUES (?, ?, ?, ?, ?)"
    edge_sql = "INSERT INTO knowledge_edges (brain_id, id, source_id, target_id, type, "
    edge_sql += "created_at) VALUES (?, ?, ?, ?, ?, ?)"
    concepts = [f"kn-{k:05d}" for k in range(CONCEPTS)]
    _insert(brain, node_sql, [(bid, c, "concept", f"concept {c[3:]}", START_MS) for c in concepts])
    copies, edges = [], []
    for i in range(0, traces, 5):
        copies.append((bid, trace_id(i), "memory_graph", trace_id(i), START_MS))
        for _ in range(2):
            k = min(CONCEPTS - 1, int(rng.paretovariate(0.8)) - 1)
            edges.append((bid, f"ke-{len(edges):08d}", trace_id(i), concepts[k], "mentions", 0))
    _insert(brain, node_sql, copies)
    _insert(brain, edge_sql, edges)


# --- measuring ----------------------------------------------------------------------------


class Painted:
    """Counts the canvas's paints and notes when the last one ended."""

    def __init__(self, window: GraphWindow) -> None:
        self.count = 0
        self.at = 0.0
        canvas = window.canvas
        original = canvas.paintEvent

        def paint(event: object) -> None:
            original(event)  # type: ignore[arg-type]
            self.count += 1
            self.at = time.perf_counter()

        canvas.paintEvent = paint  # type: ignore[method-assign]


def wait(app: QApplication, until: Callable[[], bool], timeout_s: float = 300.0) -> None:
    wait_until(app, until, timeout_s, "the graph window")


def click_to_paint(app: QApplication, window: GraphWindow, painted: Painted, centre: str) -> float:
    """From asking for `centre`'s neighbourhood until the canvas has painted it: a paint
    after the scene took it in (one before, of the old scene, does not count)."""
    opened: list[int] = []

    def took_in(_centre: str) -> None:
        opened.append(painted.count)

    window.controller.opened.connect(took_in)
    start = time.perf_counter()
    window.controller.open_on(centre)
    # Woken by events only: the query's answer and the paint each come as one.
    wait_until(
        app, lambda: bool(opened) and painted.count > opened[0], 300.0, "a click", tick_ms=None
    )
    took = (time.perf_counter() - start) * 1000
    window.controller.opened.disconnect(took_in)
    return took


def longest_gap(app: QApplication, busy: Callable[[], bool], seconds: float | None = None) -> float:
    """The longest gap of a 5 ms timer while `busy()` (or for `seconds` when given)."""
    clock = QElapsedTimer()
    clock.start()
    gaps = [0.0]
    last = [clock.nsecsElapsed()]
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(PROBE_MS)

    def tick() -> None:
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e6 - PROBE_MS)
        last[0] = now

    timer.timeout.connect(tick)
    timer.start()
    end = time.perf_counter() + (seconds or 1e9)
    while busy() if seconds is None else time.perf_counter() < end:
        # The probe's own timer wakes the loop: no sleep adds to the gaps it measures.
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    timer.stop()
    return round(max(gaps), 1)


def frames_per_second(
    app: QApplication, window: GraphWindow, frames: int = 30, cached: bool = True
) -> float:
    """Frames per second of a pan-and-zoom gesture: each frame one step (a pan or a zoom),
    the canvas drawn into an offscreen image as it would be shown, then the events that
    came meanwhile handled (the app's event loop between two steps). `cached`: as the app
    draws (the first frame in full, as what is drawn changed just before, the rest the last
    full frame moved until the gesture settles); else every frame drawn in full."""
    canvas = window.canvas
    canvas.cache_gestures = cached
    canvas.redraw()  # nothing kept from before: the gesture's first frame is drawn in full
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
    start = time.perf_counter()
    for k in range(frames):
        if k % 2:
            canvas.pan(7.0, 3.0)
        else:
            canvas.zoom(1.03 if k % 4 else 1 / 1.03)
        canvas.render(image)
        app.processEvents()
    took = time.perf_counter() - start
    canvas.cache_gestures = True
    return round(frames / took, 1)


def settled_frame_ms(app: QApplication, window: GraphWindow) -> float:
    """After a gesture: the frame drawn in full once it settles (from the settling on)."""
    canvas = window.canvas
    canvas.pan(7.0, 3.0)
    wait(app, lambda: not canvas.in_gesture)
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
    canvas.redraw()
    start = time.perf_counter()
    canvas.render(image)
    return round((time.perf_counter() - start) * 1000, 1)


def plain_paint_fps(window: GraphWindow, frames: int = 30) -> float:
    """Frames per second of the plain way to draw the shown graph: every edge in one
    `drawLines`, every node in one `drawPoints` with a round 10 px pen, no level of detail."""
    canvas, scene = window.canvas, window.scene
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
    xy = scene.xy * canvas.scale + [canvas.offset.x(), canvas.offset.y()]
    points = [QPointF(float(x), float(y)) for x, y in xy]
    e = scene.edge_arrays
    lines = [QLineF(points[int(a)], points[int(b)]) for a, b in zip(e.src, e.dst, strict=True)]
    edge_pen, node_pen = QPen(QColor("#888888")), QPen(QColor("#3366cc"))
    node_pen.setWidthF(10.0)
    start = time.perf_counter()
    for _ in range(frames):
        image.fill(0)
        painter = QPainter(image)
        painter.setPen(edge_pen)
        painter.drawLines(lines)
        painter.setPen(node_pen)
        painter.drawPoints(points)
        painter.end()
    return round(frames / (time.perf_counter() - start), 1)


def query_floor_ms(brain: Brain, centre: str, found: graph_view.Neighbourhood) -> float:
    """The bare index lookups of a depth-2 neighbourhood's ids: the centre's links and
    knowledge edges both ways, then those of each neighbour it walks on from (the hubs
    aside, as the query leaves them), in the query's own statement shapes."""
    conn, bid = brain.db.conn, brain.brain_id
    walked = {
        other
        for e in found.edges.values()
        for other in (e.source, e.target)
        if centre in (e.source, e.target) and other != centre
    }
    walked = {i for i in walked if i in found.nodes and found.nodes[i].degree <= HUB_DEGREE}
    array = "[" + ",".join(f'"{i}"' for i in sorted(walked)) + "]"
    many = (
        "SELECT l.to_id FROM json_each(?2) j CROSS JOIN memory_links l "
        "ON l.brain_id = ?1 AND l.from_id = j.value "
        "UNION ALL SELECT l.from_id FROM json_each(?2) j CROSS JOIN memory_links l "
        "INDEXED BY idx_memory_links_to ON l.brain_id = ?1 AND l.to_id = j.value "
        "UNION ALL SELECT e.target_id FROM json_each(?2) j CROSS JOIN knowledge_edges e "
        "ON e.brain_id = ?1 AND e.source_id = j.value "
        "UNION ALL SELECT e.source_id FROM json_each(?2) j CROSS JOIN knowledge_edges e "
        "ON e.brain_id = ?1 AND e.target_id = j.value"
    )
    start = time.perf_counter()
    for ids in (f'["{centre}"]', array):
        for _row in conn.execute(many, (bid, ids)):
            pass
    return (time.perf_counter() - start) * 1000


def overview_floor_ms(path: Path) -> float:
    """The four GROUP BY statements over the link and edge indexes an overview ranks by."""
    with Brain.open(path, "bench") as brain:
        conn, bid = brain.db.conn, brain.brain_id
        start = time.perf_counter()
        for column, table in (
            ("from_id", "memory_links"),
            ("to_id", "memory_links"),
            ("source_id", "knowledge_edges"),
            ("target_id", "knowledge_edges"),
        ):
            sql = f"SELECT {column}, count(*) FROM {table} WHERE brain_id = ? GROUP BY {column}"
            for _row in conn.execute(sql, (bid,)):
                pass
        return round((time.perf_counter() - start) * 1000, 1)


def overview_ms(app: QApplication, path: Path, scratch: Path) -> float:
    """From asking for the overview's first page until it is painted, in a fresh window."""
    session = BrainSession.open(path)
    window = GraphWindow(session, graph_view.PositionStore(scratch, path, session.brain_id))
    window.resize(1400, 900)
    window.show()
    painted = Painted(window)
    app.processEvents()
    before = painted.count
    start = time.perf_counter()
    window.controller.open_overview(0, 2000)
    wait(app, lambda: window.overview is not None and painted.count > before)
    took = round((time.perf_counter() - start) * 1000, 1)
    wait(app, lambda: not window.controller.busy)
    window.close()
    session.close()
    return took


def run(traces: int, overview_traces: int, runs: int) -> dict:
    app = QApplication.instance() or QApplication([])
    path = graph_brain(traces)
    small = graph_brain(overview_traces) if overview_traces != traces else path
    scratch = Path(tempfile.mkdtemp(prefix="memgui-graph-bench-"))
    session = BrainSession.open(path)
    store_ = graph_view.PositionStore(scratch, path, session.brain_id)
    window = GraphWindow(session, store_)
    window.resize(1400, 900)
    window.show()
    painted = Painted(window)
    app.processEvents()
    brain = session.brain
    regions = region_centres(traces)
    centres = [regions[k % REGIONS] for k in range(runs)]
    window.controller.depth = 2
    # Ordinary memories too (a chain, a cause, maybe a hub or a concept): a few nodes.
    rng = random.Random(3)
    small_sizes, small_clicks = [], []
    for _ in range(runs):
        centre = trace_id(rng.randrange(5, traces - 6000) // 5 * 5 + 1)
        small_clicks.append(click_to_paint(app, window, painted, centre))
        small_sizes.append(len(window.scene.nodes))
        wait(app, lambda: not window.controller.busy)
    sizes, clicks, queries, seeds, paints, floors = [], [], [], [], [], []
    for centre in centres:
        clicks.append(click_to_paint(app, window, painted, centre))
        sizes.append(len(window.scene.nodes))
        wait(app, lambda: not window.controller.busy)
        t = time.perf_counter()
        found = graph_view.neighbourhood(brain, centre, 2)
        queries.append((time.perf_counter() - t) * 1000)
        floors.append(query_floor_ms(brain, centre, found))
        edges = [(e.source, e.target) for e in found.edges.values()]
        t = time.perf_counter()
        graph_view.seed(found.nodes, edges, {}, centre)
        seeds.append((time.perf_counter() - t) * 1000)
        image = QImage(window.canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
        window.canvas.redraw()  # drawn in full, not the frame kept from the click's paint
        t = time.perf_counter()
        window.canvas.render(image)
        paints.append((time.perf_counter() - t) * 1000)
    idle_gap = longest_gap(app, lambda: False, seconds=2.0)
    # 20,000 nodes: the overview's first page at its largest, laid out from nothing.
    store_.flush()
    store_.path.unlink(missing_ok=True)
    store_._positions = {}
    t = time.perf_counter()
    window.controller.open_overview(0, 20_000)
    wait(app, lambda: window.overview is not None and len(window.scene.nodes) > 10_000)
    big_open_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    # Until the layout's settled frame is drawn in full (in slices, after the job ends).
    layout_gap = longest_gap(app, lambda: window.controller.busy or window.canvas.owes_full_frame)
    layout_s = time.perf_counter() - t
    shown = len(window.scene.nodes)
    window.canvas.fit()
    fps = frames_per_second(app, window)
    full_fps = frames_per_second(app, window, cached=False)
    settled_ms = settled_frame_ms(app, window)
    plain_fps = plain_paint_fps(window)
    filters = []
    for flt in (
        GraphFilter(types=frozenset({"semantic", "concept"})),
        GraphFilter(),
        GraphFilter(min_strength=0.5),
    ):
        t = time.perf_counter()
        window.canvas.set_filter(flt)
        filters.append((time.perf_counter() - t) * 1000)
    overviews = {
        f"{overview_traces} traces": overview_ms(app, small, scratch),
        f"{traces} traces": overview_ms(app, path, scratch),
    }
    overview_floors = {
        f"{overview_traces} traces": overview_floor_ms(small),
        f"{traces} traces": overview_floor_ms(path),
    }
    window.close()
    session.close()

    def summary(values: list[float]) -> dict:
        return {"p50": round(statistics.median(values), 1), "max": round(max(values), 1)}

    return {
        "traces": traces,
        "neighbourhood_nodes": sizes,
        "click_to_paint_ms": summary(clicks),
        "small_neighbourhood_nodes": small_sizes,
        "small_click_to_paint_ms": summary(small_clicks),
        "query_ms": summary(queries),
        "seed_ms": summary(seeds),
        "paint_ms": summary(paints),
        "layout_nodes": shown,
        "layout_20k_open_ms": round(big_open_ms, 1),
        "layout_20k_s": round(layout_s, 2),
        "layout_20k_longest_gap_ms": layout_gap,
        "idle_longest_gap_ms": idle_gap,
        "pan_zoom_fps_20k": fps,
        "pan_zoom_full_frames_fps_20k": full_fps,
        "pan_zoom_settled_frame_ms_20k": settled_ms,
        "filter_ms_20k": [round(f, 1) for f in filters],
        "overview_ms": overviews,
        "floors": {
            "query_floor_ms": summary(floors),
            "plain_paint_fps": plain_fps,
            "idle_longest_gap_ms": idle_gap,
            "overview_floor_ms": overview_floors,
        },
        "ratios": {
            "query_over_floor": round(statistics.median(queries) / statistics.median(floors), 1),
            "ours_fps_over_plain": round(fps / plain_fps, 1),
            "full_frames_fps_over_plain": round(full_fps / plain_fps, 1),
            "layout_gap_over_idle_gap": round(layout_gap / max(idle_gap, 0.1), 1),
            "overview_over_floor": {
                k: round(overviews[k] / max(overview_floors[k], 0.1), 1) for k in overviews
            },
        },
        "targets": {
            "click_to_paint_ms": 150,
            "layout_20k_longest_gap_ms": 50,
            "pan_zoom_fps_20k": 10,
            "filter_ms_20k": 100,
            "overview_ms": 2000,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--overview-traces", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    emit("graph", run(args.traces, args.overview_traces, args.runs))


if __name__ == "__main__":
    main()
