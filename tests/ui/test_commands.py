"""Undo and redo of every edit, checked against the core's state."""

from __future__ import annotations

import pytest

from memgui.core.errors import Conflict, InvalidArgument, NotFound
from memgui.core.model import TraceFilter
from memgui.ui import commands as cmd
from tests.support.waiting import WAIT_MS


def ids_of(session, **kwargs) -> list[str]:
    return session.brain.list_ids(TraceFilter(**kwargs))


def test_new_memory_undo_removes_it_and_redo_brings_it_back(session):
    command = cmd.NewTraceCommand(session, {"content": "Fresh note", "tags": ["x"]})
    trace = cmd.push(session, command)
    assert session.undo_stack.count() == 1
    session.undo_stack.undo()
    with pytest.raises(NotFound):
        session.brain.get(trace.id)
    session.undo_stack.redo()
    again = session.brain.get(trace.id)
    assert (again.content, again.tags) == ("Fresh note", ("x",))


def test_save_undo_restores_content_tags_and_counts_versions_up(session):
    first = session.brain.get(ids_of(session)[0])
    patch = {"content": "Changed", "tags": ["new"], "category": "ERROR"}
    cmd.push(session, cmd.SaveTraceCommand(session, first.id, patch, first.version))
    assert session.brain.get(first.id).content == "Changed"
    session.undo_stack.undo()
    back = session.brain.get(first.id)
    assert (back.content, back.tags, back.category) == (first.content, first.tags, first.category)
    assert back.version == first.version + 2  # the version chain never goes back
    session.undo_stack.redo()
    assert session.brain.get(first.id).tags == ("new",)


def test_stale_save_raises_conflict_and_stays_off_the_stack(session):
    first = session.brain.get(ids_of(session)[0])
    session.brain.update(first.id, {"content": "Theirs"}, expect_version=first.version)
    with pytest.raises(Conflict):
        cmd.push(session, cmd.SaveTraceCommand(session, first.id, {"content": "Mine"}, 1))
    assert session.undo_stack.count() == 0
    assert session.brain.get(first.id).content == "Theirs"


def test_bad_value_is_refused_with_the_core_message(session):
    with pytest.raises(InvalidArgument, match="content"):
        cmd.push(session, cmd.NewTraceCommand(session, {"content": "   "}))
    assert session.undo_stack.count() == 0 and len(ids_of(session)) == 5


def test_delete_restore_and_their_undo(session):
    two = ids_of(session)[:2]
    cmd.push(session, cmd.SetDeletedCommand(session, two, deleted=True))
    assert len(ids_of(session)) == 3 and sorted(ids_of(session, deleted=True)) == sorted(two)
    session.undo_stack.undo()
    assert len(ids_of(session)) == 5
    session.undo_stack.redo()
    cmd.push(session, cmd.SetDeletedCommand(session, two[:1], deleted=False))
    assert ids_of(session, deleted=True) == two[1:]
    session.undo_stack.undo()
    assert sorted(ids_of(session, deleted=True)) == sorted(two)


def test_merge_undo_brings_both_back(session):
    a, b = ids_of(session)[:2]
    before = session.brain.get_many([a, b])
    survivor = cmd.push(session, cmd.MergeCommand(session, [a, b], "Merged text"))
    assert survivor.content == "Merged text" and len(ids_of(session)) == 4
    session.undo_stack.undo()
    after = session.brain.get_many([a, b])
    for trace_id in (a, b):
        assert after[trace_id].content == before[trace_id].content
        assert after[trace_id].tags == before[trace_id].tags
        assert not after[trace_id].deleted


def test_bulk_tag_add_and_remove_with_undo(session):
    ids = ids_of(session)
    cmd.push(session, cmd.TagCommand(session, ids, "reviewed", add=True))
    assert all("reviewed" in t.tags for t in session.brain.get_many(ids).values())
    session.undo_stack.undo()
    assert not any("reviewed" in t.tags for t in session.brain.get_many(ids).values())
    session.undo_stack.redo()
    cmd.push(session, cmd.TagCommand(session, ids[:2], "reviewed", add=False))
    assert len(session.brain.list_ids(TraceFilter(tag="reviewed"))) == 3
    # Removing a tag nobody has changes nothing and adds no step.
    cmd.push(session, cmd.TagCommand(session, ids, "absent", add=False))
    assert session.undo_stack.count() == 2


def test_link_and_unlink_undo(session):
    a, b = ids_of(session)[:2]
    cmd.push(session, cmd.LinkCommand(session, a, b, "relates_to", add=True))
    assert [r.id for r in session.brain.related(a)] == [b]
    session.undo_stack.undo()
    assert session.brain.related(a) == []
    session.undo_stack.redo()
    assert [r.id for r in session.brain.related(a)] == [b]


def test_undo_after_someone_else_edited_reports_and_changes_nothing(session, qtbot):
    first = session.brain.get(ids_of(session)[0])
    cmd.push(session, cmd.SaveTraceCommand(session, first.id, {"content": "Mine"}, first.version))
    session.brain.update(first.id, {"content": "Theirs"}, expect_version=first.version + 1)
    with qtbot.waitSignal(session.error_reported, timeout=WAIT_MS) as reported:
        session.undo_stack.undo()
    assert "conflict" in reported.args[0]
    assert session.brain.get(first.id).content == "Theirs"
    assert session.undo_stack.count() == 0  # the step that cannot replay is dropped


def test_restore_version_from_history(session):
    first = session.brain.get(ids_of(session)[0])
    cmd.push(session, cmd.SaveTraceCommand(session, first.id, {"content": "v2"}, first.version))
    current = session.brain.get(first.id)
    old = session.brain.history(first.id)[0].after
    cmd.push(session, cmd.RestoreVersionCommand(session, current, old))
    assert session.brain.get(first.id).content == first.content
    session.undo_stack.undo()
    assert session.brain.get(first.id).content == "v2"


def test_restore_version_brings_back_its_expiry(session):
    first = session.brain.get(ids_of(session)[0])
    assert first.expires_at is None
    cmd.push(session, cmd.SaveTraceCommand(session, first.id, {"ttl_secs": 7200}, first.version))
    cmd.push(
        session, cmd.SaveTraceCommand(session, first.id, {"type": "episodic"}, first.version + 1)
    )
    history = session.brain.history(first.id)
    with_ttl = session.brain.get(first.id)
    # Back to the first version: no expiry, as it was.
    cmd.push(session, cmd.RestoreVersionCommand(session, with_ttl, history[0].after))
    back = session.brain.get(first.id)
    assert (back.type, back.expires_at) == (first.type, None)
    # And to the second: two hours from its own save, give or take the seconds since.
    cmd.push(session, cmd.RestoreVersionCommand(session, back, history[1].after))
    again = session.brain.get(first.id)
    assert abs(again.expires_at - history[1].after["expires_at"]) < 2000
    # A version already held: nothing to restore, nothing on the stack.
    steps = session.undo_stack.count()
    latest = session.brain.history(first.id)[-1].after
    held = cmd.RestoreVersionCommand(session, again, latest)
    assert cmd.push(session, held).version == again.version and not held.changed_something
    assert session.undo_stack.count() == steps


def test_two_edits_of_one_trace_undo_and_redo_in_sequence(session):
    first = session.brain.get(ids_of(session)[0])
    cmd.push(session, cmd.SaveTraceCommand(session, first.id, {"content": "v2"}, first.version))
    cmd.push(session, cmd.SaveTraceCommand(session, first.id, {"tags": ["t2"]}, first.version + 1))
    session.undo_stack.undo()
    session.undo_stack.undo()
    back = session.brain.get(first.id)
    assert (back.content, back.tags) == (first.content, first.tags)
    assert session.undo_stack.index() == 0
    session.undo_stack.redo()
    session.undo_stack.redo()
    again = session.brain.get(first.id)
    assert (again.content, again.tags) == ("v2", ("t2",))


def test_new_then_edit_undone_twice_removes_the_new_trace(session):
    trace = cmd.push(session, cmd.NewTraceCommand(session, {"content": "new"}))
    cmd.push(session, cmd.SaveTraceCommand(session, trace.id, {"content": "newer"}, 1))
    session.undo_stack.undo()
    session.undo_stack.undo()
    with pytest.raises(NotFound):
        session.brain.get(trace.id)


def test_a_command_keeps_the_batch_its_core_call_returned_and_publishes_it(session):
    heard = []
    session.bus.changed.connect(lambda changes, initiator: heard.append((changes, initiator)))
    command = cmd.NewTraceCommand(session, {"content": "Kept by its return"})
    trace = cmd.push(session, command)
    (entry,) = session.brain.history(trace.id)
    assert command.batch_id == entry.batch_id == trace.changes.batch_id
    assert heard == [(trace.changes, command)]
    session.undo_stack.undo()
    (undone, by), *_ = heard[1:]
    assert by is command and undone.removed == {trace.id}
    assert command._undo_batch_id == undone.batch_id == session.brain.journal_since(0)[-1].batch_id


def test_no_capture_of_changes_by_thread_remains():
    from memgui.core.brain import Brain
    from memgui.ui.session import BrainSession
    from tests.support.paths import ROOT

    assert not hasattr(BrainSession, "record") and not hasattr(BrainSession, "record_batch")
    assert not hasattr(Brain, "subscribe")
    for path in (ROOT / "memgui").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for word in ("get_ident", "_recording", ".subscribe("):
            assert word not in text, f"{path} holds {word}"
