"""How `memgui` reaches the app and its screenshots, and how it reports storage failures.

The app and the renderer belong to the ui package; here stand-in modules record the calls so
that the routing of the command line is checked on its own.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from memgui.__main__ import main
from memgui.cli.main import _split_app_brain
from memgui.cli.registry import REGISTRY, Command
from tests.support.cli import add, isolate_user_dirs, run_cli


@pytest.fixture(autouse=True)
def user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_user_dirs(tmp_path, monkeypatch)


@pytest.fixture
def app_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    calls: list[tuple] = []
    app = types.ModuleType("memgui.ui.app")
    app.run_app = lambda brain_path, brain_id: calls.append(("app", brain_path, brain_id)) or 0
    screenshot = types.ModuleType("memgui.ui.screenshot")

    def render(
        brain_path,
        out_png,
        select_id=None,
        size=(1280, 800),
        search="",
        tab=None,
        trash=False,
        activity=False,
    ):
        calls.append(("render", brain_path, out_png, select_id, size, *(["activity"] * activity)))
        if search or tab or trash:
            calls.append(("state", search, tab, trash))

    screenshot.render = render
    monkeypatch.setitem(sys.modules, "memgui.ui.app", app)
    monkeypatch.setitem(sys.modules, "memgui.ui.screenshot", screenshot)
    return calls


def test_no_command_opens_the_app_on_the_default_brain(app_calls, user_dirs):
    assert main([]) == 0
    default = user_dirs / "data" / "memgui" / "brain.sqlite"
    assert app_calls == [("app", str(default), None)]


def test_brain_option_and_id_reach_the_app(app_calls, tmp_path):
    assert main(["--brain", str(tmp_path / "x.sqlite"), "--brain-id", "team"]) == 0
    assert app_calls == [("app", str(tmp_path / "x.sqlite"), "team")]


@pytest.mark.parametrize("name", ["agent.sqlite", "agent.db", "notes.sqlite3"])
def test_a_brain_path_opens_the_app(app_calls, tmp_path, name):
    assert main([str(tmp_path / name)]) == 0
    assert app_calls == [("app", str(tmp_path / name), None)]


def test_an_existing_file_of_any_name_opens_the_app(app_calls, tmp_path):
    existing = tmp_path / "memory"
    existing.write_bytes(b"")
    assert main(["--brain-id", "b1", str(existing)]) == 0
    assert app_calls == [("app", str(existing), "b1")]


def test_a_command_never_opens_the_app(app_calls, capsys, tmp_path):
    assert run_cli(capsys, tmp_path / "b.sqlite", "info").code == 0
    assert app_calls == []


def test_split_app_brain_skips_options_and_their_values(tmp_path):
    assert _split_app_brain(["--brain", "x.sqlite", "list"]) == (
        None,
        ["--brain", "x.sqlite", "list"],
    )
    assert _split_app_brain(["--json", "b.db"]) == ("b.db", ["--json"])
    assert _split_app_brain(["list", "b.db"]) == (None, ["list", "b.db"])
    assert _split_app_brain(["nothing-here"]) == (None, ["nothing-here"])


def test_screenshot_renders_with_the_given_brain_size_and_selection(app_calls, capsys, tmp_path):
    brain, png = str(tmp_path / "b.sqlite"), str(tmp_path / "out.png")
    code = main(["--json", "screenshot", brain, png, "--select", "mt_1", "--size", "800x600"])
    assert code == 0
    assert app_calls == [("render", brain, png, "mt_1", (800, 600))]
    assert '"screenshot"' in capsys.readouterr().out
    assert main(["screenshot", brain, png, "--activity"]) == 0
    assert app_calls[-1] == ("render", brain, png, None, (1280, 800), "activity")


def test_screenshot_uses_the_brain_option_when_given_one_path(app_calls, tmp_path):
    brain, png = str(tmp_path / "b.sqlite"), str(tmp_path / "out.png")
    assert main(["--brain", brain, "screenshot", png]) == 0
    assert app_calls == [("render", brain, png, None, (1280, 800))]


def test_screenshot_sets_up_a_search_a_tab_or_the_trash(app_calls, tmp_path):
    brain, png = str(tmp_path / "b.sqlite"), str(tmp_path / "out.png")
    assert main(["screenshot", brain, png, "--search", "deploy", "--tab", "history"]) == 0
    assert main(["screenshot", brain, png, "--trash"]) == 0
    assert app_calls == [
        ("render", brain, png, None, (1280, 800)),
        ("state", "deploy", "history", False),
        ("render", brain, png, None, (1280, 800)),
        ("state", "", None, True),
    ]


def test_screenshot_refuses_a_tab_it_does_not_have(app_calls, capsys, tmp_path):
    code = main(["screenshot", str(tmp_path / "b.sqlite"), "out.png", "--tab", "graph"])
    assert code == 2 and app_calls == []
    assert "invalid choice: 'graph'" in capsys.readouterr().err


# --- storage failures ------------------------------------------------------------------------


def test_a_file_that_is_no_database_is_said_to_be_no_brain(capsys, tmp_path, user_dirs):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a SQLite file at all" * 200)
    before = broken.read_bytes()
    for command in ("list", "info", "add"):
        result = run_cli(capsys, broken, *([command, "x"] if command == "add" else [command]))
        assert result.code == 1
        assert f"{broken} is not a readable brain: it is not a SQLite database" in result.err
        assert "file is not a database" in result.err and "nothing was written" in result.err
        for sql_word in ("SELECT", "sqlite_master", "PRAGMA", "Traceback"):
            assert sql_word not in result.err
        assert result.out == ""
    assert broken.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("broken")) == [
        "broken.sqlite"
    ]


def test_an_unexpected_error_is_logged_and_exits_1(capsys, tmp_path, monkeypatch):
    def explode(ctx, args):
        raise RuntimeError("boom")

    broken = Command(name="info", help="", configure=lambda parser: None, run=explode)
    monkeypatch.setitem(REGISTRY, "info", broken)
    result = run_cli(capsys, tmp_path / "b.sqlite", "info")
    assert result.code == 1
    assert "info failed unexpectedly (RuntimeError: boom)" in result.err


def test_no_log_file_is_written_when_all_goes_well(capsys, tmp_path, user_dirs):
    add(capsys, tmp_path / "b.sqlite", "fine")
    assert not (user_dirs / "state").exists()
