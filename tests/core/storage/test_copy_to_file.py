"""`copy_brain` from PostgreSQL into a new file, and the round trip file → PostgreSQL → file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.engines import copy_brain
from memgui.core.errors import InvalidArgument, ReadOnlyBrain
from memgui.core.progress import Progress, run_to_end
from memgui.core.shared_brain import SharedBrain
from tests.support.brain_rows import file_rows, linked_brain

pytestmark = pytest.mark.slow  # a real server


def _round_trip(path: Path, brain_id: str, pg_address: str, back: Path) -> None:
    """`path` into Postgres and back into `back`: every row of the brain the same."""
    before = file_rows(path, brain_id)
    run_to_end(copy_brain(path, pg_address, brain_id))
    seen: list[Progress] = []
    copied = run_to_end(copy_brain(pg_address, back), seen.append)
    assert copied == len(before["traces"])
    assert seen[-1].done == seen[-1].total == copied
    after = file_rows(back, brain_id)
    for part in ("traces", "links", "journal", "meta", "tables"):
        assert after[part] == before[part], part
    assert not [p.name for p in back.parent.iterdir() if ".copy-tmp-" in p.name]


def test_the_agentos_brain_comes_back_row_for_row(
    agentos_copy: Path, pg_address: str, tmp_path: Path
) -> None:
    back = tmp_path / "back.sqlite"
    pg = pg_address.replace("brain_id=team", "brain_id=brain")
    tables = file_rows(agentos_copy, "brain")["tables"]
    # The fixture's graph, document, conversations and logs: each must come back.
    assert {name for name, rows in tables.items() if rows} >= {
        "knowledge_nodes",
        "knowledge_edges",
        "documents",
        "document_chunks",
        "conversations",
        "messages",
        "consolidation_log",
        "retrieval_feedback",
    }
    _round_trip(agentos_copy, "brain", pg, back)
    with Brain.open(back, "brain") as brain:
        assert brain.count() == file_count(agentos_copy)
        word = brain.list_traces(limit=1)[0].content.split()[0]
        assert brain.search(word, mode="keyword").hits  # the full-text index was built


def file_count(path: Path) -> int:
    with Brain.open(path, "brain", create=False) as brain:
        return brain.count()


def test_a_memgui_brain_comes_back_with_links_journal_and_history(
    tmp_path: Path, pg_address: str
) -> None:
    path = tmp_path / "brain.sqlite"
    a, b, edit = linked_brain(path)
    back = tmp_path / "back.sqlite"
    _round_trip(path, "team", pg_address, back)
    with Brain.open(back, "team") as copied:
        assert [h.trace.id for h in copied.search("edited", mode="keyword").hits] == [a.id]
        assert [e.op for e in copied.history(b.id)] == ["add", "link", "forget"]
        assert edit.changes is not None
        copied.revert(edit.changes.batch_id)  # a batch made before both copies reverts
        assert copied.get(a.id).content == "first memory about deployments"


def test_a_snapshot_is_a_read_only_file(tmp_path: Path, pg_address: str) -> None:
    with SharedBrain.open(pg_address) as pg:
        kept = pg.add("on the server")
    snap = tmp_path / "snap.sqlite"
    assert run_to_end(copy_brain(pg_address, snap, read_only=True)) == 1
    assert not os.stat(snap).st_mode & 0o222
    with Brain.open(snap, "team") as brain:
        assert brain.read_only and brain.get(kept.id).content == "on the server"
        with pytest.raises(ReadOnlyBrain):
            brain.add("offline")


def test_an_existing_file_is_never_copied_over(tmp_path: Path, pg_address: str) -> None:
    with SharedBrain.open(pg_address) as pg:
        pg.add("on the server")
    there = tmp_path / "there.sqlite"
    there.write_bytes(b"mine")
    with pytest.raises(InvalidArgument) as caught:
        run_to_end(copy_brain(pg_address, there))
    assert caught.value.field == "destination" and "already exists" in str(caught.value)
    assert there.read_bytes() == b"mine"
    with pytest.raises(InvalidArgument) as caught:
        run_to_end(copy_brain(pg_address, tmp_path / "no" / "such.sqlite"))
    assert caught.value.field == "destination"
    with pytest.raises(InvalidArgument) as caught:
        run_to_end(copy_brain(pg_address, pg_address))
    assert caught.value.field == "destination"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["there.sqlite"]
