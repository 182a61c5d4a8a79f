"""Export from the graph window: the shown graph at once, the whole graph as a job."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFileDialog, QInputDialog

from memgui.core import graph_view
from memgui.core.errors import MemguiError
from memgui.core.progress import Progress
from memgui.ui.jobs import Job, JobRunner

if TYPE_CHECKING:
    from memgui.ui.graph.graph_window import GraphWindow

WHAT = ("The graph shown", "The whole graph")
SUFFIX = {"graphml": ".graphml", "gexf": ".gexf"}


class ExportAsker:
    def __init__(self, window: GraphWindow) -> None:
        self.window = window

    def choice(self) -> tuple[bool, str, Path] | None:
        """(whole graph?, format, path), or None when the person cancelled."""
        choices = [f"{w} as {f.upper()}" for w in WHAT for f in graph_view.EXPORT_FORMATS]
        picked, ok = QInputDialog.getItem(
            self.window, "Export the graph", "Export:", choices, 0, False
        )
        if not ok:
            return None
        whole = picked.startswith(WHAT[1])
        fmt = picked.rsplit(" ", 1)[-1].lower()
        path, _filter = QFileDialog.getSaveFileName(
            self.window,
            "Export the graph",
            f"graph{SUFFIX[fmt]}",
            f"{fmt.upper()} (*{SUFFIX[fmt]})",
        )
        return (whole, fmt, Path(path)) if path else None


class GraphExport:
    def __init__(self, window: GraphWindow) -> None:
        self.window = window
        self.ask = ExportAsker(window)
        self.runner = JobRunner(window, max_threads=1)
        self.job: Job | None = None

    def ask_and_export(self) -> None:
        answer = self.ask.choice()
        if answer is not None:
            whole, fmt, path = answer
            self.export(path, fmt, whole)

    def export(self, path: Path, fmt: str, whole: bool) -> Job | None:
        """Write the shown graph now, or start the whole graph's export as a job."""
        window = self.window
        if not whole:
            canvas = window.canvas
            shown = set(canvas.visible_ids())
            nodes = [window.scene.nodes[i] for i in window.scene.nodes if i in shown]
            keys = window.edge_model.keys
            try:
                count = graph_view.write_shown(
                    path, fmt, nodes, [window.scene.edges[k] for k in keys]
                )
            except (MemguiError, OSError) as exc:
                window.show_error(f"Could not export: {exc}")
                return None
            window.show_message(f"Exported {len(nodes)} nodes and {count} edges to {path}")
            return None
        session = window.session

        def work() -> Generator[Progress, None, dict[str, int]]:
            reader = session.open_reader()
            try:
                return (yield from graph_view.export_whole(reader, path, fmt))
            finally:
                reader.close()

        job = self.runner.start("graph export", work)
        self.job = job
        job.progress.connect(lambda p: window.show_message(f"Exporting the graph: {p.message}"))
        job.finished.connect(lambda c: self._done(path, c))
        job.failed.connect(lambda exc: window.show_error(f"Could not export: {exc}"))
        return job

    def _done(self, path: Path, counts: dict[str, Any]) -> None:
        self.window.show_message(
            f"Exported {counts['nodes']} nodes and {counts['edges']} edges to {path}"
        )

    def shutdown(self) -> None:
        self.runner.shutdown()
