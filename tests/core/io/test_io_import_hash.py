"""Seed 000, step 1: every import path stores `import_hash`, the SHA-256 of the content."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.support.paths import ROOT

AGENTOS = ROOT.parent / "shared" / "fixtures" / "agentos"
FIXTURES = ROOT / "tests" / "fixtures"

SOURCES = [
    ("json", AGENTOS / "export.json"),
    ("sqlite", AGENTOS / "brain.sqlite"),
    ("csv", AGENTOS / "csv-input.csv"),
    ("markdown", AGENTOS / "markdown"),
    ("obsidian", AGENTOS / "obsidian"),
    ("chatgpt", FIXTURES / "chatgpt" / "branching.json"),
    ("jsonl", FIXTURES / "jsonl" / "valid.jsonl"),
    ("gsd", FIXTURES / "io" / "gsd" / ".planning" / "STATE.md"),
]


@pytest.mark.parametrize(("fmt", "source"), SOURCES, ids=[fmt for fmt, _ in SOURCES])
def test_every_imported_trace_stores_the_sha256_of_its_content(
    brain: Brain, fmt: str, source: Path
) -> None:
    if not source.exists():
        pytest.skip(f"{source} not present")
    the_plan = run_to_end(plan(brain, source, fmt))
    result = run_to_end(commit(brain, the_plan))
    assert result.imported > 0
    rows = brain.db.conn.execute(
        "SELECT content, metadata FROM memory_traces WHERE brain_id = ?", (brain.brain_id,)
    ).fetchall()
    assert rows
    for content, metadata in rows:
        digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
        assert json.loads(metadata).get("import_hash") == digest, (fmt, content[:40])
