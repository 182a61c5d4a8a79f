"""Every mutation returns what it changed: exactly the ids it added, edited and removed, the
links and graph rows, and the journal batch that holds them (the one in the journal)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io import commit, plan
from memgui.core.model import Changes, LinkKey, TraceFilter, changes_of
from memgui.core.progress import run_to_end


def journal_mark(brain: Brain) -> int:
    return brain.last_journal_id()


def batches_since(brain: Brain, mark: int) -> set[str]:
    """The journal batches of the rows written after `mark`."""
    return {e.batch_id for e in brain.journal_since(mark, limit=10_000, states=False)}


def assert_journaled(brain: Brain, mark: int, changes: Changes) -> None:
    """`changes` names the one batch the journal holds since `mark`."""
    assert changes
    assert batches_since(brain, mark) == {changes.batch_id}


def assert_nothing(brain: Brain, mark: int, changes: Changes) -> None:
    assert not changes and changes.batch_id == ""
    assert journal_mark(brain) == mark


def only(changes: Changes, **named: object) -> None:
    """Every id set of `changes` is empty but those named, which equal what is given."""
    fields = ("added", "edited", "removed", "links_added", "links_removed", "nodes", "edges")
    for name in fields:
        assert getattr(changes, name) == named.get(name, frozenset()), name


def test_add_names_the_new_trace(brain: Brain) -> None:
    mark = journal_mark(brain)
    trace = brain.add("new", actor="cli")
    changes = changes_of(trace)
    only(changes, added={trace.id})
    assert (changes.kind, changes.actor) == ("edit", "cli")
    assert_journaled(brain, mark, changes)


def test_update_names_the_trace_edited(brain: Brain) -> None:
    trace = brain.add("one")
    mark = journal_mark(brain)
    changes = changes_of(brain.update(trace.id, {"content": "two"}))
    only(changes, edited={trace.id})
    assert_journaled(brain, mark, changes)


def test_forget_and_restore_edit_the_trace_and_a_repeat_changes_nothing(brain: Brain) -> None:
    trace = brain.add("one")
    mark = journal_mark(brain)
    forgotten = changes_of(brain.forget(trace.id))
    only(forgotten, edited={trace.id})
    assert_journaled(brain, mark, forgotten)
    mark = journal_mark(brain)
    assert_nothing(brain, mark, changes_of(brain.forget(trace.id)))
    restored = changes_of(brain.restore(trace.id))
    only(restored, edited={trace.id})
    assert_journaled(brain, mark, restored)


def test_purge_names_the_trace_removed_and_its_links(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.link(a.id, b.id, "supersedes")
    mark = journal_mark(brain)
    changes = brain.purge(a.id)
    only(changes, removed={a.id}, links_removed={LinkKey(a.id, b.id, "supersedes")})
    assert changes.traces == {a.id, b.id}  # b shows one link fewer
    assert_journaled(brain, mark, changes)


def test_merge_names_the_survivor_the_merged_and_the_links_moved(brain: Brain) -> None:
    keep, gone, other = brain.add("keep"), brain.add("gone"), brain.add("other")
    brain.link(gone.id, other.id, "caused_by")
    mark = journal_mark(brain)
    survivor = brain.merge([keep.id, gone.id])
    changes = changes_of(survivor)
    assert survivor.id == keep.id
    only(
        changes,
        edited={keep.id, gone.id},  # the survivor rewritten, the merged one forgotten
        links_added={LinkKey(keep.id, other.id, "caused_by")},
        links_removed={LinkKey(gone.id, other.id, "caused_by")},  # moved to the survivor
    )
    assert_journaled(brain, mark, changes)


def test_link_and_unlink_name_the_link_as_stored(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    stored = LinkKey(*sorted((a.id, b.id)), "relates_to")  # symmetric: smaller id first
    mark = journal_mark(brain)
    linked = brain.link(b.id, a.id, "relates_to")
    only(linked, links_added={stored})
    assert linked.traces == {a.id, b.id}
    assert_journaled(brain, mark, linked)
    mark = journal_mark(brain)
    assert_nothing(brain, mark, brain.link(a.id, b.id, "relates_to"))
    unlinked = brain.unlink(a.id, b.id, "relates_to")
    only(unlinked, links_removed={stored})
    assert_journaled(brain, mark, unlinked)
    mark = journal_mark(brain)
    assert_nothing(brain, mark, brain.unlink(a.id, b.id, "relates_to"))


def test_add_node_and_add_edge_name_their_row_and_give_its_id(brain: Brain) -> None:
    mark = journal_mark(brain)
    alice = brain.add_node("Alice", "person")
    only(alice, nodes={alice.id})
    assert alice.id.startswith("kn_")
    assert_journaled(brain, mark, alice)
    bob = brain.add_node("Bob", "person")
    mark = journal_mark(brain)
    knows = brain.add_edge(alice.id, bob.id, "knows")
    only(knows, edges={knows.id})
    assert [e["id"] for e in brain.edges()] == [knows.id]
    assert_journaled(brain, mark, knows)


def test_revert_names_what_it_put_back_and_took_away(brain: Brain) -> None:
    keep = brain.add("keep")
    with brain.batch() as batch:
        new = brain.add("new")
        brain.update(keep.id, {"tags": ["t"]})
        brain.link(new.id, keep.id, "supersedes")
    mark = journal_mark(brain)
    reverted = brain.revert(batch.batch_id)
    only(
        reverted,
        removed={new.id},
        edited={keep.id},
        links_removed={LinkKey(new.id, keep.id, "supersedes")},
    )
    assert reverted.kind == "revert"
    assert_journaled(brain, mark, reverted)
    mark = journal_mark(brain)
    again = brain.revert(reverted.batch_id)
    only(
        again,
        added={new.id},
        edited={keep.id},
        links_added={LinkKey(new.id, keep.id, "supersedes")},
    )
    assert_journaled(brain, mark, again)


def test_undo_names_what_it_changed_in_its_own_batch(brain: Brain) -> None:
    trace = brain.add("v1")
    first = changes_of(brain.update(trace.id, {"content": "v2"})).batch_id
    second = changes_of(brain.update(trace.id, {"tags": ["t"]})).batch_id
    brain.undo(second)
    mark = journal_mark(brain)
    undone = brain.undo(first)  # the version moved by the undo above: tolerated
    only(undone, edited={trace.id})
    assert_journaled(brain, mark, undone)
    assert brain.get(trace.id).content == "v1"


def test_restore_version_names_the_trace_or_nothing_when_it_holds_it(brain: Brain) -> None:
    trace = brain.add("v1")
    brain.update(trace.id, {"content": "v2"})
    first = brain.history(trace.id)[0].after or {}
    mark = journal_mark(brain)
    restored = brain.restore_version(trace.id, first)
    only(changes_of(restored), edited={trace.id})
    assert restored.content == "v1"
    assert_journaled(brain, mark, changes_of(restored))
    mark = journal_mark(brain)
    assert_nothing(brain, mark, changes_of(brain.restore_version(trace.id, first)))


def test_scope_deletion_and_refiling_name_their_traces_and_count_them(brain: Brain) -> None:
    a = brain.add("a", scope="thread", scope_id="t1")
    b = brain.add("b", scope="thread", scope_id="t1")
    brain.add("c", scope="thread", scope_id="t2")
    mark = journal_mark(brain)
    refiled = brain.refile_scope("thread", "t1", "t3")
    only(refiled, edited={a.id, b.id})
    assert refiled.count == 2 and refiled.kind == "scope"
    assert_journaled(brain, mark, refiled)
    mark = journal_mark(brain)
    deleted = brain.delete_scope("thread", "t3")
    only(deleted, removed={a.id, b.id})
    assert deleted.count == 2
    assert_journaled(brain, mark, deleted)
    mark = journal_mark(brain)
    nothing = brain.refile_scope("thread", "t2", "t2")
    assert nothing.count == 0
    assert_nothing(brain, mark, nothing)


def test_sweep_names_the_expired_traces(brain: Brain) -> None:
    due = brain.add("due", ttl_secs=1)
    kept = brain.add("kept")
    brain.clock = lambda: due.created_at + 5_000
    mark = journal_mark(brain)
    report = brain.sweep()
    assert report.expired == 1
    only(report.changes, removed={due.id})
    assert report.changes.kind == "expire"
    assert_journaled(brain, mark, report.changes)
    assert [t.id for t in brain.list_traces()] == [kept.id]


def test_each_call_in_a_batch_names_its_own_and_the_batch_their_net_effect(brain: Brain) -> None:
    keep = brain.add("keep")
    mark = journal_mark(brain)
    with brain.batch(actor="gui") as batch:
        made = brain.add("made")
        edited = brain.update(made.id, {"content": "made, then edited"})
        brief = brain.add("brief")
        brain.purge(brief.id)
        touched = brain.update(keep.id, {"tags": ["x"]})
    # A call's own changes, in the batch it joined.
    only(changes_of(edited), edited={made.id})
    only(changes_of(touched), edited={keep.id})
    assert changes_of(edited).batch_id == batch.batch_id
    # The batch: made and edited is added; added and purged again is in neither.
    only(batch.changes, added={made.id}, edited={keep.id})
    assert (batch.changes.actor, batch.changes.kind) == ("gui", "batch")
    assert_journaled(brain, mark, batch.changes)


def test_a_batch_that_changed_nothing_has_no_batch_id(brain: Brain) -> None:
    trace = brain.add("a", tags=["x"])
    brain.forget(trace.id)
    mark = journal_mark(brain)
    with brain.batch() as batch:
        brain.forget(trace.id)  # already forgotten
    assert_nothing(brain, mark, batch.changes)


def test_an_import_commit_names_what_it_wrote(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "notes"
    source.mkdir()
    (source / "a.md").write_text("first note\n", encoding="utf-8")
    (source / "b.md").write_text("second note\n", encoding="utf-8")
    mark = journal_mark(brain)
    result = run_to_end(commit(brain, run_to_end(plan(brain, source, "markdown"))))
    assert result.changes is not None and result.batch_id == result.changes.batch_id
    written = {t.id for t in brain.list_traces(TraceFilter())}
    assert result.changes.added == written and len(written) == 2
    assert_journaled(brain, mark, result.changes)


def test_changes_read_as_json_for_the_command_line(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    doc = brain.link(a.id, b.id, "caused_by").to_json()
    assert doc["links_added"] == [{"from_id": a.id, "to_id": b.id, "kind": "caused_by"}]
    assert doc["traces"] == sorted((a.id, b.id)) and doc["added"] == []


def test_a_trace_that_was_read_carries_no_changes(brain: Brain) -> None:
    brain.clock = lambda: 1_700_000_000_000  # no decay between the add and the reads
    trace = brain.add("a")
    assert brain.get(trace.id).changes is None
    assert brain.get(trace.id) == trace  # changes are not part of a trace's value
    with pytest.raises(ValueError, match="was read"):
        changes_of(brain.get(trace.id))
