"""Traces: add, get, list, update (merge-patch, compare-and-set), forget, restore, purge, merge."""

from __future__ import annotations

import json

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import Conflict, InvalidArgument, NotFound
from memgui.core.links import links_of
from memgui.core.model import TraceFilter


def count_rows(brain: Brain) -> tuple[int, int]:
    conn = brain.db.conn
    traces = conn.execute("SELECT count(*) FROM memory_traces").fetchone()[0]
    journal = conn.execute("SELECT count(*) FROM memgui_journal").fetchone()[0]
    return traces, journal


def test_add_then_get_round_trips_every_field(brain: Brain) -> None:
    t = brain.add(
        "Deploys go through the staging cluster first",
        type="procedural",
        scope="organization",
        scope_id="acme",
        category="DECISION",
        tags=["deploy", "Ops"],
        ttl_secs=3600,
    )
    got = brain.get(t.id)
    assert got.id.startswith("mt_")
    assert (got.type, got.scope, got.scope_id, got.category) == (
        "procedural",
        "organization",
        "acme",
        "DECISION",
    )
    assert got.tags == ("deploy", "Ops")
    assert got.version == 1 and not got.deleted
    assert got.expires_at == got.created_at + 3_600_000
    assert got.metadata["scopeId"] == "acme"  # mirrored for AgentOS
    assert set(got.to_json()) == {
        "id",
        "title",
        "type",
        "scope",
        "scope_id",
        "category",
        "content",
        "tags",
        "strength",
        "created_at",
        "last_accessed",
        "retrieval_count",
        "expires_at",
        "deleted",
        "version",
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"content": ""}, "content must not be empty (got '')"),
        ({"content": "   "}, "content must not be empty (got '   ')"),
        ({"content": "x", "type": "dream"}, "type must be one of"),
        ({"content": "x", "scope": "galaxy"}, "scope must be one of"),
        ({"content": "x", "category": "decision"}, "category must be one of"),
        ({"content": "x", "tags": "a,b"}, "tags must be a list of strings"),
        ({"content": "x", "tags": ["ok", ""]}, "tags[1] must be a non-empty string"),
        ({"content": "x", "tags": [3]}, "tags[0] must be a non-empty string"),
        ({"content": "x", "ttl_secs": 0}, "ttl_secs must be between 1 and 3155760000 (got 0)"),
        ({"content": "x", "ttl_secs": -1}, "ttl_secs must be between 1 and 3155760000 (got -1)"),
        (
            {"content": "x", "ttl_secs": 3_155_760_001},
            "ttl_secs must be between 1 and 3155760000 (got 3155760001)",
        ),
        ({"content": "x", "strength": 2}, "strength must be between 0 and 1"),
        ({"content": "x", "metadata": [1]}, "metadata must be a JSON object"),
    ],
)
def test_add_rejects_bad_input_and_writes_nothing(brain: Brain, kwargs, message) -> None:
    brain.add("seed")
    before = count_rows(brain)
    content = kwargs.pop("content")
    with pytest.raises(InvalidArgument) as err:
        brain.add(content, **kwargs)
    assert message in str(err.value)
    assert str(err.value).startswith("invalid argument: ")
    assert count_rows(brain) == before


def test_ttl_bounds_are_inclusive(brain: Brain) -> None:
    assert brain.add("a", ttl_secs=1).expires_at is not None
    assert brain.add("b", ttl_secs=3_155_760_000).expires_at is not None


@pytest.mark.parametrize("limit", [0, -1, 201, 2**63 - 1, -(2**63)])
def test_list_limit_out_of_bounds(brain: Brain, limit: int) -> None:
    with pytest.raises(InvalidArgument, match=rf"limit must be between 1 and 200 \(got {limit}\)"):
        brain.list_traces(limit=limit)


def test_list_filters_and_tag_is_exact_and_case_sensitive(brain: Brain) -> None:
    a = brain.add("alpha", type="semantic", scope="user", scope_id="u1", tags=["Red"])
    b = brain.add("beta", type="episodic", scope="thread", scope_id="t1", tags=["red"])
    c = brain.add("gamma", category="TODO", tags=["redder"])
    brain.forget(c.id)
    assert [t.id for t in brain.list_traces(TraceFilter(tag="red"))] == [b.id]
    assert [t.id for t in brain.list_traces(TraceFilter(tag="Red"))] == [a.id]
    assert [t.id for t in brain.list_traces(TraceFilter(scope_id="u1"))] == [a.id]
    assert [t.id for t in brain.list_traces(TraceFilter(type="episodic"))] == [b.id]
    assert brain.list_traces(TraceFilter(category="TODO")) == []
    assert [t.id for t in brain.list_traces(TraceFilter(deleted=True))] == [c.id]
    assert len(brain.list_traces(TraceFilter(include_deleted=True))) == 3
    assert brain.count(TraceFilter()) == 2
    assert brain.list_ids(TraceFilter(), order="content", descending=False) == [a.id, b.id]


def test_get_unknown_id_names_it(brain: Brain) -> None:
    with pytest.raises(NotFound, match="missing_id='mt_nope'"):
        brain.get("mt_nope")


def test_update_is_a_merge_patch_with_compare_and_set(brain: Brain) -> None:
    t = brain.add("first", tags=["a"], scope_id="s", category="TODO", ttl_secs=60)
    u = brain.update(t.id, {"content": "second", "tags": None}, expect_version=1)
    assert (u.content, u.tags, u.scope_id, u.category, u.version) == ("second", (), "s", "TODO", 2)
    u = brain.update(t.id, {"category": None, "ttl_secs": None, "scope_id": None})
    assert (u.category, u.expires_at, u.scope_id) == (None, None, "")
    before = count_rows(brain)
    with pytest.raises(Conflict) as err:
        brain.update(t.id, {"content": "stale"}, expect_version=1)
    assert err.value.trace_id == t.id and err.value.actual == 3
    assert t.id in str(err.value)
    assert brain.get(t.id).content == "second"
    assert count_rows(brain) == before


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({}, "patch must name at least one field"),
        ({"content": None}, "content must be a string"),
        ({"content": ""}, "content must not be empty"),
        ({"content": " \t"}, "content must not be empty (got ' \\t')"),
        ({"scope": None}, "scope must be one of"),
        ({"ttl_secs": 0}, "ttl_secs must be between 1 and 3155760000 (got 0)"),
        ({"colour": "red"}, "patch may only set"),
    ],
)
def test_update_rejects_bad_patches(brain: Brain, patch, message) -> None:
    t = brain.add("keep me")
    before = count_rows(brain)
    with pytest.raises(InvalidArgument) as err:
        brain.update(t.id, patch)
    assert message in str(err.value)
    assert count_rows(brain) == before and brain.get(t.id).version == 1


def test_forget_restore_purge(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.link(a.id, b.id, "relates_to")
    assert brain.forget(a.id).deleted
    assert brain.related(b.id) == []  # hidden while forgotten
    assert not brain.restore(a.id).deleted
    assert [r.id for r in brain.related(b.id)] == [a.id]
    brain.purge(a.id)
    with pytest.raises(NotFound):
        brain.get(a.id)
    links = brain.db.conn.execute("SELECT count(*) FROM memory_links").fetchone()[0]
    assert links == 0


def test_merge_follows_the_seed_rules(brain: Brain) -> None:
    a = brain.add("likes tea", tags=["drink"])
    b = brain.add("likes green tea", tags=["tea", "drink"])
    c = brain.add("drinks it hot")
    brain.search("green", record_recall=True)  # b is now the most retrieved
    merged = brain.merge([a.id, b.id, c.id])
    assert merged.id == b.id
    assert merged.content == "likes tea | likes green tea | drinks it hot"
    assert merged.tags == ("drink", "tea")
    assert merged.retrieval_count == 1
    assert brain.get(a.id).deleted and brain.get(c.id).deleted
    tie = brain.merge([brain.add("x").id, brain.add("y").id], content="x and y")
    assert tie.content == "x and y"


@pytest.mark.parametrize("ids", [[], ["one"], ["dup", "dup"]])
def test_merge_needs_two_live_traces(brain: Brain, ids) -> None:
    with pytest.raises(InvalidArgument, match="at least 2"):
        brain.merge(ids)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda b, t: b.update("", {"content": "x"}), "id"),
        (lambda b, t: b.forget(""), "id"),
        (lambda b, t: b.restore(" "), "id"),
        (lambda b, t: b.purge(""), "id"),
        (lambda b, t: b.merge([t, ""]), "ids[1]"),
        (lambda b, t: b.merge(["", t], content="  "), "ids[0]"),
    ],
)
def test_empty_ids_are_invalid_not_missing(brain: Brain, call, field: str) -> None:
    t = brain.add("untouched")
    before = count_rows(brain)
    with pytest.raises(InvalidArgument) as err:
        call(brain, t.id)
    assert err.value.field == field
    assert f"{field} must be a non-empty trace id (got '" in str(err.value)
    assert count_rows(brain) == before


def test_filter_tag_message_shows_the_value(brain: Brain) -> None:
    with pytest.raises(InvalidArgument, match=r"tag must be a non-empty string \(got ''\)"):
        brain.list_traces(TraceFilter(tag=""))


def test_merge_refuses_deleted_and_unknown(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.forget(b.id)
    with pytest.raises(InvalidArgument, match="live traces only"):
        brain.merge([a.id, b.id])
    with pytest.raises(NotFound, match="missing_id='mt_x'"):
        brain.merge([a.id, "mt_x"])
    assert not brain.get(a.id).deleted


def test_sweep_expires_strictly_after_the_deadline(brain: Brain) -> None:
    now = [1_000_000]
    brain.clock = lambda: now[0]
    short = brain.add("short", ttl_secs=10)
    keep = brain.add("keep")
    brain.link(short.id, keep.id, "caused_by")
    now[0] = short.expires_at  # exactly at the deadline: survives
    assert brain.sweep().expired == 0
    now[0] += 1
    assert brain.sweep().expired == 1
    with pytest.raises(NotFound):
        brain.get(short.id)
    assert brain.related(keep.id) == []
    assert [e.op for e in brain.history(keep.id)][-1] == "unlink"


@pytest.mark.parametrize(
    "text",
    [
        '{"content_hash":"abc","decay":{"stability":86400000},"scopeId":"u1"}',
        '{"id":123456789012345678901234567890}',  # past 64 bits: kept an int
        '{"n":18446744073709551615,"m":-9223372036854775808}',
        '{"lone":"\\ud800"}',  # a lone surrogate, as JSON.stringify writes it
        '{"x":NaN,"y":1e400}',
        '{"a":1,"a":2}',
        '["tag","été","\\u00e9"]',
        "[1.5, -0, 0.1]",
    ],
)
def test_json_columns_read_exactly_as_json_reads_them(text: str) -> None:
    from memgui.core.storage.store import _loads

    default = [] if text.startswith("[") else {}
    expected = json.loads(text)
    got = _loads(text, default)
    assert repr(got) == repr(expected)  # repr: nan == nan, and int stays int
    assert _loads("{not json", {}) == {} and _loads('["a"]', {}) == {} and _loads(None, []) == []


@pytest.mark.parametrize(
    "text",
    [
        '["harbour", "crane"]',
        '["a", 1, null, "b", ["c"]]',  # only the strings are tags
        "[]",
        '{"not": "a list"}',
        "[not json",
        '["\\ud800"]',
        None,
        7,
        "[" + ", ".join(f'"tag{n}"' for n in range(60)) + "]",  # past the texts kept
    ],
)
def test_a_rows_tags_read_alike_each_time_and_each_a_list_of_its_own(text: object) -> None:
    from memgui.core.storage.store import _loads, row_tags

    expected = [t for t in _loads(text, []) if isinstance(t, str)]
    first = row_tags(text)
    assert first == expected and type(first) is list
    first.append("changed by its reader")
    again = row_tags(text)
    assert again == expected and again is not first


def test_reading_by_an_empty_id_is_invalid_not_missing(brain: Brain) -> None:
    brain.add("something")
    for read in (brain.get, brain.history):
        with pytest.raises(InvalidArgument, match=r"id must be a non-empty trace id \(got ''\)"):
            read("")


def test_merge_moves_the_merged_traces_links_to_the_survivor(brain: Brain) -> None:
    survivor = brain.add("survivor").id
    brain.search("survivor")  # the most retrieved survives
    merged = brain.add("merged away").id
    x, y, z = (brain.add(f"other {n}").id for n in "xyz")
    brain.link(merged, x, "relates_to")
    brain.link(merged, y, "supersedes")
    brain.link(z, merged, "caused_by")
    brain.link(survivor, merged, "relates_to")  # between the two: not carried
    brain.link(survivor, x, "relates_to")  # the survivor has it already
    survivor_before = sorted((r.id, r.kind) for r in brain.related(survivor))
    rows_before = sorted(map(str, links_of(brain, merged)))
    start = brain.last_journal_id()
    assert brain.merge([merged, survivor]).id == survivor
    carried = sorted((r.id, r.kind) for r in brain.related(survivor))
    assert carried == sorted([(x, "relates_to"), (y, "supersedes"), (z, "caused")])
    entries = brain.journal_since(start)
    assert [e.op for e in entries if e.op == "link"] == ["link", "link"]
    # Moved, not copied: the merged trace keeps none (the link between the two only went).
    assert links_of(brain, merged) == []
    assert [e.op for e in entries if e.op == "unlink"] == ["unlink"] * 4
    # Reverting the merge puts every link back as it was.
    brain.revert(entries[0].batch_id)
    assert sorted((r.id, r.kind) for r in brain.related(survivor)) == survivor_before
    assert sorted(map(str, links_of(brain, merged))) == rows_before


def test_merge_keeps_no_expiry_when_one_had_none_and_a_category(brain: Brain) -> None:
    lasting = brain.add("kept for good", category="DECISION")
    brain.search("kept")  # the most retrieved survives
    passing = brain.add("gone soon", ttl_secs=100)
    merged = brain.merge([passing.id, lasting.id])
    assert merged.id == lasting.id and merged.expires_at is None
    a = brain.add("a", ttl_secs=100)
    brain.search("a")
    b = brain.add("b", ttl_secs=5000, category="PATTERN")
    later = brain.get(b.id).expires_at
    both = brain.merge([a.id, b.id])
    assert both.id == a.id and both.expires_at == later and both.category == "PATTERN"
