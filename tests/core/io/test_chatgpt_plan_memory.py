"""A ChatGPT plan holds each text once, compactly, and still reads and writes as before."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
from pathlib import Path

import orjson

from memgui.core.brain import Brain
from memgui.core.io.planning.classify import fingerprint
from memgui.core.io.planning.plan import ImportOptions, ImportPlan, plan
from memgui.core.io.records import MESSAGE, TRACE, plain_fields
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.support.chatgpt_conversations import linear_conversation
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "chatgpt"
WORDS = (
    "ridge trail lake summit kilometre flat weather forecast backpack water map compass "
    "river bridge meadow sunrise café naïve über piñata — → déjà vu"
).split()


def generated_export(path: Path, conversations: int) -> Path:
    """Linear conversations of 20 messages of ~80 words, as the import benchmark writes."""
    rng = random.Random(7)
    items = [
        linear_conversation(
            number,
            [" ".join(rng.choice(WORDS) for _ in range(80)) + f" ({number})" for _ in range(20)],
            f"conv-{number}",
        )
        for number in range(conversations)
    ]
    path.write_bytes(orjson.dumps(items))
    return path


def make_plan(brain: Brain, source: Path, **options: object) -> ImportPlan:
    return run_to_end(plan(brain, source, options=ImportOptions(format="chatgpt", **options)))


def test_a_plan_holds_each_text_once(brain: Brain, tmp_path: Path) -> None:
    source = generated_export(tmp_path / "conversations.json", 120)
    size = source.stat().st_size
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        the_plan = make_plan(brain, source)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert the_plan.counts["new"] == 120 * (1 + 20 + 10)
    # Each message's text as a str, the pair's text again in its trace, and a dict or two
    # per record held 5.4x this file; its texts once as UTF-8 and compact records, 1.7x.
    assert held < 3 * size, f"the plan holds {held / size:.1f}x the file"


def test_lazy_fields_read_as_dicts_and_become_one_when_assigned(brain: Brain) -> None:
    the_plan = make_plan(brain, FIXTURES / "branching.json", all_branches=True)
    lazy = [r for r in the_plan.records if r.kind in (TRACE, MESSAGE)]
    assert lazy
    for record in lazy:
        fields = record.fields
        built = plain_fields(fields)
        assert type(built) is dict and built == {key: fields[key] for key in fields}
        assert dict(fields.items()) == built and len(fields) == len(built)
        assert fields.get("no such field", "absent") == "absent" and "content" in fields
        assert fingerprint(fields) == fingerprint(built)
    trace = next(r for r in lazy if r.kind == TRACE)
    before = plain_fields(trace.fields)
    trace.fields["tags"] = ["hiking"]
    trace.fields["metadata"]["reviewed"] = True  # held from the first assignment on
    after = plain_fields(trace.fields)
    assert after["tags"] == ["hiking"] and after["metadata"]["reviewed"] is True
    assert {k: v for k, v in after.items() if k not in ("tags", "metadata")} == {
        k: v for k, v in before.items() if k not in ("tags", "metadata")
    }


def test_the_commit_writes_what_the_plan_shows(brain: Brain) -> None:
    the_plan = make_plan(brain, FIXTURES / "branching.json", all_branches=True)
    edited = next(r for r in the_plan.records if r.kind == TRACE)
    edited.fields["content"] = "[user]: Edited in the review."
    shown = {
        r.kind + ":" + r.fields["id"]: plain_fields(r.fields)
        for r in the_plan.records
        if r.kind in (TRACE, MESSAGE)
    }
    result = run_to_end(commit(brain, the_plan))
    assert result.imported == len(the_plan.records)
    traces = brain.db.conn.execute("SELECT id, content, created_at, metadata FROM memory_traces")
    for trace_id, content, created_at, metadata in traces:
        fields = shown.pop(f"trace:{trace_id}")
        assert (content, created_at) == (fields["content"], fields["created_at"])
        assert json.loads(metadata).items() >= fields["metadata"].items()
    messages = brain.db.conn.execute(
        "SELECT id, conversation_id, role, content, created_at, metadata FROM messages"
    )
    for message_id, conversation_id, role, content, created_at, metadata in messages:
        fields = shown.pop(f"message:{message_id}")
        row = (conversation_id, role, content, created_at, json.loads(metadata))
        keys = ("conversation_id", "role", "content", "created_at", "metadata")
        assert row == tuple(fields[k] for k in keys)
    assert shown == {}
    assert brain.get(the_plan.trace_id(the_plan.records.index(edited))).content == (
        "[user]: Edited in the review."
    )


def test_messages_written_in_bulk_keep_their_one_by_one_outcomes(brain: Brain) -> None:
    source = FIXTURES / "branching.json"
    first = make_plan(brain, source)
    conversation = next(i for i, r in enumerate(first.records) if r.kind == "conversation")
    first.records[conversation].accepted = False  # its messages name a row the brain lacks
    result = run_to_end(commit(brain, first))
    messages = [r for r in first.records if r.kind == MESSAGE]
    assert messages and all(r.verdict == "error" for r in messages)
    assert all("could not be written" in r.reason for r in messages)
    assert len(result.errors) == len(messages)
    assert brain.db.conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    # Planned twice, committed one after the other: the second finds the rows written since.
    again, later = make_plan(brain, source), make_plan(brain, source)
    edited = next(r for r in again.records if r.kind == MESSAGE)
    edited.fields = {k: v for k, v in edited.fields.items() if k != "metadata"}  # another shape
    written = run_to_end(commit(brain, again))
    stored = brain.db.conn.execute(
        "SELECT metadata FROM messages WHERE id = ?", (edited.fields["id"],)
    ).fetchone()
    assert stored == ("{}",)
    with_node = "SELECT count(*) FROM messages WHERE metadata LIKE '%chatgpt_node_id%'"
    assert brain.db.conn.execute(with_node).fetchone()[0] == len(messages) - 1
    assert written.imported == sum(1 for r in again.records if r.kind in ("conversation", MESSAGE))
    late = run_to_end(commit(brain, later))
    assert late.imported == 0
    assert all(r.verdict == "duplicate" for r in later.records if r.kind == MESSAGE)
    journal = brain.db.conn.execute(
        "SELECT count(*) FROM memgui_journal WHERE op = 'message'"
    ).fetchone()[0]
    assert journal == len(messages)
