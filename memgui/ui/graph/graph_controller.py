"""What fills the graph view and keeps it true: the queries, the layout, the changes.

Opening on a node and expanding one are jobs on a runner of the view's own (one reader
connection, used by one worker at a time): the core answers a neighbourhood and a seed
position for each new node, the scene takes both and paints at once, then a layout job moves
the new nodes — and only those — posting positions at ≤ 30 Hz. Every change on the session's
bus (this window's edits and other programs' writes alike) is mirrored: the nodes and edges
it touched are read again, nodes gone are dropped, and a node that now joins an expanded one
arrives beside it, without moving anything already placed.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.errors import MemguiError
from memgui.core.graph_view import GRAPH, HUB_DEGREE, LayoutProgress, Neighbourhood, PositionStore
from memgui.core.model import Changes
from memgui.core.progress import Progress
from memgui.ui.graph import collector
from memgui.ui.graph.graph_scene import GraphScene
from memgui.ui.jobs import Job, JobRunner, keep_gil_switches_short
from memgui.ui.session import BrainSession

Point = tuple[float, float]
Answer = tuple[Neighbourhood, dict[str, Point], set[str]]  # found, seed positions, placed
MAX_LIVE_CANDIDATES = 5_000  # ids of one change looked at for arrivals (an import: more)


class GraphController(QObject):
    opened = Signal(str)  # the centre's id, once the scene holds its neighbourhood
    overview_opened = Signal(object)  # graph_view.Overview: a page of the busiest nodes
    grown = Signal(str)  # an expand or a live arrival added nodes (beside this id)
    laid_out = Signal()  # a layout job ended: every position is final
    failed = Signal(str)
    busy_changed = Signal(bool)

    def __init__(
        self,
        session: BrainSession,
        scene: GraphScene,
        positions: PositionStore,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.scene = scene
        self.positions = positions
        self.depth = 1
        self.rank = "degree"
        self.hub_degree = HUB_DEGREE
        self.include_deleted = False
        keep_gil_switches_short()  # its layout and query workers run beside the GUI thread
        self.runner = JobRunner(self, max_threads=1, nice=False)  # a click waits on it
        self.layout_runner = JobRunner(self, max_threads=1)
        self._reader: Brain | None = None  # used by the runner's one worker only
        self._query: Job | None = None
        self._layout: Job | None = None
        self._running: set[Job] = set()
        # A new scene's layout starts once its first frame is painted (the next turn of the
        # event loop): started at once, its worker took the GIL from that paint.
        self._layout_due: set[str] | None = None
        self._due = QTimer(self)
        self._due.setSingleShot(True)
        self._due.setInterval(0)
        self._due.timeout.connect(self._start_due_layout)
        self._due_holds = 0  # holds of queries whose scene is not painted yet
        self._holding: set[Job] = set()  # jobs holding the collector off (`collector`)
        self.overview_page: int | None = None  # the page shown, when an overview is
        session.bus.changed.connect(self.on_changes)
        self._open_reader()

    def _open_reader(self) -> None:
        """Open the reader now, in the runner, so the first click does not wait for it."""

        def work() -> Generator[Progress, None, None]:
            self._brain()
            yield Progress(1, 1, "opened")

        self.runner.start("graph reader", work)

    @property
    def busy(self) -> bool:
        """A query or layout whose outcome this thread has not taken in yet (a job counts as
        done in its worker a moment before its last positions arrive here)."""
        return bool(self._running) or self._layout_due is not None

    def _track(self, job: Job) -> None:
        """Count `job` as running until its outcome has been handled here (connected after
        the handlers, so they run first)."""
        self._running.add(job)
        for signal in (job.finished, job.failed, job.cancelled):
            signal.connect(lambda *_args, j=job: self._settle(j))
        self.busy_changed.emit(True)

    def _settle(self, job: Job) -> None:
        self._running.discard(job)
        if job in self._holding:
            self._holding.discard(job)
            if job is self._layout:  # once its positions are written (queued by now)
                self.positions.when_written(collector.release)
            elif self._layout_due is not None:
                self._due_holds += 1  # kept until the scene's first frame is painted
            else:
                collector.release()
        if job is self._layout and self.scene.settling and self._layout_due is None:
            self.scene.settling = False
            self.scene.moved.emit()  # a layout cut short: its frame drawn in full
        self.busy_changed.emit(self.busy)

    # --- opening and expanding ----------------------------------------------------------

    def _brain(self) -> Brain:
        if self._reader is None:
            self._reader = self.session.open_reader()
        return self._reader

    def open_on(self, node_id: str) -> None:
        """Show `node_id` and its neighbourhood (`depth` hops), replacing what is shown."""
        depth, rank, hubs, deleted = self.depth, self.rank, self.hub_degree, self.include_deleted
        saved = self.positions

        def work() -> Generator[Progress, None, Answer]:
            yield Progress(0, None, "reading the neighbourhood")
            found = graph_view.neighbourhood(
                self._brain(), node_id, depth, rank=rank, hub_degree=hubs, include_deleted=deleted
            )
            placed = saved.get(found.nodes)
            edges = [(e.source, e.target) for e in found.edges.values()]
            return found, graph_view.seed(found.nodes, edges, placed, node_id), set(placed)

        def done(answer: Answer) -> None:
            found, seeded, placed = answer
            self.overview_page = None
            self.scene.replace(found, seeded, centre=node_id)
            self.opened.emit(node_id)
            self._lay_out_after_paint(placed)

        self._run_query("graph", work, done)

    def open_overview(self, page: int = 0, size: int = graph_view.DEFAULT_MAX_NODES) -> None:
        """Show a page of the whole graph's nodes ranked by degree, and the edges among them."""
        saved = self.positions
        summary: list[graph_view.Overview] = []

        def work() -> Generator[Progress, None, Answer]:
            yield Progress(0, None, "ranking the graph's nodes")
            found = graph_view.overview(self._brain(), page, size)
            summary.append(found)
            placed = saved.get(found.found.nodes)
            edges = [(e.source, e.target) for e in found.found.edges.values()]
            ids = list(found.found.nodes)
            return found.found, graph_view.seed(ids, edges, placed), set(placed)

        def done(answer: Answer) -> None:
            found, seeded, placed = answer
            self.overview_page = page
            self.scene.replace(found, seeded)
            self.overview_opened.emit(summary[-1])
            self._lay_out_after_paint(placed)

        self._run_query("overview", work, done)

    def expand(self, node_id: str) -> None:
        """Bring the next neighbours of a shown node (its pending list, if it has one)."""
        if node_id not in self.scene.nodes:
            return
        shown = list(self.scene.nodes)
        pending = self.scene.pending.get(node_id) or None
        if node_id in self.scene.expanded and not pending:
            pending = None  # expanded before, nothing pending: look again for what is new
        placed = self.scene.positions()
        known_edges = self.scene.edge_list()
        rank, hubs, deleted = self.rank, self.hub_degree, self.include_deleted

        def work() -> Generator[Progress, None, Answer]:
            yield Progress(0, None, "expanding")
            found = graph_view.expand(
                self._brain(),
                node_id,
                shown,
                pending=pending,
                rank=rank,
                hub_degree=hubs,
                include_deleted=deleted,
            )
            ids = list(placed) + [i for i in found.nodes if i not in placed]
            edges = [(e.source, e.target) for e in found.edges.values()]
            edges += known_edges
            return found, graph_view.seed(ids, edges, placed), set(placed)

        def done(answer: Answer) -> None:
            found, seeded, placed = answer
            self.scene.add(found, seeded)
            self.grown.emit(node_id)
            self.lay_out(placed & set(self.scene.nodes))

        self._run_query("expand", work, done)

    def _run_query(
        self,
        name: str,
        work: Callable[[], Generator[Progress, None, Answer]],
        done: Callable[[Answer], None],
    ) -> None:
        if self._query is not None and not self._query.done:
            self._query.cancel()
        collector.hold()  # no full collection in the middle of a click's query either
        job = self.runner.start(name, work)
        self._query = job
        self._holding.add(job)
        job.finished.connect(lambda answer: self._query_done(job, done, answer))
        job.failed.connect(lambda exc: self._query_failed(job, exc))
        self._track(job)

    def _query_done(self, job: Job, done: Callable[[Answer], None], answer: Answer) -> None:
        if job is self._query:
            done(answer)

    def _query_failed(self, job: Job, exc: BaseException) -> None:
        if job in (self._query, self._layout):
            self.failed.emit(str(exc))

    # --- layout -------------------------------------------------------------------------

    def _lay_out_after_paint(self, fixed: set[str]) -> None:
        self._layout_due = fixed
        self.scene.settling = True  # its first frame is a layout's: edges to a time budget
        self._due.start()

    def _release_due_holds(self) -> None:
        for _hold in range(self._due_holds):
            collector.release()
        self._due_holds = 0

    def _start_due_layout(self) -> None:
        fixed, self._layout_due = self._layout_due, None
        if fixed is not None:
            before = self._layout
            self.lay_out(fixed)
            if self._layout is before:  # nothing to move after all: drawn in full
                self.scene.settling = False
                self.scene.moved.emit()
        self._release_due_holds()  # the layout holds the collector off from here
        self.busy_changed.emit(self.busy)

    def lay_out(self, fixed: set[str]) -> None:
        """Move every shown node not in `fixed` by forces, in a job posting positions."""
        self._layout_due = None  # this one replaces a layout still due
        collector.hold()  # no full collection walks the scene while the layout runs
        self._release_due_holds()
        if self._layout is not None and not self._layout.done:
            self._layout.cancel()
        ids = list(self.scene.nodes)
        if not ids or fixed >= set(ids):
            collector.release()
            self._remember_positions()
            self.laid_out.emit()
            return
        start = self.scene.positions()
        edges = self.scene.edge_list()

        def work() -> Generator[Progress, None, dict[str, Point]]:
            return (yield from graph_view.refine(ids, edges, start, fixed))

        job = self.layout_runner.start("layout", work)
        self._layout = job
        self._holding.add(job)
        self.scene.settling = True  # frames drawn as it moves keep to a time budget
        job.progress.connect(lambda step: self._layout_step(job, step))
        job.finished.connect(lambda final: self._layout_done(job, final))
        job.failed.connect(lambda exc: self._query_failed(job, exc))
        self._track(job)

    def _layout_step(self, job: Job, step: Progress) -> None:
        if job is self._layout and isinstance(step, LayoutProgress) and step.xy is not None:
            self.scene.set_positions(step.ids, step.xy)

    def _layout_done(self, job: Job, final: dict[str, Point]) -> None:
        if job is self._layout:
            self.scene.settling = False  # the final frame is drawn in full
            ids = list(final)
            self.scene.set_positions(ids, _array([final[i] for i in ids]))
            self._remember_positions()
            self.laid_out.emit()

    def _remember_positions(self) -> None:
        """Keep the positions: this thread hands over the ids and a copy of the array; the
        store's writer thread folds them in and writes the file."""
        self.positions.place(tuple(self.scene.arrays.ids), self.scene.xy)
        if self.positions.error is not None:  # the write before this one failed
            self.failed.emit(f"could not keep the graph's positions: {self.positions.error}")

    def node_moved(self, node_id: str) -> None:
        where = self.scene.position(node_id)
        if where is not None:
            self.positions.update({node_id: where})

    # --- changes ------------------------------------------------------------------------

    def on_changes(self, changes: Changes, _initiator: object = None) -> None:
        """Mirror a change of the brain in the scene (see the module's docstring)."""
        scene = self.scene
        if not scene.nodes:
            return
        if changes.kind == "reset":
            if self.overview_page is not None:
                self.open_overview(self.overview_page)
            elif scene.centre is not None:
                self.open_on(scene.centre)
            return
        ids = set(changes.traces) | set(changes.nodes) | set(changes.edges)
        brain = self.session.brain
        try:
            for source, target in graph_view.ends_of(brain, ids).values():
                ids.update((source, target))
            for key, edge in scene.edges.items():
                if edge.origin == GRAPH and key.removeprefix("edge|") in ids:
                    ids.update((edge.source, edge.target))
            shown = set(scene.nodes)
            touched = ids & shown
            if touched:
                nodes, edges, gone = graph_view.refresh(brain, shown, touched)
                gone |= {i for i, n in nodes.items() if n.deleted and not self.include_deleted}
                scene.update(nodes, edges, gone)
            candidates = ids - set(scene.nodes)
            if not candidates or len(candidates) > MAX_LIVE_CANDIDATES:
                return
            arrived = graph_view.arrivals(
                brain, list(scene.nodes), candidates, scene.expanded, self.include_deleted
            )
        except MemguiError as exc:
            self.failed.emit(str(exc))
            return
        if arrived.nodes:
            placed = scene.positions()
            pairs = scene.edge_list() + [(e.source, e.target) for e in arrived.edges.values()]
            seeded = graph_view.seed([*placed, *arrived.nodes], pairs, placed)
            scene.add(arrived, seeded)
            self.grown.emit(next(iter(arrived.nodes)))
            self.lay_out(set(placed))

    # --- closing ------------------------------------------------------------------------

    def shutdown(self) -> None:
        self._due.stop()
        self._layout_due = None
        self.session.bus.changed.disconnect(self.on_changes)
        self.runner.shutdown()
        self.layout_runner.shutdown()
        for _job in self._holding:  # a job cut short by closing says nothing more
            collector.release()
        self._holding.clear()
        self._release_due_holds()
        # Written by the store's thread: the interpreter's exit waits for it, a window
        # opening the same brain reads the file once it is written, closing does not wait.
        if self.scene.nodes:
            self.positions.place(tuple(self.scene.arrays.ids), self.scene.xy)
        else:
            self.positions.save()  # a node moved by hand, say
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def _array(points: list[Point]) -> np.ndarray:
    return np.array(points, dtype=np.float64).reshape(-1, 2)
