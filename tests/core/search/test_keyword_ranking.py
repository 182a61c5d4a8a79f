"""Keyword ranking with bounded work: rank first and check after, and the recent-matches bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import fulltext, keyword
from tests.support.paths import SHARED
from tests.support.query_plans import plan_of, selects_run


def ids(result) -> list[str]:
    return [t.id for t in result.traces]


@pytest.fixture
def small_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound of a million-trace brain, scaled down to a brain of a few hundred."""
    monkeypatch.setattr(keyword, "SCORED_MATCHES_MAX", 10)
    monkeypatch.setattr(keyword, "RARE_MATCHES_MAX", 4)
    monkeypatch.setattr(keyword, "BOUND_FROM_ROWS", 80)


@pytest.mark.usefixtures("small_bound")
def test_best_matches_that_fail_the_filter_do_not_crowd_out_live_ones(brain: Brain) -> None:
    with brain.batch():
        forgotten = [brain.add("lantern lantern lantern lantern") for _ in range(60)]
        live = [brain.add(f"a lantern and {n} other things in the shed") for n in range(30)]
        for trace in forgotten:
            brain.forget(trace.id)
    found = ids(brain.search("lantern", limit=5, record_recall=False))
    assert len(found) == 5
    assert set(found) <= {t.id for t in live}


@pytest.mark.usefixtures("small_bound")
def test_when_the_most_recent_matches_are_forgotten_older_live_ones_are_found(
    brain: Brain,
) -> None:
    with brain.batch():
        live = [brain.add(f"a lantern and {n} other things in the shed") for n in range(30)]
        forgotten = [brain.add("lantern lantern lantern lantern") for _ in range(60)]
        for trace in forgotten:
            brain.forget(trace.id)
    found = ids(brain.search("lantern", limit=5, record_recall=False))
    assert len(found) == 5
    assert set(found) <= {t.id for t in live}


def test_the_trash_is_searched_with_its_own_filter(brain: Brain) -> None:
    gone = brain.add("lantern in the trash")
    brain.add("lantern still here")
    brain.forget(gone.id)
    assert ids(brain.search("lantern", TraceFilter(deleted=True))) == [gone.id]


def test_a_very_common_word_ranks_its_most_recent_matches(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    with brain.batch():
        oldest_best = brain.add("harbour harbour harbour harbour")
        newer = [brain.add(f"the harbour at dusk number {n} with boats") for n in range(199)]
    monkeypatch.setattr(keyword, "BOUND_FROM_ROWS", 80)
    # Without the bound (fewer matches than it), the best match is found wherever it is.
    monkeypatch.setattr(keyword, "SCORED_MATCHES_MAX", 1000)
    assert ids(brain.search("harbour", limit=1, record_recall=False)) == [oldest_best.id]
    # With it, only the most recent matches are scored.
    monkeypatch.setattr(keyword, "SCORED_MATCHES_MAX", 10)
    monkeypatch.setattr(keyword, "RARE_MATCHES_MAX", 4)
    found = ids(brain.search("harbour", limit=2, record_recall=False))
    assert len(found) == 2
    assert set(found) <= {t.id for t in newer[-40:]}


@pytest.mark.usefixtures("small_bound")
def test_a_rare_word_is_ranked_over_every_match(brain: Brain) -> None:
    with brain.batch():
        old = brain.add("quay quay quay")
        for n in range(150):
            brain.add(f"filler note {n}")
        brain.add("a quay once")
    assert ids(brain.search("quay", limit=1, record_recall=False)) == [old.id]


@pytest.mark.usefixtures("small_bound")
@pytest.mark.parametrize(
    "query", ["kubernetes OR harbour", "kubernetes harbour?", "what about kubernetes, harbour"]
)
@pytest.mark.parametrize("flt", [TraceFilter(), TraceFilter(type="semantic")])
def test_a_rare_word_of_a_common_query_keeps_its_old_matches(
    brain: Brain, query: str, flt: TraceFilter
) -> None:
    with brain.batch():
        only = brain.add("the kubernetes upgrade plan", type="semantic")
        for n in range(150):
            brain.add(f"the harbour at dusk number {n}", type="semantic")
    assert ids(brain.search(query, flt, limit=5, record_recall=False))[0] == only.id


@pytest.mark.usefixtures("small_bound")
def test_a_brain_is_big_by_the_rows_it_holds_not_by_its_row_numbers(brain: Brain) -> None:
    with brain.batch():
        old_best = brain.add("harbour harbour harbour harbour")
        later = [brain.add(f"the harbour at dusk number {n}") for n in range(20)]
        filler = [brain.add(f"filler note {n}") for n in range(100)]
    brain.flush_index()
    assert fulltext.indexed_rows(brain.db, "memgui_fts") == 121
    for trace in filler:
        brain.purge(trace.id)
    brain.flush_index()
    assert fulltext.indexed_rows(brain.db, "memgui_fts") == 21
    # 21 rows (below the bound's 80) but row numbers up to 121: every match is scored.
    assert ids(brain.search("harbour", limit=1, record_recall=False)) == [old_best.id]
    assert later


@pytest.mark.usefixtures("small_bound")
def test_filters_apply_before_the_bound(brain: Brain) -> None:
    with brain.batch():
        procedures = [brain.add(f"harbour procedure {n}", type="procedural") for n in range(5)]
        for n in range(195):
            brain.add(f"harbour event {n}")
    found = ids(brain.search("harbour", TraceFilter(type="procedural"), limit=5))
    assert set(found) == {t.id for t in procedures}


@pytest.mark.usefixtures("small_bound")
def test_bad_syntax_still_falls_back_when_the_bound_probes(brain: Brain) -> None:
    with brain.batch():
        for n in range(100):
            brain.add(f"harbour crane {n}")
    found = brain.search('harbour crane "', limit=5, record_recall=False)
    assert len(found.traces) == 5


@pytest.mark.usefixtures("small_bound")
@pytest.mark.parametrize(
    "flt", [TraceFilter(), TraceFilter(scope="user"), TraceFilter(type="episodic")]
)
def test_search_plans_never_walk_a_trace_index(brain: Brain, flt: TraceFilter) -> None:
    # Next to `brain_id = ?` (and a rowid bound or list), SQLite's planner can prefer walking
    # a trace index over the whole brain; each ranking statement must start from the index
    # of words or look traces up by rowid.
    with brain.batch():
        for n in range(300):
            brain.add(f"harbour crane {n}", scope=("user", "thread")[n % 2])
    found, statements = selects_run(
        brain.db.conn, lambda: brain.search("harbour", flt, limit=5, record_recall=False)
    )
    assert found.traces
    ranking = [(s, b) for s, b in statements if "memgui_fts" in s or "rowid IN" in s]
    assert ranking
    for sql, bindings in ranking:
        plan = plan_of(brain.db.conn, sql, bindings)
        assert not any("USING INDEX" in step or "USING COVERING INDEX" in step for step in plan), (
            sql,
            plan,
        )


def test_an_agentos_brain_read_as_it_is_ranks_the_same_bounded_or_not(
    agentos_copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not migrated (read-only), so only AgentOS's own full-text index is there.
    agentos_copy.chmod(0o444)
    try:
        with Brain.open(agentos_copy) as brain:
            assert brain.db.readonly and "memgui_fts" not in brain.db.tables
            query = "user"
            monkeypatch.setattr(keyword, "BOUND_FROM_ROWS", 10**9)
            joined = ids(brain.search(query, limit=5, record_recall=False))
            monkeypatch.setattr(keyword, "BOUND_FROM_ROWS", 10)  # rank first, check after
            ranked_first = ids(brain.search(query, limit=5, record_recall=False))
    finally:
        agentos_copy.chmod(0o644)
    assert len(joined) == 5
    assert ranked_first == joined


def test_a_read_only_brain_searches_what_a_stopped_writer_left_unindexed(tmp_path: Path) -> None:
    path = tmp_path / "stopped.sqlite"
    with Brain.open(path) as brain:
        kept = brain.add("the numbat digs for termites")
        brain.flush_index()
        gone = brain.add("a second numbat")
        brain.flush_index()
        # A writer that stops before indexing: its last changes wait in the pending table,
        # and the purged row's rowid comes back for a new trace.
        brain.purge(gone.id)
        wombat = brain.add("different text entirely about a wombat")
        assert wombat.rowid == gone.rowid and fulltext.has_pending(brain.db)
        brain.close = lambda: brain.db.close()  # stop without the closing flush
    path.chmod(0o444)
    try:
        with Brain.open(path) as reader:
            assert reader.read_only and fulltext.has_pending(reader.db)
            found = reader.search("numbat", record_recall=False).traces
            assert [t.id for t in found] == [kept.id]  # not the wombat in the purged row
            assert [t.id for t in reader.search("wombat", record_recall=False).traces] == [
                wombat.id
            ]
            assert reader.search("termites OR wombat", record_recall=False).traces
    finally:
        path.chmod(0o644)


AGENTOS_BRAIN = SHARED / "fixtures" / "agentos" / "brain.sqlite"


def test_an_agentos_brain_not_migrated_is_searched_in_every_script(tmp_path: Path) -> None:
    path = tmp_path / "agentos.sqlite"
    path.write_bytes(AGENTOS_BRAIN.read_bytes())
    before = path.read_bytes()
    with Brain.open(path) as brain:
        assert "memgui_fts" not in brain.db.tables  # AgentOS's own porter ascii index only
        found = {
            query: [t.content[:18] for t in brain.search(query, record_recall=False).traces]
            for query in ("タワー", "москва", "cafe", "naive", "東京")
        }
        assert all(found.values()), found
        assert "CSV unicode: Züric" in found["東京"]  # unspaced scripts: a word inside a run
        # Another program writes: the in-memory index follows.
        with Brain.open(path) as agent:  # its write migrates the file: memgui's own index
            agent.add("Обед в Москве в полдень")
        assert len(brain.search("москве", record_recall=False).traces) == 1
    assert before != path.read_bytes()  # (the agent's write, not the searches)


def test_a_larger_unmigrated_brain_keeps_to_agentos_own_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword, "UNMIGRATED_MAX", 50)  # the fixture holds 51 traces
    path = tmp_path / "agentos.sqlite"
    path.write_bytes(AGENTOS_BRAIN.read_bytes())
    with Brain.open(path) as brain:
        for _ in range(2):  # the second search reuses the first one's verdict
            assert not brain.search("タワー", record_recall=False).traces
            assert brain.search("sampler", record_recall=False).traces  # ASCII: AgentOS's
    assert path.read_bytes() == AGENTOS_BRAIN.read_bytes()
