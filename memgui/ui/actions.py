"""The window's actions and menus, built in one place (File, Edit, View, Help)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QUndoGroup
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar

from memgui.ui.theme.icons import icon

StdKey = QKeySequence.StandardKey


@dataclass
class WindowActions:
    new_brain: QAction
    open_brain: QAction
    open_sample: QAction
    import_file: QAction
    quit: QAction
    undo: QAction
    redo: QAction
    new_memory: QAction
    save: QAction
    delete: QAction
    restore: QAction
    purge: QAction
    merge: QAction
    add_tag: QAction
    remove_tag: QAction
    add_link: QAction
    find: QAction
    refresh: QAction
    trash_view: QAction
    about: QAction
    recent_menu: QMenu
    columns_menu: QMenu


def _action(
    window: QMainWindow,
    text: str,
    icon_name: str | None,
    shortcut: QKeySequence | QKeySequence.StandardKey | Qt.Key | str | None,
    tip: str,
) -> QAction:
    action = QAction(text, window)
    if icon_name:
        action.setIcon(icon(icon_name))
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    action.setToolTip(tip)
    action.setStatusTip(tip)
    return action


def toolbar_words(actions: WindowActions) -> list[tuple[QAction, str]]:
    """The short word shown under each toolbar icon."""
    return [
        (actions.new_memory, "New"),
        (actions.save, "Save"),
        (actions.delete, "Delete"),
        (actions.restore, "Restore"),
        (actions.undo, "Undo"),
        (actions.redo, "Redo"),
        (actions.merge, "Merge"),
        (actions.add_tag, "Tag"),
        (actions.trash_view, "Trash"),
    ]


def build_actions(window: QMainWindow, undo_group: QUndoGroup) -> WindowActions:
    a = _action
    undo = undo_group.createUndoAction(window, "&Undo")
    undo.setShortcut(QKeySequence(StdKey.Undo))
    undo.setIcon(icon("undo"))
    redo = undo_group.createRedoAction(window, "&Redo")
    # The platform's own Redo keys too, each once: a key listed twice is "ambiguous" to Qt,
    # which then triggers neither (StdKey.Redo is Ctrl+Y on Linux and Windows).
    keys = [QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")]
    keys += QKeySequence.keyBindings(StdKey.Redo)
    redo.setShortcuts(list({k.toString(): k for k in keys if not k.isEmpty()}.values()))
    redo.setIcon(icon("redo"))
    actions = WindowActions(
        new_brain=a(window, "&New brain…", None, "Ctrl+Shift+N", "Create a new, empty brain file"),
        open_brain=a(window, "&Open…", "open", StdKey.Open, "Open a memgui or AgentOS brain"),
        open_sample=a(window, "Open &sample brain", None, None, "Open a copy of the sample brain"),
        import_file=a(window, "&Import…", "import", "Ctrl+I", "Import memories from a file"),
        quit=a(window, "&Quit", None, StdKey.Quit, "Close memgui"),
        undo=undo,
        redo=redo,
        new_memory=a(window, "&New memory", "new", StdKey.New, "Write a new memory (Ctrl+N)"),
        save=a(window, "&Save", "save", StdKey.Save, "Save the edited memory (Ctrl+S)"),
        delete=a(
            window,
            "&Delete to trash",
            "delete",
            Qt.Key.Key_Delete,
            "Move the selected memories to the trash (Del)",
        ),
        restore=a(
            window,
            "Res&tore from trash",
            "restore",
            "Ctrl+Shift+R",
            "Bring the selected memories back from the trash",
        ),
        purge=a(
            window,
            "&Purge for good…",
            "purge",
            "Shift+Del",
            "Remove the selected memories for good (cannot be undone)",
        ),
        merge=a(
            window, "&Merge selected…", "merge", "Ctrl+M", "Merge the selected memories into one"
        ),
        add_tag=a(
            window, "&Add tag to selected…", "tag", "Ctrl+T", "Add a tag to every selected memory"
        ),
        remove_tag=a(
            window,
            "Remove ta&g from selected…",
            None,
            "Ctrl+Shift+T",
            "Remove a tag from every selected memory",
        ),
        add_link=a(window, "&Link to…", "link", "Ctrl+L", "Link this memory to another one"),
        find=a(window, "&Find", "search", StdKey.Find, "Search memories (Ctrl+F)"),
        refresh=a(window, "&Refresh", None, StdKey.Refresh, "Re-run the current query (F5)"),
        trash_view=a(
            window,
            "Show &trash",
            "trash",
            "Ctrl+Shift+D",
            "Show deleted memories instead of live ones",
        ),
        about=a(window, "&About memgui", None, None, "About memgui"),
        recent_menu=QMenu("Open &Recent", window),
        columns_menu=QMenu("&Columns", window),
    )
    actions.trash_view.setCheckable(True)
    if actions.quit.shortcut().isEmpty():  # platforms without a standard Quit key
        actions.quit.setShortcut(QKeySequence("Ctrl+Q"))
    menu_bar = window.menuBar()
    file_menu = menu_bar.addMenu("&File")
    file_menu.addActions([actions.new_brain, actions.open_brain])
    file_menu.addMenu(actions.recent_menu)
    file_menu.addActions([actions.open_sample, actions.import_file])
    file_menu.addSeparator()
    file_menu.addAction(actions.quit)
    edit_menu = menu_bar.addMenu("&Edit")
    edit_menu.addActions([actions.undo, actions.redo])
    edit_menu.addSeparator()
    edit_menu.addActions(
        [actions.new_memory, actions.save, actions.delete, actions.restore, actions.purge]
    )
    edit_menu.addSeparator()
    edit_menu.addActions([actions.merge, actions.add_tag, actions.remove_tag, actions.add_link])
    edit_menu.addSeparator()
    edit_menu.addAction(actions.find)
    view_menu = menu_bar.addMenu("&View")
    view_menu.addMenu(actions.columns_menu)
    view_menu.addActions([actions.trash_view, actions.refresh])
    help_menu = menu_bar.addMenu("&Help")
    help_menu.addAction(actions.about)

    toolbar = QToolBar("Main", window)
    toolbar.setObjectName("main_toolbar")
    toolbar.setMovable(False)
    # A word under each icon: on an empty brain most buttons are off, and an icon alone
    # (its tooltip waits for a hover) left a new user guessing what each would do.
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextUnderIcon)
    for action, word in toolbar_words(actions):
        action.setIconText(word)
    toolbar.addActions([actions.new_memory, actions.save, actions.delete, actions.restore])
    toolbar.addSeparator()
    toolbar.addActions([actions.undo, actions.redo])
    toolbar.addSeparator()
    toolbar.addActions([actions.merge, actions.add_tag, actions.trash_view])
    window.addToolBar(toolbar)
    return actions
