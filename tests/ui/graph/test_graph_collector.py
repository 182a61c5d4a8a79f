"""While a layout runs, the collector leaves the objects alive at its start alone (frozen),
and they are unfrozen once its positions are written, whether it ended, was replaced or its
window closed: nothing stays frozen for good."""

from __future__ import annotations

import gc

from memgui.ui.graph import collector
from tests.support.graph import open_graph
from tests.support.window import open_window

WAIT_MS = 20_000


def test_holds_nest_and_the_last_release_unfreezes() -> None:
    assert collector.holding() == 0 and gc.get_freeze_count() == 0
    collector.hold()
    collector.hold()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    collector.release()
    assert collector.holding() == 1 and gc.get_freeze_count() == frozen
    collector.release()
    collector.release()  # one too many: nothing to end
    assert collector.holding() == 0 and gc.get_freeze_count() == 0


def test_a_layout_holds_the_collector_until_its_positions_are_written(
    qtbot, tmp_path, brain_path, ids
) -> None:
    main = open_window(qtbot, tmp_path, brain_path)
    graph = open_graph(qtbot, main, ids["centre"])  # opened and laid out
    store = graph.controller.positions
    qtbot.waitUntil(lambda: store.flush(0) and collector.holding() == 0, timeout=WAIT_MS)
    assert gc.get_freeze_count() == 0
    graph.controller.expand(ids["centre"])
    graph.controller.lay_out(set())  # a layout replacing another one, then one more
    graph.controller.lay_out(set())
    assert collector.holding() >= 1 and gc.get_freeze_count() > 0
    qtbot.waitUntil(lambda: not graph.controller.busy, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: store.flush(0) and collector.holding() == 0, timeout=WAIT_MS)
    assert gc.get_freeze_count() == 0
    graph.controller.lay_out(set())  # cut short by closing the window
    assert collector.holding() == 1
    graph.close()
    qtbot.waitUntil(lambda: collector.holding() == 0, timeout=WAIT_MS)
    assert gc.get_freeze_count() == 0
