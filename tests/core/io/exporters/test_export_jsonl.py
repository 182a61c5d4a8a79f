"""agent-memory JSONL v1 export: wire order, determinism, refusals, stdout and private files."""

from __future__ import annotations

import io
import json
import stat
import time
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io.exporters.export import ExportOptions, export
from memgui.core.io.readers.jsonl_reader import (
    HEADER_FIELDS,
    LINK_FIELDS,
    MEMORY_FIELDS,
    read_jsonl,
)
from memgui.core.io.records import ImportRecord
from memgui.core.progress import run_to_end

CLOCK_MS = 1_767_225_600_123


def run(brain: Brain, dest, **options):
    return run_to_end(
        export(brain, dest, "jsonl", ExportOptions(clock=lambda: CLOCK_MS, **options))
    )


@pytest.fixture
def typed_brain(brain: Brain) -> Brain:
    start = int(time.time()) * 1000  # a TTL counts from now: its memory is not expired
    ticks = iter(range(start, start + 10**9, 1000))
    brain.clock = lambda: next(ticks)
    a = brain.add("We chose Python 3.11", category="DECISION", tags=["py"], scope_id="repo")
    b = brain.add("Retry flaky network calls", category="PATTERN", ttl_secs=3600)
    c = brain.add("ünïcode ✓ text", category="TODO", metadata={"source": "notes.md"})
    brain.add("no agent-memory type", id="plain")
    brain.add("forgotten", category="ERROR", id="gone")
    brain.forget("gone")
    brain.link(b.id, a.id, "supersedes")
    brain.link(c.id, a.id, "relates_to")
    return brain


def test_wire_order_and_records(typed_brain: Brain, tmp_path: Path) -> None:
    result = run(typed_brain, tmp_path / "m.jsonl")
    lines = (tmp_path / "m.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""  # every line ends with \n
    docs = [json.loads(line) for line in lines[:-1]]
    header, memories, links = docs[0], docs[1:4], docs[4:]
    assert list(header) == list(HEADER_FIELDS)
    assert header["exported_at"] == CLOCK_MS // 1000
    assert (header["exported_rows"], header["exported_links"]) == (3, 2)
    assert all(list(m) == list(MEMORY_FIELDS) for m in memories)
    assert all(list(link) == list(LINK_FIELDS) for link in links)
    keys = [m["key"] for m in memories]
    assert keys == sorted(keys)
    assert [m["type"] for m in memories] == ["DECISION", "PATTERN", "TODO"]
    assert memories[0]["scope"] == "repo" and memories[1]["scope"] is None
    assert memories[2]["source"] == "notes.md" and memories[0]["source"] is None
    assert memories[1]["expires_at"] == memories[1]["created_at"] + 3600
    assert "ünïcode ✓".encode() in lines[3]  # UTF-8 as it is, not \u-escaped
    assert [(link["from"], link["to"], link["kind"]) for link in links] == sorted(
        (link["from"], link["to"], link["kind"]) for link in links
    )
    relates = next(link for link in links if link["kind"] == "relates_to")
    assert relates["from"] < relates["to"]  # smaller key first
    assert result.exported == 3
    assert {(r.id, r.field) for r in result.refused} == {("plain", "category")}


def test_two_exports_are_byte_identical(typed_brain: Brain, tmp_path: Path) -> None:
    run(typed_brain, tmp_path / "a.jsonl")
    run(typed_brain, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_stream_destination_and_private_file(typed_brain: Brain, tmp_path: Path) -> None:
    stream = io.BytesIO()
    run(typed_brain, stream)
    dest = tmp_path / "m.jsonl"
    dest.write_text("older export")
    run(typed_brain, dest)
    assert stream.getvalue() == dest.read_bytes()
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("m.")] == ["m.jsonl"]


def test_the_strict_reader_accepts_the_export(typed_brain: Brain, tmp_path: Path) -> None:
    run(typed_brain, tmp_path / "m.jsonl")
    records = [e for e in read_jsonl(tmp_path / "m.jsonl") if isinstance(e, ImportRecord)]
    assert [r.verdict for r in records] == ["new"] * 3
    assert sum(len(r.links) for r in records) == 2


def test_named_forgotten_trace_is_refused(typed_brain: Brain, tmp_path: Path) -> None:
    result = run(typed_brain, tmp_path / "m.jsonl", selection=["gone", "plain"])
    assert result.exported == 0
    assert {(r.id, r.field) for r in result.refused} == {("gone", "deleted"), ("plain", "category")}
    header = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[0])
    assert (header["exported_rows"], header["exported_links"]) == (0, 0)
