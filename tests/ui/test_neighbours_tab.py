"""The Neighbours tab names memories by title or text with their type, says which concept
a memory hangs off and through which a neighbour was reached, and opens a memory on Enter,
a double-click or its right-click menu."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication

from memgui.core.brain import Brain
from tests.support.brains import mentioning
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row, wait_idle


def two_memories_about_python(path):
    """Two memories whose graph nodes both mention the entity Python."""
    with Brain.open(path) as brain:
        first = brain.add("The build uses Python 3.11 and a venv in the worktree")
        second = brain.add(
            "Scripts are written in Python, never Bash", type="procedural", tags=["ops"]
        )
        mentioning(brain, "Python", [first, second])
    return first, second


def test_neighbours_name_memories_and_open_them(qtbot, tmp_path):
    path = tmp_path / "graph.sqlite"
    first, second = two_memories_about_python(path)
    window = open_window(qtbot, tmp_path, path)
    tab = window.detail.neighbours
    window.detail.setCurrentWidget(tab)
    select_row(window, window.model.row_of(first.id))
    tab.depth_box.setValue(2)
    assert tab.hangs_off.text() == "Hangs off: Python"
    cells = [[tab.model.index(r, c).data() for c in range(4)] for r in range(tab.model.rowCount())]
    assert cells == [
        ["1", "entity", "Python", "mentions"],
        [
            "2",
            "memory · procedural",
            "Scripts are written in Python, never Bash",
            "mentions Python",
        ],
    ]
    tab.view.setFocus()
    tab.view.setCurrentIndex(tab.model.index(1, 0))
    qtbot.keyClick(tab.view, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.current_id() == second.id
    window.close()


def test_a_neighbours_menu_and_a_double_click_open_it(qtbot, tmp_path):
    path = tmp_path / "graph.sqlite"
    first, second = two_memories_about_python(path)
    window = open_window(qtbot, tmp_path, path)
    window.menus.show_menus = False
    tab = window.detail.neighbours
    window.detail.setCurrentWidget(tab)
    select_row(window, window.model.row_of(first.id))
    tab.depth_box.setValue(2)
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2, timeout=WAIT_MS)
    memory_rect = tab.view.visualRect(tab.model.index(1, 0))
    tab.view.customContextMenuRequested.emit(QPoint(memory_rect.center()))
    actions = {a.text(): a for a in window.menus.last_menu.actions() if not a.isSeparator()}
    assert list(actions) == ["Open this memory", "Copy name"]
    actions["Copy name"].trigger()
    assert QGuiApplication.clipboard().text() == "Scripts are written in Python, never Bash"
    actions["Open this memory"].trigger()
    wait_idle(qtbot, window)
    assert window.current_id() == second.id

    select_row(window, window.model.row_of(first.id))
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2, timeout=WAIT_MS)
    entity_rect = tab.view.visualRect(tab.model.index(0, 0))
    tab.view.customContextMenuRequested.emit(QPoint(entity_rect.center()))
    entity_menu = {a.text(): a for a in window.menus.last_menu.actions()}
    assert not entity_menu["Open this memory"].isEnabled()  # a concept is no memory to open
    memory_rect = tab.view.visualRect(tab.model.index(1, 0))
    # A double-click is a press, a release, then the double-click event, as a mouse sends them.
    qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=memory_rect.center())
    qtbot.mouseDClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=memory_rect.center())
    wait_idle(qtbot, window)
    assert window.current_id() == second.id
    window.close()


def test_a_neighbour_in_the_trash_is_named_with_where_it_is(qtbot, tmp_path):
    path = tmp_path / "graph.sqlite"
    with Brain.open(path) as brain:
        first = brain.add("The build uses Python 3.11")
        old = brain.add("Old note: the build used Python 3.9")
        mentioning(brain, "Python", [first, old])
        brain.forget(old.id)
    window = open_window(qtbot, tmp_path, path)
    window.edits.open_trace(old.id)
    message = window.statusBar().currentMessage()
    assert (
        message
        == "“Old note: the build used Python 3.9” is in the trash (Ctrl+Shift+D shows the trash)"
    )
    assert old.id not in message
    window.close()
