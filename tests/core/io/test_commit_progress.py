"""An import's commit reports each phase: the records (indexed for search as they are
written), storing them, indexing the traces it edited."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.io import commit, plan
from memgui.core.io.writing import commit as commit_module
from memgui.core.progress import run_to_end


def test_the_commit_reports_storing_and_indexing(tmp_path, monkeypatch):
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(35):
        (folder / f"note{n}.md").write_text(f"Note number {n} about the release\n")
    monkeypatch.setattr(commit_module, "INDEX_BATCH", 10)
    with Brain.open(tmp_path / "b.sqlite") as brain:
        planned = run_to_end(plan(brain, folder))
        events = list(commit(brain, planned))
        messages = [e.message for e in events]
        assert any(m.startswith("storing 35 records") for m in messages)
        # New traces went into the indexes with their rows: no phase of their own.
        assert [e for e in events if "for search" in e.message] == []
        assert brain.db.conn.execute("SELECT count(*) FROM memgui_fts_pending").get == 0
        assert len(brain.search("release", limit=50).traces) == 35  # indexed


def test_the_commit_reports_indexing_the_traces_it_edits(tmp_path, monkeypatch):
    """An Obsidian note that adds tags to its own trace edits it: that trace's index entry
    is brought up to date at the end, with its own progress."""
    folder = tmp_path / "vault"
    (folder / ".obsidian").mkdir(parents=True)
    monkeypatch.setattr(commit_module, "INDEX_BATCH", 10)
    with Brain.open(tmp_path / "b.sqlite") as brain:
        traces = [brain.add(f"Note number {n} about the release") for n in range(25)]
        for n, trace in enumerate(traces):
            text = f"---\nid: {trace.id}\n---\nNote number {n} about the release\n\n#shipped\n"
            (folder / f"note{n}.md").write_text(text)
        planned = run_to_end(plan(brain, folder, format="obsidian"))
        assert planned.counts["update"] == 25
        events = list(commit(brain, planned))
        indexing = [(e.done, e.total) for e in events if "for search" in e.message]
        assert indexing == [(0, 25), (10, 25), (20, 25)]
        assert len(brain.search("shipped", limit=50).traces) == 25
