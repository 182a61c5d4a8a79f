"""memgui_fts merges its segments only when asked (schema 6): inside a single write only a
small level 0 (a burst's segments), in small steps on the upkeep thread, and at the end of
a bulk write; searches find the same before and after a merge; a brain of schema 3
migrates to it, or stays as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import apsw
import pytest

from memgui.core import maintenance
from memgui.core.brain import Brain
from memgui.core.errors import NotFound
from memgui.core.io.planning.validate import trace_snapshot
from memgui.core.maintenance import Maintainer
from memgui.core.search import fts_merge, fulltext
from memgui.core.storage import bulk_rows, migration, schema

WAIT_S = 60.0
NOW = 1_800_000_000_000
WORDS = ("harbour", "lantern", "copper", "meadow", "violin", "glacier", "saffron", "orbit")


def config(path: Path, table: str = "memgui_fts") -> dict[str, object]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return dict(conn.execute(f"SELECT k, v FROM {table}_config"))
    finally:
        conn.close()


def text(i: int) -> str:
    return f"{WORDS[i % 8]} {WORDS[(i * 3 + 1) % 8]} note {i}"


def results(brain: Brain, query: str) -> list[tuple[str, float]]:
    brain.clock = lambda: NOW  # the same decay in every search
    hits = brain.search(query, limit=50, mode="keyword", record_recall=False)
    return [(hit.trace.id, round(hit.score, 9)) for hit in hits.hits]


def as_schema_3(path: Path) -> None:
    """Make a brain written by this code what memgui of schema 3 wrote: FTS5's default
    merge settings (no rows for them) and schema 3 in brain_meta."""
    conn = apsw.Connection(str(path))
    try:
        with conn:
            conn.execute(
                "DELETE FROM memgui_fts_config WHERE k IN ('automerge', 'crisismerge', 'usermerge')"
            )
            conn.execute("DROP TABLE memgui_stems")  # schema 9's
            conn.execute("UPDATE brain_meta SET value = '3' WHERE key = ?", (schema.SCHEMA_KEY,))
    finally:
        conn.close()


def digest(path: Path) -> str:
    conn = apsw.Connection(str(path))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_new_brain_merges_its_index_only_when_asked(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        assert brain.info()["schema_version"] == schema.SCHEMA_VERSION >= 6
        assert fts_merge.configured(brain.db.conn)
    # Made and never written: no meta row says the schema, the index's settings do.
    assert config(brain_path)["automerge"] == 0
    assert config(brain_path)["crisismerge"] == schema.MEMGUI_FTS_CRISISMERGE
    with Brain.open(brain_path) as again:
        assert again.db.is_current and again.db.schema_version == schema.SCHEMA_VERSION
        again.add("written once")
        assert again.info()["schema_version"] == schema.SCHEMA_VERSION


def test_single_writes_merge_their_small_segments_as_they_come(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 1)  # every add writes a segment
    queries = ["harbour", "lantern copper", "meadow OR violin", "note", "saffron orbit"]
    with Brain.open(brain_path) as brain:
        for i in range(60):
            brain.add(text(i))
            for table in fts_merge.tables(brain.db.conn):
                # Each flush that made level 0 `usermerge` segments merged it inline.
                found = fts_merge.levels(brain.db.conn, table)
                assert found[0].segments < schema.MEMGUI_FTS_USERMERGE, (i, table, found)
                assert not any(level.merging for level in found)
        merged_inline = {q: results(brain, q) for q in queries}
        assert fts_merge.segment_count(brain.db.conn) < 60 // 4
        with brain.db.write("test", "optimize", kind="index"):
            for table in fts_merge.tables(brain.db.conn):  # both: plain words rank on stems
                brain.db.conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
                brain.db.conn.execute(
                    f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 0)"
                )
        assert fts_merge.segment_count(brain.db.conn, schema.STEMS_TABLE) == 1
        assert {q: results(brain, q) for q in queries} == merged_inline


def test_single_writes_leave_a_big_level_to_the_upkeep(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `INLINE_MERGE_PAGES` on level 0 no write merges (a big brain's leftovers of a
    bulk write): the segments wait for the upkeep, and the crisis merge (the backstop when
    none runs) keeps each level below `crisismerge`."""
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 1)
    monkeypatch.setattr(fts_merge, "INLINE_MERGE_PAGES", 2)
    with Brain.open(brain_path) as brain:
        for i in range(60):
            brain.add(text(i))
        found = fts_merge.levels(brain.db.conn)
        assert fts_merge.needs_merge(found)
        assert sum(level.segments for level in found) > schema.MEMGUI_FTS_USERMERGE
        assert all(level.segments <= schema.MEMGUI_FTS_CRISISMERGE for level in found)


def test_a_bulk_write_of_several_segments_lifts_them_off_level_0(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end of a bulk write merges an index lying all on level 0 into one segment on
    level 1, so that the small ones single writes add there later merge without it; a
    lone segment stays (FTS5's optimize leaves it) and the inline merge takes it small."""
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 1)
    monkeypatch.setattr(fts_merge, "INLINE_MERGE_PAGES", 0)
    with Brain.open(brain_path) as brain:
        conn = brain.db.conn
        for i in range(3):  # three segments, all on level 0
            brain.add(text(i))
        before = results(brain, "note")
        found = fts_merge.levels(conn)
        assert [level.segments for level in found] == [3]
        with brain.db.write("test", "the end of a bulk write", kind="index"):
            assert fts_merge.merge_all(conn) >= 1
        assert [level.segments for level in fts_merge.levels(conn)] == [0, 1]
        assert results(brain, "note") == before
        with brain.db.write("test", "nothing more to lift", kind="index"):
            assert fts_merge.merge_all(conn) == 0
    lone = brain_path.with_name("lone.sqlite")
    with Brain.open(lone) as brain:
        brain.add(text(0))
        with brain.db.write("test", "a lone segment", kind="index"):
            assert fts_merge.merge_all(brain.db.conn) == 0
        assert [level.segments for level in fts_merge.levels(brain.db.conn)] == [1]


def test_the_upkeep_merges_in_steps_and_searches_find_the_same(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 1)
    monkeypatch.setattr(fts_merge, "INLINE_MERGE_PAGES", 0)  # every segment for the upkeep
    queries = ["harbour", "lantern copper", "meadow OR violin", "note", "saffron orbit"]
    with Brain.open(brain_path) as brain:
        for i in range(120):
            brain.add(text(i), tags=[WORDS[i % 3]])
        for _ in range(0, 120, 7):  # forgotten rows leave tombstones in the segments
            brain.forget(brain.list_ids()[0])
        before = {q: results(brain, q) for q in queries}
        assert fts_merge.needs_merge(fts_merge.levels(brain.db.conn))
        segments_before = fts_merge.segment_count(brain.db.conn)
    maintainer = Maintainer(brain_path, None, interval=3600).start()
    try:
        assert maintainer.wait_for_merge_passes(1, WAIT_S)
    finally:
        maintainer.stop()
    assert maintainer.merge_steps > 0
    with Brain.open(brain_path) as brain:
        found = fts_merge.levels(brain.db.conn)
        assert not fts_merge.needs_merge(found)  # every level below usermerge
        assert fts_merge.segment_count(brain.db.conn) < segments_before
        assert {q: results(brain, q) for q in queries} == before
        brain.db.conn.execute(
            "INSERT INTO memgui_fts(memgui_fts, rank) VALUES ('integrity-check', 0)"
        )


def test_the_upkeep_goes_on_merging_after_a_pass_that_ran_out_of_time(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fts_merge, "INLINE_MERGE_PAGES", 0)  # every segment for the upkeep
    with Brain.open(brain_path) as brain:
        with brain.batch():  # many pages to merge: 2,000 rows of words of their own
            for i in range(2000):
                brain.add(" ".join(f"{WORDS[(i + k) % 8]}{i * 7 + k}" for k in range(12)))
        for i in range(schema.MEMGUI_FTS_USERMERGE + 2):  # and segments beside them
            brain.add(text(i))
            brain.flush_index()
        assert fts_merge.needs_merge(fts_merge.levels(brain.db.conn))
    # Each pass: one step of a page, then its time is up; no other connection writes.
    monkeypatch.setattr(fts_merge, "PASS_BUDGET_S", 0.0)
    monkeypatch.setattr(fts_merge, "MERGE_PAGES", 1)
    monkeypatch.setattr(maintenance, "MERGE_CHECK_S", 0.01)
    maintainer = Maintainer(brain_path, None, interval=3600).start()
    try:
        # A step a pass: passes, not seconds, bound the wait (a loaded machine takes longer
        # for each). Waiting for the next write instead, the merge took thousands of passes.
        passes = 1
        while passes < 400 and merges_due(brain_path):
            assert maintainer.wait_for_merge_passes(passes, WAIT_S)
            passes = maintainer.merge_passes + 1
    finally:
        maintainer.stop()
    assert maintainer.merge_steps > 10
    assert not merges_due(brain_path)


def merges_due(path: Path) -> bool:
    """Read without writing (a write would wake the upkeep by itself)."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(int(WAIT_S * 1000))  # past the upkeep's write of a step
    try:
        return any(
            fts_merge.needs_merge(fts_merge.levels(conn, table))
            for table in fts_merge.upkeep_tables(conn)
        )
    finally:
        conn.close()


def test_memguis_writes_fill_agentos_index_without_merging_it_and_the_upkeep_merges_it(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 1)  # every add indexes: a segment each
    agentos_index = fts_merge.AGENTOS_TABLE
    with Brain.open(brain_path) as brain:
        conn = brain.db.conn
        for i in range(8):  # ~12 pages a segment: FTS5's automerge works every 64 written
            brain.add(" ".join(f"note {i}w{k}" for k in range(5000)))
        # Past FTS5's automerge threshold (4 segments a level) nothing merged, and AgentOS's
        # setting is as AgentOS keeps it (FTS5's default, 4, written back as a row).
        assert fts_merge.needs_merge(fts_merge.levels(conn, agentos_index))
        assert config(brain_path, agentos_index).get("automerge", 4) == 4
        assert agentos_index in fts_merge.upkeep_tables(conn)
        assert fts_merge.merge_pass(brain.db, gap_s=0.0) > 0
        assert not fts_merge.merge_due(brain.db)
        conn.execute(
            f"INSERT INTO {agentos_index}({agentos_index}, rank) VALUES ('integrity-check', 0)"
        )
        matched = conn.execute(
            f"SELECT count(*) FROM {agentos_index} WHERE {agentos_index} MATCH 'note'"
        )
        assert matched.get == 8
    conn = apsw.Connection(str(brain_path))  # AgentOS's own setting, whatever it is, is kept
    conn.execute(f"INSERT INTO {agentos_index}({agentos_index}, rank) VALUES ('automerge', 8)")
    conn.close()
    with Brain.open(brain_path) as brain:
        brain.add(text(99))
        assert brain.search("note", limit=50, record_recall=False).traces
    assert config(brain_path, agentos_index)["automerge"] == 8


def test_the_upkeep_merges_the_index_nearest_its_crisis_merge_first(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step goes to the table whose fullest level holds the most segments, not to the
    first table in order while one is due there (which let AgentOS's index fill up to
    FTS5's crisis merge, inside a write, at 1M traces)."""
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 1)  # every add indexes: a segment each
    monkeypatch.setattr(fts_merge, "INLINE_MERGE_PAGES", 0)  # every segment for the upkeep
    agentos_index, stems = fts_merge.AGENTOS_TABLE, schema.STEMS_TABLE
    with Brain.open(brain_path) as brain:
        conn = brain.db.conn
        for i in range(5):
            brain.add(text(i))
        with brain.db.write("test", "merge memgui's indexes", kind="index"):
            for table in fts_merge.tables(conn):
                fts_merge.merge_all(conn, table)
        for i in range(5, 9):
            brain.add(text(i))
        due = {table: fts_merge.levels(conn, table) for table in fts_merge.upkeep_tables(conn)}
        # memgui_stems (first in order) is due with 5 segments; AgentOS's index holds 9.
        assert fts_merge.needs_merge(due[stems]) and due[stems][0].segments == 5
        assert due[agentos_index][0].segments == 9
        assert fts_merge.merge_pass(brain.db, gap_s=0.0, budget_s=0.0) == 1  # one step
        assert fts_merge.levels(conn, stems) == due[stems]
        assert fts_merge.levels(conn, agentos_index)[0].segments < 9


def test_a_bulk_flush_merges_agentos_index_too_before_it_commits(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 10**9)  # the adds only mark their rows
    agentos_index = fts_merge.AGENTOS_TABLE
    with Brain.open(brain_path) as brain:
        for i in range(8):
            brain.add(" ".join(f"note {i}w{k}" for k in range(2000)))
        with brain.db.write("test", "index in bulk", kind="index"):
            # A batch of one row at a time: a segment of each index per row, then the merge.
            assert list(fulltext.flushing(brain.db, batch=1))[-1] == 8
        found = fts_merge.levels(brain.db.conn, agentos_index)
        assert sum(level.segments for level in found) < 8
        assert not fts_merge.needs_merge(found)
        matched = brain.db.conn.execute(
            f"SELECT count(*) FROM {agentos_index} WHERE {agentos_index} MATCH 'note'"
        )
        assert matched.get == 8


def test_a_merge_pass_stops_when_nothing_is_due_and_changes_no_result(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 1)
    with Brain.open(brain_path) as brain:
        for i in range(40):
            brain.add(text(i))
        before = results(brain, "harbour OR glacier")
        steps = fts_merge.merge_pass(brain.db, gap_s=0.0)
        assert steps > 0 and not fts_merge.needs_merge(fts_merge.levels(brain.db.conn))
        assert fts_merge.merge_pass(brain.db, gap_s=0.0) == 0  # nothing due: no write
        assert results(brain, "harbour OR glacier") == before


def test_a_bulk_write_merges_before_it_commits(brain_path: Path) -> None:
    with Brain.open(brain_path, "bench") as brain:
        snaps = [
            trace_snapshot({"content": text(i), "created_at": NOW + i}, f"mt_{i:05d}", NOW)
            for i in range(fulltext.FLUSH_BATCH + 10)
        ]
        # FTS5 writes a segment whenever its in-memory terms pass `hashsize`: a small one
        # makes this bulk write many segments, as a big import does.
        brain.db.conn.execute("INSERT INTO memgui_fts(memgui_fts, rank) VALUES ('hashsize', 4096)")
        with brain.write("import", kind="import") as batch:
            bulk_rows.insert_traces(brain.db, batch, brain.brain_id, snaps, "import")
            # One progress report per full batch of rows, then one per merge step.
            reports = list(fulltext.flushing(brain.db))
            assert reports[0] == fulltext.FLUSH_BATCH and reports[1:] == [len(snaps)] * (
                len(reports) - 1
            )
            assert len(reports) > 1
        assert not fts_merge.needs_merge(fts_merge.levels(brain.db.conn))
        assert len(results(brain, "copper")) == 50


def test_a_schema_3_brain_migrates_without_rebuilding_its_index(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        ids = [brain.add(text(i)).id for i in range(30)]
        before = results(brain, "lantern")
    as_schema_3(brain_path)
    assert "automerge" not in config(brain_path)
    with Brain.open(brain_path) as brain:
        assert brain.info()["schema_version"] == 3 and not brain.db.is_current
        plan = migration.pending(brain.db)
        assert plan is not None and (plan.from_version, plan.to_version) == (
            3,
            schema.SCHEMA_VERSION,
        )
        assert any("background" in change for change in plan.changes)
        segments = fts_merge.levels(brain.db.conn)
        brain.update(ids[0], {"content": "lantern moved"})  # the first write migrates
        assert brain.info()["schema_version"] == schema.SCHEMA_VERSION and fts_merge.configured(
            brain.db.conn
        )
        # The index was kept, not made again: its old segments are all still there.
        assert sum(lv.segments for lv in fts_merge.levels(brain.db.conn)) >= sum(
            lv.segments for lv in segments
        )
        assert {i for i, _ in results(brain, "lantern")} == {i for i, _ in before}
    assert config(brain_path)["automerge"] == 0
    assert list(brain_path.parent.glob(f"{brain_path.name}.backup-pre-{schema.SCHEMA_VERSION}-*"))


@pytest.mark.parametrize("failure", ["refused write", "failing statement"])
def test_a_failed_migration_of_a_schema_3_brain_leaves_it_as_it_was(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    with Brain.open(brain_path) as brain:
        some = brain.add(text(1)).id
    as_schema_3(brain_path)
    before = digest(brain_path)
    with Brain.open(brain_path) as brain:
        if failure == "refused write":
            with pytest.raises(NotFound):
                brain.update("mt_nope", {"content": "x"})
        else:
            broken = (*schema.MEMGUI_FTS_CONFIG, "INSERT INTO memgui_fts(memgui_fts) VALUES (1)")
            monkeypatch.setattr(schema, "MEMGUI_FTS_CONFIG", broken)
            with pytest.raises(apsw.Error):
                brain.update(some, {"content": "x"})
        assert brain.info()["schema_version"] == 3
    assert digest(brain_path) == before
    assert "automerge" not in config(brain_path)
    assert not list(brain_path.parent.glob("*backup*"))


def test_the_stemmed_index_merges_first(brain_path: Path) -> None:
    """Every search of plain words ranks on memgui_stems: the upkeep's passes merge it
    before memgui_fts."""
    with Brain.open(brain_path) as brain:
        assert fts_merge.tables(brain.db.conn) == ["memgui_stems", "memgui_fts"]
