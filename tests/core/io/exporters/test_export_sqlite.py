"""SQLite export: a complete brain of this brain's rows, in WAL, never replacing a file."""

from __future__ import annotations

import stat
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export import ExportOptions, export
from memgui.core.progress import Cancelled, run_to_end
from memgui.core.storage import schema


def run(brain: Brain, dest: Path, **options):
    return run_to_end(export(brain, dest, "sqlite", ExportOptions(**options)))


def read(path: Path) -> apsw.Connection:
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    return apsw.Connection(f"{path.resolve().as_uri()}?mode=ro", flags=flags)


def rows(conn: apsw.Connection, table: str) -> list[tuple]:
    return conn.execute(f'SELECT rowid, * FROM "{table}" ORDER BY rowid').fetchall()


def test_agentos_brain_copies_whole(agentos_copy: Path, tmp_path: Path) -> None:
    with Brain.open(agentos_copy) as brain:
        result = run(brain, tmp_path / "copy.sqlite")
    assert result.exported == 51 and result.refused == ()
    assert not (tmp_path / "copy.sqlite-wal").exists()  # closed clean: one file
    src, out = read(agentos_copy), read(tmp_path / "copy.sqlite")
    master = "SELECT type, name, sql FROM sqlite_master ORDER BY rowid"
    assert out.execute(master).fetchall() == src.execute(master).fetchall()  # same order too
    for (name,) in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        if not name.startswith("memory_traces_fts"):
            assert rows(out, name) == rows(src, name), name
    match = "SELECT rowid FROM memory_traces_fts WHERE memory_traces_fts MATCH 'standup'"
    assert out.execute(match).fetchall() == src.execute(match).fetchall()
    assert out.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert out.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert stat.S_IMODE((tmp_path / "copy.sqlite").stat().st_mode) == 0o600


def test_only_this_brains_rows_and_memgui_tables(tmp_path: Path) -> None:
    path = tmp_path / "two.sqlite"
    with Brain.open(path, "alpha") as alpha:
        a = alpha.add("alpha text", tags=["x"])
        b = alpha.add("alpha other")
        c = alpha.add("linked")
        alpha.link(a.id, c.id, "relates_to")
        alpha.forget(b.id)
    other = apsw.Connection(str(path))  # a second brain in the same file
    other.execute(
        "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
        "VALUES ('beta', 'b1', 'episodic', 'user', 'beta text', 1)"
    )
    other.execute("INSERT INTO brain_meta VALUES ('beta', 'schema_version', '2')")
    other.close()
    with Brain.open(path, "alpha") as alpha:
        result = run(alpha, tmp_path / "alpha.sqlite")
    assert result.exported == 3
    with Brain.open(tmp_path / "alpha.sqlite") as copy:
        assert copy.brain_id == "alpha"
        assert copy.get(b.id).deleted and copy.get(a.id).tags == ("x",)
        assert [h.trace.id for h in copy.search("alpha", record_recall=False).hits] == [a.id]
        assert [r.id for r in copy.related(a.id)] == [c.id]
        assert copy.history(a.id)  # the journal travels
    out = read(tmp_path / "alpha.sqlite")
    for table in ("memory_traces", "brain_meta", "memgui_journal", "memory_links"):
        ids = {r[0] for r in out.execute(f"SELECT DISTINCT brain_id FROM {table}")}
        assert ids == {"alpha"}, table


def test_selection_keeps_only_the_selected_traces_rows(brain: Brain, tmp_path: Path) -> None:
    a = brain.add("one", id="one")
    brain.add("two", id="two")
    brain.link("one", "two", "relates_to")
    result = run(brain, tmp_path / "sel.sqlite", selection=["one", "nope"])
    assert result.exported == 1
    assert [(r.id, r.field) for r in result.refused] == [("nope", "id")]
    out = read(tmp_path / "sel.sqlite")
    assert out.execute("SELECT id FROM memory_traces").fetchall() == [(a.id,)]
    assert out.execute("SELECT count(*) FROM memory_links").fetchone()[0] == 0
    assert {r[0] for r in out.execute("SELECT trace_id FROM memgui_journal")} == {"one"}


def test_existing_path_is_refused_untouched(brain: Brain, tmp_path: Path) -> None:
    brain.add("x")
    dest = tmp_path / "taken.sqlite"
    dest.write_bytes(b"mine")
    with pytest.raises(InvalidArgument, match="already exists"):
        run(brain, dest)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(InvalidArgument, match="already exists"):
        run(brain, tmp_path / "dangling")
    assert dest.read_bytes() == b"mine" and not (tmp_path / "nowhere").exists()


def test_cancel_leaves_nothing(brain: Brain, tmp_path: Path) -> None:
    with brain.batch():
        for i in range(12_000):
            brain.add(f"t{i}")
    job = export(brain, tmp_path / "c.sqlite", "sqlite")
    next(job), next(job)
    with pytest.raises(Cancelled):
        job.throw(Cancelled())
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith((".c.", "c."))]
    assert leftovers == []


def test_vector_index_is_rebuilt_in_the_copy(brain: Brain, tmp_path: Path) -> None:
    from memgui.core.search import vectors

    if not vectors.vec_available(brain.db.conn):
        pytest.skip("sqlite-vec cannot be loaded here")
    t = brain.add("with a vector")
    with brain.write("embed"):
        vectors.write_embedding(brain.db.conn, brain.brain_id, t.rowid, [0.1, 0.2, 0.3])
    run(brain, tmp_path / "vec.sqlite")
    out = read(tmp_path / "vec.sqlite")
    vectors.load_sqlite_vec(out)
    assert out.execute(f"SELECT rowid FROM {vectors.VEC_TABLE}").fetchall() == [(t.rowid,)]
    blob = out.execute("SELECT embedding FROM memory_traces").fetchone()[0]
    assert blob == vectors.pack_vector([0.1, 0.2, 0.3])


def test_the_export_is_a_brain_to_write_search_and_export_again(
    brain: Brain, tmp_path: Path
) -> None:
    kept = brain.add("a memory about harbours", tags=["sea"])
    brain.add("a second memory")
    run(brain, tmp_path / "copy.sqlite")
    with Brain.open(tmp_path / "copy.sqlite", actor="test") as copy:
        added = copy.add("written into the export about harbours")
        copy.update(kept.id, {"content": "a changed memory about harbours"})
        found = {h.trace.id for h in copy.search("harbours").hits}
        assert found == {kept.id, added.id}
        assert copy.count() == 3
        run(copy, tmp_path / "again.sqlite")
    with Brain.open(tmp_path / "again.sqlite", actor="test") as again:
        assert again.get(kept.id).content == "a changed memory about harbours"
        again.add("and into the export of the export")
        assert {h.trace.id for h in again.search("harbours").hits} == {kept.id, added.id}
        assert again.db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_triggers_memgui_did_not_make_stay_out_of_the_export(brain: Brain, tmp_path: Path) -> None:
    brain.add("seed")
    brain.db.conn.execute(
        "CREATE TRIGGER hijack AFTER INSERT ON memory_traces BEGIN "
        "UPDATE memory_traces SET content = 'HIJACKED' WHERE rowid = new.rowid; END"
    )
    run(brain, tmp_path / "copy.sqlite")
    out = read(tmp_path / "copy.sqlite")
    names = {r[0] for r in out.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert names == set(schema.MEMGUI_TRIGGER_NAMES)
    out.close()
    with Brain.open(tmp_path / "copy.sqlite", actor="test") as copy:
        assert copy.add("the user's own words").content == "the user's own words"
        assert [t.content for t in copy.list_traces(limit=1)] == ["the user's own words"]


def _export_steps(tmp_path: Path, traces: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """SQLite's virtual-machine steps (in hundreds) the export's own connection ran."""
    with Brain.open(tmp_path / f"steps{traces}.sqlite") as brain:
        with brain.batch():
            for n in range(traces):
                brain.add(f"trace number {n}")
        brain.db.conn.execute(  # a second brain in the file: its rows are copied row by row
            "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
            "VALUES ('beta', 'b1', 'episodic', 'user', 'beta text', 1)"
        )
        steps = [0]

        def count() -> bool:
            steps[0] += 1
            return False  # never interrupts

        def hook(conn: apsw.Connection) -> None:
            if ".export-tmp-" in conn.filename:
                conn.setprogresshandler(count, 100)

        monkeypatch.setattr(apsw, "connection_hooks", [*apsw.connection_hooks, hook])
        result = run(brain, tmp_path / f"steps{traces}-copy.sqlite")
        monkeypatch.undo()
    assert result.exported == traces
    out = read(tmp_path / f"steps{traces}-copy.sqlite")
    assert out.execute("SELECT count(*) FROM memgui_journal").fetchone()[0] == traces
    return steps[0]


def test_copy_in_chunks_reads_each_row_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks that each searched an index on `brain_id` read the whole table every time: twice
    # the rows cost four times the work.
    import memgui.core.io.exporters.export_sqlite as export_sqlite

    monkeypatch.setattr(export_sqlite, "CHUNK_ROWS", 20)
    small = _export_steps(tmp_path, 400, monkeypatch)
    monkeypatch.setattr(export_sqlite, "CHUNK_ROWS", 20)
    large = _export_steps(tmp_path, 1600, monkeypatch)
    assert large < 6 * small, (small, large)  # linear: about 4x the work for 4x the rows


def test_a_file_of_one_brain_is_copied_whole_with_its_derived_data_rebuilt(
    brain: Brain, tmp_path: Path
) -> None:
    brain.add("a memory about harbours", tags=["sea"])
    brain.add("a memory about lighthouses")
    pending = "SELECT count(*) FROM memgui_fts_pending"
    assert brain.db.conn.execute(pending).fetchone()[0] > 0  # not yet in memgui's index
    brain.db.conn.execute("CREATE TRIGGER hijack AFTER INSERT ON memory_traces BEGIN SELECT 1; END")
    result = run(brain, tmp_path / "copy.sqlite")
    assert result.exported == 2
    assert not (tmp_path / "copy.sqlite-wal").exists()
    assert stat.S_IMODE((tmp_path / "copy.sqlite").stat().st_mode) == 0o600
    out = read(tmp_path / "copy.sqlite")
    assert out.execute(pending).fetchone()[0] == 0
    assert out.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    names = {r[0] for r in out.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert names == set(schema.MEMGUI_TRIGGER_NAMES)
    for index in ("memgui_fts", "memory_traces_fts", "memgui_stems"):
        match = f"SELECT count(*) FROM {index} WHERE {index} MATCH 'harbours'"
        assert out.execute(match).fetchone()[0] == 1, index
    # The stemmed index (schema 9) is rebuilt too, with its merge settings.
    assert (
        out.execute("SELECT count(*) FROM memgui_stems WHERE memgui_stems MATCH 'harbour'").get == 1
    )
    assert out.execute("SELECT v FROM memgui_stems_config WHERE k = 'automerge'").get == 0
    assert rows(out, "memory_traces") == rows(read(brain.path), "memory_traces")
