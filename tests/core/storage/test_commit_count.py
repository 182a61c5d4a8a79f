"""Telling another program's change to a brain from this process's own, checkpoints included."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.storage import commit_count
from memgui.core.storage.commit_count import CommitCounts, who_changed
from tests.support.brains import fill
from tests.support.paths import ROOT

READ_AND_CLOSE = "import apsw, sys\napsw.Connection(sys.argv[1]).execute('SELECT 1').fetchall()\n"
# Another program's single write that does not wait: "busy" if the brain's write lock is held.
WRITE_AT_ONCE = """import apsw, sys
conn = apsw.Connection(sys.argv[1])
conn.setbusytimeout(0)
try:
    conn.execute("BEGIN IMMEDIATE")
except apsw.BusyError:
    print("busy")
else:
    conn.execute("INSERT INTO brain_meta(brain_id, key, value) VALUES ('other', 'note', '1')")
    conn.execute("COMMIT")
    print("committed")
"""


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


def test_another_program_closing_the_file_leaves_the_wal_this_process_uses(tmp_path):
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        fill(brain)
        brain.add("something in the WAL")
        then = brain.commit_counts()
        subprocess.run([sys.executable, "-c", READ_AND_CLOSE, str(path)], cwd=ROOT, check=True)
        # This process holds the WAL index: the other was not the last to close the file,
        # so it neither folded the WAL back nor started the index over; it wrote nothing.
        assert Path(f"{path}-wal").exists()
        assert brain.who_changed(then, brain.commit_counts()) == "nobody"
    # The index started over (the last program to close the file folded the WAL back): a
    # program may have written before.
    assert who_changed(CommitCounts(9, 2), CommitCounts(1, 2)) == "unknown"


def test_counts_without_a_wal_index(tmp_path):
    assert commit_count.commits_in_wal_index(tmp_path / "missing.sqlite") is None
    (tmp_path / "odd.sqlite-shm").write_bytes(b"\x00" * 200)
    assert commit_count.commits_in_wal_index(tmp_path / "odd.sqlite") is None
    assert who_changed(CommitCounts(None, 3), CommitCounts(None, 3)) == "others"
    assert who_changed(CommitCounts(None, 3), CommitCounts(None, 4)) == "nobody"


def test_a_look_at_the_counts_keeps_the_write_lock_of_a_transaction_open_here(tmp_path):
    # The window looks on its own thread while another thread of the app writes. Closing a
    # descriptor of the -shm dropped the process's locks on it: another program then wrote
    # in the middle of this transaction, and its commit was overwritten by this one's.
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        brain.add("first")
        with brain.write("add"):
            brain.add("written while the window looks")
            brain.commit_counts()
            other = subprocess.run(
                [sys.executable, "-c", WRITE_AT_ONCE, str(path)],
                cwd=ROOT, capture_output=True, text=True, check=True,
            )  # fmt: skip
        # Had it got the lock, its committed row would now be gone.
        assert other.stdout.strip() == "busy", other.stdout
        brain.commit_counts()
        after = subprocess.run(
            [sys.executable, "-c", WRITE_AT_ONCE, str(path)],
            cwd=ROOT, capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert after.stdout.strip() == "committed"
        rows = brain.db.conn.execute("SELECT key FROM brain_meta WHERE brain_id = 'other'")
        assert rows.fetchall() == [("note",)]
        assert brain.who_changed(brain.commit_counts(), brain.commit_counts()) == "nobody"


def shm_descriptors(path: Path) -> int:
    """How many descriptors this process has open on the brain's -shm."""
    shm, count = f"{path}-shm", 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == shm
        except OSError:
            continue
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists descriptors in /proc")
def test_the_wal_index_is_read_through_one_descriptor_closed_with_the_brain(tmp_path):
    path = tmp_path / "brain.sqlite"
    brain = Brain.open(path, actor="gui")
    second = Brain.open(path, actor="gui", create=False)
    brain.add("something in the WAL")
    sqlites = shm_descriptors(path)  # SQLite's own, shared by this process's connections
    for _ in range(3):
        brain.commit_counts()
        second.commit_counts()
    assert shm_descriptors(path) == sqlites + 1  # one more, kept
    brain.close()
    assert shm_descriptors(path) == sqlites + 1  # the second connection still uses the file
    second.close()
    assert shm_descriptors(path) == 0
