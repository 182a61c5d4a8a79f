"""A JSONL memory no one edited is written from the row its reader checked: the same row the
snapshot path builds, indexed for search as it is written; an edited one is checked again."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.io.planning.validate import check_trace_fields, trace_snapshot
from memgui.core.io.readers.jsonl_fields import MemoryFields
from memgui.core.io.readers.text_utils import content_hash
from memgui.core.io.records import NEW, REFUSED
from memgui.core.io.writing import trace_rows
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from memgui.core.search import fulltext

NOW = 1_767_225_600_000
HEADER = {
    "record": "header",
    "format": "agent-memory-export",
    "version": 1,
    "exported_at": 1767225600,
    "embedding_model": "nomic-embed-text",
    "embedding_dim": 768,
    "schema_version": 3,
    "agent_memory_version": "0.1.0",
    "exported_rows": 0,
    "exported_links": 0,
}


def memory(key: int, content: str, **changes: object) -> dict[str, object]:
    line: dict[str, object] = {
        "record": "memory",
        "key": key,
        "type": "PATTERN",
        "content": content,
        "tags": ["kept"],
        "source": "cli",
        "scope": "proj",
        "created_at": 1767225600 + key,
        "last_accessed": 1767225600,
        "access_count": key,
        "expires_at": None,
    }
    line.update(changes)
    return line


def export(path: Path, memories: list[dict[str, object]]) -> Path:
    header = dict(HEADER, exported_rows=len(memories))
    rows = [header, *memories]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


LINES = [
    memory(1, "Builds run on tagged commits only"),
    memory(2, "東京の天気は晴れです", type="DECISION", tags=["天気", "x", "天気"]),
    memory(3, "Ünïcödé café résumé", source=None, scope=None, tags=[]),
    memory(4, "Expires later", type="TODO", expires_at=4_102_444_800),
    memory(5, "A pinned constraint", type="CONSTRAINT", scope=""),
]


@pytest.mark.parametrize("line", LINES, ids=[str(line["key"]) for line in LINES])
def test_a_checked_memory_row_is_the_row_its_snapshot_makes(line: dict[str, object]) -> None:
    fields = MemoryFields("mt_x", line, NOW, content_hash(str(line["content"])))
    assert fields.checked
    built = fields.build()
    check_trace_fields(built)  # what the reader checked, the commit would take
    snap = trace_snapshot(built, "mt_y", NOW + 5, afresh=False)
    expected = trace_rows.snapshot_row("brain", snap, None)
    assert trace_rows.checked_row(fields, "brain", "mt_y", NOW + 5) == expected


def test_an_edited_memory_is_checked_again_and_written_as_edited(tmp_path: Path) -> None:
    source = export(tmp_path / "memories.jsonl", LINES)
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        the_plan = run_to_end(plan(brain, source, options=ImportOptions(format="jsonl")))
        first, second = the_plan.records[0], the_plan.records[1]
        assert first.verdict == second.verdict == NEW
        first.fields["tags"] = ["  "]  # an edit in the review: a dict from then on
        second.fields["tags"] = ["edited"]
        assert isinstance(first.fields, MemoryFields) and not first.fields.checked
        result = run_to_end(commit(brain, the_plan))
        assert first.verdict == REFUSED and first.problem_field == "tags[0]"
        assert result.imported == len(LINES) - 1
        assert brain.get(the_plan.trace_id(1)).tags == ("edited",)
        assert brain.search("tagged commits", record_recall=False).traces == []
        found = brain.search("pinned constraint", record_recall=False).traces  # a checked row
        assert [t.id for t in found] == [the_plan.trace_id(4)]


def test_new_rows_take_the_place_of_a_deleted_foreign_rows_index_entry(tmp_path: Path) -> None:
    """Another program's row, indexed and then deleted at the rowid an import takes next:
    its words leave memgui's index, the imported text is found."""
    path = tmp_path / "brain.sqlite"
    source = export(tmp_path / "memories.jsonl", [memory(1, "Plumcot harvest notes")])
    with Brain.open(path, actor="test") as brain:
        brain.add("memgui's own first note")
        agentos = apsw.Connection(str(path))
        agentos.setbusytimeout(5000)
        agentos.execute(
            "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at, tags, "
            "metadata) VALUES (?, 'mt_foreign', 'semantic', 'user', 'Quasarfig orchard', 1, "
            "'[]', '{}')",
            (brain.brain_id,),
        )
        rowid = agentos.last_insert_rowid()
        agentos.execute(
            "INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, 'Quasarfig orchard', "
            "'[]')",
            (rowid,),
        )
        found = brain.search("Quasarfig", record_recall=False).traces  # indexed by memgui
        assert [t.id for t in found] == ["mt_foreign"]
        agentos.execute("DELETE FROM memory_traces WHERE rowid = ?", (rowid,))
        agentos.close()
        the_plan = run_to_end(plan(brain, source, options=ImportOptions(format="jsonl")))
        run_to_end(commit(brain, the_plan))
        new_id = the_plan.trace_id(0)
        with brain.db.lock:
            taken = brain.db.conn.execute(
                "SELECT rowid FROM memory_traces WHERE id = ?", (new_id,)
            ).get
        assert taken == rowid  # the same rowid: the case this test is about
        assert brain.search("Quasarfig", record_recall=False).traces == []
        assert [t.id for t in brain.search("Plumcot", record_recall=False).traces] == [new_id]
        rows = brain.db.conn.execute("SELECT count(*) FROM memory_traces").get
        assert fulltext.indexed_rows(brain.db, "memgui_fts") == rows
