"""Many writers on one shared brain (`SharedBrainPool`), and the brain id's advisory lock that
long operations hold (`storage/postgres_locks.py`, AgentOS's key), on a real server."""

from __future__ import annotations

import threading

import psycopg
import pytest

from memgui.core.errors import BrainLocked, Conflict, InvalidArgument
from memgui.core.shared_brain import SharedBrain
from memgui.core.shared_pool import SharedBrainPool
from memgui.core.storage.engine import parse_postgres_address

pytestmark = pytest.mark.slow  # a real server

WRITERS, ROUNDS = 10, 100  # make test's size; tests/bench/bench_pg_cas.py runs 10 × 1,000


def count_up(pool: SharedBrainPool, trace_id: str, worker: int, rounds: int) -> int:
    """`rounds` compare-and-set increments of the trace's counter; how many tries it took."""
    done = tries = 0
    while done < rounds:
        tries += 1
        with pool.brain(actor=f"w{worker}") as brain:
            seen = brain.get(trace_id)
            n = int(seen.content)
            try:
                brain.update(trace_id, {"content": str(n + 1)}, expect_version=seen.version)
            except Conflict:
                continue
        done += 1
    return tries


def test_ten_writers_compare_and_set_through_a_pool_lose_nothing(pg_address: str) -> None:
    with SharedBrainPool(pg_address, actor="test", max_size=WRITERS) as pool:
        with pool.brain() as brain:
            trace = brain.add("0")  # the counter
        errors: list[BaseException] = []

        def write(worker: int) -> None:
            try:
                count_up(pool, trace.id, worker, ROUNDS)
            except BaseException as exc:  # reported below, in the test's thread
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert pool.stats()["pool_max"] == WRITERS
        with pool.brain() as brain:
            final = brain.get(trace.id)
            assert final.content == str(WRITERS * ROUNDS)
            assert final.version == 1 + WRITERS * ROUNDS
            written = [int(e.after["content"]) for e in brain.history(trace.id)[1:] if e.after]
            assert written == list(range(1, WRITERS * ROUNDS + 1))  # every step, once, in order


def test_bad_pool_sizes_are_refused_by_name(pg_address: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        SharedBrainPool(pg_address, max_size=0)
    assert caught.value.field == "max_size"
    with pytest.raises(InvalidArgument) as caught:
        SharedBrainPool(pg_address, min_size=5, max_size=2)
    assert caught.value.field == "min_size"


def test_a_long_operation_is_refused_while_another_holds_the_brain(pg_address: str) -> None:
    """AgentOS's migrations lock `hashtext('agentos_brain:' || brainId)`
    (MigrationRunner.runPending); a session holding that key stops memgui's sweep, merge,
    re-file and scope deletion, which say who holds it, and write nothing."""
    address = parse_postgres_address(pg_address)
    with SharedBrain.open(pg_address, actor="test") as brain:
        a = brain.add("a", scope="thread", scope_id="t1")
        b = brain.add("b", scope="thread", scope_id="t1", ttl_secs=1)
        with psycopg.connect(address.conninfo, autocommit=True) as other:
            other.execute("SET application_name = 'agentos migration'")
            with other.transaction():
                other.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("agentos_brain:team",))
                calls = {
                    "scope-refile": lambda: brain.refile_scope("thread", "t1", "t2"),
                    "scope-delete": lambda: brain.delete_scope("thread", "t1"),
                    "merge": lambda: brain.merge([a.id, b.id]),
                }
                for name, call in calls.items():
                    with pytest.raises(BrainLocked) as caught:
                        call()
                    message = str(caught.value)
                    assert "'agentos migration'" in message and name in message, message
                clock = brain.clock
                brain.clock = lambda: clock() + 5_000
                with pytest.raises(BrainLocked):
                    brain.sweep()
                # Another brain id of the same database is not held.
                with SharedBrain.open(pg_address.replace("team", "other"), actor="t") as free:
                    free.add("x", scope="thread", scope_id="t1")
                    assert free.refile_scope("thread", "t1", "t2").count == 1
            assert brain.sweep().expired == 1  # the lock went with the other's transaction
        assert [e.op for e in brain.history(a.id)] == ["add"]  # nothing written meanwhile


def test_memgui_holds_agentos_back_while_it_works(pg_address: str) -> None:
    """While memgui's long operation runs, AgentOS's key is taken: its migration would wait."""
    address = parse_postgres_address(pg_address)
    with SharedBrain.open(pg_address, actor="test") as brain:
        brain.add("a", scope="thread", scope_id="t1")
        with psycopg.connect(address.conninfo, autocommit=True) as other:
            with brain.writing(None, "scope", lock="scope-refile"):
                row = other.execute(
                    "SELECT pg_try_advisory_xact_lock(hashtext(%s))", ("agentos_brain:team",)
                ).fetchone()
                assert row == (False,)
            row = other.execute(
                "SELECT pg_try_advisory_xact_lock(hashtext(%s))", ("agentos_brain:team",)
            ).fetchone()
            assert row == (True,)
