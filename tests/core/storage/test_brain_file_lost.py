"""A brain whose file is deleted, replaced or damaged while open writes nothing anywhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import BrainFileLost


def test_a_deleted_file_refuses_writes_and_is_not_made_again(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite"
    with Brain.open(path, actor="test") as brain:
        trace = brain.add("kept")
        assert brain.file_lost() is None and not brain.read_only
        os.unlink(path)
        assert "deleted or moved" in brain.file_lost()
        assert brain.read_only
        with pytest.raises(
            BrainFileLost, match=r"b\.sqlite was deleted or moved .*nothing was written"
        ):
            brain.update(trace.id, {"content": "lost"})
        with pytest.raises(BrainFileLost, match="does not exist any more"):
            Brain.open(path, actor="test", create=False)
    assert not path.exists()


def test_a_replaced_file_is_left_as_it_is(tmp_path: Path) -> None:
    path, other = tmp_path / "b.sqlite", tmp_path / "other.sqlite"
    with Brain.open(other, "b", actor="test") as brain:
        brain.add("the other's")
    with Brain.open(path, actor="test") as brain:
        os.replace(other, path)
        before = path.read_bytes()
        with pytest.raises(BrainFileLost, match="replaced by another file"):
            brain.add("into the replaced file")
    assert path.read_bytes() == before


def test_a_damaged_file_is_reported_as_lost(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite"
    with Brain.open(path, actor="test") as brain:
        trace = brain.add("x")
        brain.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        with open(path, "r+b") as damaged:
            damaged.write(os.urandom(path.stat().st_size))
        brain.db.conn.execute("PRAGMA shrink_memory")  # what SQLite cached of it goes
        with pytest.raises(BrainFileLost, match="is damaged"):
            brain.update(trace.id, {"content": "y"})
        assert brain.read_only and "damaged" in brain.file_lost()


def test_reverting_in_a_damaged_file_says_it_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite"
    with Brain.open(path, actor="test") as brain:
        batch = brain.add("x") and brain.journal_since(0)[-1].batch_id
        brain.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        with open(path, "r+b") as damaged:
            damaged.write(os.urandom(path.stat().st_size))
        brain.db.conn.execute("PRAGMA shrink_memory")
        with pytest.raises(BrainFileLost, match="is damaged"):
            brain.revert(batch)


def test_a_brain_opened_by_a_relative_path_survives_a_change_of_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgui.core.storage import db

    monkeypatch.setattr(db, "FILE_CHECK_S", 0.0)  # compare at every write
    monkeypatch.chdir(tmp_path)
    with Brain.open("relative.sqlite", actor="test") as brain:
        brain.add("first")
        monkeypatch.chdir("/")
        brain.add("second")
        assert brain.file_lost() is None
        assert len(brain.search("second").traces) == 1
