"""Agent activity on both engines (`core/activity.py`): the same batches listed newest first,
the same review mark kept in the brain, reviewed and reverted alike on a SQLite file and on a
real PostgreSQL server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memgui.core import activity
from memgui.core.engines import open_store
from memgui.core.errors import Conflict, InvalidArgument, NotFound

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server

Opener = Callable[[], Any]


@pytest.fixture(params=["sqlite", "postgresql"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens the brain as a person's window sees it (actor gui), each call a new connection."""
    where: Any = tmp_path / "brain.sqlite"
    if request.param == "postgresql":
        where = request.getfixturevalue("pg_address")
    return lambda: open_store(where, "team", actor="gui")


@pytest.fixture
def agents(opener: Opener) -> Iterator[Any]:
    brain = opener()
    yield brain
    brain.close()


def listed(brain: Any) -> list[tuple[str, dict[str, int]]]:
    return [(b.actor, b.ops) for b in brain.unreviewed_batches(limit=200).batches]


def first_content(brain: Any, batch: activity.ActivityBatch) -> str:
    return str(brain.batch_changes(batch.batch_id)[0].after["content"])


def test_other_actors_batches_are_listed_newest_first_and_a_persons_are_not(agents) -> None:
    mine = agents.add("written in the window")
    stored = agents.add("stored by an agent", actor="mcp:claude-code")
    agents.update(mine.id, {"content": "edited in the window"})
    agents.update(stored.id, {"tags": ["x"]}, actor="rest")
    other = agents.add("from a script", actor="cli")
    agents.link(other.id, stored.id, "relates_to", actor="cli")
    agents.forget(other.id, actor="sweep")
    assert listed(agents) == [
        ("sweep", {"forget": 1}),
        ("cli", {"link": 1}),
        ("cli", {"add": 1}),
        ("rest", {"update": 1}),
        ("mcp:claude-code", {"add": 1}),
    ]
    page = agents.unreviewed_batches()
    assert page.next_before is None and page.batches[2].size == 1
    assert agents.unreviewed_count() == 5
    assert first_content(agents, page.batches[2]) == "from a script"


def test_pages_walk_back_without_repeating_or_skipping(agents) -> None:
    for n in range(7):
        agents.add(f"agent note {n}", actor=f"mcp:a{n % 2}")
        agents.add(f"my note {n}")  # a person's, passed over
    seen: list[str] = []
    before = None
    while True:
        page = agents.unreviewed_batches(before=before, limit=3)
        seen += [first_content(agents, b) for b in page.batches]
        if page.next_before is None:
            break
        before = page.next_before
    assert seen == [f"agent note {n}" for n in reversed(range(7))]


def test_marked_reviewed_leaves_the_list_and_survives_reopening(agents, opener) -> None:
    for word in ("first", "second", "third"):
        agents.add(word, actor="rest")
    batches = agents.unreviewed_batches().batches
    agents.mark_reviewed([batches[1].batch_id])  # the middle one, out of order
    assert agents.unreviewed_count() == 2
    agents.close()
    again = opener()
    try:
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
        again.mark_reviewed(through=batches[0].last_id)
        assert again.unreviewed_count() == 0 and again.unreviewed_batches().batches == []
    finally:
        again.close()


def test_mark_all_reviewed_keeps_what_arrived_after_the_page_was_read(agents) -> None:
    agents.add("seen", actor="rest")
    shown = agents.unreviewed_batches().batches
    agents.add("arrived meanwhile", actor="rest")
    agents.mark_reviewed(through=shown[0].last_id)
    left = agents.unreviewed_batches().batches
    assert [first_content(agents, b) for b in left] == ["arrived meanwhile"]


def test_a_review_is_journaled_and_its_revert_puts_the_mark_back(agents) -> None:
    agents.add("agent", actor="rest")
    batch = agents.unreviewed_batches().batches[0]
    changes = agents.mark_reviewed([batch.batch_id])
    assert changes.kind == "review" and changes.batch_id
    rows = agents.batch_entries(changes.batch_id)
    assert [(e.op, e.trace_id, e.actor) for e in rows] == [("review", "memgui_review", "gui")]
    assert agents.unreviewed_count() == 0
    # Nothing new to mark: nothing written.
    assert agents.mark_reviewed([batch.batch_id], through=batch.last_id).batch_id == ""
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


def test_revert_one_change_of_a_batch_and_what_each_change_is_like_now(agents) -> None:
    a, b = agents.add("a"), agents.add("b")
    agents.link(a.id, b.id, "relates_to")
    agents.purge(a.id, actor="rest")  # the link goes with it, in the same batch
    batch = agents.unreviewed_batches().batches[0]
    rows = agents.batch_changes(batch.batch_id)
    assert [r.op for r in rows] == ["unlink", "purge"]
    agents.revert(batch.batch_id, entry_ids=[rows[1].id])
    assert agents.get(a.id).content == "a"
    assert [r.id for r in agents.related(a.id)] == [b.id]
    # The trace came back with the link that went with it: both changes undone.
    assert agents.change_states(rows) == {r.id: activity.UNDONE for r in rows}
    agents.update(b.id, {"content": "b by hand"})
    edit = agents.update(b.id, {"content": "b by an agent"}, actor="mcp:x").changes
    agents.update(b.id, {"content": "b fixed by hand"})
    entries = agents.batch_changes(edit.batch_id)
    assert agents.change_states(entries) == {entries[0].id: activity.CHANGED}
    with pytest.raises(Conflict):
        agents.revert(edit.batch_id)
    assert agents.get(b.id).content == "b fixed by hand"


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
    ],
)
def test_bad_arguments_name_the_field_and_write_nothing(agents, call, field: str) -> None:
    agents.add("x", actor="rest")
    with pytest.raises(InvalidArgument) as caught:
        call(agents)
    assert caught.value.field == field
    assert agents.review_mark() == activity.ReviewMark()
    assert agents.unreviewed_count() == 1


def test_an_unknown_batch_is_not_found_and_nothing_is_marked(agents) -> None:
    agents.add("x", actor="rest")
    with pytest.raises(NotFound):
        agents.mark_reviewed(["b_nope"])
    assert agents.review_mark() == activity.ReviewMark() and agents.unreviewed_count() == 1
