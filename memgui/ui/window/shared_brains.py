"""File ▸ Open shared brain…: connecting to a team's brain on PostgreSQL, off the GUI thread.

The connection is a job (the window never waits on the network): it connects and checks
the layout, with progress in the status bar. A server that asks for a
password gets one typed by the person (never kept), and the job runs again with it; a
server that is down, a wrong password, an address without a brain id and a brain written
by a newer memgui each say so. Once connected, the window shows the brain (what it does
not offer there yet is disabled: `shared_limits.py`). `SharedBrainLive` carries a shared
brain's change notices (`core.storage.postgres_notify`) to the GUI thread as a signal, and
`watch_shared` turns them into the window's live refresh.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction

from memgui.core.errors import MemguiError, PostgresPasswordRequired
from memgui.core.model import Changes
from memgui.core.progress import Progress
from memgui.core.shared_brain import ChangeListener, ChangeNotice, parse_postgres_address
from memgui.ui.dialogs.shared_brain_dialog import SharedBrainDialog, ask_password, remember

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain
    from memgui.ui.jobs import Job
    from memgui.ui.main_window import MainWindow
    from memgui.ui.session import BrainSession


def connect_job(address: str, password: str | None) -> Generator[Progress, None, SharedBrain]:
    """Connect and check the layout (made or upgraded if need be): the open brain."""
    from memgui.core.shared_brain import SharedBrain

    shown = parse_postgres_address(address).shown
    yield Progress(0, None, f"connecting to {shown}")
    return SharedBrain.open(address, actor="gui", password=password)


class SharedBrains(QObject):
    """The menu item, its dialog and the connection job of one window."""

    connected = Signal(object)  # the window's new session, once it shows the shared brain
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

    def connect_to(self, address: str, password: str | None = None) -> Job | None:
        """Start the connection job; its end is `connected` (the window shows the brain) or
        `failed` (and a message). None when the person keeps the brain open now (an unsaved
        edit, a running import)."""
        window = self.window
        if not window.edits.settle_unsaved_edit():
            return None
        if not window.import_export.confirm_close("open another brain"):
            return None
        job = window.runner.start("connecting", lambda: connect_job(address, password))
        job.finished.connect(lambda brain: self._connected(address, brain, password, job))
        job.failed.connect(lambda exc: self._failed(address, exc))
        self.job = job
        return job

    def _connected(self, address: str, brain: SharedBrain, password: str | None, job: Job) -> None:
        from memgui.ui.session import BrainSession

        if job.cancel_requested:  # the person went on to another brain meanwhile
            brain.close()
            return
        session = BrainSession.of_shared(brain, password)
        try:
            self.window.set_session(session)
        except Exception as exc:  # a part of the window that cannot show it: say so
            self.window.close_session()
            self._failed(address, exc)
            return
        remember(self.window.settings, address)
        self.window.show_message(f"Opened the shared brain {session.where}")
        self.connected.emit(session)

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
    stopped = Signal(str)  # listening failed (the server went away): why
    _heard = Signal(object)
    _failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._heard.connect(self.changed.emit, Qt.ConnectionType.QueuedConnection)
        self._failed.connect(self.stopped.emit, Qt.ConnectionType.QueuedConnection)
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
            on_error=lambda exc: self._failed.emit(str(exc)),
        ).start()

    def _hear(self, notice: ChangeNotice) -> None:
        self._heard.emit(notice)

    def stop(self) -> None:
        if self.listener is not None:
            self.listener.stop()
            self.listener = None


def watch_shared(window: MainWindow, session: BrainSession) -> SharedBrainLive:
    """Follow another program's writes to `session`'s shared brain: each notice refreshes
    the rows it names (all of them when it names none). The listening connection is made in
    a job, off the GUI thread; this window's own writes are skipped (it knows them)."""
    live = SharedBrainLive(window)
    address = session.shared_address
    assert address is not None
    conn = getattr(session.brain, "conn", None)
    own_pid = conn.info.backend_pid if conn is not None else None

    def heard(notice: ChangeNotice) -> None:
        if window.session is not session or notice.sender_pid in session.own_pids:
            return  # another brain's, or this window's own import or embedding
        if notice.ids is None:
            changes = Changes(kind="reset", actor="another program")
        else:
            changes = Changes(
                kind="edit",
                actor="another program",
                edited=frozenset(notice.ids),
                nodes=frozenset(notice.nodes),  # the graph window reads them again
            )
        session.bus.publish_external(changes)
        if notice.ids == () and notice.nodes:
            window.show_message("another program changed the shared brain's graph", 10_000)
            return
        count = "memories" if notice.ids is None else f"{len(notice.ids)} memories"
        window.show_message(f"another program changed {count} of the shared brain", 10_000)

    live.changed.connect(heard)
    live.stopped.connect(
        lambda why: window.show_error(
            f"Live refresh of the shared brain stopped ({why}): open it again to resume"
        )
    )

    def listen() -> Generator[Progress, None, None]:
        yield Progress(0, None, "listening for changes")
        live.start(address, ignore_pid=own_pid, password=session.password)

    job = window.runner.start("listen", listen)
    job.failed.connect(lambda exc: window.show_error(f"Live refresh is off: {exc}"))
    return live
