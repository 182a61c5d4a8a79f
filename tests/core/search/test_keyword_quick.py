"""The keyword answer in one ranking and one row read: the general way's answer, exactly,
and the general way's whenever the quick one cannot prove its own."""

from __future__ import annotations

import random
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import keyword, keyword_quick, searching, stems
from tests.support.query_plans import selects_run

WORDS = (
    "harbour crane lantern quay dusk boat rope tide gull anchor net salt wind pier "
    "deploy deployed deploys planning plans"
).split()
# Rarer words beside them, so that bm25 tells the matches apart as in an agent's brain.
RARE = [f"{a}{b}" for a in ("mar", "tel", "zon", "pir", "qua", "dov") for b in "kalovesi"]
QUERIES = ["harbour", "harbour crane", "tide telo", "anchor zonv", "deploy", "plans pirs"]
FILTERS = [
    TraceFilter(),
    TraceFilter(type="semantic"),
    TraceFilter(scope="user"),
    TraceFilter(deleted=True),
]


def _fill(brain: Brain, count: int, seed: int = 3, weakest: float = 0.0) -> None:
    """Random texts of `WORDS`, strengths from `weakest` to 1, every sixth forgotten."""
    rng = random.Random(seed)
    with brain.batch():
        for n in range(count):
            trace = brain.add(
                " ".join(rng.choices(WORDS, k=rng.randint(0, 3)) + rng.choices(RARE, k=6)),
                type=rng.choice(("episodic", "semantic")), scope=rng.choice(("user", "thread")),
                tags=rng.sample(WORDS, rng.randint(0, 2)), strength=rng.uniform(weakest, 1.0),
            )  # fmt: skip
            if n % 6 == 0:
                brain.forget(trace.id)
    brain.flush_index()


def _general(brain: Brain, query: str, flt: TraceFilter, limit: int) -> list | None:
    return searching.keyword_rows(brain, query, flt, limit, quick=False)


@pytest.mark.parametrize("weakest", [0.0, 0.9])
@pytest.mark.parametrize("limit", [1, 3, 10, 50])
def test_the_quick_answer_is_the_general_answer(brain: Brain, limit: int, weakest: float) -> None:
    _fill(brain, 400, weakest=weakest)
    now = brain.now()
    brain.clock = lambda: now
    searching.keyword_rows(brain, "harbour", TraceFilter(), limit)  # nothing waits: known
    answered = 0
    for query in QUERIES:
        for flt in FILTERS:
            quick = keyword_quick.rows(brain, query, flt, limit)
            general = _general(brain, query, flt, limit)
            assert general is not None
            if quick is not None:
                answered += 1
                assert quick == general, (query, flt)
            assert searching.keyword_rows(brain, query, flt, limit) == general, (query, flt)
    if weakest:  # strengths alike (as an agent's fresh memories): the ranking proves most
        assert answered >= len(QUERIES) * len(FILTERS) // 2


def test_a_plain_search_runs_one_statement_ranking_and_reading_the_rows(brain: Brain) -> None:
    _fill(brain, 300)
    searching.keyword_rows(brain, "harbour", TraceFilter(), 10)  # nothing waits: known
    statements: list[tuple[str, tuple]] = []

    def remember(_cursor: apsw.Cursor, sql: str, bindings: tuple | None) -> bool:
        statements.append((sql, bindings or ()))
        return True

    brain.db.conn.exec_trace = remember  # every statement, not only the SELECTs
    try:
        found = searching.keyword_rows(brain, "anchor net", TraceFilter(), 10)
    finally:
        brain.db.conn.exec_trace = None
    assert found
    # The best 2 × limit + 4 by bm25 (their bindings: MATCH, LIMIT, now, brain id) and
    # their rows, in one statement; what the brain is at is read from the connection, not
    # asked by a statement of its own.
    [(sql, bindings)] = statements
    assert f"FROM {stems.TABLE}" in sql and "JOIN memory_traces AS t" in sql
    assert bindings[1] == keyword_quick.ranked_for(10) and bindings[3] == brain.brain_id


def test_the_rows_are_read_only_until_they_prove_the_answer(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(brain, 400, weakest=0.9)
    flt = TraceFilter()
    searching.keyword_rows(brain, "harbour", flt, 10)
    read: list[int] = []
    proved = keyword_quick._proved

    def counted(ranked, limit, take):  # how many ranked rows the proof stepped to
        def rows():
            for row in ranked:
                read.append(row[2])
                yield row

        return proved(rows(), limit, take)

    monkeypatch.setattr(keyword_quick, "_proved", counted)
    early = 0
    for query in ("harbour", "harbour crane", "deploy", "plans"):
        read.clear()
        found = keyword_quick.rows(brain, query, flt, 3)
        assert found == _general(brain, query, flt, 3), query
        assert len(read) <= keyword_quick.ranked_for(3)
        early += len(read) < keyword_quick.ranked_for(3)
    assert early  # strengths alike: the ranking's first rows prove most answers


def test_a_proof_steps_to_the_first_row_it_cannot_leave_out() -> None:
    # (bm25, decayed strength, rowid, id): each row's bm25 a whole strength below the one
    # before, so the third row already cannot reach the best two.
    ranked = [(-10.0 + 2 * n, 0.5, n + 1, f"mt_{n}") for n in range(8)]
    stepped: list[int] = []

    def rows():
        for row in ranked:
            stepped.append(row[2])
            yield row

    assert keyword_quick._proved(rows(), 2, 8) == [(1, "mt_0"), (2, "mt_1")]
    assert stepped == [1, 2, 3]
    # Rows the filter leaves out (rowid NULL) count as ranked, not as found.
    left_out = [(bm25, strength, None, None) for bm25, strength, _, _ in ranked[:2]]
    assert keyword_quick._proved(iter(left_out + ranked[2:]), 2, 8) == [
        (3, "mt_2"),
        (4, "mt_3"),
    ]
    # Scores that lie close: every row read, and the LIMIT stopped the ranking: not proved.
    close = [(-10.0 + 0.01 * n, 0.5 - 0.05 * n, n + 1, f"mt_{n}") for n in range(8)]
    assert keyword_quick._proved(iter(close), 2, 8) is None
    assert keyword_quick._proved(iter(close), 2, 9) == [(1, "mt_0"), (2, "mt_1")]


def test_an_answer_it_cannot_prove_is_the_general_ways(brain: Brain) -> None:
    # Forty equal matches: the ranking's order says nothing of their strength.
    strengths = [round(0.02 * n, 2) for n in range(40)]
    random.Random(4).shuffle(strengths)
    with brain.batch():
        made = {brain.add("harbour crane", strength=s).id: s for s in strengths}
    brain.flush_index()
    searching.keyword_rows(brain, "harbour", TraceFilter(), 10)
    assert keyword_quick.rows(brain, "harbour", TraceFilter(), 10) is None
    found = searching.keyword_rows(brain, "harbour", TraceFilter(), 10)
    assert found is not None
    strongest = sorted(made, key=lambda i: -made[i])[:10]
    assert [row[1] for row in found] == strongest


def test_rows_waiting_for_the_index_are_the_general_ways(brain: Brain) -> None:
    _fill(brain, 300, weakest=0.9)
    searching.keyword_rows(brain, "telo", TraceFilter(), 10)
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) is not None
    added = brain.add("telo telo telo", strength=1.0)  # marked, not yet indexed
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) is None
    found = searching.keyword_rows(brain, "telo", TraceFilter(), 10)
    assert found is not None and found[0][1] == added.id
    # That search indexed it (a write of its own); the next finds nothing waiting.
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) is None
    assert searching.keyword_rows(brain, "telo", TraceFilter(), 10) == found
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) == found


@pytest.mark.parametrize("query", ["harb*", "NEAR(tide telo)", "content: harbour", "^tide"])
def test_fts5_syntax_the_stems_cannot_match_is_the_general_ways(brain: Brain, query: str) -> None:
    _fill(brain, 100)
    searching.keyword_rows(brain, "harbour", TraceFilter(), 10)
    assert keyword.query_pieces(query)[2] is None  # memgui_fts answers, with its word forms
    assert keyword_quick.rows(brain, query, TraceFilter(), 10) is None
    assert searching.keyword_rows(brain, query, TraceFilter(), 10)


@pytest.mark.parametrize("query", ['"harbour crane"', "harbour OR quay", "tide NOT telo"])
def test_fts5_syntax_the_stems_match_is_answered_alike(brain: Brain, query: str) -> None:
    _fill(brain, 300, weakest=0.9)
    searching.keyword_rows(brain, "harbour", TraceFilter(), 10)
    quick = keyword_quick.rows(brain, query, TraceFilter(), 10)
    assert quick is None or quick == _general(brain, query, TraceFilter(), 10)


def test_a_limit_past_its_bound_and_a_query_of_no_words(brain: Brain) -> None:
    _fill(brain, 100)
    searching.keyword_rows(brain, "harbour", TraceFilter(), 10)
    assert keyword_quick.rows(brain, "harbour", TraceFilter(), keyword_quick.LIMIT_MAX + 1) is None
    assert keyword_quick.rows(brain, "... !!", TraceFilter(), 10) == []
    assert keyword_quick.rows(brain, "zzzz", TraceFilter(), 10) == []


def test_a_read_only_brain_is_the_general_ways(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        _fill(brain, 100)
    brain_path.chmod(0o444)
    try:
        with Brain.open(brain_path) as reader:
            assert reader.read_only
            assert keyword_quick.rows(reader, "harbour", TraceFilter(), 10) is None
            assert searching.keyword_rows(reader, "harbour", TraceFilter(), 10)
    finally:
        brain_path.chmod(0o644)


def test_another_programs_write_between_its_statements_is_the_general_ways(
    brain: Brain, brain_path: Path
) -> None:
    _fill(brain, 300, weakest=0.9)
    searching.keyword_rows(brain, "telo", TraceFilter(), 10)
    first = keyword_quick.rows(brain, "telo", TraceFilter(), 10)
    assert first is not None
    best = first[0][1]
    now = brain.now()
    writes: list[str] = []

    def clock() -> int:  # read between the ranking and the rows: another program writes
        if not writes:
            other = apsw.Connection(str(brain_path))
            other.execute("UPDATE memory_traces SET content = 'gone' WHERE id = ?", (best,))
            other.close()
            writes.append(best)
        return now

    brain.clock = clock
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) is None
    assert writes == [best]
    found = searching.keyword_rows(brain, "telo", TraceFilter(), 10)
    assert found is not None and best not in [row[1] for row in found]


def test_another_programs_rows_waiting_since_its_last_statement_are_the_general_ways(
    brain: Brain, brain_path: Path
) -> None:
    _fill(brain, 300, weakest=0.9)
    searching.keyword_rows(brain, "telo", TraceFilter(), 10)
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) is not None
    # Another program adds a match and leaves it waiting for the index; this connection has
    # run no statement since, so what it read last says nothing waits.
    other = Brain.open(brain_path, actor="other")
    try:
        added = other.add("telo telo telo", strength=1.0)
        waiting = other.db.conn.execute("SELECT rowid FROM memgui_fts_pending").fetchall()
        assert waiting  # marked, not indexed
        assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) is None
        found = searching.keyword_rows(brain, "telo", TraceFilter(), 10)
    finally:
        other.close()
    assert found is not None and found[0][1] == added.id
    # That search indexed it (a write): the next one learns again that nothing waits.
    assert searching.keyword_rows(brain, "telo", TraceFilter(), 10) == found
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) == found


def test_another_programs_only_match_waiting_is_not_answered_with_nothing(
    brain: Brain, brain_path: Path
) -> None:
    _fill(brain, 300, weakest=0.9)
    searching.keyword_rows(brain, "telo", TraceFilter(), 10)
    assert keyword_quick.rows(brain, "lighthouse", TraceFilter(), 10) == []
    other = Brain.open(brain_path, actor="other")
    try:
        added = other.add("lighthouse keeper", strength=1.0)  # marked, not indexed
        # The index holds no match: the ranking finds none, and the answer is still not [].
        assert keyword_quick.rows(brain, "lighthouse", TraceFilter(), 10) is None
        found = searching.keyword_rows(brain, "lighthouse", TraceFilter(), 10)
    finally:
        other.close()
    assert found is not None and [row[1] for row in found] == [added.id]


def test_a_commit_that_changes_no_row_stops_it_for_one_search_only(brain: Brain) -> None:
    _fill(brain, 300, weakest=0.9)
    found = searching.keyword_rows(brain, "telo", TraceFilter(), 10)
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) == found
    # A commit of this connection's that changes no row: the version moves, nothing else.
    brain.db.conn.execute("CREATE TABLE outside_memgui(x)")
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) is None
    assert searching.keyword_rows(brain, "telo", TraceFilter(), 10) == found
    assert keyword_quick.rows(brain, "telo", TraceFilter(), 10) == found


def test_after_each_answer_it_cannot_prove_it_waits_twice_as_many_searches(
    brain: Brain,
) -> None:
    with brain.batch():
        for n in range(40):  # equal matches: the ranking proves nothing of their strength
            brain.add("harbour crane", strength=0.5 + n / 100)
        brain.add("lantern quay dusk", strength=1.0)
    brain.flush_index()
    searching.keyword_rows(brain, "harbour", TraceFilter(), 10)

    def quick_tried(query: str) -> bool:  # whether the search ranked as the quick way does
        _, statements = selects_run(
            brain.db.conn, lambda: searching.keyword_rows(brain, query, TraceFilter(), 10)
        )
        quick_limit = keyword_quick.ranked_for(10)
        return any(f"FROM {stems.TABLE}" in sql and b[1] == quick_limit for sql, b in statements)

    tried = [n for n in range(20) if quick_tried("harbour")]
    assert tried == [0, 2, 5, 10, 19]  # skips of 1, 2, 4, 8 searches
    # An answer it proves (every match ranked) sets the skip after a failure back to one.
    assert [quick_tried("lantern") for _ in range(8)] == [False] * 8  # the 16 left, in part
    for _ in range(8):
        quick_tried("lantern")
    assert quick_tried("lantern")  # proved: every match ranked
    assert [quick_tried("harbour") for _ in range(3)] == [True, False, True]


def test_the_rows_of_any_count_of_candidates_are_read_by_a_few_statements(brain: Brain) -> None:
    # Each word matches a different number of traces: 1 to 14 candidates are read.
    words = [f"word{n}" for n in range(14)]
    with brain.batch():
        for n in range(14):
            brain.add(" ".join(words[: n + 1]))
    brain.flush_index()
    flt = TraceFilter()
    texts = set()
    for word in words:
        found, statements = selects_run(  # the general way's rows statements
            brain.db.conn,
            lambda word=word: searching.keyword_rows(brain, word, flt, 10, quick=False),
        )
        assert found is not None and len(found) == min(10, 14 - words.index(word))
        texts |= {sql for sql, _ in statements if "FROM memory_traces" in sql}
    # One statement text per count had apsw's cache (the statements of its last 100 runs)
    # compile the rows statement again in one search of three.
    assert len(texts) == 2  # the first 8 candidates' rows, the first 16's
    sql = keyword.statements(brain.db, stems.TABLE, brain.brain_id, flt)
    rowids = [row[0] for row in brain.db.conn.execute("SELECT rowid FROM memory_traces")]
    for count in range(1, 10):
        text, args = sql.rows(brain.now(), rowids[:count])
        assert sorted(row[1] for row in brain.db.conn.execute(text, args)) == rowids[:count]


def test_brief_rows_hold_the_result_columns_in_their_places(brain: Brain) -> None:
    _fill(brain, 300, weakest=0.9)
    flt = TraceFilter()
    searching.keyword_rows(brain, "harbour", flt, 10)
    kept = {0, 1, 2, 3, 5, 6, 10}  # rowid, id, type, scope, content, strength, tags
    answered = 0
    for query in QUERIES:
        brief, statements = selects_run(
            brain.db.conn, lambda query=query: keyword_quick.rows(brain, query, flt, 10, True)
        )
        full = keyword_quick.rows(brain, query, flt, 10)
        if brief is None or full is None:
            continue  # not proved: the general way answers, with whole rows
        answered += 1
        assert len(brief) == len(full) > 0
        for short, whole in zip(brief, full, strict=True):
            assert [short[i] for i in sorted(kept)] == [whole[i] for i in sorted(kept)]
            assert [short[i] for i in range(len(short)) if i not in kept] == [None] * 4
        reads = [sql for sql, _ in statements if "memory_traces AS t" in sql]
        assert reads and not any("emotions" in sql for sql in reads)  # not read at all
    assert answered >= len(QUERIES) // 2
