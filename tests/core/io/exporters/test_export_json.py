"""The AgentOS JSON export: byte-identical to AgentOS's own, streamed, private and atomic."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export import ExportOptions, export
from memgui.core.io.exporters.export_json import js_number
from memgui.core.model import TraceFilter
from memgui.core.progress import Cancelled, run_to_end
from tests.support.paths import AGENTOS

EXPORTED_AT = {"export.json": 1795992893468, "export-embeddings.json": 1795992893473}


def run(brain: Brain, dest: Path, **options):
    return run_to_end(export(brain, dest, "json", ExportOptions(**options)))


@pytest.mark.parametrize("name", ["export.json", "export-embeddings.json"])
def test_byte_identical_to_agentos_export(agentos_copy: Path, tmp_path: Path, name: str) -> None:
    with Brain.open(agentos_copy) as brain:
        result = run(
            brain,
            tmp_path / name,
            include_embeddings=name != "export.json",
            clock=lambda: EXPORTED_AT[name],
        )
    assert result.exported == 51 and result.refused == ()
    assert (tmp_path / name).read_bytes() == (AGENTOS / name).read_bytes()


def test_layout_of_a_memgui_brain(brain: Brain, tmp_path: Path) -> None:
    t = brain.add("x", tags=["a"], scope_id="u1", metadata={"k": 1})
    brain.add("gone", id="gone")
    brain.forget("gone")
    run(brain, tmp_path / "out.json", include_conversations=False)
    text = (tmp_path / "out.json").read_text("utf-8")
    doc = json.loads(text)
    assert list(doc) == [
        "meta", "traces", "nodes", "edges", "documents", "chunks", "images",
        "conversations", "messages",
    ]  # fmt: skip
    assert text.startswith('{\n  "meta": {\n    "') and not text.endswith("\n")
    rows = {r["id"]: r for r in doc["traces"]}
    row = rows[t.id]
    assert list(row)[:14] == [
        "brain_id", "id", "type", "scope", "content", "embedding", "strength", "created_at",
        "last_accessed", "retrieval_count", "tags", "emotions", "metadata", "deleted",
    ]  # fmt: skip
    assert row["tags"] == '["a"]' and isinstance(row["metadata"], str)
    assert json.loads(row["metadata"])["scopeId"] == "u1" and row["scope_id"] == "u1"
    assert row["embedding"] is None and row["strength"] == 1 and '"strength": 1,' in text
    assert rows["gone"]["deleted"] == 1  # forgotten traces are kept, with their flag
    assert doc["conversations"] == [] and doc["messages"] == []
    assert '"images": [],' in text


def test_embedding_key_absent_null_or_base64(brain: Brain, tmp_path: Path) -> None:
    t = brain.add("with vector")
    blob = bytes(range(16))
    brain.db.conn.execute("UPDATE memory_traces SET embedding = ? WHERE id = ?", (blob, t.id))
    brain.add("without", id="plain")
    run(brain, tmp_path / "a.json")
    run(brain, tmp_path / "b.json", include_embeddings=True)
    plain = {r["id"]: r for r in json.loads((tmp_path / "a.json").read_text())["traces"]}
    full = {r["id"]: r for r in json.loads((tmp_path / "b.json").read_text())["traces"]}
    assert "embedding" not in plain[t.id] and plain["plain"]["embedding"] is None
    assert base64.b64decode(full[t.id]["embedding"]) == blob


def test_selection_leaves_out_other_traces_and_their_graph_rows(
    brain: Brain, tmp_path: Path
) -> None:
    keep = brain.add("keep", id="keep", tags=["k"])
    brain.add("drop", id="drop")
    conn = brain.db.conn
    for trace_id in ("keep", "drop"):
        conn.execute(
            "INSERT INTO knowledge_nodes (brain_id, id, type, label, created_at) "
            "VALUES (?, ?, 'memory_graph', ?, 1)",
            (brain.brain_id, trace_id, trace_id),
        )
    concept = brain.add_node("Concept", "concept").id
    brain.add_edge("keep", concept, "mentions")
    brain.add_edge("drop", concept, "mentions")
    result = run(brain, tmp_path / "sel.json", selection=TraceFilter(tag="k"))
    doc = json.loads((tmp_path / "sel.json").read_text())
    assert result.exported == 1 and [r["id"] for r in doc["traces"]] == [keep.id]
    assert {n["id"] for n in doc["nodes"]} == {"keep", concept}
    assert [e["source_id"] for e in doc["edges"]] == ["keep"]


def test_private_atomic_and_replaces(brain: Brain, tmp_path: Path) -> None:
    brain.add("x")
    dest = tmp_path / "out.json"
    dest.write_text("old")
    run(brain, dest)
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    assert json.loads(dest.read_text())["traces"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out")) == ["out.json"]


def test_cancel_leaves_the_old_file(brain: Brain, tmp_path: Path) -> None:
    with brain.batch():
        for i in range(1500):
            brain.add(f"t{i}")
    dest = tmp_path / "out.json"
    dest.write_text("old")
    job = export(brain, dest, "json")
    while next(job).done < 1000:
        pass
    with pytest.raises(Cancelled):
        job.throw(Cancelled())
    assert dest.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir() if "export-tmp" in p.name] == []


def test_bad_destinations_write_nothing(brain: Brain, tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="path is a folder"):
        run(brain, tmp_path)
    with pytest.raises(InvalidArgument, match="does not exist"):
        run(brain, tmp_path / "no" / "x.json")
    with pytest.raises(InvalidArgument, match="format must be one of"):
        export(brain, tmp_path / "x", "yaml")
    assert not (tmp_path / "x").exists() and not (tmp_path / "no").exists()
    assert [p.name for p in tmp_path.iterdir() if "export-tmp" in p.name] == []


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1"), (0.87, "0.87"), (1e-7, "1e-7"), (1e-6, "0.000001"),
     (1.5e20, "150000000000000000000"), (1e21, "1e+21"), (-0.5, "-0.5"),
     (float("nan"), "null"), (5e-324, "5e-324")],
)  # fmt: skip
def test_numbers_as_javascript_writes_them(value: float, text: str) -> None:
    assert js_number(value) == text
