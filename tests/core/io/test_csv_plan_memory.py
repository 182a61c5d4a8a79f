"""A CSV plan holds its rows compactly (a 1M-row file's plan held 22 times the file) and
still reads, edits and writes them as before."""

from __future__ import annotations

import gc
import random
import tracemalloc
from pathlib import Path

from memgui.core.brain import Brain
from memgui.core.io.readers.csv_fields import CsvTraceFields
from memgui.core.io.readers.text_utils import content_hash
from memgui.core.io.records import NEW, plain_fields
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.support.planning import planned

ROWS = 10_000


def generated_csv(path: Path, rows: int) -> Path:
    rng = random.Random(3)
    with open(path, "w", encoding="utf-8") as out:
        out.write("content,type,tags,created_at,scope_id\n")
        for n in range(rows):
            out.write(
                f"Imported fact number {n} about topic {rng.randrange(10**6)},semantic,"
                f"alpha|beta,2024-05-01T12:00:00Z,team-{n % 7}\n"
            )
    return path


def test_a_csv_plan_holds_a_few_times_the_file(brain: Brain, tmp_path: Path) -> None:
    source = generated_csv(tmp_path / "rows.csv", ROWS)
    size = source.stat().st_size
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        the_plan = planned(brain, source, "csv")
        gc.collect()
        held, peak = (value - before for value in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    assert the_plan.counts["new"] == ROWS and not the_plan.resolved
    # As dicts (fields, metadata, a `resolved` entry a row) it held 12.5x and peaked at
    # 16.7x (23x the file in resident memory); here 6.1x and 10.6x.
    assert held < 8 * size, f"the plan holds {held / size:.1f}x the file"
    assert peak < 13 * size, f"planning peaked at {peak / size:.1f}x the file"


def test_compact_rows_read_edit_and_write_as_before(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text(
        "content,id,type,scope,tags,metadata,created_at,last_accessed,retrieval_count,"
        "deleted,scope_id,strength,category\n"
        'Full row,r1,semantic,thread,a|b,"{""x"": 1}",1700000000000,1700000000001,3,0,'
        "t1,0.5,DECISION\n"
        'Scope from metadata,,,,,"{""scopeId"": ""meta""}",,,,,cell,,\n'
        "Bare row,,,,,,,,,,,,\n",
        encoding="utf-8",
    )
    the_plan = planned(brain, source, "csv")
    full, meta, bare = the_plan.records
    assert all(isinstance(r.fields, CsvTraceFields) and r.verdict == NEW for r in the_plan.records)
    assert plain_fields(full.fields) == {
        "content": "Full row",
        "id": "r1",
        "type": "semantic",
        "scope": "thread",
        "category": "DECISION",
        "tags": ["a", "b"],
        "strength": 0.5,
        "created_at": 1_700_000_000_000,
        "last_accessed": 1_700_000_000_001,
        "retrieval_count": 3,
        "deleted": False,
        "scope_id": "t1",
        "metadata": {"x": 1, "scopeId": "t1", "import_hash": content_hash("Full row")},
    }
    assert meta.fields["scope_id"] == "meta"
    assert meta.fields["metadata"] == {
        "scopeId": "meta",
        "import_hash": content_hash(meta.fields["content"]),
    }
    assert bare.fields["scope_id"] == "" and "scopeId" not in bare.fields["metadata"]
    assert bare.fields["id"] == the_plan.trace_id(2)  # the id planning chose, held by the row
    bare.fields["tags"] = ["edited"]  # an edit in the review: a dict from then on
    assert bare.fields["tags"] == ["edited"] and bare.fields["content"] == "Bare row"
    result = run_to_end(commit(brain, the_plan))
    assert result.imported == 3
    written = brain.get(the_plan.trace_id(2))
    assert (written.content, list(written.tags)) == ("Bare row", ["edited"])
    first = brain.get("r1")
    assert (first.scope, first.scope_id, list(first.tags), first.category) == (
        "thread",
        "t1",
        ["a", "b"],
        "DECISION",
    )
    assert first.metadata["x"] == 1 and first.metadata["import_hash"] == content_hash("Full row")
    assert brain.get(the_plan.trace_id(1)).scope_id == "meta"
