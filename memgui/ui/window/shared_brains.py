"""File ▸ Open shared brain…: connecting to a team's brain on PostgreSQL, off the GUI thread.

The connection is a job (the window never waits on the network): it connects, checks the
layout and counts the brain, with progress in the status bar. A server that asks for a
password gets one typed by the person (never kept), and the job runs again with it; a
server that is down, a wrong password, an address without a brain id and a brain written
by a newer memgui each say so. The window does not show a shared brain's memories yet
(docs/shared-brains.md): once connected, it says what the brain holds and which commands
and servers work on it. `SharedBrainLive` carries a shared brain's change notices
(`core.storage.postgres_notify`) to the GUI thread as a signal.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction

from memgui.core.errors import MemguiError, PostgresPasswordRequired
from memgui.core.progress import Progress
from memgui.core.storage.engine import parse_postgres_address
from memgui.core.storage.postgres_notify import ChangeListener, ChangeNotice
from memgui.ui.dialogs.shared_brain_dialog import SharedBrainDialog, ask_password, remember

if TYPE_CHECKING:
    from memgui.ui.jobs import Job
    from memgui.ui.main_window import MainWindow

NOT_IN_WINDOW_YET = (
    "the window cannot show a shared brain's memories yet; use it with "
    "memgui --brain '{address}' (add, list, search, history, revert …) or serve it to "
    "agents with serve-mcp / serve-rest"
)


def connect_job(address: str, password: str | None) -> Generator[Progress, None, dict[str, Any]]:
    """Connect, check the layout, count: the brain's `info()` (the connection is closed)."""
    from memgui.core.shared_brain import SharedBrain

    shown = parse_postgres_address(address).shown
    yield Progress(0, None, f"connecting to {shown}")
    with SharedBrain.open(address, actor="gui", password=password) as brain:
        yield Progress(0, None, "counting")
        return brain.info()


class SharedBrains(QObject):
    """The menu item, its dialog and the connection job of one window."""

    connected = Signal(dict)  # the brain's info, once a connection succeeded
    failed = Signal(str)  # why it did not

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.action = QAction("Open s&hared brain…", window)
        self.action.setStatusTip("Open a team's brain on a PostgreSQL server")
        self.action.triggered.connect(self.choose_and_connect)
        self.job: Job | None = None

    def choose_and_connect(self) -> None:
        dialog = SharedBrainDialog(self.window.settings, self.window)
        if dialog.exec() == SharedBrainDialog.DialogCode.Accepted:
            self.connect_to(dialog.address())

    def connect_to(self, address: str, password: str | None = None) -> Job:
        """Start the connection job; its end is `connected` or `failed` (and a message)."""
        job = self.window.runner.start("connect", lambda: connect_job(address, password))
        job.finished.connect(lambda info: self._connected(address, info))
        job.failed.connect(lambda exc: self._failed(address, exc))
        self.job = job
        return job

    def _connected(self, address: str, info: dict[str, Any]) -> None:
        remember(self.window.settings, address)
        shown = info["path"]
        self.window.show_message(
            f"Connected to {shown}: {info['live']} memories; "
            + NOT_IN_WINDOW_YET.format(address=shown),
            timeout_ms=20_000,
        )
        self.connected.emit(info)

    def _failed(self, address: str, exc: BaseException) -> None:
        if isinstance(exc, PostgresPasswordRequired):
            typed = ask_password(self.window, exc.address, exc.wrong)
            if typed is not None:
                self.connect_to(address, typed)
                return
        message = str(exc) if isinstance(exc, MemguiError) else f"{type(exc).__name__}: {exc}"
        self.window.show_error(f"Could not open the shared brain: {message}")
        self.failed.emit(message)


def install_shared_brains(window: MainWindow) -> SharedBrains:
    """File ▸ Open shared brain…, just below File ▸ Open…."""
    shared = SharedBrains(window)
    actions = window.window_actions
    for menu in window.menuBar().findChildren(type(actions.recent_menu)):
        if actions.open_brain in menu.actions():
            menu.insertAction(actions.recent_menu.menuAction(), shared.action)
            break
    return shared


class SharedBrainLive(QObject):
    """A shared brain's change notices, heard in the listener's thread, as a signal of the
    GUI thread (a queued connection): `changed(ChangeNotice)`."""

    changed = Signal(object)
    _heard = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._heard.connect(self.changed.emit, Qt.ConnectionType.QueuedConnection)
        self.listener: ChangeListener | None = None

    def start(
        self, address: str, *, ignore_pid: int | None = None, password: str | None = None
    ) -> None:
        """Listen on a connection of its own (made here: call it from a job, not the GUI)."""
        self.listener = ChangeListener(
            parse_postgres_address(address),
            self._hear,
            ignore_pid=ignore_pid,
            password=password,
        ).start()

    def _hear(self, notice: ChangeNotice) -> None:
        self._heard.emit(notice)

    def stop(self) -> None:
        if self.listener is not None:
            self.listener.stop()
            self.listener = None
