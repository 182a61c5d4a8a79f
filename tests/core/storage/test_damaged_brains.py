"""Brain files that are not what memgui expects: empty, not a database, damaged, another
program's database, of a newer AgentOS schema, or holding triggers memgui did not make.
Each is said so in words, and none is written where it must not be."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.errors import DamagedBrain, InvalidArgument, ReadOnlyBrain, RefusedByBrain
from memgui.core.io.exporters.export import export
from memgui.core.progress import run_to_end
from memgui.core.storage import schema
from tests.support.cli import isolate_user_dirs, run_cli, run_text


@pytest.fixture(autouse=True)
def user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_user_dirs(tmp_path, monkeypatch)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))


# --- empty, not a database, damaged, another program's database ----------------------------


def test_a_zero_byte_file_is_a_new_brain_for_every_command(capsys, tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    listed = run_cli(capsys, empty, "list")
    assert listed.code == 0, listed.err
    assert listed.json()["results"] == []
    assert run_cli(capsys, empty, "get", "mt_nothing").code == 3  # not found, not "no table"
    assert run_cli(capsys, empty, "search", "anything").json()["results"] == []
    added = run_cli(capsys, empty, "add", "the first memory")
    assert added.code == 0, added.err
    assert [t["content"] for t in run_cli(capsys, empty, "list").json()["results"]] == [
        "the first memory"
    ]
    assert files_beside(empty) == ["empty.sqlite"]  # no backup of an empty file, no -wal left


def test_a_zero_byte_file_memgui_may_not_write_is_said_to_hold_no_brain(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    empty.chmod(0o444)
    with pytest.raises(InvalidArgument, match="is an empty file memgui cannot write"):
        Brain.open(empty)
    assert empty.stat().st_size == 0 and files_beside(empty) == ["empty.sqlite"]


def test_another_programs_database_is_not_made_a_brain(capsys, tmp_path: Path) -> None:
    other = tmp_path / "places.sqlite"
    conn = apsw.Connection(str(other))
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.close()
    before = digest(other)
    for argv in (("list",), ("add", "x"), ("info",)):
        result = run_cli(capsys, other, *argv)
        assert result.code == 2
        assert "is a SQLite database but not a brain: it has no memory_traces table" in result.err
    assert digest(other) == before and files_beside(other) == ["places.sqlite"]


def _brain_with_a_damaged_page(path: Path) -> None:
    with Brain.open(path, actor="test") as brain, brain.batch():
        for i in range(400):
            brain.add(f"memory number {i} " + "words " * 40)
    conn = apsw.Connection(str(path))
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    (page,) = conn.execute(  # a leaf of the traces' rows: the schema and indexes still read
        "SELECT max(pageno) FROM dbstat WHERE name = 'memory_traces' AND pagetype = 'leaf'"
    ).fetchone()
    conn.close()
    with open(path, "r+b") as handle:
        handle.seek((page - 1) * page_size)
        handle.write(b"\xff" * page_size)


def test_a_damaged_page_is_named_as_damage_not_a_storage_error(capsys, tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    _brain_with_a_damaged_page(path)
    before = digest(path)
    result = run_text(capsys, path, "list", "--limit", "200")
    assert result.code == 1
    assert f"{path} is damaged (SQLite says: database disk image is malformed)" in result.err
    assert "storage error" not in result.err
    assert digest(path) == before


def test_a_file_cut_short_is_not_opened(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        for i in range(300):
            brain.add(f"memory {i}")
    os.truncate(path, 20_000)
    with pytest.raises(DamagedBrain, match="is not a readable brain.*malformed"):
        Brain.open(path).list_traces()


# --- a newer AgentOS schema -----------------------------------------------------------------


def _agentos_schema(path: Path, version: str) -> None:
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE brain_meta SET value = ? WHERE key = 'schema_version'", (version,))
    conn.close()


def test_a_newer_agentos_schema_is_read_never_written(agentos_copy: Path) -> None:
    _agentos_schema(agentos_copy, "3")
    before = digest(agentos_copy)
    with Brain.open(agentos_copy) as brain:
        assert brain.read_only
        assert brain.read_only_reason == (
            "it has AgentOS schema version 3, newer than the 2 this memgui knows"
        )
        assert brain.count() == 45 and brain.search("dark mode").traces
        with pytest.raises(ReadOnlyBrain) as refused:
            brain.add("written into a schema-3 brain")
        assert "AgentOS schema version 3, newer than the 2 this memgui knows" in str(refused.value)
        assert "opened read-only, nothing was written" in str(refused.value)
        info = brain.info()
        assert info["agentos_schema_version"] == 3 and info["schema_version"] == 0
    assert digest(agentos_copy) == before
    assert files_beside(agentos_copy) == ["brain.sqlite"]  # no backup: nothing migrated


def test_the_cli_refuses_to_write_a_newer_agentos_schema(capsys, agentos_copy: Path) -> None:
    _agentos_schema(agentos_copy, "7")
    before = digest(agentos_copy)
    added = run_cli(capsys, agentos_copy, "add", "x")
    assert added.code == 1
    assert "has AgentOS schema version 7, newer than the 2 this memgui knows" in added.err
    info = run_cli(capsys, agentos_copy, "info").json()
    assert info["read_only"] is True and info["agentos_schema_version"] == 7
    assert run_cli(capsys, agentos_copy, "list", "--limit", "3").code == 0
    assert digest(agentos_copy) == before


def test_agentos_schema_two_is_still_migrated_and_written(agentos_copy: Path) -> None:
    with Brain.open(agentos_copy) as brain:
        assert not brain.read_only
        brain.add("written")
        info = brain.info()
        assert info["agentos_schema_version"] == 2
        assert info["schema_version"] == schema.SCHEMA_VERSION


# --- triggers memgui did not make -----------------------------------------------------------


def _with_trigger(path: Path, sql: str) -> None:
    with Brain.open(path, actor="test") as brain:
        brain.add("seed")
    conn = apsw.Connection(str(path))
    conn.execute(sql)
    conn.close()


def _vetoed(folder: Path, trigger: str, table: str, message: str) -> Path:
    """A brain with a trigger of another program's that refuses every insert into `table`."""
    path = folder / "brain.sqlite"
    _with_trigger(
        path,
        f"CREATE TRIGGER {trigger} BEFORE INSERT ON {table} BEGIN "
        f"SELECT RAISE(ABORT, '{message}'); END",
    )
    return path


def test_a_foreign_trigger_is_said_on_open_and_in_info(capsys, tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    _with_trigger(
        path,
        "CREATE TRIGGER rewrite AFTER INSERT ON memory_traces BEGIN "
        "UPDATE memory_traces SET content = 'HIJACKED' WHERE rowid = new.rowid; END",
    )
    with Brain.open(path) as brain:
        assert brain.foreign_triggers == ["rewrite on memory_traces"]
        assert brain.info()["foreign_triggers"] == ["rewrite on memory_traces"]
    added = run_cli(capsys, path, "add", "the user's own words")
    assert added.code == 0
    assert (
        f"warning: {path} holds triggers memgui did not make (rewrite on memory_traces); "
        "they run on every write to the brain, memgui's included" in added.err
    )


def test_a_brain_without_foreign_triggers_says_nothing(capsys, tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    result = run_cli(capsys, path, "add", "x")
    assert result.code == 0 and result.err == ""
    assert run_cli(capsys, path, "info").json()["foreign_triggers"] == []


def test_a_foreign_triggers_abort_is_named_not_taken_for_a_duplicate_id(
    capsys, tmp_path: Path
) -> None:
    path = _vetoed(tmp_path, "veto", "memory_traces", "not today")
    with Brain.open(path, actor="test") as brain:
        with pytest.raises(RefusedByBrain) as refused:
            brain.add("anything")
        assert str(refused.value) == (
            f"{path}: a trigger memgui did not make (veto on memory_traces) refused the add "
            "(not today); nothing was written"
        )
        assert brain.count() == 1
    result = run_cli(capsys, path, "add", "anything")
    assert result.code == 1 and "already exists" not in result.err
    assert "refused the add (not today)" in result.err


def test_a_foreign_unique_index_is_not_taken_for_a_duplicate_id(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    _with_trigger(path, "CREATE UNIQUE INDEX one_text ON memory_traces (content)")
    with Brain.open(path, actor="test") as brain:
        with pytest.raises(
            RefusedByBrain, match="a constraint memgui did not make refused the add"
        ):
            brain.add("seed")
        with pytest.raises(InvalidArgument, match="id already exists"):
            brain.add("another", id=brain.list_traces()[0].id)


def test_an_export_of_a_brain_with_foreign_triggers_leaves_them_out(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    _with_trigger(path, "CREATE TRIGGER audit AFTER DELETE ON memory_traces BEGIN SELECT 1; END")
    with Brain.open(path) as brain:
        run_to_end(export(brain, tmp_path / "copy.sqlite", "sqlite"))
    with Brain.open(tmp_path / "copy.sqlite") as copy:
        assert copy.foreign_triggers == []


def test_an_import_record_a_foreign_trigger_refuses_says_so(tmp_path: Path) -> None:
    from memgui.core.io.planning.plan import plan
    from memgui.core.io.writing.commit import commit
    from tests.support.paths import AGENTOS

    path = _vetoed(tmp_path, "no_nodes", "knowledge_nodes", "no nodes here")
    with Brain.open(path, actor="test") as brain:
        result = run_to_end(commit(brain, run_to_end(plan(brain, AGENTOS / "export.json"))))
        nodes = [error for error in result.errors if "#nodes[" in error]
        assert result.imported > 0 and nodes
        assert all(
            error.endswith(
                "could not be written: a trigger memgui did not make refused it (no nodes here)"
            )
            for error in nodes
        )
        assert brain.nodes() == []
