"""memgui_bm25 (search/csrc/memgui_bm25.c) scores as FTS5's bm25 to the last bit, keeps its
document counts only while nothing changed them, and without it FTS5's bm25 ranks the same."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import bm25, fulltext, keyword, stems

VOCABULARY = (
    "harbour crane lantern quay dusk boat rope tide gull anchor net salt wind pier "
    "kubernetes deploy deployed deploying upgrade plan note file link vault graph"
).split()
# As keyword search is asked: plain words (the stemmed index), phrases, prefixes, columns.
QUERIES = [
    "harbour", "harbour crane", "lantern OR quay", '"harbour crane"', "tide NOT gull",
    "deploy", "dep*", "content: harbour", "NEAR(rope tide)", "what about kubernetes, harbour",
]  # fmt: skip

MATCHES = [
    "harbour", "harbour OR crane", "lantern OR quay OR tide OR gull", '"harbour crane"',
    "tide NOT gull", "dep*", "content: harbour", "tags: crane OR anchor", "NEAR(rope tide)",
    "gull gull", "^harbour", "kubernetes AND harbour",
]  # fmt: skip


def _random_brain(brain: Brain, count: int) -> None:
    rng = random.Random(5)
    with brain.batch():
        for n in range(count):
            trace = brain.add(
                " ".join(rng.choices(VOCABULARY, k=rng.randint(1, 30))),
                type=rng.choice(("episodic", "semantic")),
                tags=rng.sample(VOCABULARY, rng.randint(0, 2)),
            )
            if n % 7 == 0:
                brain.forget(trace.id)
    brain.flush_index()


def _scores(conn: apsw.Connection, table: str, match: str, limit: int | None = None) -> tuple:
    """(memgui_bm25's, bm25's) (score, rowid) of every match by rowid, or of the best `limit`."""
    order = "ORDER BY s, rowid LIMIT ?2" if limit else "ORDER BY rowid"
    args = (match, limit) if limit else (match,)
    mine = bm25.score_sql(conn, table, "?1", "?2" if limit else None)
    assert mine.startswith(bm25.FUNCTION)
    sql = f"SELECT {{}} AS s, rowid FROM {table} WHERE {table} MATCH ?1 {order}"
    ours = conn.execute(sql.format(mine), args).fetchall()
    theirs = conn.execute(sql.format(f"bm25({table})"), args).fetchall()
    return ours, theirs


def test_the_install_built_it_and_every_brain_connection_loads_it(brain: Brain) -> None:
    assert bm25.extension_path() is not None
    assert bm25.available(brain.db.conn)
    assert bm25.score_sql(brain.db.conn, "memgui_fts", "?1", "?2") == (
        "memgui_bm25(memgui_fts, 'memgui_fts', ?1, ?2)"
    )


def test_its_scores_are_bm25s_to_the_last_bit_on_a_real_brain(brain: Brain) -> None:
    _random_brain(brain, 600)
    conn = brain.db.conn
    for table in ("memgui_fts", stems.TABLE):
        for match in MATCHES:
            for _ in range(2):  # the second time from the kept document counts
                ours, theirs = _scores(conn, table, match)
                assert ours == theirs, (table, match)
                assert ours or match == "kubernetes AND harbour"
                for limit in (1, 3, 20, 1000):  # rows that cannot be among the best skipped
                    ours, theirs = _scores(conn, table, match, limit)
                    assert ours == theirs, (table, match, limit)
            # Column weights, as bm25 takes them (memgui weighs none).
            weighted = "SELECT {}, rowid FROM {t} WHERE {t} MATCH ?1 ORDER BY rowid"
            ours = conn.execute(
                weighted.format(f"memgui_bm25({table}, '{table}', ?1, 5, 2.0, 0.5)", t=table),
                (match,),
            ).fetchall()
            theirs = conn.execute(
                weighted.format(f"bm25({table}, 2.0, 0.5)", t=table), (match,)
            ).fetchall()
            assert ours == theirs, (table, match)


def _counted(conn: apsw.Connection) -> int:
    return int(conn.execute("SELECT memgui_bm25_counted()").get)


def test_a_plain_words_count_serves_every_query_with_that_word(brain: Brain) -> None:
    _random_brain(brain, 600)
    conn = brain.db.conn
    table = stems.TABLE
    before = _counted(conn)
    for match, new_words in (
        ("harbour crane", 2), ("crane tide", 1), ("tide harbour", 0), ("deploy deployed", 2),
        ("harbour", 0), ("gull crane harbour", 1), ("_crane gull", 1),
        ("cräne ＣＲＡＮＥ", 0),  # no row holds the second: no row scored, nothing counted
        ("gull gull", 0),
        # A word of no token is no phrase: the words are not the phrases, kept whole.
        ("harbour ___ crane", 2),
    ):  # fmt: skip
        ours, theirs = _scores(conn, table, match)
        assert ours == theirs, match  # bm25's scores from the counts kept
        assert ours or "ＣＲＡＮＥ" in match
        assert _counted(conn) - before == new_words, match
        before = _counted(conn)
        assert _scores(conn, table, match, 3)[0] == _scores(conn, table, match, 3)[1]
        assert _counted(conn) == before  # and the same text again counts nothing
    # Anything but plain words is kept whole: an operator, a prefix, a phrase, a column.
    for match in ("harbour OR crane", "harbour*", '"harbour crane"', "content: harbour",
                  "harbour  crane", "NOT harbour", "harbour AND crane"):  # fmt: skip
        try:
            ours, theirs = _scores(conn, table, match)
        except apsw.SQLError:
            continue  # FTS5 refuses it (a leading NOT)
        assert ours == theirs, match
        assert _counted(conn) > before, match  # none of its counts came from the words
        before = _counted(conn)


def test_a_commit_drops_the_words_counts_too(tmp_path: Path) -> None:
    path = tmp_path / "fts.sqlite"
    conn = _fts_file(path, 200)
    assert _scores(conn, "f", "harbour crane")[0] == _scores(conn, "f", "harbour crane")[1]
    counted = _counted(conn)
    other = apsw.Connection(str(path))
    with other:
        other.execute("INSERT INTO f(a, b) VALUES ('harbour harbour', 'x')")
    ours, theirs = _scores(conn, "f", "crane harbour")
    assert ours == theirs and _counted(conn) == counted + 2  # counted again
    other.close()


def _fts_file(path: Path, rows: int) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode = WAL")
    assert bm25.load(conn)
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS f USING fts5(a, b)")
    _add(conn, rows, seed=1)
    return conn


def _add(conn: apsw.Connection, rows: int, seed: int) -> None:
    rng = random.Random(seed)
    with conn:
        for _ in range(rows):
            text = " ".join(rng.choices(VOCABULARY[:6], k=rng.randint(1, 12)))
            conn.execute("INSERT INTO f(a, b) VALUES (?, ?)", (text, rng.choice(VOCABULARY)))


def test_a_write_by_another_process_changes_the_counts_the_next_statement_uses(
    tmp_path: Path,
) -> None:
    path = tmp_path / "fts.sqlite"
    conn = _fts_file(path, 200)
    before, theirs = _scores(conn, "f", "harbour OR crane")
    assert before == theirs
    # Another process adds rows holding one of the words only: its count changes.
    script = (
        "import apsw, sys\n"
        "c = apsw.Connection(sys.argv[1])\n"
        "with c:\n"
        "    for n in range(300):\n"
        "        c.execute(\"INSERT INTO f(a, b) VALUES ('harbour harbour', 'x')\")\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    after, theirs = _scores(conn, "f", "harbour OR crane")
    assert after == theirs
    old = dict((rowid, score) for score, rowid in before)
    assert any(old[rowid] != score for score, rowid in after if rowid in old)


def test_this_connections_writes_and_a_rollback_change_the_counts_it_uses(
    tmp_path: Path,
) -> None:
    conn = _fts_file(tmp_path / "fts.sqlite", 200)
    for match in ("harbour", "crane OR lantern"):
        first, theirs = _scores(conn, "f", match)
        assert first == theirs
        _add(conn, 50, seed=2)
        ours, theirs = _scores(conn, "f", match)
        assert ours == theirs and ours != first
    kept = _scores(conn, "f", "harbour")[0]
    with pytest.raises(ZeroDivisionError), conn:  # a transaction rolled back
        _add_inside = "INSERT INTO f(a, b) VALUES ('harbour quay', 'x')"
        for _ in range(40):
            conn.execute(_add_inside)
        inside, theirs = _scores(conn, "f", "harbour", 5)
        assert inside == theirs
        assert _scores(conn, "f", "harbour")[0] != kept
        1 / 0  # noqa: B018
    ours, theirs = _scores(conn, "f", "harbour")
    assert ours == theirs == kept
    # A savepoint rolled back inside a transaction: neither the total of changes nor the
    # data version moves back.
    conn.execute("BEGIN")
    conn.execute("SAVEPOINT s")
    _add_some = "INSERT INTO f(a, b) VALUES ('harbour quay', 'x')"
    for _ in range(40):
        conn.execute(_add_some)
    assert _scores(conn, "f", "harbour")[0] != kept
    conn.execute("ROLLBACK TO s")
    ours, theirs = _scores(conn, "f", "harbour")
    conn.execute("COMMIT")
    assert ours == theirs == kept


def _stopped_writer_brain(path: Path) -> None:
    """A brain whose writer stopped before indexing its last rows (they wait pending)."""
    with Brain.open(path) as brain:
        _random_brain(brain, 300)
        rng = random.Random(9)
        for _ in range(12):
            brain.add(" ".join(rng.choices(VOCABULARY, k=rng.randint(1, 10))))
        assert fulltext.has_pending(brain.db)
        brain.close = lambda: brain.db.close()  # type: ignore[method-assign]


def _rankings(path: Path) -> tuple[bool, list]:
    with Brain.open(path) as brain:
        out = [
            [(h.rowid, h.bm25) for h in keyword.keyword_ranking(brain, q, flt, limit)]
            for q in QUERIES
            for flt in (TraceFilter(), TraceFilter(type="semantic"))
            for limit in (1, 10)
        ]
        return bm25.available(brain.db.conn), out


@pytest.mark.parametrize("read_only", [False, True])
def test_without_it_fts5s_bm25_ranks_the_same_rows_with_the_same_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_only: bool
) -> None:
    path = tmp_path / "brain.sqlite"
    _stopped_writer_brain(path)
    if read_only:  # the pending rows are searched in this connection's TEMP stand-ins
        path.chmod(0o444)
    try:
        loaded, ours = _rankings(path)
        monkeypatch.setenv(bm25.DISABLE_ENV, "fts5")
        fallback, theirs = _rankings(path)
    finally:
        path.chmod(0o644)
    assert loaded and not fallback
    assert any(ours) and ours == theirs


def test_a_missing_extension_leaves_fts5s_bm25(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25, "MODULE", "memgui.core.search._not_built")
    conn = apsw.Connection(":memory:")
    assert not bm25.load(conn) and bm25.score_sql(conn, "t", "?1") == "bm25(t)"
    assert os.environ.get(bm25.DISABLE_ENV) != "fts5"
