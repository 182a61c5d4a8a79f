"""A brain memgui may not write, opened while no writer was at work (immutable), then
written by its owner: the reader goes on reading it whole and current."""

from __future__ import annotations

from pathlib import Path

from memgui.core.brain import Brain


def test_a_reader_that_may_not_write_sees_the_owners_later_writes(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="owner") as brain, brain.batch():
        for i in range(200):
            brain.add(f"zqfirst wave {i}")
    assert not Path(f"{path}-wal").exists()
    path.chmod(0o444)
    reader = Brain.open(path, create=False)
    try:
        assert reader.read_only and reader.count() == 200
        path.chmod(0o644)  # the owner writes from here on
        with Brain.open(path, actor="owner") as owner:
            for start in range(0, 3000, 500):
                with owner.batch():
                    for i in range(start, start + 500):
                        owner.add(f"zqsecond wave {i} " + "x" * 200)
            forgotten = owner.list_ids()[:100]
            with owner.batch():
                for trace_id in forgotten:
                    owner.forget(trace_id)
            owner.db.checkpoint()  # pages of the file rewritten under the reader
            assert reader.count() == 3100
            assert len(reader.search("zqsecond", limit=200, record_recall=False).traces) == 200
        assert reader.count() == 3100  # and after the owner closed (its WAL folded in)
        assert reader.read_only
    finally:
        reader.close()


def test_an_unmigrated_brain_read_only_is_searched_afresh_after_its_owner_wrote(
    agentos_copy: Path,
) -> None:
    import apsw

    agentos_copy.chmod(0o444)
    reader = Brain.open(agentos_copy, create=False)
    try:
        assert reader.read_only and "memgui_fts" not in reader.db.tables
        assert not reader.search("zqowl", record_recall=False).traces  # builds its index
        agentos_copy.chmod(0o644)
        owner = apsw.Connection(str(agentos_copy))  # as AgentOS writes: plain SQL
        owner.execute(
            "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
            "SELECT brain_id, 'mt_owl', 'semantic', 'user', 'a zqowl at night', 1 "
            "FROM memory_traces LIMIT 1"
        )
        owner.close()
        assert [t.id for t in reader.search("zqowl", record_recall=False).traces] == ["mt_owl"]
    finally:
        reader.close()
