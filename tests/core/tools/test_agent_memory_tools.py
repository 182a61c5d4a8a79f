"""The `agent-memory` profile at the seam every transport calls (`memgui.core.tools.call`).

What a memory is in the brain, merge-patch semantics, relations and their expansion, pages
with a cursor, recalls only of returned results, and compare-and-set with expect_version.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import Conflict, InvalidArgument
from memgui.core.tools import ParameterError, ToolContext, ToolResult, call, profile
from memgui.core.tools.shared import on_live_trace

DAY_MS = 86_400_000
TOOLS = profile("agent-memory")


@pytest.fixture
def ctx(brain: Brain) -> ToolContext:
    return ToolContext(brain, "mcp:test-client")


def run(ctx: ToolContext, tool: str, **args: Any) -> ToolResult:
    return call(ctx, TOOLS, tool, args)


def store(ctx: ToolContext, content: str, type_: str = "PATTERN", **more: Any) -> str:
    return run(ctx, "memory_store", content=content, type=type_, **more).data["id"]


def test_a_stored_memory_is_filed_as_the_jsonl_import_files_one(ctx: ToolContext) -> None:
    trace_id = store(ctx, "Use WAL", "DECISION", tags=["db"], source="adr-7", scope="kore")
    trace = ctx.brain.get(trace_id)
    assert (trace.category, trace.type, trace.scope, trace.scope_id) == (
        "DECISION", "semantic", "user", "kore")  # fmt: skip
    assert trace.metadata["source"] == "adr-7" and trace.tags == ("db",)
    todo = ctx.brain.get(store(ctx, "Write the docs", "TODO", ttl_secs=60))
    assert todo.type == "prospective" and todo.scope_id == ""
    assert todo.expires_at == todo.created_at + 60_000
    # decay_score is agent-memory's: 0.5 after one 30-day half-life, 2^(-1/6) if pinned.
    later = ctx.brain.now() + 30 * DAY_MS
    ctx.brain.clock = lambda: later
    scores = {m["id"]: m["decay_score"] for m in run(ctx, "memory_list").data}
    assert scores[todo.id] == pytest.approx(0.5, abs=1e-3)
    assert scores[trace_id] == pytest.approx(2 ** (-1 / 6), abs=1e-3)


def test_update_is_a_merge_patch(ctx: ToolContext) -> None:
    trace_id = store(ctx, "Maven group is com.example", "DECISION", tags=["maven"],
                     scope="kore", ttl_secs=30)  # fmt: skip
    view = run(ctx, "memory_update", id=trace_id, tags=None, scope=None, ttl_secs=None).data
    assert view["tags"] == [] and view["scope"] is None
    assert view["content"] == "Maven group is com.example"  # left out: unchanged
    assert ctx.brain.get(trace_id).expires_at is None  # null: never expires
    view = run(ctx, "memory_update", id=trace_id, content="Maven group is io.github.x").data
    assert view["embedding_status"] == 0 and view["version"] == 3
    assert run(ctx, "memory_search", query="example").data["results"] == []
    found = run(ctx, "memory_search", query="github").data["results"]
    assert [r["id"] for r in found] == [trace_id]
    with pytest.raises(ParameterError, match="unknown field `type`"):
        run(ctx, "memory_update", id=trace_id, type="TODO")  # the type never changes
    assert ctx.brain.get(trace_id).category == "DECISION"


def test_an_expired_memory_not_yet_swept_can_still_be_updated(ctx: ToolContext) -> None:
    trace_id = store(ctx, "Short-lived", "TODO", ttl_secs=1)
    past_expiry = ctx.brain.now() + 5_000
    ctx.brain.clock = lambda: past_expiry
    view = run(ctx, "memory_update", id=trace_id, ttl_secs=3600).data
    assert ctx.brain.get(view["id"]).expires_at == past_expiry + 3_600_000


def test_forgotten_memories_read_as_gone_and_their_relations_hide(ctx: ToolContext) -> None:
    a, b = store(ctx, "first"), store(ctx, "second")
    run(ctx, "memory_link", from_id=a, to_id=b, kind="relates_to")
    assert run(ctx, "memory_forget", id=b).data == {"id": b, "deleted": True}
    assert ctx.brain.get(b).deleted  # in the trash, where the app can restore it
    assert run(ctx, "memory_list", limit=5, expand_links=True).data[0]["related"] == []
    for tool, args in (
        ("memory_update", {"id": b, "content": "x"}),
        ("memory_forget", {"id": b}),
        ("memory_link", {"from_id": a, "to_id": b, "kind": "caused_by"}),
    ):
        assert run(ctx, tool, **args).found is False
    assert run(ctx, "memory_link", from_id=a, to_id=b, kind="caused_by").data["missing_id"] == b


def test_relations_read_from_either_side_at_most_ten_newest_first(ctx: ToolContext) -> None:
    hub = store(ctx, "hub")
    spokes = [store(ctx, f"spoke {i} " + "x" * 200) for i in range(12)]
    for spoke in spokes:
        run(ctx, "memory_link", from_id=spoke, to_id=hub, kind="caused_by")
    relates = run(ctx, "memory_link", from_id=spokes[0], to_id=hub, kind="relates_to").data
    assert relates["from_id"] == spokes[0] and relates["to_id"] == hub  # echoed as sent
    # relates_to is symmetric: unlinking from the other end removes it.
    assert run(ctx, "memory_unlink", from_id=hub, to_id=spokes[0], kind="relates_to").data[
        "unlinked"
    ]
    [view] = [v for v in run(ctx, "memory_list", limit=20, expand_links=True).data
              if v["id"] == hub]  # fmt: skip
    related = view["related"]
    assert len(related) == 10
    assert [r["id"] for r in related] == spokes[::-1][:10]  # the newest relations win
    assert {r["kind"] for r in related} == {"caused"} and related[0]["direction"] == "in"
    assert len(related[0]["snippet"]) == 161 and related[0]["snippet"].endswith("…")


def test_only_returned_results_are_recalled(ctx: ToolContext) -> None:
    hit = store(ctx, "alpha widget one")
    neighbour = store(ctx, "beta gadget")
    run(ctx, "memory_link", from_id=hit, to_id=neighbour, kind="relates_to")
    for _ in range(2):
        found = run(ctx, "memory_search", query="widget", expand_links=True).data
        assert [r["id"] for r in found["results"]] == [hit]
    assert ctx.brain.get(hit).retrieval_count == 2
    assert ctx.brain.get(neighbour).retrieval_count == 0  # expanded, never bumped
    assert ctx.brain.get(hit).version == 1  # a recall is no edit


def test_list_pages_never_repeat_or_skip_while_memories_are_added(ctx: ToolContext) -> None:
    # Each memory a millisecond of its own: one added within the millisecond of a page's
    # last memory may rightly sort after it (ties go by id), whatever the machine's speed.
    ticks = itertools.count(1_700_000_000_000)
    ctx.brain.clock = lambda: next(ticks)
    for i in range(7):
        store(ctx, f"memory {i}")
    made = [m["id"] for m in run(ctx, "memory_list").data]  # newest first (ties: by id)
    seen: list[str] = []
    page = run(ctx, "memory_list", limit=3)
    while True:
        seen += [m["id"] for m in page.data]
        store(ctx, "added between two pages")  # newer: belongs before the first page
        if page.next_cursor is None:
            break
        page = run(ctx, "memory_list", limit=3, cursor=page.next_cursor)
    assert seen == made


def test_list_without_a_limit_is_pages_of_200(ctx: ToolContext) -> None:
    with ctx.brain.batch():
        for i in range(201):
            ctx.brain.add(f"bulk {i}", category="TODO")
    first = run(ctx, "memory_list")
    assert len(first.data) == 200 and first.next_cursor is not None
    rest = run(ctx, "memory_list", cursor=first.next_cursor)
    assert len(rest.data) == 1 and rest.next_cursor is None
    with pytest.raises(InvalidArgument, match="cursor is not a cursor"):
        run(ctx, "memory_list", cursor="bm90IGEgY3Vyc29y")


def test_expect_version_is_a_compare_and_set(ctx: ToolContext) -> None:
    trace_id = store(ctx, "original")
    with pytest.raises(Conflict):
        run(ctx, "memory_update", id=trace_id, content="late", expect_version=7)
    with pytest.raises(Conflict):
        run(ctx, "memory_forget", id=trace_id, expect_version=0)
    trace = ctx.brain.get(trace_id)
    assert trace.content == "original" and not trace.deleted
    assert (
        run(ctx, "memory_update", id=trace_id, content="ok", expect_version=1).data["version"] == 2
    )


def test_a_blind_write_retries_past_another_writer_and_a_read_one_does_not(
    brain_path: Path, ctx: ToolContext
) -> None:
    trace_id = store(ctx, "contested")
    other = Brain.open(brain_path, actor="app")
    attempts: list[int] = []

    def write(version: int) -> Any:
        attempts.append(version)
        if len(attempts) == 1:  # another process edits between this read and this write
            other.update(trace_id, {"tags": ["theirs"]})
        return ctx.brain.update(trace_id, {"content": "mine"}, expect_version=version)

    done = on_live_trace(ctx.brain, trace_id, None, write)
    assert done is not None and attempts == [1, 2]
    assert ctx.brain.get(trace_id).tags == ("theirs",)  # both writes kept
    attempts.clear()
    with pytest.raises(Conflict):
        on_live_trace(ctx.brain, trace_id, None, write, as_read=True)
    other.close()


def test_every_write_is_journaled_with_its_actor_and_one_batch_per_call(
    ctx: ToolContext,
) -> None:
    a = store(ctx, "one")
    b = store(ctx, "two")
    run(ctx, "memory_link", from_id=a, to_id=b, kind="supersedes")
    run(ctx, "memory_update", id=a, content="one, edited")
    run(ctx, "memory_forget", id=b)
    entries = ctx.brain.journal_since(0)
    assert [(e.actor, e.op) for e in entries] == [
        ("mcp:test-client", op) for op in ("add", "add", "link", "update", "forget")
    ]
    assert len({e.batch_id for e in entries}) == 5
    ctx.brain.revert(entries[3].batch_id)  # one call, undone as one
    assert ctx.brain.get(a).content == "one"


def test_ids_of_agent_memory_clients_are_accepted(ctx: ToolContext) -> None:
    """agent-memory's ids are integers; memgui's are strings, and a number is read as its
    digits: an unknown one is a clean not-found that echoes what was sent."""
    assert run(ctx, "memory_forget", id=7).data == {
        "id": 7,
        "deleted": False,
        "reason": "not_found",
    }
    trace_id = ctx.brain.add("imported with a numeric id", id="7").id
    assert run(ctx, "memory_forget", id=7).data == {"id": 7, "deleted": True}
    assert ctx.brain.get(trace_id).deleted
    with pytest.raises(ParameterError, match="invalid type for `id`: floating point `7.5`"):
        run(ctx, "memory_forget", id=7.5)
    with pytest.raises(ParameterError, match="invalid type for `id`: boolean"):
        run(ctx, "memory_forget", id=True)


def test_limits_and_their_defaults(ctx: ToolContext) -> None:
    with ctx.brain.batch():
        for i in range(60):
            ctx.brain.add(f"common word {i}", category="TODO")
    assert len(run(ctx, "memory_search", query="common").data["results"]) == 50
    assert len(run(ctx, "memory_search", query="common", limit=200).data["results"]) == 60
    for bad in (0, -1, 201, 2**63 - 1, -(2**63), 10**40):
        with pytest.raises(InvalidArgument, match=r"limit must be between 1 and 200 \(got"):
            run(ctx, "memory_list", limit=bad)
    with pytest.raises(ParameterError, match="`limit`: floating point `5.0`"):
        run(ctx, "memory_search", query="x", limit=5.0)
    assert math.isfinite(run(ctx, "memory_list", limit=1).data[0]["decay_score"])
