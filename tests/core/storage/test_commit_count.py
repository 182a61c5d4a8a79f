"""Telling another program's change to a brain from this process's own, checkpoints included."""

from __future__ import annotations

import subprocess
import sys
import time

import apsw

from memgui.core.brain import Brain
from memgui.core.storage import commit_count
from memgui.core.storage.commit_count import CommitCounts, who_changed
from tests.support.brains import fill
from tests.support.paths import ROOT

READ_AND_CLOSE = "import apsw, sys\napsw.Connection(sys.argv[1]).execute('SELECT 1').fetchall()\n"


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_own_writes_and_checkpoints_are_nobody_elses(tmp_path):
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        fill(brain)
        then = brain.commit_counts()
        version = brain.data_version()
        trace = brain.list_traces(limit=1)[0]
        brain.update(trace.id, {"content": "edited here"}, expect_version=trace.version)
        reader = Brain.open(path, actor="gui", create=False)
        try:
            reader.add("written on a second connection of this process")
        finally:
            reader.close()
        truncations = brain.db.checkpointer.truncations
        wait_for(lambda: brain.db.checkpointer.truncations > truncations)
        # The data version moved (the second connection, the checkpoint), yet nobody else wrote.
        assert brain.data_version() != version
        assert brain.who_changed(then, brain.commit_counts()) == "nobody"


def test_another_programs_commit_is_seen_with_or_without_a_journal(tmp_path):
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        fill(brain)
        then = brain.commit_counts()
        other = apsw.Connection(str(path))  # a program that is not memgui: no journal
        other.execute("UPDATE memory_traces SET retrieval_count = retrieval_count + 1")
        brain.add("mine")
        assert brain.who_changed(then, brain.commit_counts()) == "others"
        other.close()


def test_another_program_closing_the_file_is_unknown(tmp_path):
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        fill(brain)
        brain.add("something in the WAL")
        then = brain.commit_counts()
        subprocess.run([sys.executable, "-c", READ_AND_CLOSE, str(path)], cwd=ROOT, check=True)
        # It folded the WAL back and started its index over: it may have written before.
        assert brain.who_changed(then, brain.commit_counts()) == "unknown"


def test_counts_without_a_wal_index(tmp_path):
    assert commit_count.commits_in_wal_index(tmp_path / "missing.sqlite") is None
    (tmp_path / "odd.sqlite-shm").write_bytes(b"\x00" * 200)
    assert commit_count.commits_in_wal_index(tmp_path / "odd.sqlite") is None
    assert who_changed(CommitCounts(None, 3), CommitCounts(None, 3)) == "others"
    assert who_changed(CommitCounts(None, 3), CommitCounts(None, 4)) == "nobody"
