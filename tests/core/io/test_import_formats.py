"""Every format, end to end: the AgentOS fixture set, the corpora, and re-imports adding nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportOptions, ImportPlan, plan
from memgui.core.io.records import CONVERSATION, ERROR, NEW, TRACE
from memgui.core.io.writing.commit import ImportResult, commit
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from tests.support.paths import ROOT

SHARED = ROOT.parent / "shared"
AGENTOS = SHARED / "fixtures" / "agentos"
CORPORA = SHARED / "corpora"
RESULTS = json.loads((AGENTOS / "results.json").read_text(encoding="utf-8"))

# (source, format, traces the file holds, records in all)
FIXTURES = [
    ("export.json", "json", 51, 101),
    ("export-embeddings.json", "json", 51, 101),
    ("export.sqlite", "sqlite", 51, 101),
    ("brain.sqlite", "sqlite", 51, 101),
    ("markdown", "markdown", 45, 45),
    ("obsidian", "obsidian", 45, 45),
    ("json-input.json", "json", 2, 6),
    ("csv-input.csv", "csv", 9, 9),
    ("chatgpt-input.json", "chatgpt", 5, 17),
]


def make_plan(brain: Brain, source: Path, fmt: str = "auto", **options: object) -> ImportPlan:
    return run_to_end(plan(brain, source, format=fmt, options=ImportOptions(**options)))


def import_all(brain: Brain, source: Path, fmt: str = "auto") -> tuple[ImportPlan, ImportResult]:
    the_plan = make_plan(brain, source, fmt)
    return the_plan, run_to_end(commit(brain, the_plan))


def source_traces(name: str) -> list[dict]:
    return json.loads((AGENTOS / name).read_text(encoding="utf-8"))["traces"]


@pytest.mark.parametrize(("name", "fmt", "traces", "records"), FIXTURES)
def test_every_agentos_fixture_imports_and_reimports_as_duplicates(
    brain: Brain, name: str, fmt: str, traces: int, records: int
) -> None:
    the_plan, result = import_all(brain, AGENTOS / name, fmt)
    assert the_plan.format == fmt
    assert len(the_plan.records) == records
    assert sum(1 for r in the_plan.records if r.kind == TRACE) == traces
    assert result.imported + result.skipped + result.refused + len(result.errors) == records
    again = make_plan(brain, AGENTOS / name, fmt)
    assert again.counts["new"] == 0 and again.counts["update"] == 0


def test_agentos_export_keeps_every_trace_better_than_agentos(brain: Brain) -> None:
    """AgentOS merged the live thread-scope 'dark mode' trace into its deleted user-scope twin
    (active_ids_preserved 44/45); here every trace keeps its id, text, scope id and flag."""
    _, result = import_all(brain, AGENTOS / "export.json")
    assert result.imported == 101
    for row in source_traces("export.json"):
        trace = brain.get(row["id"])
        assert trace.content == row["content"]
        assert trace.deleted == bool(row["deleted"])
        assert list(trace.tags) == json.loads(row["tags"])
        assert trace.scope_id == (json.loads(row["metadata"]).get("scopeId") or "")
        assert trace.created_at == row["created_at"]
    live = brain.count(TraceFilter())
    assert live == RESULTS["source_counts"]["memory_traces_active"]


def test_embeddings_are_kept(brain: Brain) -> None:
    import_all(brain, AGENTOS / "export-embeddings.json")
    rows = brain.db.conn.execute(
        "SELECT count(*) FROM memory_traces WHERE embedding IS NOT NULL AND embedding_status = 1"
    ).fetchone()[0]
    expected = sum(1 for r in source_traces("export-embeddings.json") if r.get("embedding"))
    assert expected and rows == expected


def test_conversations_messages_documents_and_graph_rows_arrive(brain: Brain) -> None:
    import_all(brain, AGENTOS / "export.sqlite")
    counts = {
        t: brain.db.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("knowledge_nodes", "knowledge_edges", "documents", "document_chunks")
        + ("conversations", "messages")
    }
    assert counts == {
        "knowledge_nodes": 35,
        "knowledge_edges": 3,
        "documents": 1,
        "document_chunks": 1,
        "conversations": 7,
        "messages": 3,
    }


def test_markdown_and_obsidian_exports_add_nothing_to_their_brain(brain: Brain) -> None:
    import_all(brain, AGENTOS / "export.sqlite")
    for folder, fmt in (("markdown", "markdown"), ("obsidian", "obsidian")):
        the_plan = make_plan(brain, AGENTOS / folder, fmt)
        assert the_plan.counts["new"] == 0 and the_plan.counts["update"] == 0, folder


def test_obsidian_wikilinks_become_graph_edges(brain: Brain) -> None:
    _, result = import_all(brain, AGENTOS / "obsidian", "obsidian")
    assert result.imported == 45
    edges = brain.db.conn.execute(
        "SELECT count(*) FROM knowledge_edges WHERE type = 'related_to'"
    ).fetchone()[0]
    assert edges >= 3
    (with_links,) = brain.db.conn.execute(
        "SELECT count(DISTINCT source_id) FROM knowledge_edges"
    ).fetchone()
    assert with_links >= 1


def test_chatgpt_fixture_writes_conversations_messages_and_seed_ids(brain: Brain) -> None:
    the_plan, result = import_all(brain, AGENTOS / "chatgpt-input.json")
    conversations = [r for r in the_plan.records if r.kind == CONVERSATION]
    assert result.imported == the_plan.counts["new"]
    rows = brain.db.conn.execute("SELECT id FROM conversations").fetchall()
    assert sorted(r[0] for r in rows) == sorted(r.fields["id"] for r in conversations)
    assert all(r[0].startswith("cv_chatgpt_") for r in rows)
    assert all(t.id.startswith("mt_chatgpt_") for t in brain.list_traces(limit=50))
    assert brain.db.conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 9


@pytest.mark.parametrize("name", sorted(p.name for p in (CORPORA / "chatgpt").iterdir()))
def test_every_chatgpt_corpus_file_plans_and_commits(brain: Brain, name: str) -> None:
    the_plan, result = import_all(brain, CORPORA / "chatgpt" / name)
    assert the_plan.format == "chatgpt"
    assert not [r for r in the_plan.records if r.verdict == ERROR]
    conversations = [r for r in the_plan.records if r.kind == CONVERSATION]
    assert conversations  # every conversation is accounted for by its own record
    assert result.imported == the_plan.counts["new"]
    assert make_plan(brain, CORPORA / "chatgpt" / name).counts["new"] == 0


def test_chatgpt_all_branches_reads_more_pairs(brain: Brain) -> None:
    source = CORPORA / "chatgpt" / "librechat__chatgpt-tree.json"
    seen = make_plan(brain, source).counts["new"]
    every = make_plan(brain, source, all_branches=True).counts["new"]
    assert every >= seen


def test_markdown_corpus_templates_are_refused_not_a_crash(brain: Brain) -> None:
    the_plan, result = import_all(brain, CORPORA / "markdown" / "kepano-obsidian", "markdown")
    refused = [r for r in the_plan.records if r.verdict == "refused"]
    assert refused and all(r.reason for r in refused)
    notes = sum(1 for p in (CORPORA / "markdown" / "kepano-obsidian").rglob("*.md"))
    assert result.imported + result.skipped + result.refused + len(result.errors) == notes


def test_gsd_state_imports_by_section(brain: Brain, tmp_path: Path) -> None:
    state = tmp_path / "project" / ".planning" / "STATE.md"
    state.parent.mkdir(parents=True)
    state.write_text(
        "# State\n\n## Decisions\n\n- Use SQLite\n\n## Pending Todos\n\n- Write docs\n",
        encoding="utf-8",
    )
    the_plan, result = import_all(brain, state)
    assert the_plan.format == "gsd" and result.imported == 2
    categories = {t.content: (t.category, t.scope_id) for t in brain.list_traces()}
    assert categories == {"Use SQLite": ("DECISION", "project"), "Write docs": ("TODO", "project")}
    assert make_plan(brain, state).counts["new"] == 0


def test_csv_corpus_imports(brain: Brain) -> None:
    source = CORPORA / "csv" / "useless-facts__facts.csv"
    unnamed = make_plan(brain, source)
    assert unnamed.unreadable is not None and 'no "content" column' in unnamed.unreadable
    the_plan = make_plan(brain, source, content_column="text")
    result = run_to_end(commit(brain, the_plan))
    assert result.imported == the_plan.counts["new"] > 0


@pytest.mark.slow
def test_obsidian_help_twice_the_second_plan_is_all_duplicates(brain: Brain) -> None:
    vault = CORPORA / "obsidian-help"
    the_plan, result = import_all(brain, vault, "obsidian")
    notes = sum(1 for p in vault.rglob("*.md") if not any(part.startswith(".") for part in p.parts))
    assert result.imported + result.skipped + result.refused + len(result.errors) == notes
    assert the_plan.counts[NEW] > 2000
    again = make_plan(brain, vault, "obsidian")
    assert again.counts["new"] == 0 and again.counts["update"] == 0
    assert again.counts["duplicate"] == len(again.records)
