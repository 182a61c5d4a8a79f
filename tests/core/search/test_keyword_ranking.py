"""Keyword ranking: bm25 over every match, exactly, whichever way the statements go."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import fulltext, keyword, stand_ins
from tests.support.paths import SHARED
from tests.support.query_plans import plan_of, selects_run

VOCABULARY = (
    "harbour crane lantern quay dusk boat rope tide gull anchor net salt wind pier "
    "kubernetes deploy upgrade plan note file link vault graph"
).split()
QUERIES = [
    "harbour", "harbour crane", "lantern OR quay", '"harbour crane"', "tide NOT gull",
    "anchor net salt", "kubernetes OR harbour", "dep*", "content: harbour", "NEAR(rope tide)",
    "gull gull", "^harbour", "what about kubernetes, harbour",
]  # fmt: skip
FILTERS = [TraceFilter(), TraceFilter(type="semantic"), TraceFilter(deleted=True)]


def ids(result) -> list[str]:
    return [t.id for t in result.traces]


def _random_brain(brain: Brain, count: int, seed: int = 5) -> None:
    rng = random.Random(seed)
    with brain.batch():
        for n in range(count):
            words = rng.choices(VOCABULARY, k=rng.randint(1, 30))
            trace = brain.add(
                " ".join(words), type=rng.choice(("episodic", "semantic")),
                tags=rng.sample(VOCABULARY, rng.randint(0, 2)), strength=rng.random(),
            )  # fmt: skip
            if n % 7 == 0:
                brain.forget(trace.id)
    brain.flush_index()


def _exact(brain: Brain, query: str, flt: TraceFilter, want: int) -> list[tuple]:
    """The best `want` by FTS5's own bm25 over every match that passes the filter."""
    ranking = keyword._Query(brain, "memgui_fts", flt)
    sql = (
        f"SELECT t.rowid, bm25(memgui_fts) AS score FROM memgui_fts CROSS JOIN memory_traces "
        f"AS t ON t.rowid = memgui_fts.rowid WHERE memgui_fts MATCH ? AND {ranking.sql.where} "
        "ORDER BY score, t.rowid LIMIT ?"
    )
    match = keyword.textindex.rewrite_query(query)
    try:
        return brain.db.conn.execute(sql, (match, *ranking.params, want)).fetchall()
    except keyword.apsw.SQLError:
        match = keyword.textindex.natural_language_query(query)
        return brain.db.conn.execute(sql, (match, *ranking.params, want)).fetchall()


def _ranked(brain: Brain, query: str, flt: TraceFilter, want: int) -> list[tuple]:
    return [(h.rowid, h.bm25) for h in keyword.keyword_ranking(brain, query, flt, want)]


@pytest.mark.parametrize("limit", [1, 4, 50])
def test_keyword_ranking_is_bm25_over_every_match(
    brain: Brain, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _random_brain(brain, 300)
    for first_max in (keyword.RANKED_FIRST_MAX, 20):  # 20: the joined statement serves too
        monkeypatch.setattr(keyword, "RANKED_FIRST_MAX", first_max)
        for query in QUERIES:
            for flt in FILTERS:
                assert _ranked(brain, query, flt, limit) == _exact(brain, query, flt, limit), (
                    query,
                    flt,
                )


@pytest.mark.parametrize("limit", [1, 3, 20])
def test_a_search_returns_the_best_by_bm25_and_strength_over_every_match(
    brain: Brain, limit: int
) -> None:
    _random_brain(brain, 300)
    for query in QUERIES:
        for flt in FILTERS:
            every = keyword.keyword_ranking(brain, query, flt, 10_000)
            best = sorted(every, key=lambda h: (-(-h.bm25 + h.strength), h.id))[:limit]
            found = brain.search(query, flt, limit=limit, record_recall=False)
            assert ids(found) == [h.id for h in best], (query, flt)


def test_the_strongest_of_equal_matches_is_found_past_the_first_candidates(
    brain: Brain,
) -> None:
    with brain.batch():
        for _ in range(12):
            brain.add("harbour crane", strength=0.1)
        strongest = brain.add("harbour crane", strength=1.0)
    assert ids(brain.search("harbour", limit=1, record_recall=False)) == [strongest.id]
    assert ids(brain.search("harbour", limit=1, mode="hybrid", record_recall=False)) == [
        strongest.id
    ]


def test_the_ranking_follows_every_change_of_a_words_document_count(brain: Brain) -> None:
    # Which of the two ranks first depends on which word is rarer (its IDF).
    with brain.batch():
        gull = brain.add("gull gull filler words here")
        tide = brain.add("tide tide filler words here")
        for n in range(20):
            brain.add(f"tide and more {n}")
    brain.flush_index()
    assert ids(brain.search("gull OR tide", limit=1, record_recall=False)) == [gull.id]
    with brain.batch():
        for n in range(60):
            brain.add(f"gull and more {n}")
    brain.flush_index()
    assert ids(brain.search("gull OR tide", limit=1, record_recall=False)) == [tide.id]
    for trace in brain.list_ids():
        if trace not in (gull.id, tide.id) and brain.get(trace).content.startswith("gull"):
            brain.purge(trace)
    brain.flush_index()
    assert ids(brain.search("gull OR tide", limit=1, record_recall=False)) == [gull.id]


def test_the_oldest_best_match_is_found_among_many(brain: Brain) -> None:
    # A word in every trace weighs next to nothing in bm25 (FTS5 floors its IDF), so the
    # blend's strength decides: one clock for all, or a slow add run decays the oldest more.
    moment = brain.now()
    brain.clock = lambda: moment
    with brain.batch():
        oldest_best = brain.add("harbour harbour harbour harbour")
        for n in range(400):
            brain.add(f"the harbour at dusk number {n} with boats")
    assert ids(brain.search("harbour", limit=1, record_recall=False)) == [oldest_best.id]


@pytest.mark.parametrize("newest_forgotten", [False, True])
def test_best_matches_that_fail_the_filter_do_not_crowd_out_live_ones(
    brain: Brain, newest_forgotten: bool
) -> None:
    with brain.batch():
        if newest_forgotten:
            live = [brain.add(f"a lantern and {n} other things in the shed") for n in range(30)]
        forgotten = [brain.add("lantern lantern lantern lantern") for _ in range(60)]
        if not newest_forgotten:
            live = [brain.add(f"a lantern and {n} other things in the shed") for n in range(30)]
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


@pytest.mark.parametrize("first_max", [keyword.RANKED_FIRST_MAX, 8])
def test_a_selective_filter_finds_its_few_matches(
    brain: Brain, monkeypatch: pytest.MonkeyPatch, first_max: int
) -> None:
    monkeypatch.setattr(keyword, "RANKED_FIRST_MAX", first_max)
    with brain.batch():
        procedures = [brain.add(f"harbour procedure {n}", type="procedural") for n in range(5)]
        for n in range(195):
            brain.add(f"harbour harbour event {n}")
    found = ids(brain.search("harbour", TraceFilter(type="procedural"), limit=5))
    assert set(found) == {t.id for t in procedures}


def test_bad_syntax_falls_back_to_the_rewrite(brain: Brain) -> None:
    with brain.batch():
        for n in range(100):
            brain.add(f"harbour crane {n}")
    found = brain.search('harbour crane "', limit=5, record_recall=False)
    assert len(found.traces) == 5


@pytest.mark.parametrize("first_max", [keyword.RANKED_FIRST_MAX, 8])
@pytest.mark.parametrize(
    "flt", [TraceFilter(), TraceFilter(scope="user"), TraceFilter(type="episodic")]
)
def test_search_plans_never_walk_a_trace_index(
    brain: Brain, flt: TraceFilter, first_max: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Next to `brain_id = ?` (and a rowid list), SQLite's planner can prefer walking a trace
    # index over the whole brain; each ranking statement must start from the index of words
    # or look traces up by rowid.
    monkeypatch.setattr(keyword, "RANKED_FIRST_MAX", first_max)
    with brain.batch():
        for n in range(300):
            brain.add(f"harbour crane {n}", scope=("user", "thread")[n % 2])
    found, statements = selects_run(
        brain.db.conn, lambda: brain.search("harbour", flt, limit=5, record_recall=False)
    )
    assert found.traces
    ranking = [
        (s, b) for s, b in statements if "memgui_fts" in s or "memgui_stems" in s or "rowid IN" in s
    ]
    assert ranking
    for sql, bindings in ranking:
        plan = plan_of(brain.db.conn, sql, bindings)
        assert not any("USING INDEX" in step or "USING COVERING INDEX" in step for step in plan), (
            sql,
            plan,
        )


def test_an_agentos_brain_read_as_it_is_ranks_the_same_either_way(
    agentos_copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not migrated (read-only), so only AgentOS's own full-text index is there.
    agentos_copy.chmod(0o444)
    try:
        with Brain.open(agentos_copy) as brain:
            assert brain.db.readonly and "memgui_fts" not in brain.db.tables
            query = "user"
            ranked_first = ids(brain.search(query, limit=5, record_recall=False))
            monkeypatch.setattr(keyword._Query, "ranked_first", lambda *args: None)
            joined = ids(brain.search(query, limit=5, record_recall=False))
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
    monkeypatch.setattr(stand_ins, "UNMIGRATED_MAX", 50)  # the fixture holds 51 traces
    path = tmp_path / "agentos.sqlite"
    path.write_bytes(AGENTOS_BRAIN.read_bytes())
    with Brain.open(path) as brain:
        for _ in range(2):  # the second search reuses the first one's verdict
            assert not brain.search("タワー", record_recall=False).traces
            assert brain.search("sampler", record_recall=False).traces  # ASCII: AgentOS's
    assert path.read_bytes() == AGENTOS_BRAIN.read_bytes()


def test_a_search_reads_the_rows_of_only_the_candidates_that_can_reach_its_best(
    brain: Brain,
) -> None:
    filler = [f"filler{n}" for n in range(80)]
    with brain.batch():
        # 20 short matches, close in bm25 and weak: any of them may end among the best 3;
        # 60 long ones, far behind in bm25: none can, whatever its strength.
        for n in range(20):
            brain.add(" ".join(["harbour", *filler[: 1 + n % 4]]), strength=0.1 + n / 100)
        for _ in range(60):
            brain.add(" ".join(["harbour", *filler]), strength=1.0)
        for n in range(400):  # no match: "harbour" is a rare word, of a high IDF
            brain.add(f"quay crane {filler[n % 80]}")
    brain.flush_index()
    every = keyword.keyword_ranking(brain, "harbour", TraceFilter(), 10_000)
    best = sorted(every, key=lambda h: (-(-h.bm25 + h.strength), h.id))[:3]
    found, statements = selects_run(
        brain.db.conn, lambda: brain.search("harbour", limit=3, record_recall=False)
    )
    assert ids(found) == [h.id for h in best]
    # Each row read once: the 20 that may reach the best 3 and the first that cannot (the
    # proof), not the next slice of 4 × as many.
    read = [
        rowid
        for sql, bindings in statements
        if "FROM memory_traces AS t NOT INDEXED WHERE rowid IN" in sql
        # now, the rowids (the last repeated to a multiple of 8), the brain id
        for rowid in dict.fromkeys(bindings[1:-1])
    ]
    assert len(read) == len(set(read)) == 21


def test_a_larger_slice_read_from_the_last_ranking_is_what_ranking_again_gives(
    brain: Brain,
) -> None:
    _random_brain(brain, 300)
    for query in QUERIES:
        for flt in FILTERS:
            first = _ranked(brain, query, flt, 20)
            again = _ranked(brain, query, flt, 80)  # from the ranking just made
            keyword._last_ranking.clear()
            assert again == _ranked(brain, query, flt, 80), (query, flt)
            assert again[:20] == first


def test_a_ranking_is_not_reused_across_a_write(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        for n in range(30):
            brain.add(f"harbour crane filler words {n}")
        brain.flush_index()
        before = _ranked(brain, "harbour", TraceFilter(), 5)
        with Brain.open(brain_path, actor="other") as other:  # another connection's commit
            best = other.add("harbour harbour harbour")
        assert _ranked(brain, "harbour", TraceFilter(), 20)[0][0] == best.rowid
        mine = brain.add("harbour harbour harbour harbour")  # this connection's own write
        brain.flush_index()
        assert _ranked(brain, "harbour", TraceFilter(), 80)[0][0] == mine.rowid
        assert before != _ranked(brain, "harbour", TraceFilter(), 5)


def test_a_connection_keeps_the_statements_of_few_filters(brain: Brain) -> None:
    brain.add("harbour crane", tags=["t1"])
    for n in range(keyword.STATEMENTS_KEPT + 10):  # a filter's values are part of its key
        found = brain.search("harbour", TraceFilter(tag=f"t{n}"), record_recall=False)
        assert len(found.traces) == (n == 1)
        assert len(keyword._statements_of[brain.db]) <= keyword.STATEMENTS_KEPT
