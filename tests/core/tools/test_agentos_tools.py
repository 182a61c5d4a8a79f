"""The `agentos` profile at the tool seam: seed 000's inputs, outputs and rules."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.errors import Conflict, InvalidArgument
from memgui.core.tools import ToolContext, ToolResult, call, profile

TOOLS = profile("agentos", rehydrate=True)


@pytest.fixture
def ctx(brain: Brain) -> ToolContext:
    return ToolContext(brain, "mcp:agentos-host")


def run(ctx: ToolContext, tool: str, **args: Any) -> ToolResult:
    return call(ctx, TOOLS, tool, args)


def add(ctx: ToolContext, content: str, **more: Any) -> str:
    return run(ctx, "memory_add", content=content, **more).data["traceId"]


def test_memory_add_defaults_and_refusals(ctx: ToolContext) -> None:
    trace = ctx.brain.get(add(ctx, "User prefers dark mode."))
    assert (trace.type, trace.scope, trace.scope_id, trace.tags) == ("episodic", "user", "", ())
    assert trace.stored_strength == 1.0 and trace.id.startswith("mt_")
    assert trace.metadata["content_hash"] == hashlib.sha256(b"User prefers dark mode.").hexdigest()
    twice = add(ctx, "User prefers dark mode.")  # no deduplication, as AgentOS
    assert twice != trace.id
    for args, field in (({"type": "DECISION"}, "type"), ({"scope": "global"}, "scope")):
        with pytest.raises(InvalidArgument, match=f"{field} must be one of"):
            run(ctx, "memory_add", content="refused", **args)
    assert ctx.brain.count() == 2  # the refused calls stored nothing


def test_memory_update_and_delete_answer_booleans(ctx: ToolContext) -> None:
    trace_id = add(ctx, "old words", tags=["a"])
    assert run(ctx, "memory_update", traceId=trace_id).data == {"updated": False}
    assert run(ctx, "memory_update", traceId=trace_id, content="new words").data == {
        "updated": True
    }
    trace = ctx.brain.get(trace_id)
    assert trace.content == "new words" and trace.tags == ("a",)
    assert run(ctx, "memory_search", query="old").data == {"results": []}
    assert run(ctx, "memory_delete", traceId=trace_id, reason="wrong").data == {"deleted": True}
    assert ctx.brain.get(trace_id).deleted  # soft-deleted, still in the file
    assert run(ctx, "memory_delete", traceId=trace_id).data == {"deleted": False}
    assert run(ctx, "memory_update", traceId=trace_id, tags=["b"]).data == {"updated": False}


def test_update_and_delete_write_only_what_they_read(brain_path: Path, ctx: ToolContext) -> None:
    """The compare-and-set of seed 000: a write the trace outran between this call's read and
    its write fails as a conflict, and nothing changes (here the other writer is a second
    connection, as an app or another server would be)."""
    trace_id = add(ctx, "contested")
    other = Brain.open(brain_path, actor="app")
    original = ctx.brain.update

    def update_after_another_writer(*args: Any, **kwargs: Any) -> Any:
        if not other.get(trace_id).tags:  # once: a blind write would then go through
            other.update(trace_id, {"tags": ["theirs"]})
        return original(*args, **kwargs)

    ctx.brain.update = update_after_another_writer  # type: ignore[method-assign]
    try:
        with pytest.raises(Conflict, match=trace_id):
            run(ctx, "memory_update", traceId=trace_id, content="mine")
    finally:
        del ctx.brain.update
    other.close()
    trace = ctx.brain.get(trace_id)
    assert trace.content == "contested" and trace.tags == ("theirs",)


def test_memory_merge(ctx: ToolContext) -> None:
    a = add(ctx, "Docker Compose", tags=["deploy"])
    b = add(ctx, "blue-green", tags=["deploy", "strategy"])
    c = add(ctx, "Friday deploys")
    run(ctx, "memory_search", query="blue")  # not a recall in this profile
    assert ctx.brain.get(b).retrieval_count == 0
    ctx.brain.search("blue")  # a recall elsewhere makes b the most retrieved
    merged = run(ctx, "memory_merge", traceIds=[a, b, c, "mt_missing", a]).data
    assert merged == {"survivorId": b, "deletedIds": [a, c]}
    survivor = ctx.brain.get(b)
    assert survivor.content == "Docker Compose | blue-green | Friday deploys"  # given order
    assert survivor.tags == ("deploy", "strategy")
    assert ctx.brain.get(a).deleted and ctx.brain.get(c).deleted
    d, e = add(ctx, "one"), add(ctx, "two")
    tie = run(ctx, "memory_merge", traceIds=[e, d], mergedContent="  ").data
    assert tie["survivorId"] == e  # a tie: the first given; blank content: joined
    assert ctx.brain.get(e).content == "two | one"
    with pytest.raises(InvalidArgument, match=r"^traceIds must contain at least 2 trace IDs\.$"):
        run(ctx, "memory_merge", traceIds=[e])
    with pytest.raises(InvalidArgument, match="Found only 1 active trace"):
        run(ctx, "memory_merge", traceIds=[e, d])


def test_memory_search_filters_limit_and_fts5_syntax(ctx: ToolContext) -> None:
    semantic = add(ctx, "Prefers TypeScript for web work", type="semantic", scope="persona")
    add(ctx, "Deployment went out on Friday", type="episodic")
    add(ctx, "TypeScript deployment checklist", type="procedural")
    ids = lambda query, **f: [r["id"] for r in run(ctx, "memory_search", query=query, **f).data[  # noqa: E731
        "results"]]  # fmt: skip
    assert ids("typescript", type="semantic") == [semantic]
    assert ids("typescript", scope="persona") == [semantic]
    assert len(ids("deploy*")) == 2  # a prefix query
    assert len(ids('"deployment checklist"')) == 1  # a phrase
    assert len(ids("typescript NOT deployment")) == 1
    assert len(ids("what's our deployment?")) == 2  # FTS5 refuses it: the rewrite runs
    with ctx.brain.batch():
        for i in range(120):
            ctx.brain.add(f"bulk note {i}")
    assert len(ids("bulk")) == 10  # the default
    assert len(ids("bulk", limit=100)) == 100
    with pytest.raises(InvalidArgument, match=r"limit must be between 1 and 100 \(got 101\)"):
        run(ctx, "memory_search", query="bulk", limit=101)


def test_rehydrate_memory_checks_the_archived_text(brain_path: Path, ctx: ToolContext) -> None:
    kept, altered = add(ctx, "gist one"), add(ctx, "gist two")
    conn = apsw.Connection(str(brain_path))
    for trace_id, text, stored_hash in (
        (kept, "the original words", hashlib.sha256(b"the original words").hexdigest()),
        (altered, "edited after archiving", hashlib.sha256(b"something else").hexdigest()),
    ):
        conn.execute(
            "INSERT INTO archived_traces (brain_id, trace_id, agent_id, verbatim_content, "
            "content_hash, trace_type, created_at, archived_at, archive_reason) "
            "VALUES ('brain', ?, 'a', ?, ?, 'episodic', 1, 99, 'gist')",
            (trace_id, text, stored_hash),
        )
    assert run(ctx, "rehydrate_memory", traceId=kept).data == {
        "verbatimContent": "the original words", "archivedAt": 99}  # fmt: skip
    assert run(ctx, "rehydrate_memory", traceId=altered).data == {
        "verbatimContent": None, "archivedAt": None}  # fmt: skip
    logged = conn.execute("SELECT trace_id, request_context FROM archive_access_log").fetchall()
    conn.close()
    assert logged == [(kept, "rehydrate_memory_tool")]
    assert "rehydrate_memory" not in profile("agentos").tools  # only when asked for


def test_memory_reflect_answers_the_seed_counts_and_journals_one_batch(ctx: ToolContext) -> None:
    for _ in range(3):
        add(ctx, "The staging server is called Kestrel.")
    answer = run(ctx, "memory_reflect").data
    assert {k: v for k, v in answer.items() if k != "durationMs"} == {
        "pruned": 0,
        "merged": 2,
        "derived": 0,
        "compacted": 0,
        "personalityDecayed": 0,
    }
    assert isinstance(answer["durationMs"], int) and answer["durationMs"] >= 0
    [batch] = {e.batch_id for e in ctx.brain.journal_since(0) if e.actor == "consolidation"}
    assert {e.op for e in ctx.brain.batch_entries(batch)} == {"merge", "forget"}
    assert run(ctx, "memory_reflect", topic="anything").data["merged"] == 0  # nothing left
    with pytest.raises(InvalidArgument, match="unknown field `depth`"):
        run(ctx, "memory_reflect", depth=2)


def test_memory_reflect_while_another_runs_answers_zero_counts(ctx: ToolContext) -> None:
    from memgui.core.consolidate_lock import ConsolidationLock

    add(ctx, "twice")
    add(ctx, "twice")
    with ConsolidationLock(ctx.brain.path) as holder:
        assert holder is None
        answer = run(ctx, "memory_reflect").data
    assert answer == dict.fromkeys(
        ("pruned", "merged", "derived", "compacted", "durationMs", "personalityDecayed"), 0
    )
    assert ctx.brain.count() == 2


def test_memory_search_in_the_cognitive_mode_says_why(ctx: ToolContext) -> None:
    first = add(ctx, "The user likes green tea")
    add(ctx, "Coffee machine is broken")
    found = run(ctx, "memory_search", query="tea", mode="cognitive", mood=0.5).data["results"]
    [hit] = found
    assert hit["id"] == first and 0 < hit["retrievalScore"] <= 1
    assert set(hit["scoreBreakdown"]) == {
        "strengthScore", "similarityScore", "recencyScore",
        "emotionalCongruenceScore", "graphActivationScore", "importanceScore",
    }  # fmt: skip
    assert hit["why"].startswith(f"{hit['retrievalScore']:.2f} = similarity 1.00×0.35")
    plain = run(ctx, "memory_search", query="tea").data["results"]
    assert "retrievalScore" not in plain[0]
    assert ctx.brain.get(first).retrieval_count == 0  # a read: no recall noted
    with pytest.raises(InvalidArgument, match="mood is for mode cognitive only"):
        run(ctx, "memory_search", query="tea", mood=0.5)
    with pytest.raises(InvalidArgument, match="mood must be between -1 and 1"):
        run(ctx, "memory_search", query="tea", mode="cognitive", mood=3)
    with pytest.raises(InvalidArgument, match="expected a number"):
        run(ctx, "memory_search", query="tea", mode="cognitive", mood="sad")
    with pytest.raises(InvalidArgument, match="mode must be one of keyword, cognitive"):
        run(ctx, "memory_search", query="tea", mode="hybrid")
