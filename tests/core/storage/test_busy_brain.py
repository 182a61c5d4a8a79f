"""A brain whose write lock another process holds: writes wait, then say the brain is busy
and who holds it; reads, searches included, go on meanwhile (WAL)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import BrainBusy, InvalidArgument
from memgui.core.storage import busy
from tests.support.cli import isolate_user_dirs, run_cli
from tests.support.killed_child import LOCK_HOLDER, killed_once_it_says

WAIT_S = 0.5


@pytest.fixture(autouse=True)
def user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_user_dirs(tmp_path, monkeypatch)


@pytest.fixture
def brain(brain_path: Path):
    b = Brain.open(brain_path, actor="test")
    b.add("alpha one", tags=["seed"])
    b.flush_index()
    b.write_wait_s = WAIT_S
    yield b
    b.close()


@pytest.mark.slow
def test_a_write_waits_then_says_the_brain_is_busy_and_who_holds_it(
    brain: Brain, brain_path: Path
) -> None:
    with killed_once_it_says(LOCK_HOLDER, [str(brain_path)], says="holding") as child:
        holder = child.pid
        started = time.monotonic()
        with pytest.raises(BrainBusy) as refused:
            brain.add("never written")
        assert time.monotonic() - started >= WAIT_S  # it waited first
        message = str(refused.value)
        assert message.startswith(f"{brain_path} is busy: another program (pid {holder}: ")
        assert "has held its write lock for more than 0.5 s; the add was not done" in message
        assert refused.value.exit_code == 5
        # Reads go on: a list, a get, and a search that cannot note its recall.
        (seed,) = brain.list_traces()
        assert brain.get(seed.id).content == "alpha one"
        assert [h.trace.id for h in brain.search("alpha").hits] == [seed.id]
        assert brain.get(seed.id).retrieval_count == 0
    brain.add("written once the lock is free")
    assert brain.count() == 2


@pytest.mark.slow
def test_a_search_finds_rows_not_yet_indexed_while_the_brain_is_busy(
    brain: Brain, brain_path: Path
) -> None:
    added = brain.add("bravo two")  # marked for the indexes, not yet in them
    assert brain.db.pending_marks
    with killed_once_it_says(LOCK_HOLDER, [str(brain_path)], says="holding"):
        assert [h.trace.id for h in brain.search("bravo").hits] == [added.id]


@pytest.mark.slow
def test_the_cli_exits_5_naming_the_holder(capsys, brain: Brain, brain_path: Path, monkeypatch):
    monkeypatch.setenv("MEMGUI_WRITE_WAIT", "0.3")
    with killed_once_it_says(LOCK_HOLDER, [str(brain_path)], says="holding") as child:
        holder = child.pid
        added = run_cli(capsys, brain_path, "add", "x")
        assert added.code == 5
        assert f"is busy: another program (pid {holder}: " in added.err
        assert "nothing was written" in added.err and "storage error" not in added.err
        found = run_cli(capsys, brain_path, "search", "alpha")
        assert found.code == 0 and len(found.json()["results"]) == 1


def test_the_holder_is_found_in_the_systems_lock_table(brain: Brain, brain_path: Path) -> None:
    if not busy.PROC_LOCKS.exists():
        pytest.skip("this system lists no locks in /proc/locks")
    with brain.write("hold"):  # this process's own connection: named as such
        assert busy.write_lock_holder(brain_path) == os.getpid()
        assert busy.describe_holder(os.getpid()).startswith("another connection of this process")
    assert busy.write_lock_holder(brain_path) is None


def test_a_wait_out_of_bounds_is_refused(brain: Brain, capsys, brain_path: Path, monkeypatch):
    for bad in (-1, float("nan"), True, "5"):
        with pytest.raises(InvalidArgument, match="write_wait_s must"):
            brain.write_wait_s = bad  # type: ignore[assignment]
    monkeypatch.setenv("MEMGUI_WRITE_WAIT", "soon")
    result = run_cli(capsys, brain_path, "add", "x")
    assert result.code == 2
    assert "MEMGUI_WRITE_WAIT must be a number of seconds from 0 to 86400 (got 'soon')" in (
        result.err
    )
