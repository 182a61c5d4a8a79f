"""File ▸ Open shared brain…: the dialog (an address or its parts, a brain id required, the
last address remembered without its password), the connection as a job with its clear
failures and the password asked only when the server wants one, and a shared brain's
change notices arriving on the GUI thread as a signal."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from memgui.core.shared_brain import SharedBrain
from memgui.ui.dialogs import shared_brain_dialog as dialogs
from memgui.ui.dialogs.shared_brain_dialog import (
    SharedBrainDialog,
    compose,
    parts_of,
    without_password,
)
from memgui.ui.window import shared_brains
from memgui.ui.window.shared_brains import SharedBrainLive
from tests.support.waiting import WAIT_MS


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_an_address_and_its_parts() -> None:
    address = compose("db.example", "6543", "memory", "me", "team")
    assert address == "postgresql://me@db.example:6543/memory?brain_id=team"
    assert parts_of(address) == {
        "host": "db.example", "port": "6543", "database": "memory", "user": "me",
        "brain_id": "team",
    }  # fmt: skip
    socket = compose("/run/postgresql", "", "memory", "", "team")
    assert socket == "postgresql:///memory?host=%2Frun%2Fpostgresql&brain_id=team"
    assert parts_of(socket)["host"] == "/run/postgresql"
    assert without_password("postgresql://me:s3cret@db/m?brain_id=t&password=x") == (
        "postgresql://me@db/m?brain_id=t"
    )


def test_the_dialog_keeps_fields_and_address_in_step_and_wants_a_brain_id(
    qtbot, settings: QSettings
) -> None:
    dialog = SharedBrainDialog(settings)
    qtbot.addWidget(dialog)
    dialog.set_address("postgresql://me@db.example/memory")
    assert dialog.fields["host"].text() == "db.example"
    dialog.accept()
    assert not dialog.result()  # refused, and why is shown
    assert dialog.problem.text() == (
        "Brain id is required: one database holds many brains (got none)"
    )
    dialog.fields["brain_id"].setText("team")
    dialog.fields["brain_id"].textEdited.emit("team")
    assert dialog.address() == "postgresql://me@db.example/memory?brain_id=team"
    dialog.accept()
    assert dialog.result() == SharedBrainDialog.DialogCode.Accepted


def test_the_last_address_is_remembered_without_its_password(settings: QSettings) -> None:
    dialogs.remember(settings, "postgresql://me:s3cret@db/memory?brain_id=team")
    dialogs.remember(settings, "postgresql://you@db/memory?brain_id=other")
    assert dialogs.recent_addresses(settings) == [
        "postgresql://you@db/memory?brain_id=other",
        "postgresql://me@db/memory?brain_id=team",
    ]
    settings.sync()
    assert "s3cret" not in Path(settings.fileName()).read_text()


@pytest.fixture
def window(qtbot, tmp_path: Path, settings: QSettings):
    from memgui.ui.main_window import MainWindow

    main = MainWindow(settings=settings, live=False)
    qtbot.addWidget(main)
    yield main
    main.runner.shutdown()


def test_the_menu_item_is_below_open(window) -> None:
    file_menu = next(
        m
        for m in window.menuBar().findChildren(type(window.window_actions.recent_menu))
        if window.window_actions.open_brain in m.actions()
    )
    texts = [a.text() for a in file_menu.actions()]
    assert texts.index("Open s&hared brain…") == texts.index("&Open…") + 1


def test_a_server_that_is_down_says_so(qtbot, window) -> None:
    with qtbot.waitSignal(window.shared_brains.failed, timeout=WAIT_MS) as failed:
        window.shared_brains.connect_to("postgresql://me:pw@127.0.0.1:9/memory?brain_id=team")
    assert "cannot reach the PostgreSQL brain postgresql://me:***@127.0.0.1:9" in failed.args[0]
    assert "pw@" not in failed.args[0]


@pytest.mark.slow
def test_connecting_is_a_job_and_the_window_shows_the_brain(
    qtbot, window, pg_address: str, settings: QSettings
) -> None:
    with SharedBrain.open(pg_address) as brain:
        brain.add("one")
        brain.add("two")
    with qtbot.waitSignal(window.shared_brains.connected, timeout=WAIT_MS) as connected:
        window.shared_brains.connect_to(pg_address)
    session = connected.args[0]
    assert session is window.session and session.shared
    assert window.model is not None
    qtbot.waitUntil(lambda: window.model.rowCount() == 2, timeout=WAIT_MS)
    assert dialogs.recent_addresses(settings)[0] == without_password(pg_address)


@pytest.mark.slow
def test_a_brain_of_a_newer_memgui_says_so(qtbot, window, pg_address: str) -> None:
    from memgui.core.storage import postgres

    with SharedBrain.open(pg_address) as brain:
        brain.add("one")
        brain.conn.execute(
            "UPDATE brain_meta SET value = '99' WHERE key = %s", (postgres.SCHEMA_KEY,)
        )
    with qtbot.waitSignal(window.shared_brains.failed, timeout=WAIT_MS) as failed:
        window.shared_brains.connect_to(pg_address)
    assert "newer than this memgui" in failed.args[0]


@pytest.mark.slow
def test_the_password_is_asked_when_the_server_wants_one(
    qtbot, window, guarded_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.postgres import SECRET

    asked: list[bool] = []

    def type_password(_parent: object, _shown: str, wrong: bool) -> str | None:
        asked.append(wrong)  # the person types a wrong one, then the right one
        return "guess" if len(asked) == 1 else SECRET

    monkeypatch.setattr(shared_brains, "ask_password", type_password)
    with qtbot.waitSignal(window.shared_brains.connected, timeout=WAIT_MS):
        window.shared_brains.connect_to(guarded_address)
    assert asked == [False, True]


@pytest.mark.slow
def test_another_programs_write_arrives_as_a_signal(qtbot, pg_address: str) -> None:
    with SharedBrain.open(pg_address) as brain:
        brain.add("makes the layout")
    live = SharedBrainLive()
    live.start(pg_address)
    try:
        with (
            SharedBrain.open(pg_address, actor="other") as other,
            qtbot.waitSignal(live.changed, timeout=WAIT_MS) as heard,
        ):
            added = other.add("written by another program")
        assert heard.args[0].ids == (added.id,)
    finally:
        live.stop()


@pytest.mark.slow
def test_a_connection_cancelled_meanwhile_does_not_take_the_window(
    qtbot, window, pg_address: str
) -> None:
    job = window.shared_brains.connect_to(pg_address)
    assert job is not None
    job.cancel()  # (before the GUI thread hears its end: queued to it)
    qtbot.waitUntil(lambda: job.done, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not window.runner.active_jobs, timeout=WAIT_MS)
    assert window.session is None
