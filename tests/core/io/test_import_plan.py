"""Planning an import: verdicts against the brain and within the source; nothing written."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import BrainIdRequired, InvalidArgument
from memgui.core.io.planning.plan import ImportOptions, ImportPlan, plan
from memgui.core.io.records import DUPLICATE, NEW, TRACE, UPDATE
from memgui.core.io.writing.commit import commit
from memgui.core.progress import Cancelled, Progress, run_to_end
from tests.support.paths import ROOT

AGENTOS = ROOT.parent / "shared" / "fixtures" / "agentos"
VAULT = ROOT / "tests" / "fixtures" / "io" / "vault"


def make_plan(brain: Brain, source: Path, **options: Any) -> ImportPlan:
    return run_to_end(plan(brain, source, options=ImportOptions(**options)))


def write_export(path: Path, traces: list[dict[str, Any]], **sections: Any) -> Path:
    path.write_text(json.dumps({"meta": {}, "traces": traces, **sections}), encoding="utf-8")
    return path


def trace_row(trace_id: str, content: str, **extra: Any) -> dict[str, Any]:
    row = {"id": trace_id, "type": "semantic", "scope": "user", "content": content}
    row.update({"created_at": 1_700_000_000_000, "tags": "[]", "metadata": "{}", **extra})
    return row


def verdicts(the_plan: ImportPlan) -> list[tuple[str, str | None]]:
    return [(r.verdict, the_plan.trace_id(i)) for i, r in enumerate(the_plan.records)]


def test_planning_writes_nothing(brain: Brain, brain_path: Path) -> None:
    brain.add("already here")
    before = brain_path.read_bytes()
    version = brain.data_version()
    the_plan = make_plan(brain, AGENTOS / "export.json")
    assert the_plan.counts["new"] == 101
    assert brain.data_version() == version
    assert brain.count() == 1
    assert brain_path.read_bytes() == before


def test_plan_is_a_job_of_progress_events(brain: Brain) -> None:
    job = plan(brain, AGENTOS / "csv-input.csv")
    events = []
    with pytest.raises(StopIteration) as stop:
        while True:
            events.append(next(job))
    assert events and all(isinstance(e, Progress) for e in events)
    assert isinstance(stop.value.value, ImportPlan)


def test_cancelling_a_plan_stops_it(brain: Brain) -> None:
    with pytest.raises(Cancelled):
        run_to_end(plan(brain, AGENTOS / "export.json", cancel_requested=lambda: True))


def test_duplicate_needs_the_same_scope_scope_id_and_user(brain: Brain, tmp_path: Path) -> None:
    brain.add("Shared words", scope="user", scope_id="u1")
    brain.add("By a guest", scope="user", scope_id="u1", metadata={"turnUserId": "guest"})
    source = write_export(
        tmp_path / "export.json",
        [
            trace_row("a", "Shared words", metadata='{"scopeId": "u1"}'),
            trace_row("b", "Shared words", metadata='{"scopeId": "u2"}'),
            trace_row("c", "Shared words", scope="thread", metadata='{"scopeId": "u1"}'),
            trace_row("d", "By a guest", metadata='{"scopeId": "u1"}'),
            trace_row("e", "By a guest", metadata='{"scopeId": "u1", "turnUserId": "guest"}'),
        ],
    )
    the_plan = make_plan(brain, source)
    got = [r.verdict for r in the_plan.records]
    assert got == [DUPLICATE, NEW, NEW, NEW, DUPLICATE]
    assert "same text as trace" in the_plan.records[0].reason
    assert "u1" in the_plan.records[0].reason


def test_same_hash_in_metadata_is_a_duplicate(brain: Brain, tmp_path: Path) -> None:
    from memgui.core.storage.store import content_hash

    row = trace_row("x", "Hashed elsewhere", metadata="{}")
    first = write_export(tmp_path / "one.json", [row])
    run_to_end(commit(brain, make_plan(brain, first)))
    # a trace the brain knows by import_hash only (its text changed since) still matches
    brain.db.conn.execute(
        "UPDATE memory_traces SET metadata = json_set(metadata, '$.import_hash', ?, "
        "'$.content_hash', 'other') WHERE id = 'x'",
        (content_hash("Hashed again"),),
    )
    again = write_export(tmp_path / "two.json", [trace_row("y", "Hashed again")])
    record = make_plan(brain, again).records[0]
    assert record.verdict == DUPLICATE and record.existing_id == "x"
    assert "import_hash" in record.reason


def test_a_brain_row_with_metadata_that_is_not_json_still_dedups(
    brain: Brain, tmp_path: Path
) -> None:
    kept = brain.add("Written over by another program")
    brain.add("A healthy neighbour")
    # another program wrote metadata that does not parse: its row dedups by its text
    brain.db.conn.execute(
        "UPDATE memory_traces SET metadata = '{not json' WHERE id = ?", (kept.id,)
    )
    source = write_export(
        tmp_path / "again.json",
        [
            trace_row("a", "Written over by another program"),
            trace_row("b", "A healthy neighbour"),
            trace_row("c", "Brand new"),
        ],
    )
    assert [r.verdict for r in make_plan(brain, source).records] == [DUPLICATE, DUPLICATE, NEW]
    assert make_plan(brain, source).records[0].existing_id == kept.id


def test_a_live_record_wins_over_its_forgotten_twin_in_the_source(
    brain: Brain, tmp_path: Path
) -> None:
    source = write_export(
        tmp_path / "export.json",
        [trace_row("gone", "Twin text", deleted=1), trace_row("live", "Twin text", deleted=0)],
    )
    the_plan = make_plan(brain, source)
    by_id = {r.fields["id"]: r for r in the_plan.records}
    assert by_id["live"].verdict == NEW
    assert by_id["gone"].verdict == DUPLICATE and by_id["gone"].existing_id == "live"
    run_to_end(commit(brain, the_plan))
    assert not brain.get("live").deleted
    assert brain.count() == 1


def test_the_brains_live_trace_is_what_a_record_duplicates(brain: Brain, tmp_path: Path) -> None:
    old = brain.add("Said twice")
    brain.forget(old.id)
    live = brain.add("Said twice")
    source = write_export(tmp_path / "export.json", [trace_row("n", "Said twice")])
    record = make_plan(brain, source).records[0]
    assert record.verdict == DUPLICATE and record.existing_id == live.id


def test_a_forgotten_trace_is_not_brought_back(brain: Brain, tmp_path: Path) -> None:
    gone = brain.add("Forgotten on purpose")
    brain.forget(gone.id)
    source = write_export(tmp_path / "export.json", [trace_row("n", "Forgotten on purpose")])
    record = make_plan(brain, source).records[0]
    assert record.verdict == DUPLICATE and "forgotten" in record.reason


def test_dedup_off_plans_every_record_new_under_a_free_id(brain: Brain, tmp_path: Path) -> None:
    brain.add("Again and again", id="taken")
    source = write_export(tmp_path / "export.json", [trace_row("taken", "Again and again")])
    the_plan = make_plan(brain, source, dedup=False)
    assert the_plan.records[0].verdict == NEW
    assert the_plan.trace_id(0).startswith("mt_") and the_plan.trace_id(0) != "taken"


def test_source_ids_are_kept_when_free(brain: Brain, tmp_path: Path) -> None:
    source = write_export(
        tmp_path / "export.json", [trace_row("keep-me", "one"), trace_row("keep-me", "two")]
    )
    the_plan = make_plan(brain, source)
    assert the_plan.trace_id(0) == "keep-me"
    assert the_plan.trace_id(1) != "keep-me"  # the plan claimed it already


def test_target_scope_options_refile_every_trace(brain: Brain) -> None:
    the_plan = make_plan(brain, AGENTOS / "csv-input.csv", scope="persona", scope_id="ada")
    traces = [r for r in the_plan.records if r.kind == TRACE and r.verdict == NEW]
    assert {(r.fields["scope"], r.fields["scope_id"]) for r in traces} == {("persona", "ada")}
    run_to_end(commit(brain, the_plan))
    assert {t.scope_id for t in brain.list_traces(limit=50)} == {"ada"}


def test_bad_options_are_refused_naming_the_field(brain: Brain) -> None:
    with pytest.raises(InvalidArgument) as error:
        make_plan(brain, AGENTOS / "csv-input.csv", format="docx")
    assert error.value.field == "format" and "docx" in str(error.value)
    with pytest.raises(InvalidArgument) as error:
        make_plan(brain, AGENTOS / "csv-input.csv", scope="galaxy")
    assert error.value.field == "scope"
    with pytest.raises(InvalidArgument) as error:
        make_plan(brain, AGENTOS / "no-such-file.json")
    assert error.value.field == "path" and "no-such-file.json" in str(error.value)


def test_a_source_holding_several_brains_needs_one_named(brain: Brain, tmp_path: Path) -> None:
    rows = [
        dict(trace_row("a", "from alpha"), brain_id="alpha"),
        dict(trace_row("b", "from beta"), brain_id="beta"),
    ]
    source = write_export(tmp_path / "export.json", rows)
    with pytest.raises(BrainIdRequired) as error:
        make_plan(brain, source)
    assert "alpha" in str(error.value) and "beta" in str(error.value)
    the_plan = make_plan(brain, source, brain_id="beta")
    assert [r.fields["content"] for r in the_plan.records] == ["from beta"]


def test_files_not_read_are_listed(brain: Brain) -> None:
    the_plan = make_plan(brain, VAULT, format="obsidian")
    listed = {r.source for r in the_plan.not_read}
    assert "Attachments/diagram.png" in listed
    assert all(r.kind == TRACE for r in the_plan.records)


def test_sqlite_duplicate_with_new_tags_is_an_update(brain: Brain, tmp_path: Path) -> None:
    brain.add("Merge my tags", tags=["old"])
    source = write_export(
        tmp_path / "export.json", [trace_row("s", "Merge my tags", tags='["old","new"]')]
    )
    assert make_plan(brain, source).records[0].verdict == DUPLICATE  # JSON: no tag union
    sqlite_source = tmp_path / "source.sqlite"
    other = Brain.open(sqlite_source, brain_id="brain")
    other.add("Merge my tags", tags=["old", "new"])
    other.close()
    the_plan = make_plan(brain, sqlite_source)
    (record,) = [r for r in the_plan.records if r.kind == TRACE]
    assert record.verdict == UPDATE and "adds tags new" in record.reason
    result = run_to_end(commit(brain, the_plan))
    assert result.updated == 1 and result.imported == 0
    (trace,) = brain.list_traces()
    assert trace.tags == ("old", "new")


def test_obsidian_own_note_adds_its_new_tags_and_links(brain: Brain, tmp_path: Path) -> None:
    trace = brain.add("A note of mine", tags=["kept"], id="mt_own")
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "mt_own.md").write_text(
        "---\nid: mt_own\ntype: episodic\nscope: user\ntags:\n  - kept\n---\n"
        "A note of mine\n\n#kept #added\n\n**Related:**\n- [[Somewhere]]\n",
        encoding="utf-8",
    )
    the_plan = make_plan(brain, vault)
    (record,) = the_plan.records
    assert record.verdict == UPDATE and record.existing_id == trace.id
    assert "added" in record.reason and "Somewhere" in record.reason
    run_to_end(commit(brain, the_plan))
    assert brain.get(trace.id).tags == ("kept", "added")
    labels = [n.label for n in brain.neighbours(trace.id)]
    assert labels == ["Somewhere"]
    assert make_plan(brain, vault).records[0].verdict == DUPLICATE  # nothing more to add


def write_jsonl(path: Path, memories: list[tuple[str, str | None, str | None]]) -> Path:
    """An agent-memory v1 file of (type, source, scope) memories, all of the text "same"."""
    header = {"record": "header", "format": "agent-memory-export", "version": 1}
    header |= {"exported_at": 1767225600, "embedding_model": "m", "embedding_dim": 4}
    header |= {"schema_version": 3, "agent_memory_version": "0.1.0"}
    header |= {"exported_rows": len(memories), "exported_links": 0}
    lines = [header]
    for key, (kind, source, scope) in enumerate(memories, start=1):
        lines.append(
            {"record": "memory", "key": key, "type": kind, "content": "same", "tags": []}
            | {"source": source, "scope": scope, "created_at": 1767225600}
            | {"last_accessed": 1767225600, "access_count": 0, "expires_at": None}
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_jsonl_dedups_on_agent_memorys_source_type_and_text(brain: Brain, tmp_path: Path) -> None:
    brain.add("same", category="DECISION")  # no source: (None, DECISION, "same")
    brain.add("same", category="TODO", metadata={"source": "a"})
    brain.add("same", metadata={"source": "b"})  # no agent-memory type: no key at all
    memories = [
        ("DECISION", None, None),
        ("DECISION", "a", None),
        ("DECISION", "b", None),
        ("TODO", "a", "elsewhere"),  # the brain's TODO from "a": the key has no scope
        ("DECISION", "b", "elsewhere"),  # the third memory again, in another scope
    ]
    the_plan = make_plan(brain, write_jsonl(tmp_path / "m.jsonl", memories), format="jsonl")
    traces = [r for r in the_plan.records if r.kind == TRACE]
    got = [r.verdict for r in traces]
    assert got == [DUPLICATE, NEW, NEW, DUPLICATE, DUPLICATE]
    assert "same source, type and text" in traces[0].reason
    assert traces[4].existing_id == the_plan.trace_id(2)
    run_to_end(commit(brain, the_plan))
    assert brain.count() == 5
    again = make_plan(brain, tmp_path / "m.jsonl", format="jsonl")
    assert again.counts["new"] == 0 and again.counts["duplicate"] == 5


JSONL_MEMORY = (
    '{"record": "memory", "key": %d, "type": "DECISION", "content": "m%d", "tags": [], '
    '"source": null, "scope": null, "created_at": 1767225600, "last_accessed": 1767225600, '
    '"access_count": 0, "expires_at": null}'
)


def jsonl_lines(*lines: str, rows: int = 2, version: int = 1) -> str:
    header = {"record": "header", "format": "agent-memory-export", "version": version}
    header |= {"exported_at": 1767225600, "embedding_model": "m", "embedding_dim": 4}
    header |= {"schema_version": 3, "agent_memory_version": "0.1.0"}
    header |= {"exported_rows": rows, "exported_links": 0}
    return "".join(line + "\n" for line in (json.dumps(header), *lines))


ONE = JSONL_MEMORY % (1, 1)


@pytest.mark.parametrize(
    "text",
    [
        jsonl_lines(ONE, '{"record": "memo", "key": 2}'),  # an unknown record tag
        jsonl_lines(ONE, (JSONL_MEMORY % (2, 2)).replace('"key": 2, ', "")),  # no key
        jsonl_lines(ONE, "[1, 2]"),  # not an object
        jsonl_lines(ONE, '{"record": "memory", broken'),  # not JSON
        jsonl_lines(ONE, (JSONL_MEMORY % (2, 2)).replace('"source"', '"sourc"')),
        jsonl_lines(
            ONE, (JSONL_MEMORY % (2, 2)).replace('"access_count": 0', '"access_count": "0"')
        ),
        jsonl_lines(ONE),  # exported_rows says 2
    ],
    ids=["tag", "key", "non-object", "not-json", "unknown-field", "type", "count"],
)
def test_a_jsonl_file_with_a_header_lists_each_defect_and_the_rest_once(
    brain: Brain, tmp_path: Path, text: str
) -> None:
    # One rule for every defect (docs/import-export.md): with a valid header, each defect is
    # one error naming its line, the memories left out one more; the file reads (exit 1).
    path = tmp_path / "memories.jsonl"
    path.write_text(text, encoding="utf-8")
    the_plan = make_plan(brain, path)
    assert the_plan.unreadable is None
    defect, summary = the_plan.records
    assert defect.verdict == "error" and defect.reason.startswith("line ")
    assert summary.verdict == "error" and summary.reason.startswith("1 other memory not imported")
    result = run_to_end(commit(brain, the_plan))
    assert (result.imported, result.batch_id, brain.count()) == (0, None, 0)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (ONE + "\n", "the first line must be the header record"),
        ("", "the header record is missing"),
        ("a,b\n1,2\n", "not valid JSON"),
        (jsonl_lines(ONE, rows=1, version=2), "format version 2"),
    ],
    ids=["no-header", "empty", "csv", "version-2"],
)
def test_a_jsonl_file_without_a_valid_header_cannot_be_read(
    brain: Brain, tmp_path: Path, text: str, why: str
) -> None:
    path = tmp_path / "memories.jsonl"
    path.write_text(text, encoding="utf-8")
    the_plan = make_plan(brain, path, format="jsonl")
    assert the_plan.unreadable is not None and why in the_plan.unreadable


def test_a_plan_whose_new_records_the_brain_got_meanwhile_is_refused_at_commit(
    brain: Brain, tmp_path: Path
) -> None:
    from memgui.core.errors import PlanOutdated

    source = write_export(tmp_path / "export.json", [trace_row("a", "Dropped twice")])
    first, second = make_plan(brain, source), make_plan(brain, source)
    assert first.counts["new"] == second.counts["new"] == 1
    brain.update(brain.add("an unrelated edit meanwhile").id, {"tags": ["x"]})
    run_to_end(commit(brain, first))
    before = brain.count()
    with pytest.raises(PlanOutdated, match="plan the import again"):
        run_to_end(commit(brain, second))
    assert brain.count() == before  # nothing of it written
    again = make_plan(brain, source)
    assert [r.verdict for r in again.records] == [DUPLICATE]


def test_a_plan_is_committed_after_unrelated_writes_meanwhile(brain: Brain, tmp_path: Path) -> None:
    source = write_export(tmp_path / "export.json", [trace_row("a", "Only once")])
    the_plan = make_plan(brain, source)
    brain.update(brain.add("an unrelated note").id, {"content": "edited meanwhile"})
    assert run_to_end(commit(brain, the_plan)).imported == 1


def test_the_commits_look_at_what_changed_reads_no_whole_index(
    brain: Brain, tmp_path: Path
) -> None:
    from memgui.core.io.planning import recheck
    from tests.support.query_plans import plan_of, selects_run

    with brain.batch():
        for n in range(300):
            brain.add(f"already here {n}")
    the_plan = make_plan(brain, write_export(tmp_path / "e.json", [trace_row("a", "New one")]))
    since = brain.add("written since")
    brain.update(since.id, {"tags": ["x"]})
    rows, statements = selects_run(brain.db.conn, lambda: recheck._written_since(brain, the_plan))
    assert {r[0] for r in rows} == {since.id}
    assert statements
    for sql, bindings in statements:
        plan = plan_of(brain.db.conn, sql, bindings)
        walked = [s for s in plan if "memory_traces USING" in s and "(brain_id=?)" in s]
        assert not walked, (sql, plan)


@pytest.mark.parametrize("field", ["created_at", "last_accessed", "expires_at", "retrieval_count"])
def test_an_integer_past_64_bits_is_refused_naming_its_field(
    brain: Brain, tmp_path: Path, field: str
) -> None:
    row = trace_row("big", "Too big a number", **{field: 2**64})
    the_plan = make_plan(brain, write_export(tmp_path / "e.json", [row]))
    record = the_plan.records[0]
    assert record.verdict == "refused" and field in record.reason, record.reason
    assert run_to_end(commit(brain, the_plan)).imported == 0
    assert brain.count() == 0


def test_a_device_or_a_pipe_as_a_source_is_named_as_such(brain: Brain, tmp_path: Path) -> None:
    import os

    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    for source in (pipe, Path("/dev/zero")):
        with pytest.raises(InvalidArgument, match="not a regular file") as refused:
            make_plan(brain, source, format="json")
        assert str(source) in str(refused.value)


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def fifty_memories(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "memories.jsonl", [("DECISION", f"s{n}", None) for n in range(50)]
    )


@pytest.mark.usefixtures("collector_on")
def test_the_collector_stays_paused_between_steps_and_runs_again_after(
    brain: Brain, tmp_path: Path
) -> None:
    # Paused step by step, it ran between steps and walked every record read so far.
    job = plan(brain, fifty_memories(tmp_path), format="jsonl")
    between_steps = []
    try:
        while True:
            assert isinstance(next(job), Progress)
            between_steps.append(gc.isenabled())
    except StopIteration as done:
        assert done.value.counts["new"] == 50
    assert between_steps and not any(between_steps)
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_closing_a_plan_midway_runs_the_collector_again(brain: Brain, tmp_path: Path) -> None:
    job = plan(brain, fifty_memories(tmp_path), format="jsonl")
    next(job)
    assert not gc.isenabled()
    job.close()
    assert gc.isenabled()


def test_a_brain_open_here_is_refused_as_a_source_and_keeps_its_locks(
    brain: Brain, brain_path: Path, tmp_path: Path
) -> None:
    """Closing any descriptor of a file drops every lock this process holds on it: the
    planner never opens a brain this program has open, itself included."""
    other_path = tmp_path / "other.sqlite"
    with Brain.open(other_path) as other:
        other.add("kept in the other brain")
        for source in (brain_path, other_path):
            start = brain.last_journal_id()
            with pytest.raises(InvalidArgument, match="is a brain this program has open"):
                make_plan(brain, source)
            assert brain.last_journal_id() == start
    # Closed, the other brain is a source like any other.
    assert [verdict for verdict, _ in verdicts(make_plan(brain, other_path))] == [NEW]
