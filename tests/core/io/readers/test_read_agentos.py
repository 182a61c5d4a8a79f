"""Readers of AgentOS brains: the JSON export and the SQLite brain file."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import struct
from collections import Counter
from pathlib import Path

import apsw
import pytest

from memgui.core.errors import BrainIdRequired, InvalidArgument
from memgui.core.io.readers.agentos_reader import read_agentos_json, read_agentos_sqlite
from memgui.core.io.records import ERROR, NEW, REFUSED, ImportRecord
from memgui.core.progress import Progress
from tests.support.paths import SHARED

AGENTOS = SHARED / "fixtures" / "agentos"
EXPECTED_KINDS = {
    ("trace", NEW): 51,
    ("node", NEW): 35,
    ("edge", NEW): 3,
    ("document", NEW): 1,
    ("chunk", NEW): 1,
    ("conversation", NEW): 7,
    ("message", NEW): 3,
}


def records(events) -> list[ImportRecord]:
    return [event for event in events if isinstance(event, ImportRecord)]


def write_json(tmp_path: Path, payload: object) -> Path:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- JSON ------------------------------------------------------------------------------


def test_real_export_reads_every_row() -> None:
    result = records(read_agentos_json(AGENTOS / "export.json"))
    assert Counter((r.kind, r.verdict) for r in result) == EXPECTED_KINDS
    traces = [r for r in result if r.kind == "trace"]
    # live traces come before forgotten ones, so a live record wins over its twin
    flags = [r.fields["deleted"] for r in traces]
    assert flags == sorted(flags) and flags.count(True) == 6
    standup = next(r for r in traces if r.fields["content"].startswith("Standup on Monday"))
    assert standup.fields["tags"] == ["meeting", "ci", "arm64"]
    assert standup.fields["scope_id"] == "thread-001"
    assert standup.fields["metadata"]["decay"]["stability"] == 146880000
    assert re.fullmatch(r".*/export\.json#traces\[\d+\]", standup.source)


def test_embeddings_decode_to_float32_bytes() -> None:
    result = records(read_agentos_json(AGENTOS / "export-embeddings.json"))
    embedded = [r for r in result if r.kind == "trace" and r.fields["embedding"]]
    assert len(embedded) == 4
    assert {len(r.fields["embedding"]) for r in embedded} == {1536 * 4}
    raw = json.loads((AGENTOS / "export-embeddings.json").read_text(encoding="utf-8"))
    source = next(t for t in raw["traces"] if t["id"] == embedded[0].fields["id"])
    assert embedded[0].fields["embedding"] == base64.b64decode(source["embedding"])


def test_hand_written_input_without_brain_ids() -> None:
    result = records(read_agentos_json(AGENTOS / "json-input.json"))
    assert Counter(r.kind for r in result) == {"trace": 2, "conversation": 1, "message": 3}
    first = result[0]
    assert first.fields["id"] == "seed_trace_1"
    assert first.fields["scope_id"] == "thread-json-1"
    assert first.fields["strength"] == 0.8


def test_a_file_without_traces_is_one_error() -> None:
    (record,) = records(read_agentos_json(AGENTOS / "chatgpt-input.json"))
    assert record.verdict == ERROR
    assert record.reason == 'missing top-level "traces" array'


def test_invalid_json_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"traces": [', encoding="utf-8")
    (record,) = records(read_agentos_json(path))
    assert record.verdict == ERROR and record.reason.startswith("is not valid JSON")


def test_hazards_are_refused_with_field_and_reason(tmp_path: Path) -> None:
    payload = {
        "traces": [
            {"id": "real-array", "content": "Tags as a real array", "tags": ["a", "b"]},
            {"id": "real-object", "content": "Metadata as an object", "metadata": {"k": 1}},
            {"id": "no-content", "tags": "[]"},
            {"id": "bad-tags", "content": "x", "tags": "not json"},
            {"id": "bad-type", "content": "x", "type": "../../escape-type"},
            {"id": "bad-time", "content": "x", "created_at": "yesterday"},
            {"id": "bad-strength", "content": "x", "strength": 3},
        ],
        "nodes": [{"id": "n1", "type": "person", "label": "Ana", "created_at": 1}],
        "edges": [
            {"id": "e1", "source_id": "n1", "target_id": "n1", "type": "knows"},
            {"id": "e2", "source_id": "n1", "target_id": "ghost", "type": "knows"},
        ],
        "conversations": [{"id": "c1", "title": "t", "created_at": 1, "updated_at": 2}],
        "messages": [
            {"id": "m1", "conversation_id": "c1", "role": "user", "content": "hi"},
            {"id": "m2", "conversation_id": "nowhere", "role": "user", "content": "hi"},
        ],
    }
    by_id = {
        r.fields.get("id") or r.source: r
        for r in records(read_agentos_json(write_json(tmp_path, payload)))
    }
    assert by_id["real-array"].verdict == NEW and by_id["real-array"].fields["tags"] == ["a", "b"]
    digest = hashlib.sha256(b"Metadata as an object").hexdigest()
    assert by_id["real-object"].fields["metadata"] == {"k": 1, "import_hash": digest}
    refused = {r.source.split("#")[1]: r for r in by_id.values() if r.verdict == REFUSED}
    assert refused["traces[2]"].problem_field == "content"
    assert refused["traces[2]"].reason == "content is missing"
    assert refused["traces[3]"].problem_field == "tags"
    assert refused["traces[4]"].problem_field == "type"
    assert refused["traces[4]"].value == "../../escape-type"
    assert refused["traces[5]"].problem_field == "created_at"
    assert refused["traces[6]"].problem_field == "strength"
    assert refused["edges[1]"].problem_field == "target_id"
    assert "'ghost'" in refused["edges[1]"].reason
    assert refused["messages[1]"].problem_field == "conversation_id"
    assert "does not hold" in refused["messages[1]"].reason
    assert by_id["e1"].verdict == NEW and by_id["m1"].verdict == NEW


def test_several_brains_need_a_choice(tmp_path: Path) -> None:
    payload = {
        "traces": [
            {"brain_id": "alpha", "id": "t1", "content": "alpha's"},
            {"brain_id": "beta", "id": "t2", "content": "beta's"},
        ]
    }
    path = write_json(tmp_path, payload)
    with pytest.raises(BrainIdRequired) as caught:
        records(read_agentos_json(path))
    assert caught.value.brain_ids == ["alpha", "beta"]
    # an import source's brain is named with --from-brain-id (--brain-id is the target's)
    assert str(caught.value) == (
        f"{path} holds several brains (alpha, beta); name the one to import with --from-brain-id"
    )
    chosen = records(read_agentos_json(path, brain_id="beta"))
    assert [r.fields["id"] for r in chosen] == ["t2"]
    with pytest.raises(BrainIdRequired, match="no brain 'gamma'"):
        records(read_agentos_json(path, brain_id="gamma"))


def test_missing_source_is_an_invalid_argument(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument) as caught:
        records(read_agentos_json(tmp_path / "absent.json"))
    assert caught.value.field == "path"


# --- SQLite ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["brain.sqlite", "export.sqlite"])
def test_real_brain_files_read_every_row(tmp_path: Path, name: str) -> None:
    copy = tmp_path / name
    shutil.copyfile(AGENTOS / name, copy)
    before = sha(copy)
    result = records(read_agentos_sqlite(copy))
    assert Counter((r.kind, r.verdict) for r in result) == EXPECTED_KINDS
    embedded = [r for r in result if r.kind == "trace" and r.fields["embedding"]]
    assert len(embedded) == 4
    assert struct.unpack("<4f", embedded[0].fields["embedding"][:16])
    assert sha(copy) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no -wal, no -shm


def test_sqlite_matches_the_json_export() -> None:
    from_json = {
        r.fields["id"]: r.fields for r in records(read_agentos_json(AGENTOS / "export.json"))
    }
    from_sqlite = {
        r.fields["id"]: r.fields for r in records(read_agentos_sqlite(AGENTOS / "export.sqlite"))
    }
    assert from_json.keys() == from_sqlite.keys()
    for key, fields in from_json.items():
        for name in ("content", "tags", "metadata", "scope_id", "deleted", "created_at"):
            if name in fields:
                assert fields[name] == from_sqlite[key][name], (key, name)


def make_brain(path: Path, brains: list[str], *, wal: bool = False) -> None:
    connection = apsw.Connection(str(path))
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
    schema = (AGENTOS.parent.parent / "reference" / "agentos-schema.sql").read_text()
    connection.execute(schema)
    for brain in brains:
        connection.execute(
            "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at, tags,"
            " metadata) VALUES (?, ?, 'semantic', 'user', ?, 1, ?, ?)",
            (brain, f"{brain}-1", f"{brain} content", '["x"]', '{"scopeId": "u1"}'),
        )
    connection.close()


def test_several_brains_in_a_file_need_a_choice(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    make_brain(path, ["alpha", "beta"])
    with pytest.raises(BrainIdRequired) as caught:
        records(read_agentos_sqlite(path))
    assert caught.value.brain_ids == ["alpha", "beta"]
    (record,) = records(read_agentos_sqlite(path, brain_id="alpha"))
    assert record.fields["id"] == "alpha-1" and record.fields["scope_id"] == "u1"


def test_a_live_wal_brain_is_read_without_being_changed(tmp_path: Path) -> None:
    path = tmp_path / "live.sqlite"
    make_brain(path, ["brain"], wal=True)
    writer = apsw.Connection(str(path))  # another process holds it open, data in the WAL
    writer.execute(
        "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at)"
        " VALUES ('brain', 'late', 'episodic', 'user', 'written after', 2)"
    )
    before = sha(path)
    ids = [r.fields["id"] for r in records(read_agentos_sqlite(path))]
    assert ids == ["brain-1", "late"]
    assert sha(path) == before
    writer.close()


def test_files_that_are_not_brains(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("just some text, not a database", encoding="utf-8")
    (record,) = records(read_agentos_sqlite(text))
    assert record.verdict == ERROR and "not a SQLite database" in record.reason
    other = tmp_path / "other.sqlite"
    apsw.Connection(str(other)).execute("CREATE TABLE t(x)")
    (record,) = records(read_agentos_sqlite(other))
    assert "no memory_traces table" in record.reason


def test_cancelling_closes_the_source(tmp_path: Path) -> None:
    copy = tmp_path / "brain.sqlite"
    shutil.copyfile(AGENTOS / "brain.sqlite", copy)
    events = read_agentos_sqlite(copy)
    assert isinstance(next(events), Progress)
    assert isinstance(next(events), Progress | ImportRecord)
    events.close()
    copy.unlink()  # nothing holds the file any more


@pytest.mark.parametrize("metadata", ["[1, 2]", "not json {", "null", "7", '"text"'])
def test_metadata_that_is_no_object_gets_an_object_of_its_own(
    tmp_path: Path, metadata: str
) -> None:
    # Seed 000: such a trace "is stored with a metadata object of its own, which names the
    # record's scope id and import hash" (JSON; a SQLite import treats a row the same way).
    trace = {"id": "t1", "content": "odd metadata", "scope_id": "team", "metadata": metadata}
    (record,) = records(read_agentos_json(write_json(tmp_path, {"traces": [trace]})))
    digest = hashlib.sha256(b"odd metadata").hexdigest()
    assert record.verdict == NEW
    assert record.fields["metadata"] == {"scopeId": "team", "import_hash": digest}
    assert record.fields["scope_id"] == "team"
    assert record.reason.startswith("metadata ") and "an object of its own" in record.reason


def test_a_sqlite_row_with_array_metadata_is_read_the_same(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    with apsw.Connection(str(path)) as conn:
        conn.execute(
            "CREATE TABLE memory_traces (id TEXT, content TEXT, scope_id TEXT, metadata TEXT)"
        )
        conn.execute("INSERT INTO memory_traces VALUES ('t1', 'row text', '', '[1,2]')")
    (record,) = records(read_agentos_sqlite(path))
    digest = hashlib.sha256(b"row text").hexdigest()
    assert record.verdict == NEW
    assert record.fields["metadata"] == {"scopeId": "", "import_hash": digest}


def test_node_properties_and_edge_metadata_that_are_no_object_are_stored(
    tmp_path: Path,
) -> None:
    payload = {
        "traces": [],
        "nodes": [{"id": "n1", "type": "person", "label": "Ana", "properties": "[1]"}],
        "edges": [
            {"id": "e1", "source_id": "n1", "target_id": "n1", "type": "knows", "metadata": "x{"}
        ],
    }
    node, edge = records(read_agentos_json(write_json(tmp_path, payload)))
    assert (node.verdict, node.fields["properties"]) == (NEW, {})
    assert (edge.verdict, edge.fields["metadata"]) == (NEW, {})


def test_every_json_trace_record_stores_its_import_hash() -> None:
    for record in records(read_agentos_json(AGENTOS / "export.json")):
        if record.kind == "trace" and record.verdict == NEW:
            digest = hashlib.sha256(record.fields["content"].encode()).hexdigest()
            assert record.fields["metadata"]["import_hash"] == digest
