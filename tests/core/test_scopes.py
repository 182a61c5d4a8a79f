"""Scope operations: delete a scope's traces (optionally one user's), re-file a scope id."""

from __future__ import annotations

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.model import TraceFilter


def test_delete_scope_removes_live_and_forgotten_traces_of_that_id_only(brain: Brain) -> None:
    a = brain.add("a", scope="thread", scope_id="t1")
    b = brain.add("b", scope="thread", scope_id="t1")
    other = brain.add("c", scope="thread", scope_id="t2")
    user = brain.add("d", scope="user", scope_id="t1")
    brain.forget(b.id)
    brain.link(a.id, other.id, "relates_to")
    assert brain.delete_scope("thread", "t1").count == 2
    left = {t.id for t in brain.list_traces(TraceFilter(include_deleted=True))}
    assert left == {other.id, user.id}
    assert brain.related(other.id) == []


def test_delete_scope_for_one_user(brain: Brain) -> None:
    mine = brain.add("mine", scope="thread", scope_id="t", metadata={"turnUserId": "u1"})
    shared = brain.add("shared", scope="thread", scope_id="t", metadata={"contributors": ["u1"]})
    theirs = brain.add("theirs", scope="thread", scope_id="t", metadata={"userId": "u2"})
    assert brain.delete_scope("thread", "t", user_id="u1").count == 2
    assert [t.id for t in brain.list_traces()] == [theirs.id]
    assert {mine.id, shared.id}.isdisjoint(t.id for t in brain.list_traces())


def test_delete_scope_is_revertible(brain: Brain) -> None:
    t = brain.add("keep me safe", scope="user", scope_id="u")
    brain.delete_scope("user", "u")
    brain.revert(brain.journal_since(0)[-1].batch_id)
    assert brain.get(t.id).content == "keep me safe"


def test_refile_scope_moves_deleted_rows_and_metadata(brain: Brain) -> None:
    a = brain.add("a", scope="persona", scope_id="old")
    b = brain.add("b", scope="persona", scope_id="old")
    brain.forget(b.id)
    assert brain.refile_scope("persona", "old", "new").count == 2
    assert brain.get(a.id).scope_id == "new" and brain.get(b.id).scope_id == "new"
    assert brain.get(a.id).metadata["scopeId"] == "new"
    assert brain.delete_scope("persona", "new").count == 2


def test_refile_scope_to_the_same_id_writes_nothing(brain: Brain) -> None:
    a = brain.add("a", scope="user", scope_id="alice")
    brain.forget(brain.add("b", scope="user", scope_id="alice").id)
    journal_before = brain.last_journal_id()
    versions = {t.id: t.version for t in brain.list_traces(TraceFilter(include_deleted=True))}
    assert brain.refile_scope("user", "alice", "alice").count == 0
    assert brain.last_journal_id() == journal_before
    after = {t.id: t.version for t in brain.list_traces(TraceFilter(include_deleted=True))}
    assert after == versions  # no bump: another writer's expect_version still holds
    assert brain.update(a.id, {"content": "a2"}, expect_version=1).version == 2


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda b: b.delete_scope("thread", ""), "scope_id"),
        (lambda b: b.delete_scope("galaxy", "x"), "scope"),
        (lambda b: b.delete_scope("thread", "x", user_id=""), "user_id"),
        (lambda b: b.refile_scope("thread", "", "x"), "from_scope_id"),
        (lambda b: b.refile_scope("thread", "x", ""), "to_scope_id"),
    ],
)
def test_scope_calls_refuse_empty_ids(brain: Brain, call, field: str) -> None:
    brain.add("untouched", scope="thread", scope_id="")
    with pytest.raises(InvalidArgument) as err:
        call(brain)
    assert err.value.field == field
    assert brain.count() == 1


def test_refile_records_a_live_traces_graph_copy_under_the_new_id(agentos_copy) -> None:
    def node_scope_ids(brain: Brain) -> dict[str, str]:
        rows = brain.db.conn.execute(
            "SELECT id, json_extract(properties, '$.scopeId') FROM knowledge_nodes "
            "WHERE type = 'memory_graph'"
        ).fetchall()
        return dict(rows)

    with Brain.open(agentos_copy, actor="test") as brain:
        before = node_scope_ids(brain)
        live = {t.id for t in brain.list_traces(TraceFilter(scope="user", scope_id="user-42"))}
        moved = {n for n in before if n in live}
        assert moved
        start = brain.last_journal_id()
        brain.refile_scope("user", "user-42", "user-43")
        after = node_scope_ids(brain)
        assert {n: after[n] for n in moved} == dict.fromkeys(moved, "user-43")
        assert {n: s for n, s in after.items() if n not in moved} == {
            n: s for n, s in before.items() if n not in moved
        }
        (batch,) = {e.batch_id for e in brain.journal_since(start)}
        brain.revert(batch)
        assert node_scope_ids(brain) == before
