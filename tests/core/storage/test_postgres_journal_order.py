"""A shared brain's journal ids commit in their order (`postgres_locks.hold_journal_order`):
a transaction holding a lower id never commits after a higher one, so a reader that saw id N
(a review mark, a "journal since N" reader) has seen every change of the brain up to N."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from memgui.core.shared_brain import SharedBrain
from tests.support.postgres import until_waiting_for_lock
from tests.support.waiting import WAIT_S

pytestmark = pytest.mark.slow  # starts a server

SAFETY_S = WAIT_S  # a safety net: each wait is for a signal or a state, never for a time


def journal_since(brain: SharedBrain, after_id: int) -> list[tuple[int, str]]:
    """The brain's journal rows after `after_id`, as a live view reads them."""
    rows = brain.conn.execute(
        "SELECT id, actor FROM memgui_journal WHERE brain_id = %s AND id > %s ORDER BY id",
        (brain.brain_id, after_id),
    ).fetchall()
    return [(int(r[0]), str(r[1])) for r in rows]


def test_a_lower_id_never_commits_after_a_higher_one(pg_address: str) -> None:
    reader = SharedBrain.open(pg_address, actor="gui")
    slow = SharedBrain.open(pg_address, actor="mcp:slow")
    quick = SharedBrain.open(pg_address, actor="mcp:quick")
    errors: list[BaseException] = []
    slow_wrote, release_slow = threading.Event(), threading.Event()

    def slow_write() -> None:
        try:
            with slow.writing("mcp:slow"):  # one transaction: its row's id drawn, not committed
                slow.add("written first, committed late", actor="mcp:slow")
                slow_wrote.set()
                assert release_slow.wait(SAFETY_S)
        except BaseException as exc:
            errors.append(exc)
            slow_wrote.set()

    def quick_write() -> None:
        try:
            quick.add("written second", actor="mcp:quick")
        except BaseException as exc:
            errors.append(exc)

    try:
        earlier = reader.add("reviewed before", actor="rest")
        seen = journal_since(reader, 0)
        assert [actor for _, actor in seen] == ["rest"]
        slow_thread = threading.Thread(target=slow_write)
        quick_thread = threading.Thread(target=quick_write)
        slow_thread.start()
        assert slow_wrote.wait(SAFETY_S) and not errors
        quick_thread.start()
        # The quick writer waits for the slow one's turn to end, before drawing its id.
        until_waiting_for_lock(reader.conn, quick.conn.info.backend_pid)
        assert quick_thread.is_alive()
        # Meanwhile a reader sees nothing past what it saw, and the review nothing new.
        last_seen = seen[-1][0]
        assert journal_since(reader, last_seen) == []
        assert [b.actor for b in reader.unreviewed_batches().batches] == ["rest"]
        release_slow.set()
        slow_thread.join(SAFETY_S)
        quick_thread.join(SAFETY_S)
        assert not slow_thread.is_alive() and not quick_thread.is_alive() and not errors
        after = journal_since(reader, last_seen)
        assert [actor for _, actor in after] == ["mcp:slow", "mcp:quick"]
        assert after[0][0] < after[1][0]
        # Reviewed up to what was shown while they wrote: both changes are still to review.
        reader.mark_reviewed(through=last_seen)
        assert [b.actor for b in reader.unreviewed_batches().batches] == [
            "mcp:quick",
            "mcp:slow",
        ]
        assert reader.unreviewed_count() == 2
        assert reader.get(earlier.id).content == "reviewed before"
    finally:
        release_slow.set()
        for brain in (slow, quick, reader):
            brain.close()


def test_without_the_lock_a_lower_id_can_commit_after_a_higher_one(pg_address: str) -> None:
    """The hazard the lock removes: plain transactions on a BIGSERIAL draw ids in one order
    and commit in another (why a reader of ids alone needs the lock)."""
    import psycopg

    reader = SharedBrain.open(pg_address, actor="gui")
    conninfo = reader.address.conninfo
    insert = (
        "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id) "
        "VALUES ('team', 0, %s, %s, 'add', 't') RETURNING id"
    )
    try:
        with psycopg.connect(conninfo) as first, psycopg.connect(conninfo) as second:
            lower: Any = first.execute(insert, ("first", "b_first")).fetchone()
            higher: Any = second.execute(insert, ("second", "b_second")).fetchone()
            second.commit()
            assert lower[0] < higher[0]
            assert journal_since(reader, 0) == [(higher[0], "second")]  # the lower one unseen
            first.commit()
            assert journal_since(reader, higher[0]) == []  # and a reader past it never sees it
    finally:
        reader.close()
