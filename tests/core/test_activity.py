"""Agent activity: unreviewed changes listed newest first, the review mark kept in the brain,
reverts of one change or a batch, and every read bounded by the journal's indexes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core import activity
from memgui.core.brain import Brain
from memgui.core.errors import Conflict, InvalidArgument, NotFound
from tests.support.query_plans import plan_of, selects_run


@pytest.fixture
def agents(brain_path: Path):
    """The brain as a person's window sees it (actor gui) and as three agents write it."""
    brain = Brain.open(brain_path, actor="gui")
    yield brain
    brain.close()


def listed(brain: Brain, **kwargs) -> list[tuple[str, dict[str, int]]]:
    page = brain.unreviewed_batches(limit=200, **kwargs)
    return [(b.actor, b.ops) for b in page.batches]


def test_other_actors_changes_are_listed_newest_first_and_a_persons_are_not(agents) -> None:
    mine = agents.add("written in the window")
    stored = agents.add("stored by an agent", actor="mcp:claude-code")
    agents.update(mine.id, {"content": "edited in the window"})
    agents.update(stored.id, {"tags": ["x"]}, actor="rest")
    with agents.batch(actor="cli") as batch_id:
        other = agents.add("from a script")
        agents.link(other.id, stored.id, "relates_to")
    agents.forget(other.id, actor="sweep")
    assert listed(agents) == [
        ("sweep", {"forget": 1}),
        ("cli", {"add": 1, "link": 1}),
        ("rest", {"update": 1}),
        ("mcp:claude-code", {"add": 1}),
    ]
    page = agents.unreviewed_batches()
    assert page.batches[1].batch_id == batch_id and page.batches[1].size == 2
    assert page.next_before is None
    assert agents.unreviewed_count() == 5
    changes = agents.batch_changes(batch_id)
    assert [c.op for c in changes] == ["add", "link"]
    assert changes[0].after["content"] == "from a script"


def test_pages_walk_back_without_repeating_or_skipping(agents) -> None:
    for n in range(7):
        agents.add(f"agent note {n}", actor=f"mcp:a{n % 2}")
        agents.add(f"my note {n}")  # a person's, skipped between them
    seen: list[str] = []
    before = None
    while True:
        page = agents.unreviewed_batches(before=before, limit=3)
        seen += [agents.batch_changes(b.batch_id)[0].after["content"] for b in page.batches]
        if page.next_before is None:
            break
        before = page.next_before
    assert seen == [f"agent note {n}" for n in reversed(range(7))]


def test_marked_reviewed_leaves_the_list_and_the_count_and_survives_reopening(
    agents, brain_path: Path
) -> None:
    first = agents.add("first", actor="rest")
    agents.add("second", actor="rest")
    third = agents.add("third", actor="rest")
    batches = agents.unreviewed_batches().batches
    assert agents.unreviewed_count() == 3
    agents.mark_reviewed([batches[1].batch_id])  # the middle one, out of order
    assert agents.unreviewed_count() == 2
    agents.close()
    with Brain.open(brain_path, actor="gui") as again:
        assert [b.batch_id for b in again.unreviewed_batches().batches] == [
            batches[0].batch_id,
            batches[2].batch_id,
        ]
        mark = again.review_mark()
        assert mark.through == 0 and set(mark.batches) == {batches[1].batch_id}
        # Reviewing the oldest moves the mark over it and the one reviewed after it.
        again.mark_reviewed([batches[2].batch_id])
        mark = again.review_mark()
        assert mark.through == batches[1].last_id and mark.batches == {}
        assert again.unreviewed_count() == 1
        again.mark_reviewed(through=batches[0].last_id)
        assert again.unreviewed_count() == 0 and again.unreviewed_batches().batches == []
        assert {first.id, third.id} <= set(again.get_many([first.id, third.id]))


def test_mark_all_reviewed_keeps_what_arrived_after_the_page_was_read(agents) -> None:
    agents.add("seen", actor="rest")
    shown = agents.unreviewed_batches().batches
    agents.add("arrived meanwhile", actor="rest")
    agents.mark_reviewed(through=shown[0].last_id)
    left = agents.unreviewed_batches().batches
    assert [agents.batch_changes(b.batch_id)[0].after["content"] for b in left] == [
        "arrived meanwhile"
    ]


def test_a_person_s_writes_after_the_mark_are_passed_over(agents) -> None:
    agents.add("agent", actor="rest")
    batch = agents.unreviewed_batches().batches[0]
    for n in range(5):
        agents.add(f"mine {n}")
    agents.mark_reviewed([batch.batch_id])
    assert agents.review_mark().through == agents.last_journal_id() - 1  # its own review row


def test_a_review_is_journaled_and_its_revert_puts_the_mark_back(agents) -> None:
    agents.add("agent", actor="rest")
    batch = agents.unreviewed_batches().batches[0]
    changes = agents.mark_reviewed([batch.batch_id])
    assert changes.kind == "review" and changes.batch_id
    row = agents.batch_entries(changes.batch_id)
    assert [(e.op, e.trace_id, e.actor) for e in row] == [("review", "memgui_review", "gui")]
    assert agents.unreviewed_count() == 0
    agents.revert(changes.batch_id)
    assert agents.unreviewed_count() == 1 and agents.review_mark().through == 0


def test_a_review_revert_is_a_conflict_once_the_mark_moved_since(agents) -> None:
    agents.add("one", actor="rest")
    agents.add("two", actor="rest")
    older, newer = agents.unreviewed_batches().batches[::-1]
    first = agents.mark_reviewed([older.batch_id])
    agents.mark_reviewed([newer.batch_id])  # another window reviewed on
    with pytest.raises(Conflict, match="review mark changed since"):
        agents.revert(first.batch_id)
    assert agents.unreviewed_count() == 0


def test_revert_one_change_of_a_batch_leaves_the_others(agents) -> None:
    keep = agents.add("keep", actor="mcp:x")
    with agents.batch(actor="mcp:x") as batch_id:
        agents.update(keep.id, {"content": "changed by the agent"})
        added = agents.add("added by the agent")
    update_row = agents.batch_changes(batch_id)[0]
    agents.revert(batch_id, entry_ids=[update_row.id])
    assert agents.get(keep.id).content == "keep"
    assert agents.get(added.id).content == "added by the agent"
    states = agents.change_states(agents.batch_changes(batch_id))
    assert list(states.values()) == [activity.UNDONE, activity.AS_WRITTEN]


def test_revert_of_one_removal_brings_back_the_links_that_went_with_it(agents) -> None:
    a, b, c = agents.add("a"), agents.add("b"), agents.add("c")
    agents.link(a.id, b.id, "relates_to")
    with agents.batch(actor="rest") as batch_id:
        agents.purge(a.id)
        agents.purge(c.id)
    rows = agents.batch_changes(batch_id)
    assert [r.op for r in rows] == ["unlink", "purge", "purge"]
    agents.revert(batch_id, entry_ids=[rows[1].id])
    assert agents.get(a.id).content == "a"
    assert [r.id for r in agents.related(a.id)] == [b.id]
    assert agents.get_many([c.id]) == {}


def test_a_revert_that_meets_a_later_change_is_a_conflict_and_writes_nothing(agents) -> None:
    t = agents.add("v1")
    agents.update(t.id, {"content": "by the agent"}, actor="mcp:x")
    batch = agents.unreviewed_batches().batches[0]
    agents.update(t.id, {"content": "fixed by hand"})
    last = agents.last_journal_id()
    with pytest.raises(Conflict):
        agents.revert(batch.batch_id, entry_ids=[batch.first_id])
    assert agents.get(t.id).content == "fixed by hand"
    assert agents.last_journal_id() == last
    assert agents.change_states(agents.batch_changes(batch.batch_id)) == {
        batch.first_id: activity.CHANGED
    }


def test_other_brains_of_the_file_are_not_listed(brain_path: Path) -> None:
    with Brain.open(brain_path, "one", actor="rest") as one:
        one.add("in one")
        two = Brain(one.db, "two", "rest")  # a second brain id in the same file
        two.add("in two")
        assert len(two.unreviewed_batches().batches) == 1
        assert two.unreviewed_count() == 1
        one.add("in one again")
        two.mark_reviewed([two.unreviewed_batches().batches[0].batch_id])
        # The mark passes over the other brain's batches, on both sides of its own.
        assert two.review_mark() == activity.ReviewMark(through=3)
        assert two.unreviewed_count() == 0
        assert one.unreviewed_count() == 2


def test_the_count_stops_at_its_cap_and_leaves_out_excluded_batches(agents, monkeypatch) -> None:
    monkeypatch.setattr(activity, "COUNT_CAP", 4)
    for n in range(6):
        agents.add(f"n{n}", actor="rest")
    assert agents.unreviewed_count() == 4
    newest = agents.unreviewed_batches(limit=3).batches
    assert agents.unreviewed_count(exclude=[b.batch_id for b in newest]) == 3


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda b: b.unreviewed_batches(limit=0), "limit"),
        (lambda b: b.unreviewed_batches(limit=201), "limit"),
        (lambda b: b.unreviewed_batches(before=0), "before"),
        (lambda b: b.unreviewed_batches(exclude="b_1"), "exclude"),
        (lambda b: b.unreviewed_count(exclude=[""]), "exclude"),
        (lambda b: b.batch_changes(""), "batch_id"),
        (lambda b: b.batch_changes("b_1", limit=1001), "limit"),
        (lambda b: b.mark_reviewed([""]), "batch_ids[0]"),
        (lambda b: b.mark_reviewed(through=-1), "through"),
        (lambda b: b.revert("b_1", entry_ids=[]), "entry_ids"),
        (lambda b: b.revert("b_1", entry_ids=["1"]), "entry_ids[0]"),
    ],
)
def test_bad_arguments_name_the_field_and_write_nothing(agents, call, field: str) -> None:
    agents.add("x", actor="rest")
    last = agents.last_journal_id()
    with pytest.raises(InvalidArgument) as caught:
        call(agents)
    assert caught.value.field == field
    assert agents.last_journal_id() == last


def test_unknown_batches_and_foreign_entry_ids_are_refused(agents) -> None:
    agents.add("x", actor="rest")
    other = agents.add("y", actor="rest")
    batches = agents.unreviewed_batches().batches
    with pytest.raises(NotFound):
        agents.mark_reviewed(["b_nope"])
    with pytest.raises(InvalidArgument, match="journal ids of batch"):
        agents.revert(batches[1].batch_id, entry_ids=[batches[0].first_id])
    assert agents.get(other.id).content == "y"


def test_reads_use_the_journal_indexes_never_a_scan(agents) -> None:
    for n in range(30):
        agents.add(f"n{n}", actor="rest")
        agents.add(f"m{n}")
    batch = agents.unreviewed_batches(limit=5).batches[2]
    conn = agents.db.conn
    calls = [
        lambda: agents.unreviewed_batches(limit=5),
        lambda: agents.unreviewed_count(exclude=["b_x"]),
        lambda: agents.batch_changes(batch.batch_id),
        lambda: agents.review_mark(),
    ]
    for call in calls:
        _, statements = selects_run(conn, call)
        assert statements
        for sql, bindings in statements:
            if "memgui_journal" not in sql:
                continue
            plan = " / ".join(plan_of(conn, sql, bindings))
            assert "SCAN memgui_journal" not in plan, (sql, plan)
            # A batch's rows by the primary key or the batch index; the later rows of the
            # traces they name (to make an add or an edit whole) by the trace index.
            assert any(
                index in plan
                for index in (
                    "INTEGER PRIMARY KEY",
                    "idx_memgui_journal_batch",
                    "idx_memgui_journal_trace",
                )
            ), plan


def test_marking_what_is_reviewed_already_writes_nothing(agents) -> None:
    agents.add("x", actor="rest")
    batch = agents.unreviewed_batches().batches[0]
    assert agents.mark_reviewed([batch.batch_id]).batch_id
    last = agents.last_journal_id()
    again = agents.mark_reviewed([batch.batch_id], through=batch.last_id)
    assert again.batch_id == "" and agents.last_journal_id() == last
