"""Schema 9: a query of plain words asks memgui_stems one Porter stem per word. It finds
what asking memgui_fts for every form found, ranks by FTS5's own bm25 on the stemmed index
over every match, keeps in step with every write, and an older brain gains it on its first
write."""

from __future__ import annotations

import json
import random
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import fts_merge, fulltext, keyword, stems, word_forms
from memgui.core.storage import migration, schema
from tests.support.query_plans import selects_run

ENGLISH = (
    "The deployment of the billing service failed twice",
    "We deployed the new search index on Friday",
    "Deploying from a laptop is not allowed",
    "Each deploy needs a second reviewer, deploy deploy",
    "Happiness is a warm cup of tea",
    "A happy team ships small changes",
    "The relational model of the archive",
    "Relations between notes are links",
    "Running the indexer takes an hour",
    "She runs the weekly planning meeting",
    "Names of the files were filed by name",
)
QUERIES = (
    "deploy", "deployment", "Deploying", "happy", "relation", "running", "file names",
    "deploy OR happy", "(deploy OR running) AND hour", "deploy NOT laptop", "notes links",
    "tea", "weekly", "the",
)  # fmt: skip
VOCABULARY = "harbour crane lantern quay dusk boat rope tide gull anchor net salt".split()


def by_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, plain words take memgui_fts's way (every form asked), as before."""
    monkeypatch.setattr(stems, "match", lambda _query: None)


def ranked(brain: Brain, query: str, want: int = 100) -> list[tuple[int, float]]:
    return [(h.rowid, h.bm25) for h in keyword.keyword_ranking(brain, query, TraceFilter(), want)]


def exact_on_stems(brain: Brain, query: str, want: int = 100) -> list[tuple[int, float]]:
    """FTS5's bm25 on memgui_stems over every live match, best first (the exact ranking)."""
    sql = (
        "SELECT t.rowid, bm25(memgui_stems) AS score FROM memgui_stems CROSS JOIN "
        "memory_traces AS t ON t.rowid = memgui_stems.rowid WHERE memgui_stems MATCH ? "
        "AND t.deleted = 0 ORDER BY score, t.rowid LIMIT ?"
    )
    return brain.db.conn.execute(sql, (stems.match(query), want)).fetchall()


def found_ids(brain: Brain, query: str) -> set[str]:
    return {t.id for t in brain.search(query, limit=200, record_recall=False).traces}


@pytest.mark.parametrize(
    ("query", "plain"),
    [
        ("deploy", True), ("file names", True), ("deploy OR happy", True),
        ("(deploy OR running) AND hour", True), ("deploy NOT laptop", True), ("Zürich", True),
        ("москва", True), ("2024 report", True),
        ('"deployed index"', False), ("dep*", False), ("content: deploy", False),
        ("NEAR(deploy index)", False), ("^deploy", False), ("deploy (happy OR tea)", False),
        ("(deploy) tea", False), ("deploy AND", False), ("OR deploy", False),
        ("deploy AND NOT laptop", False), ("foo_bar", False), ("東京", False),
        ("what about kubernetes, harbour", False), ("(deploy", False), ("deploy)", False),
        ("", False), ("state-of-the-art", False),
    ],
)  # fmt: skip
def test_only_plain_words_go_to_the_stemmed_index(query: str, plain: bool) -> None:
    assert stems.is_plain(query) is plain
    assert (stems.match(query) is not None) is plain


def test_a_word_asks_one_term_per_stem() -> None:
    # Porter stems deploy to deploi and deployment to deploy: one form stands for the other.
    (other,) = word_forms.other_stems("deploy")
    assert word_forms._stems(["deploy", other]) == ["deploi", "deploy"]
    assert word_forms._stems(["deployment", *word_forms.other_stems("deployment")]) == [
        "deploy",
        "deploi",
    ]
    assert word_forms._stems(["cry", *word_forms.other_stems("cry")]) == ["cry", "cri"]
    assert stems.match("deploy") == f"(deploy OR {other})"
    assert stems.match("names tea") == "names tea"
    assert stems.match("deploy OR tea") == f"(deploy OR {other}) OR tea"
    assert stems.match("tea deploy") == f"tea AND (deploy OR {other})"


def test_plain_words_find_what_every_form_found(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in ENGLISH:
        brain.add(text)
    stemmed = {q: found_ids(brain, q) for q in QUERIES}
    by_forms(monkeypatch)
    formed = {q: found_ids(brain, q) for q in QUERIES}
    assert stemmed == formed
    assert all(stemmed[q] for q in QUERIES if q != "the")


def test_the_ranking_is_bm25_on_the_stemmed_index_over_every_match(brain: Brain) -> None:
    rng = random.Random(3)
    with brain.batch():
        for text in ENGLISH * 5:
            words = text.split()
            rng.shuffle(words)
            trace = brain.add(" ".join(words), strength=rng.random())
            if rng.random() < 0.15:
                brain.forget(trace.id)
    for query in QUERIES:
        for want in (1, 3, 50):
            assert ranked(brain, query, want) == exact_on_stems(brain, query, want), query
    # A row holding "deploy" three times and no other form: one term, its count 3.
    found = dict(ranked(brain, "deploy"))
    assert len(found) == len(exact_on_stems(brain, "deploy"))


def test_where_no_word_has_two_forms_the_scores_are_memgui_fts_to_the_last_bit(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    with brain.batch():
        for _ in range(200):
            brain.add(" ".join(rng.choices(VOCABULARY, k=rng.randint(1, 20))))
    queries = ["harbour", "crane quay", "tide OR gull", "anchor NOT net", "salt boat rope"]
    now = brain.now()
    brain.clock = lambda: now  # one decay for both
    stemmed = {q: keyword.keyword_ranking(brain, q, TraceFilter(), 30) for q in queries}
    by_forms(monkeypatch)
    formed = {q: keyword.keyword_ranking(brain, q, TraceFilter(), 30) for q in queries}
    assert stemmed == formed  # ids, bm25 and strength, to the last bit


def test_the_stemmed_index_follows_every_write(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        kept = brain.add("the harbour crane was deployed")
        changed = brain.add("a lantern on the quay")
        forgotten = brain.add("gulls over the harbour")
        purged = brain.add("harbour ropes")
        brain.flush_index()
        brain.update(changed.id, {"content": "the tide is deploying nets"})
        brain.forget(forgotten.id)
        brain.purge(purged.id)
        titled = brain.add("body only", metadata={"title": "Deployment checklist"})
        assert found_ids(brain, "harbour") == {kept.id}
        assert found_ids(brain, "lantern") == set()
        assert found_ids(brain, "deploy") == {kept.id, changed.id, titled.id}
        brain.flush_index()
    conn = apsw.Connection(str(brain_path))  # as AgentOS: writes memgui's code never saw
    conn.execute("UPDATE memory_traces SET content = 'anchors aweigh' WHERE id = ?", (kept.id,))
    conn.execute(
        "UPDATE memory_traces SET metadata = ? WHERE id = ?",
        (json.dumps({"title": "Kilimanjaro climbing"}), titled.id),
    )
    conn.close()
    with Brain.open(brain_path, actor="test") as brain:
        assert found_ids(brain, "anchor") == {kept.id}
        assert found_ids(brain, "deploy") == {changed.id}
        assert found_ids(brain, "climb") == {titled.id}
        rows = brain.db.conn.execute("SELECT count(*) FROM memory_traces").get
        assert fulltext.indexed_rows(brain.db, "memgui_stems") == rows
        assert fulltext.indexed_rows(brain.db, "memgui_fts") == rows
        stemmed = {q: found_ids(brain, q) for q in ("anchor", "deploy", "tide", "harbour")}
        by_forms(monkeypatch)
        assert stemmed == {q: found_ids(brain, q) for q in stemmed}


def test_a_plain_query_reads_the_stemmed_index_alone(brain: Brain) -> None:
    with brain.batch():
        for n in range(30):
            brain.add(f"harbour crane {n}")
    found, statements = selects_run(
        brain.db.conn, lambda: brain.search("harbour", limit=5, record_recall=False)
    )
    assert len(found.traces) == 5
    assert any("memgui_stems MATCH" in sql for sql, _ in statements)
    assert not any("memgui_fts MATCH" in sql for sql, _ in statements)


def as_schema_8(path: Path) -> None:
    """The brain as schema 8 left it: no memgui_stems, version 8."""
    conn = apsw.Connection(str(path))
    conn.execute("DROP TABLE memgui_stems")
    conn.execute("UPDATE brain_meta SET value = '8' WHERE key = ?", (schema.SCHEMA_KEY,))
    conn.close()


def test_a_schema_8_brain_gains_the_stemmed_index_on_its_first_write(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "STEMS_FILL_BATCH", 40)  # the fill in steps, logged
    with Brain.open(brain_path, actor="test") as brain:
        with brain.batch():
            for n in range(150):
                brain.add(f"{ENGLISH[n % len(ENGLISH)]} {n}")
        brain.flush_index()
        for n in range(5):  # rows still waiting for the indexes when it stops
            brain.add(f"a deployment left pending {n}")
        assert fulltext.has_pending(brain.db)
        brain.close = lambda: brain.db.close()  # stop without the closing flush
    as_schema_8(brain_path)
    with Brain.open(brain_path, actor="test") as brain:
        assert brain.db.schema_version == 8 and "memgui_stems" not in brain.db.tables
        before = {q: found_ids(brain, q) for q in QUERIES}  # memgui_fts, every form
        plan = brain.pending_migration()
        assert plan is not None and plan.from_version == 8
        assert plan.changes == (migration._STEMS_INDEXED,)
        added = brain.add("the first write migrates: a deployment")
        assert brain.db.schema_version == schema.SCHEMA_VERSION
        assert "memgui_stems" in brain.db.tables
        brain.flush_index()
        rows = brain.db.conn.execute("SELECT count(*) FROM memory_traces").get
        assert fulltext.indexed_rows(brain.db, "memgui_stems") == rows == 156
        assert fts_merge.configured(brain.db.conn, "memgui_stems")
        after = {q: found_ids(brain, q) for q in QUERIES}
    assert {q: ids - {added.id} for q, ids in after.items()} == before
    assert added.id in after["deploy"] and added.id in after["the"]
    assert list(brain_path.parent.glob(f"{brain_path.name}.backup-pre-{schema.SCHEMA_VERSION}-*"))


def test_a_failed_first_write_leaves_a_schema_8_brain_as_it_was(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        trace = brain.add("the harbour crane")
    as_schema_8(brain_path)
    with Brain.open(brain_path, actor="test") as brain:
        with pytest.raises(Exception, match="no such|not found|unknown"):
            brain.update("mt_no-such-trace", {"content": "nothing"})
        assert brain.db.schema_version == 8 and "memgui_stems" not in brain.db.tables
        assert found_ids(brain, "harbour") == {trace.id}
    assert not list(brain_path.parent.glob(f"{brain_path.name}.backup-pre-*"))


def test_the_upkeep_merges_the_stemmed_index_too(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fts_merge, "INLINE_MERGE_PAGES", 0)  # every segment for the upkeep
    for n in range(40):  # single writes, each flush a segment in both indexes
        brain.add(f"harbour crane {n}")
        brain.flush_index()
    assert fts_merge.segment_count(brain.db.conn, "memgui_stems") >= 8
    before = ranked(brain, "harbour crane")
    fts_merge.merge_pass(brain.db, gap_s=0)
    for table in ("memgui_fts", "memgui_stems"):
        assert not fts_merge.needs_merge(fts_merge.levels(brain.db.conn, table)), table
    assert ranked(brain, "harbour crane") == before
