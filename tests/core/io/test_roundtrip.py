"""Round trips through the exporters and the import engine.

memgui → JSON → memgui and memgui → SQLite → memgui keep every trace (ids, content byte for
byte, tags, scope ids, metadata, deleted flag, embeddings); a Markdown or Obsidian export
imported back into its own brain adds nothing; JSONL → memgui → JSONL gives the same records.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.io.exporters.export import ExportOptions, export
from memgui.core.io.planning.plan import plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from memgui.core.search import vectors

CONTENTS = [
    "plain text",
    "---\ntitle: looks like front matter\n---\nbody",
    "  leading and trailing spaces  ",
    "CRLF\r\nline\r\n",
    "NUL \x00 inside, BOM \ufeff, RTL \u202e override",
    "emoji 🎉🚀 👩‍💻 and 日本語 ไทย",
]


def vector(seed: int) -> list[float]:
    return [seed, seed + 0.5, -seed, 0.25]


@pytest.fixture
def source(tmp_path: Path) -> Brain:
    brain = Brain.open(tmp_path / "source.sqlite", actor="test")
    for i, content in enumerate(CONTENTS):
        brain.add(
            content,
            id=f"rt_{i}",
            type=("episodic", "semantic", "procedural")[i % 3],
            scope=("user", "thread", "persona")[i % 3],
            scope_id=f"s{i % 2}" if i % 3 else "",
            category=("DECISION", None)[i % 2],
            tags=[f"t{i}", "shared", "with space"],
            metadata={"origin": "test", "n": i, "nested": {"k": [1, 2]}},
        )
    brain.forget("rt_1")
    for i in (0, 2):  # through the vector index: the file then holds a sqlite-vec table
        with brain.write("embed"):
            rowid = brain.get(f"rt_{i}").rowid
            vectors.write_embedding(brain.db.conn, brain.brain_id, rowid, vector(i))
    assert vectors.index_dimensions(brain.db.conn) == 4
    yield brain
    brain.close()


def snapshot(brain: Brain) -> dict[str, dict[str, Any]]:
    rows = brain.db.conn.execute(
        "SELECT id, content, tags, scope_id, metadata, deleted, embedding, type, scope, category "
        "FROM memory_traces WHERE brain_id = ?",
        (brain.brain_id,),
    ).fetchall()
    out = {}
    for trace_id, content, tags, scope_id, meta, deleted, blob, kind, scope, category in rows:
        metadata = json.loads(meta)
        metadata.pop("import_hash", None)  # an import's own bookkeeping
        out[trace_id] = {
            "content": content,
            "tags": json.loads(tags),
            "scope_id": scope_id,
            "metadata": metadata,
            "deleted": deleted,
            "embedding": blob,
            "type": kind,
            "scope": scope,
            "category": category,
        }
    return out


def import_into(brain: Brain, path: Path, fmt: str):
    the_plan = run_to_end(plan(brain, path, fmt))
    return the_plan, run_to_end(commit(brain, the_plan))


@pytest.mark.parametrize(("fmt", "name"), [("json", "out.json"), ("sqlite", "out.sqlite")])
def test_json_and_sqlite_keep_every_trace(
    source: Brain, tmp_path: Path, fmt: str, name: str
) -> None:
    options = ExportOptions(include_embeddings=True)
    result = run_to_end(export(source, tmp_path / name, fmt, options))
    assert result.exported == len(CONTENTS)
    with Brain.open(tmp_path / "target.sqlite", actor="test") as target:
        _plan, imported = import_into(target, tmp_path / name, fmt)
        assert imported.errors == []
        assert snapshot(target) == snapshot(source)
        # The vectors came in searchable: the live embedded traces are in the vector index.
        indexed = target.db.conn.execute(f"SELECT rowid FROM {vectors.VEC_TABLE}").fetchall()
        expected = [(target.get(f"rt_{i}").rowid,) for i in (0, 2)]
        assert sorted(indexed) == sorted(expected)


@pytest.mark.parametrize("fmt", ["markdown", "obsidian"])
def test_notes_imported_into_their_brain_add_nothing(
    source: Brain, tmp_path: Path, fmt: str
) -> None:
    concept = source.add_node("Concept", "concept").id
    source.db.conn.execute(
        "INSERT INTO knowledge_nodes (brain_id, id, type, label, created_at) "
        "VALUES (?, 'rt_0', 'memory_graph', 'rt_0', 1)",
        (source.brain_id,),
    )
    source.add_edge("rt_0", concept, "related_to")
    result = run_to_end(export(source, tmp_path / fmt, fmt))
    assert result.exported == len(CONTENTS) - 1  # the forgotten one is not a note
    before = snapshot(source)
    the_plan, _imported = import_into(source, tmp_path / fmt, fmt)
    assert the_plan.counts["new"] == the_plan.counts["update"] == 0, [
        (r.source, r.verdict, r.reason) for r in the_plan.records if r.verdict != "duplicate"
    ]
    assert snapshot(source) == before


TRICKY_CSV = (
    "content,tags\n"
    'a tag that starts with a hash,"[""#hash"", ""ok"", ""org chart""]"\n'
    'only hash tags,"[""#hash"", ""##two""]"\n'
    '"a text that ends in a list\n\n**Related:**\n- [[Nope]]",\n'
    '"a tagged text that ends in a list\n\n**Related:**\n- [[Nope]]",t1\n'
    '"a text that ends in hashtags\n\n#x #y",t1\n'
    '"a text that ends in both\n\n#x\n\n**Related:**\n- [[Nope]]",\n'
)


@pytest.mark.parametrize("fmt", ["markdown", "obsidian"])
def test_tricky_notes_imported_into_their_brain_add_nothing(tmp_path: Path, fmt: str) -> None:
    # A tag `#hash` (written `##hash` on the tag line) and a text that itself ends in what
    # looks like a **Related:** list or a tag line: the note is still its trace's own note.
    (tmp_path / "in.csv").write_text(TRICKY_CSV, encoding="utf-8")
    with Brain.open(tmp_path / "b.sqlite", actor="test") as brain:
        _plan, imported = import_into(brain, tmp_path / "in.csv", "csv")
        assert imported.imported == 6
        brain.add_node("Nope", "concept")  # a label the brain holds adds no edge either
        before = snapshot(brain)
        run_to_end(export(brain, tmp_path / fmt, fmt))
        the_plan, result = import_into(brain, tmp_path / fmt, fmt)
        assert the_plan.counts["duplicate"] == 6, [
            (r.source, r.verdict, r.reason) for r in the_plan.records
        ]
        assert (result.imported, result.updated, result.batch_id) == (0, 0, None)
        assert snapshot(brain) == before


def test_a_hash_tag_comes_back_as_it_was_into_another_brain(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "a.sqlite", actor="test") as brain:
        brain.add("hashes", id="h1", tags=["#hash", "ok", "org chart"])
        run_to_end(export(brain, tmp_path / "vault", "obsidian"))
    with Brain.open(tmp_path / "b.sqlite", actor="test") as other:
        import_into(other, tmp_path / "vault", "obsidian")
        assert list(other.get("h1").tags) == ["#hash", "ok", "org chart"]


def test_an_own_note_brings_tag_line_and_related_additions_not_front_matter_tags(
    tmp_path: Path,
) -> None:
    with Brain.open(tmp_path / "b.sqlite", actor="test") as brain:
        brain.add("text", id="n1", tags=["t1"])
        run_to_end(export(brain, tmp_path / "vault", "obsidian"))
        (path,) = (tmp_path / "vault").rglob("n1.md")
        note = path.read_text(encoding="utf-8").replace("  - t1\n", "  - t1\n  - in-front\n")
        trailer = "\n**Related:**\n- [[Other]]\n"  # after the tag line the export wrote
        path.write_text(note.replace("#t1", "#t1 #added") + trailer, encoding="utf-8")
        the_plan, result = import_into(brain, tmp_path / "vault", "obsidian")
        assert [r.verdict for r in the_plan.records] == ["update"]
        assert the_plan.resolved[0] == {"add_links": ["Other"], "add_tags": ["added"]}
        assert list(brain.get("n1").tags) == ["t1", "added"] and result.updated == 1


def jsonl_file(path: Path) -> Path:
    now = int(time.time())
    memories = [
        {"record": "memory", "key": 1, "type": "DECISION", "content": "Use WAL mode",
         "tags": ["sqlite"], "source": "adr-7", "scope": "kore", "created_at": now - 86400,
         "last_accessed": now - 3600, "access_count": 3, "expires_at": None},
        {"record": "memory", "key": 2, "type": "TODO", "content": "Add export ✓",
         "tags": [], "source": None, "scope": None, "created_at": now - 500,
         "last_accessed": now - 400, "access_count": 0, "expires_at": now + 86400},
        {"record": "memory", "key": 3, "type": "PATTERN", "content": "Retry with backoff",
         "tags": ["net", "retry"], "source": None, "scope": "kore", "created_at": now - 100,
         "last_accessed": now - 50, "access_count": 7, "expires_at": None},
        # The first one's text again under another type, then another source: agent-memory
        # keeps both (its key is source, type and text).
        {"record": "memory", "key": 4, "type": "TODO", "content": "Use WAL mode",
         "tags": [], "source": "adr-7", "scope": "kore", "created_at": now - 90,
         "last_accessed": now - 40, "access_count": 0, "expires_at": None},
        {"record": "memory", "key": 5, "type": "DECISION", "content": "Use WAL mode",
         "tags": [], "source": None, "scope": "kore", "created_at": now - 80,
         "last_accessed": now - 30, "access_count": 0, "expires_at": None},
    ]  # fmt: skip
    links = [
        {"record": "link", "from": 1, "to": 3, "kind": "relates_to", "created_at": now - 90},
        {"record": "link", "from": 2, "to": 1, "kind": "caused_by", "created_at": now - 80},
    ]
    header = {
        "record": "header", "format": "agent-memory-export", "version": 1, "exported_at": now,
        "embedding_model": "nomic-embed-text", "embedding_dim": 768, "schema_version": 3,
        "agent_memory_version": "0.1.0", "exported_rows": 5, "exported_links": 2,
    }  # fmt: skip
    lines = [
        json.dumps(d, ensure_ascii=False, separators=(",", ":"))
        for d in (header, *memories, *links)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_records_come_back_the_same(tmp_path: Path) -> None:
    original = jsonl_file(tmp_path / "in.jsonl")
    with Brain.open(tmp_path / "fresh.sqlite", actor="test") as brain:
        _plan, imported = import_into(brain, original, "jsonl")
        assert imported.imported == 5
        run_to_end(export(brain, tmp_path / "out.jsonl", "jsonl"))

    def records(path: Path) -> list[dict[str, Any]]:
        docs = [json.loads(line) for line in path.read_text("utf-8").splitlines()[1:]]
        for doc in docs:
            doc.pop("last_accessed", None)  # refreshed to the import time, by design
        return docs

    assert records(tmp_path / "out.jsonl") == records(original)


@pytest.mark.parametrize(("fmt", "name"), [("json", "out.json"), ("sqlite", "out.sqlite")])
def test_imported_vectors_keep_their_model_and_never_mix_with_another(
    source: Brain, tmp_path: Path, fmt: str, name: str
) -> None:
    with source.write("pin"):
        vectors.unpin_model(source.db.conn, source.brain_id)
        vectors.pin_model(source.db.conn, source.brain_id, "test-model", 4)
    run_to_end(export(source, tmp_path / name, fmt, ExportOptions(include_embeddings=True)))
    with Brain.open(tmp_path / "fresh.sqlite", actor="test") as fresh:
        import_into(fresh, tmp_path / name, fmt)
        assert vectors.pinned_model(fresh.db.conn, fresh.brain_id) == ("test-model", 4)
        with pytest.raises(vectors.EmbeddingModelMismatch):
            vectors.check_pin(fresh.db.conn, fresh.brain_id, "another-model", None)
    with Brain.open(tmp_path / "other.sqlite", actor="test") as other:
        own = other.add("embedded by the other model")
        with other.write("embed"):
            vectors.pin_model(other.db.conn, other.brain_id, "another-model", 4)
            vectors.write_embedding(other.db.conn, other.brain_id, own.rowid, vector(7))
        import_into(other, tmp_path / name, fmt)
        indexed = other.db.conn.execute(f"SELECT rowid FROM {vectors.VEC_TABLE}").fetchall()
        assert indexed == [(own.rowid,)]  # the imported vectors wait to be embedded again
        assert other.get("rt_0").embedding_status == 0
        assert vectors.pinned_model(other.db.conn, other.brain_id) == ("another-model", 4)
