"""Opening brains: File ▸ Open / New / Open Recent / sample brain, and the welcome page.

A file with several brain ids asks which one to show. Recent files live in QSettings;
the sample brain is a fresh copy in a temporary folder and never enters the recent list.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QInputDialog

from memgui.core import sample_brain
from memgui.core.errors import BrainIdRequired, MemguiError
from memgui.ui.dialogs.shared_brain_dialog import recent_addresses
from memgui.ui.session import BrainSession
from memgui.ui.window.import_export_actions import run_import_dialog

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow

RECENT_KEY = "recent_files"
MAX_RECENT = 8
BRAIN_FILTER = "Brains (*.sqlite *.db *.sqlite3);;All files (*)"
BRAIN_ENV = "MEMGUI_BRAIN"


def default_brain_path() -> Path:
    """`$MEMGUI_BRAIN`, else `brain.sqlite` in the user data folder (as the CLI uses)."""
    from_env = os.environ.get(BRAIN_ENV)
    if from_env:
        return Path(from_env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("memgui")) / "brain.sqlite"


def free_brain_name(folder: Path, stem: str = "brain") -> Path:
    """`brain.sqlite` in `folder`, or the first of `brain-2.sqlite`, `brain-3.sqlite`… not
    taken (the open brain's name is taken)."""
    candidate = folder / f"{stem}.sqlite"
    number = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{number}.sqlite"
        number += 1
    return candidate


class BrainFiles(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        a = window.window_actions
        a.open_brain.triggered.connect(self.choose_and_open)
        a.new_brain.triggered.connect(self.choose_and_create)
        a.open_sample.triggered.connect(self.open_sample)
        a.import_file.triggered.connect(self.start_import)
        a.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        window.welcome.open_requested.connect(self.choose_and_open)
        window.welcome.sample_requested.connect(self.open_sample)
        window.welcome.import_requested.connect(self.start_import)
        window.welcome.import_folder_requested.connect(lambda: self.start_import(folder=True))

    # --- opening ------------------------------------------------------------------------

    def open_path(
        self,
        path: str | Path,
        brain_id: str | None = None,
        temporary: bool = False,
        create: bool = True,
    ) -> bool:
        """Open `path` in the window (making it when missing, unless `create` is False);
        False (with the reason in the status bar) if not."""
        if not self.window.edits.settle_unsaved_edit():
            return False
        if not self.window.import_export.confirm_close("open another brain"):
            return False
        made = not Path(path).exists()
        try:
            session = BrainSession.open(path, brain_id, create=create, temporary=temporary)
        except BrainIdRequired as exc:
            chosen = self.ask_brain_id(str(path), exc.brain_ids)
            return chosen is not None and self.open_path(path, chosen, temporary, create)
        except (MemguiError, OSError) as exc:
            self.window.show_error(f"Could not open {path}: {exc}")
            return False
        self.window.set_session(session)
        if not temporary:
            self.remember(Path(path))
        made_note = " — a new, empty brain (there was no file there)" if made else ""
        self.window.show_message(f"Opened {path} [{session.brain_id}]{made_note}")
        return True

    def open_recent(self, path: str) -> bool:
        """A recent file is opened, never made again: one deleted or moved since leaves the
        list with a message."""
        if self.open_path(path, create=False):
            return True
        if not Path(path).exists():
            self.window.settings.setValue(RECENT_KEY, [p for p in self.recent() if p != path])
        return False

    def ask_brain_id(self, path: str, brain_ids: list[str]) -> str | None:
        chosen, ok = QInputDialog.getItem(
            self.window,
            "Choose a brain",
            f"{Path(path).name} holds several brains:",
            brain_ids,
            0,
            False,
        )
        return chosen if ok else None

    def choose_and_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open brain", self._start_dir(), BRAIN_FILTER
        )
        if path:
            self.open_path(path)

    def choose_and_create(self) -> None:
        proposed = str(free_brain_name(self._new_brain_dir()))
        path, _ = QFileDialog.getSaveFileName(self.window, "New brain", proposed, BRAIN_FILTER)
        if path:
            self.create_new(Path(path))

    def create_new(self, path: Path) -> bool:
        """Make a new, empty brain at `path` and open it. An existing file is never replaced
        (the open brain least of all) and never opened in its stead: the person says so."""
        session = self.window.session
        if (
            session is not None
            and not session.shared
            and path.exists()
            and path.samefile(session.path)
        ):
            self.window.show_error(
                f"{path.name} is the brain open now: a new brain needs a file of its own"
            )
            return False
        if path.exists():
            self.window.show_error(
                f"{path.name} exists already: a new brain needs a new file "
                "(File ▸ Open opens this one)"
            )
            return False
        return self.open_path(path)

    def _new_brain_dir(self) -> Path:
        session = self.window.session
        if session is not None and not session.temporary and not session.shared:
            return Path(session.path).parent
        return Path(self._start_dir())

    def open_sample(self) -> bool:
        try:
            path = sample_brain.fresh_copy()
        except (MemguiError, OSError) as exc:
            self.window.show_error(f"Could not build the sample brain: {exc}")
            return False
        opened = self.open_path(path, temporary=True)
        if opened:
            self.window.show_message(f"Opened a copy of the sample brain in {path.parent}")
        return opened

    def start_import(self, folder: bool = False) -> None:
        if self.window.session is not None:
            run_import_dialog(self.window, folder=folder)

    # --- recent files -------------------------------------------------------------------

    def recent(self) -> list[str]:
        value = self.window.settings.value(RECENT_KEY, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple):
            return []  # a settings file edited by hand (or damaged): no recent files
        # Paths only: a settings file edited by hand may hold `true` or a number as text.
        return [v for v in value if isinstance(v, str) and Path(v).is_absolute()]

    def remember(self, path: Path) -> None:
        entry = str(path.resolve())
        entries = [entry] + [p for p in self.recent() if p != entry]
        self.window.settings.setValue(RECENT_KEY, entries[:MAX_RECENT])

    def _fill_recent_menu(self) -> None:
        menu = self.window.window_actions.recent_menu
        menu.clear()
        entries = self.recent()
        shared = recent_addresses(self.window.settings)  # shared brains: never a password
        if not entries and not shared:
            menu.addAction("(none yet)").setEnabled(False)
        for number, entry in enumerate(entries, start=1):
            action = menu.addAction(f"&{number} {entry}")
            action.setEnabled(Path(entry).exists())
            action.triggered.connect(lambda _checked=False, p=entry: self.open_recent(p))
        if entries and shared:
            menu.addSeparator()
        for address in shared:
            action = menu.addAction(address.replace("&", "&&"))  # (not a shortcut's mark)
            action.triggered.connect(
                lambda _checked=False, a=address: self.window.shared_brains.connect_to(a)
            )

    def _start_dir(self) -> str:
        recent = self.recent()
        return str(Path(recent[0]).parent) if recent else str(Path.home())
