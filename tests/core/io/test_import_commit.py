"""Committing a plan: one transaction, one journal batch, revertible, atomic under kill -9."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.planning.plan import ImportOptions, ImportPlan, plan
from memgui.core.io.records import DUPLICATE, ERROR, NEW, REFUSED, TRACE
from memgui.core.io.writing.commit import commit, revalidate
from memgui.core.progress import Cancelled, run_to_end
from tests.support.killed_child import killed_once_it_says
from tests.support.paths import ROOT

AGENTOS = ROOT.parent / "shared" / "fixtures" / "agentos"
JSONL = ROOT / "tests" / "fixtures" / "jsonl"
CSV_TRACES = ROOT / "tests" / "fixtures" / "io" / "csv" / "traces.csv"


def make_plan(brain: Brain, source: Path, **options: object) -> ImportPlan:
    return run_to_end(plan(brain, source, options=ImportOptions(**options)))


def table_counts(brain: Brain) -> dict[str, int]:
    tables = ("memory_traces", "knowledge_nodes", "knowledge_edges", "documents")
    tables += ("document_chunks", "conversations", "messages", "memory_links", "memgui_journal")
    return {
        t: brain.db.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in tables
        if t in brain.db.tables
    }


def test_commit_is_one_journal_batch_named_after_the_format(brain: Brain) -> None:
    result = run_to_end(commit(brain, make_plan(brain, AGENTOS / "csv-input.csv")))
    rows = brain.db.conn.execute("SELECT DISTINCT batch_id, actor FROM memgui_journal").fetchall()
    assert rows == [(result.batch_id, "import:csv")]
    # the blank row is skipped (seed 000), the bad metadata one an error
    assert result.imported == 7 and result.skipped == 1 and len(result.errors) == 1
    assert "csv-input.csv:8" in result.errors[0] and "metadata" in result.errors[0]
    # imported traces are found by search at once: the full-text rows were flushed
    assert brain.db.conn.execute("SELECT count(*) FROM memgui_fts_pending").fetchone()[0] == 0
    assert [t.id for t in brain.search("hal9000").traces] == ["csv_001"]


def test_revert_of_an_import_restores_the_brain(brain: Brain) -> None:
    brain.add("was here before")
    before = table_counts(brain)
    result = run_to_end(commit(brain, make_plan(brain, AGENTOS / "markdown")))
    assert result.imported == 45
    brain.revert(result.batch_id)
    after = table_counts(brain)
    assert {k: v for k, v in after.items() if k != "memgui_journal"} == {
        k: v for k, v in before.items() if k != "memgui_journal"
    }
    assert [t.content for t in brain.list_traces()] == ["was here before"]


def test_revert_removes_graph_document_and_conversation_rows(brain: Brain) -> None:
    before = table_counts(brain)
    result = run_to_end(commit(brain, make_plan(brain, AGENTOS / "export.json")))
    assert table_counts(brain)["knowledge_nodes"] == 35
    brain.revert(result.batch_id)
    after = table_counts(brain)
    assert {k: v for k, v in after.items() if k != "memgui_journal"} == {
        k: v for k, v in before.items() if k != "memgui_journal"
    }


def test_only_accepted_records_are_written(brain: Brain) -> None:
    the_plan = make_plan(brain, AGENTOS / "csv-input.csv")
    first, second = [i for i, r in enumerate(the_plan.records) if r.verdict == NEW][:2]
    the_plan.records[second].accepted = False
    result = run_to_end(commit(brain, the_plan, accept={first, second}))
    assert result.imported == 1
    assert [t.id for t in brain.list_traces()] == [the_plan.trace_id(first)]
    assert result.imported + result.skipped + result.refused + len(result.errors) == len(
        the_plan.records
    )


def test_an_edited_refused_record_is_checked_again(brain: Brain) -> None:
    the_plan = make_plan(brain, CSV_TRACES)
    index = next(i for i, r in enumerate(the_plan.records) if r.problem_field == "type")
    record = the_plan.records[index]
    record.fields["content"] = "   "  # blank: refused, naming the field
    revalidate(brain, the_plan, index)
    assert record.verdict == REFUSED and record.problem_field == "content"
    record.fields.update(content="Fixed by hand", type="semantic", tags=["fixed"])
    record.fields["type"] = "not-a-type"
    result = run_to_end(commit(brain, the_plan))
    assert record.verdict == REFUSED and record.problem_field == "type"
    assert "not-a-type" in record.reason and result.refused == 2  # and the bad time's row
    record.fields["type"] = "semantic"
    result = run_to_end(commit(brain, the_plan))
    assert record.verdict == NEW and result.imported == 1
    assert brain.get(the_plan.trace_id(index)).content == "Fixed by hand"


def test_an_edited_new_record_is_validated_before_writing(brain: Brain) -> None:
    the_plan = make_plan(brain, AGENTOS / "csv-input.csv")
    index = next(i for i, r in enumerate(the_plan.records) if r.verdict == NEW)
    the_plan.records[index].fields["strength"] = 7.5
    result = run_to_end(commit(brain, the_plan))
    record = the_plan.records[index]
    assert record.verdict == REFUSED and record.problem_field == "strength"
    assert result.imported == 6


def test_a_jsonl_defect_writes_nothing(brain: Brain, brain_path: Path) -> None:
    the_plan = make_plan(brain, JSONL / "unknown_field.jsonl")
    assert the_plan.counts["new"] == 0 and the_plan.counts["error"] > 0
    assert any("line" in r.source or ":" in r.source for r in the_plan.records)
    result = run_to_end(commit(brain, the_plan))
    assert result.imported == 0 and result.batch_id is None and result.errors
    assert brain.count() == 0


def test_jsonl_links_and_stability_are_written(brain: Brain) -> None:
    the_plan = make_plan(brain, JSONL / "valid.jsonl")
    result = run_to_end(commit(brain, the_plan))
    assert result.imported >= 1
    traces = brain.list_traces(limit=50)
    decisions = [t for t in traces if t.category == "DECISION"]
    assert decisions and all("stability" in t.metadata["decay"] for t in decisions)
    links = brain.db.conn.execute("SELECT from_id, to_id, kind FROM memory_links").fetchall()
    ids = {t.id for t in traces}
    assert links and all(a in ids and b in ids for a, b, _ in links)
    again = make_plan(brain, JSONL / "valid.jsonl")
    assert again.counts["new"] == 0


def test_a_plan_for_another_brain_is_refused(brain: Brain, tmp_path: Path) -> None:
    the_plan = make_plan(brain, AGENTOS / "csv-input.csv")
    other = Brain.open(tmp_path / "other.sqlite", brain_id="other")
    try:
        with pytest.raises(InvalidArgument) as error:
            run_to_end(commit(other, the_plan))
        assert error.value.field == "plan"
        assert other.count() == 0
    finally:
        other.close()


def test_cancelling_a_commit_rolls_it_back(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "many.csv"
    source.write_text("content\n" + "".join(f"row {i}\n" for i in range(4500)), encoding="utf-8")
    the_plan = make_plan(brain, source)
    with pytest.raises(Cancelled):
        run_to_end(commit(brain, the_plan, cancel_requested=lambda: True))
    assert brain.count() == 0
    assert brain.db.conn.execute("SELECT count(*) FROM memgui_journal").fetchone()[0] == 0


def test_a_commit_never_yields_once_its_transaction_committed(
    brain: Brain, brain_path: Path, tmp_path: Path
) -> None:
    # A job is cancelled at a yield: one after the commit would report a cancelled import
    # while every record is in the brain.
    source = tmp_path / "many.csv"
    source.write_text("content\n" + "".join(f"row {i}\n" for i in range(4500)), encoding="utf-8")
    job = commit(brain, make_plan(brain, source))
    with Brain.open(brain_path) as other:  # sees only what is committed
        events = 0
        with pytest.raises(StopIteration) as done:
            while True:
                next(job)
                events += 1
                assert other.count() == 0, f"event {events} came after the commit"
    assert events >= 2 and done.value.value.imported == 4500 and brain.count() == 4500


def test_duplicates_and_errors_are_accounted_for_in_a_folder(brain: Brain) -> None:
    vault = ROOT / "tests" / "fixtures" / "io" / "vault"
    the_plan = make_plan(brain, vault, format="obsidian")
    notes = sum(1 for p in vault.rglob("*.md") if ".obsidian" not in p.parts)
    result = run_to_end(commit(brain, the_plan))
    assert result.imported + result.skipped + result.refused + len(result.errors) == notes
    assert the_plan.files_read == notes
    again = run_to_end(commit(brain, make_plan(brain, vault, format="obsidian")))
    assert again.imported == 0
    assert again.skipped + again.refused + len(again.errors) == notes


KILLED_COMMIT = """
import signal, sys
from memgui.core.brain import Brain
from memgui.core.io.writing.commit import commit
from memgui.core.io.planning.plan import plan
from memgui.core.progress import run_to_end
brain = Brain.open(sys.argv[1], actor="test")
# A small page cache: the transaction's pages spill to the WAL before the kill (a brain's
# own cache would hold all of them), the case to recover from.
brain.db.conn.execute("PRAGMA cache_size = -500")
job = commit(brain, run_to_end(plan(brain, sys.argv[2])))
for event in job:
    if event.done >= 6000:
        print("mid-commit", flush=True)
        signal.pause()  # inside the transaction until killed
"""


@pytest.mark.slow
def test_kill_9_mid_commit_leaves_the_brain_as_it_was(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as first:
        first.add("before the import")
    source = tmp_path / "big.csv"
    source.write_text(
        "content,tags\n" + "".join(f"memory number {i},bulk\n" for i in range(12_000)),
        encoding="utf-8",
    )
    path = str(tmp_path / "brain.sqlite")
    with killed_once_it_says(KILLED_COMMIT, [path, str(source)], says="mid-commit"):
        assert Path(path + "-wal").stat().st_size > 0  # the transaction had written pages
    reopened = Brain.open(path, actor="test")
    try:
        assert [t.content for t in reopened.list_traces()] == ["before the import"]
        conn = reopened.db.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM memgui_journal").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM memgui_fts_pending").fetchone()[0] == 0
    finally:
        reopened.close()


def test_reader_duplicates_point_at_what_their_twin_became(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "conversations.json"
    data = json.loads((AGENTOS / "chatgpt-input.json").read_text(encoding="utf-8"))
    source.write_text(json.dumps(data), encoding="utf-8")
    the_plan = make_plan(brain, source)
    result = run_to_end(commit(brain, the_plan))
    dups = [r for r in the_plan.records if r.kind == TRACE and r.verdict == DUPLICATE]
    assert dups and all(brain.get(r.existing_id) for r in dups)
    assert result.imported == the_plan.counts["new"]
    assert not [r for r in the_plan.records if r.verdict == ERROR]
