"""An import's commit reports each phase: the records, storing them, indexing them."""

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
        indexing = [(e.done, e.total) for e in events if "for search" in e.message]
        assert indexing == [(0, 35), (10, 35), (20, 35), (30, 35)]
        assert [t.content for t in brain.search("release", limit=50).traces]  # indexed
