"""The Similar tab: the memories nearest to the shown one by meaning (its stored vector).

The nearest-neighbour scan grows with the brain, so it runs as a job on a connection of its
own when the pane has a job runner (the window's session opens it: a second connection to a
file, or to a shared brain's server); a double-click opens the other memory.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from memgui.core.brain import Brain
from memgui.core.errors import MemguiError
from memgui.core.model import Trace
from memgui.core.progress import Progress
from memgui.ui.models.detail_models import DetailRole, ListTableModel
from memgui.ui.models.trace_columns import embedding_label, first_line
from memgui.ui.views.detail_tabs import DetailTab, _table

if TYPE_CHECKING:
    from memgui.ui.jobs import JobRunner

SIMILAR_LIMIT = 10
SIMILAR_JOB = "similar"

Neighbour = tuple[Trace, float]


class SimilarModel(ListTableModel[Neighbour]):
    COLUMNS = (
        ("Similarity", lambda item: f"{item[1]:.2f}"),
        ("Type", lambda item: item[0].type),
        ("Memory", lambda item: first_line(item[0].content, 120)),
    )

    def item_id(self, item: Neighbour) -> str:
        return item[0].id


def _similar_job(
    open_reader: Callable[[], Brain], trace_id: str, limit: int
) -> Generator[Progress, None, list[Neighbour]]:
    reader = open_reader()
    try:
        yield Progress(0, None, "finding similar memories")
        return reader.similar(trace_id, limit=limit)
    finally:
        reader.close()


def _file_reader(path: Path, brain_id: str) -> Callable[[], Brain]:
    return lambda: Brain.open(path, brain_id, actor="gui", create=False)


class SimilarTab(DetailTab):
    open_requested = Signal(str)  # trace id
    loaded = Signal()  # the list on screen is the answer for the shown trace

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner: JobRunner | None = None  # without one the lookup runs inline
        # The job's own connection (the session's `open_reader`); else a file by its path.
        self.open_reader: Callable[[], Brain] | None = None
        self.model = SimilarModel(self)
        self.view = _table(self.model, "Similar memories")
        self.view.setToolTip("Memories closest in meaning; double-click opens one")
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addWidget(self.view, 1)
        self.view.doubleClicked.connect(
            lambda index: self.open_requested.emit(index.data(DetailRole.ITEM_ID))
        )
        self._asked = 0  # the newest lookup; older answers are dropped

    def show_trace(self, brain: Brain | None, trace: Trace | None) -> None:
        # The base hides the message after reload(); here the answer may come later.
        self.brain, self.trace = brain, trace
        self.message.hide()
        try:
            self.reload()
        except MemguiError as exc:
            self._say(str(exc))

    def reload(self) -> None:
        self._asked += 1
        asked = self._asked
        brain, trace = self.brain, self.trace
        self.model.set_items([])
        if brain is None or trace is None:
            self.loaded.emit()
            return
        if trace.embedding_status != 1:
            self._say(
                f"This memory has no vector yet ({embedding_label(trace.embedding_status)}): "
                "it is embedded in the background while Ollama answers."
            )
        if self.runner is None:
            self._show(asked, brain.similar(trace.id, limit=SIMILAR_LIMIT))
            return
        open_reader = self.open_reader or _file_reader(brain.path, brain.brain_id)
        job = self.runner.start(
            SIMILAR_JOB, lambda: _similar_job(open_reader, trace.id, SIMILAR_LIMIT)
        )
        job.finished.connect(lambda found: self._show(asked, found))
        job.failed.connect(lambda exc: self._failed(asked, exc))

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()

    def _show(self, asked: int, found: list[Neighbour]) -> None:
        if asked != self._asked:
            return
        self.model.set_items(found)
        if not found and self.trace is not None and self.trace.embedding_status == 1:
            self._say("No other memory has a vector yet.")
        self.loaded.emit()

    def _failed(self, asked: int, exc: BaseException) -> None:
        if asked == self._asked:
            self._say(str(exc))
            self.loaded.emit()
