"""The bounds every reader keeps: nesting, line length, times, NUL bytes, text that is not
UTF-8. Each is a refusal of the record (or of the file, for the strict JSONL reader),
named; never a crash, a hang, unbounded memory, or a record the plan takes and the commit
cannot write."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportPlan
from memgui.core.io.readers import jsonl_reader
from memgui.core.io.readers.json_bounds import MAX_JSON_DEPTH
from memgui.core.io.records import ERROR, LINE, NEW, REFUSED, TRACE, UNREAD
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.support.paths import FIXTURES
from tests.support.planning import plan_in_thread, planned

VALID = FIXTURES / "jsonl" / "valid.jsonl"  # agent-memory's own export, as the JSONL tests read it
HEADER = "content,metadata,tags,created_at\n"


def committed(brain: Brain, the_plan: ImportPlan) -> int:
    """Commit the plan; every record it accepted must be written."""
    accepted = {i for i, r in enumerate(the_plan.records) if r.verdict == NEW}
    result = run_to_end(commit(brain, the_plan))
    assert accepted <= the_plan.written, "the commit refused what the plan accepted"
    return result.imported


def nested(depth: int) -> str:
    return '{"k": ' * depth + "1" + "}" * depth


def csv_cell(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


# --- nesting --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("depth", "reason"),
    [
        # orjson reads 1,024 levels and writes 254: the commit died on this one
        (300, f"metadata nests deeper than {MAX_JSON_DEPTH} levels of arrays and objects"),
        # Python's json recursed until RecursionError: the plan died on this one
        (10_000, "metadata is not valid JSON (depth limit exceeded"),
    ],
)
def test_csv_metadata_nested_too_deep_is_an_error_of_its_row(
    brain: Brain, tmp_path: Path, depth: int, reason: str
) -> None:
    source = tmp_path / "deep.csv"
    rows = ["a good row,,,\n", f"a deep row,{csv_cell(nested(depth))},,\n"]
    source.write_text(HEADER + "".join(rows), encoding="utf-8")
    the_plan = planned(brain, source, "csv")
    good, deep = the_plan.records
    assert good.verdict == NEW
    assert deep.verdict == ERROR and deep.reason.startswith(reason)
    assert committed(brain, the_plan) == 1


def test_csv_tags_nested_too_deep_refuse_their_row(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "tags.csv"
    deep_tags = "[" * 300 + "]" * 300
    source.write_text(HEADER + f"deep tags,,{csv_cell(deep_tags)},\n", encoding="utf-8")
    (record,) = planned(brain, source, "csv").records
    assert record.verdict == REFUSED
    assert record.reason == f"tags nests deeper than {MAX_JSON_DEPTH} levels of arrays and objects"


def agentos_trace(trace_id: str, **fields: Any) -> dict[str, Any]:
    row = {"id": trace_id, "type": "semantic", "scope": "user", "content": f"text of {trace_id}"}
    return {**row, "created_at": 1_700_000_000_000, "tags": "[]", "metadata": "{}", **fields}


def test_agentos_values_nested_too_deep(brain: Brain, tmp_path: Path) -> None:
    deep_object = json.loads(nested(300))
    traces = [
        agentos_trace("plain"),
        agentos_trace("deep-metadata", metadata=nested(300)),
        agentos_trace("deep-metadata-object", metadata=deep_object),
        agentos_trace("deep-emotions", emotions=nested(300)),
    ]
    source = tmp_path / "export.json"
    source.write_text(json.dumps({"traces": traces}), encoding="utf-8")
    the_plan = planned(brain, source, "json")
    verdicts = {r.fields.get("id"): (r.verdict, r.reason) for r in the_plan.records}
    replaced = (
        f"metadata nests deeper than {MAX_JSON_DEPTH} levels of arrays and objects: "
        "stored with an object of its own"
    )
    assert verdicts["plain"] == (NEW, "")
    assert verdicts["deep-metadata"] == (NEW, replaced)  # seed 000: not an object, replaced
    assert verdicts["deep-metadata-object"] == (NEW, replaced)
    refused = [r for r in the_plan.records if r.verdict == REFUSED]
    assert [(r.problem_field, r.reason) for r in refused] == [
        ("emotions", f"emotions nests deeper than {MAX_JSON_DEPTH} levels of arrays and objects")
    ]
    assert committed(brain, the_plan) == 3


def test_a_sqlite_source_with_deep_metadata(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "deep.sqlite"
    with Brain.open(source) as other:
        other.add("deep metadata here")
    connection = apsw.Connection(str(source))
    connection.execute("UPDATE memory_traces SET metadata = ?", (nested(300),))
    connection.close()
    the_plan = planned(brain, source, "sqlite")
    (record,) = [r for r in the_plan.records if r.kind == TRACE]
    assert record.verdict == NEW and record.reason.startswith("metadata nests deeper than")
    assert committed(brain, the_plan) == 1


# --- times past 64 bits ---------------------------------------------------------------------


def test_a_csv_time_past_64_bits_is_refused_at_planning(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "times.csv"
    source.write_text(HEADER + "far future,,,99999999999999999999999\n", encoding="utf-8")
    (record,) = planned(brain, source, "csv").records
    assert (record.verdict, record.problem_field) == (REFUSED, "created_at")
    assert record.reason.startswith("created_at must be epoch milliseconds within ±2**63")


def test_a_note_time_past_64_bits(brain: Brain, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    exported = "---\nid: mt_1\ncreatedAt: 99999999999999999999999\n---\nan exported note\n"
    (folder / "exported.md").write_text(exported)
    (folder / "own.md").write_text("---\ncreatedAt: 99999999999999999999999\n---\nmy own note\n")
    the_plan = planned(brain, folder, "markdown")
    by_file = {r.source.split(":")[0]: r for r in the_plan.records}
    # A note an export wrote is refused; a person's own note keeps the value as a property.
    assert by_file["exported.md"].verdict == REFUSED
    assert by_file["exported.md"].reason.startswith("createdAt must be epoch milliseconds")
    own = by_file["own.md"]
    assert own.verdict == NEW and "created_at" not in own.fields
    assert own.fields["metadata"]["front_matter"] == {"createdAt": 99999999999999999999999}
    assert committed(brain, the_plan) == 1


# --- lines, NUL bytes, text that is not UTF-8 -----------------------------------------------


def jsonl_with(tmp_path: Path, line: bytes, at: int = 2) -> Path:
    lines = VALID.read_bytes().splitlines(keepends=True)
    lines.insert(at, line)
    path = tmp_path / "export.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def jsonl_defects(brain: Brain, path: Path) -> list[tuple[str, str]]:
    the_plan = planned(brain, path, "jsonl")
    assert all(r.verdict == ERROR and r.kind in (LINE, UNREAD) for r in the_plan.records)
    return [(r.source.rsplit(":", 1)[1], r.reason) for r in the_plan.records[:-1]]


def test_a_jsonl_line_over_the_bound_is_never_held_whole(
    brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl_reader, "MAX_LINE_BYTES", 64 * 1024)  # the bound, made small
    content = "y" * (8 * 1024 * 1024)  # 8 MiB on one line: 128 times the bound
    memory = {"record": "memory", "key": 9, "type": "TODO", "content": content, "tags": []}
    line = json.dumps({**memory, "created_at": 1, "last_accessed": 1, "access_count": 0})
    path = jsonl_with(tmp_path, line.encode() + b"\n")
    tracemalloc.start()
    try:
        defects = jsonl_defects(brain, path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ("3", "line 3: longer than 65,536 bytes: not read") in defects
    assert peak < 4 * 1024 * 1024  # read in pieces and dropped, never the 8 MiB whole


def test_a_jsonl_line_at_the_bound_is_read(
    brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [json.loads(line) for line in VALID.read_text().splitlines()]
    longest = max(len(json.dumps(row).encode()) for row in rows)
    monkeypatch.setattr(jsonl_reader, "MAX_LINE_BYTES", longest)
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    assert planned(brain, path, "jsonl").counts["error"] == 0


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"[" * 10_000 + b"]" * 10_000, "line 3: not valid JSON (depth limit exceeded"),
        (b'{"record": "memory", "key": 9, "content": "a\x00b"}', "line 3: not valid JSON"),
        (b'{"record": "memory", "key": 9, "content": "\xff"}', "line 3: not valid JSON"),
    ],
    ids=["nested-10k", "nul", "not-utf8"],
)
def test_jsonl_lines_a_parser_cannot_take_reject_the_file(
    brain: Brain, tmp_path: Path, line: bytes, reason: str
) -> None:
    defects = jsonl_defects(brain, jsonl_with(tmp_path, line + b"\n"))
    assert any(found.startswith(reason) for _, found in defects), defects


def test_a_csv_row_holding_a_nul_byte_is_an_error(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "nul.csv"
    source.write_bytes((HEADER + "good row,,,\nbad\x00row,,,\n").encode())
    good, bad = planned(brain, source, "csv").records
    assert good.verdict == NEW
    assert (bad.verdict, bad.reason) == (ERROR, "cell 1 holds a NUL byte: the row is not text")


def test_a_note_or_state_holding_a_nul_byte_is_not_text(brain: Brain, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "ok.md").write_text("fine\n")
    (folder / "utf16.md").write_bytes("a note\n".encode("utf-16-le"))  # no BOM: NULs
    by_file = {r.source: r for r in planned(brain, folder, "markdown").records}
    assert by_file["ok.md:1"].verdict == NEW
    assert (by_file["utf16.md:1"].verdict, by_file["utf16.md:1"].reason) == (
        ERROR,
        "the note is not UTF-8 text (byte 0x00 (a NUL byte) at offset 1)",
    )
    state = tmp_path / "STATE.md"
    state.write_bytes(b"## Decisions\n\n- a\x00b\n")
    assert planned(brain, state, "gsd").unreadable == (
        "STATE.md:1: the file is not UTF-8 text (byte 0x00 (a NUL byte) at offset 17)"
    )


# --- vectors ---------------------------------------------------------------------------------


def test_vectors_the_commit_could_not_write_are_refused_at_planning(
    brain: Brain, tmp_path: Path
) -> None:
    traces = [
        agentos_trace("fine", embedding=[0.5, 0.25]),
        agentos_trace("too-big-a-number", embedding=[1e308, 1.0]),  # struct.pack raised
        agentos_trace("no-vector", embedding=[]),
    ]
    source = tmp_path / "export.json"
    source.write_text(json.dumps({"traces": traces}), encoding="utf-8")
    the_plan = planned(brain, source, "json")
    verdicts = {r.fields.get("id"): (r.verdict, r.reason) for r in the_plan.records}
    assert verdicts["fine"] == (NEW, "")
    assert verdicts["no-vector"] == (NEW, "")
    assert verdicts[None] == (
        REFUSED,
        "embedding holds a number no 32-bit float holds (got 1e+308)",
    )
    assert committed(brain, the_plan) == 2


def test_a_vector_wider_than_sqlite_vec_indexes_is_refused(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "wide.sqlite"
    with Brain.open(source) as other:
        other.add("a memory with a vector too wide")
        other.add("a memory with an empty vector")
    connection = apsw.Connection(str(source))
    connection.execute(  # the commit died creating the vector index (vec0: at most 8192)
        "UPDATE memory_traces SET embedding = zeroblob(4 * 37500) WHERE content LIKE '%wide'"
    )
    connection.execute("UPDATE memory_traces SET embedding = x'' WHERE content LIKE '%empty%'")
    connection.close()
    the_plan = planned(brain, source, "sqlite")
    wide, empty = the_plan.records
    assert (wide.verdict, wide.reason) == (
        REFUSED,
        "embedding must hold at most 8,192 floats, as sqlite-vec indexes (got 37,500)",
    )
    assert empty.verdict == NEW and empty.fields["embedding"] is None
    assert committed(brain, the_plan) == 1


# --- work that grows with the input, not with its square -------------------------------------
# Each input below took minutes or more (time squared in its size) and now takes about a
# second; `plan_in_thread` fails a plan still running after two minutes.


def test_a_front_matter_of_many_lines_is_read_in_one_pass(tmp_path: Path, brain_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    lines = "a\n" * 131_000  # 262,000 characters, no key: each line was matched to the end
    (folder / "long.md").write_text(f"---\n{lines}---\nbody\n")
    (record,) = plan_in_thread(brain_path, folder, format="markdown").records
    assert record.verdict == REFUSED
    assert record.reason == "front matter must be a mapping of keys (got a str)"


def test_a_note_of_many_tags_is_read_in_one_pass(tmp_path: Path, brain_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    tags = " ".join(f"#tag{n}" for n in range(300_000))  # on one line, each one different
    (vault / "tags.md").write_text(f"A note of many tags [[Link]] {tags}\n")
    (record,) = plan_in_thread(brain_path, vault, format="obsidian").records
    assert record.verdict == NEW and len(record.fields["tags"]) == 300_000
    assert record.fields["tags"][:2] == ["tag0", "tag1"]
