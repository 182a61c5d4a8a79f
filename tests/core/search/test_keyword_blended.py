"""A small brain's keyword search ranks and blends every match in one statement
(`keyword._Query.blended`): the same answer as the index's slices give a large brain, the
agentos tool's results built from its rows, and the pending rows looked for only after a
write (this connection's or another program's)."""

from __future__ import annotations

import random
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import keyword
from memgui.core.tools import ToolContext, call, profile
from memgui.core.tools.agentos import _result
from tests.support.query_plans import selects_run

WORDS = "harbour crane lantern quay dusk boat rope tide gull anchor deploy deployed".split()
QUERIES = ["harbour", "crane tide", "lantern OR quay", "gull NOT rope", "deploy", '"boat rope"']
FILTERS = [TraceFilter(), TraceFilter(type="semantic"), TraceFilter(scope="user")]
TOOLS = profile("agentos")


def _fill(brain: Brain, count: int) -> None:
    rng = random.Random(9)
    with brain.batch():
        for n in range(count):
            trace = brain.add(
                " ".join(rng.choices(WORDS, k=rng.randint(1, 12))),
                type=rng.choice(("episodic", "semantic")), scope=rng.choice(("user", "thread")),
                tags=rng.sample(WORDS, rng.randint(0, 2)), strength=rng.random(),
            )  # fmt: skip
            if n % 9 == 0:
                brain.forget(trace.id)
    brain.flush_index()


def _answers(brain: Brain) -> dict[tuple[str, int, int], list[tuple[object, ...]]]:
    out = {}
    for query in QUERIES:
        for i, flt in enumerate(FILTERS):
            for limit in (1, 5, 40):
                hits = brain.search(query, flt, limit=limit, mode="keyword", record_recall=False)
                out[query, i, limit] = [(h.score, h.trace) for h in hits.hits]
    return out


def test_the_blended_answer_is_the_slices_answer(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(brain, 400)
    now = brain.now()
    brain.clock = lambda: now  # decay depends on the time: both ways answer at the same one
    blended: list[int] = []
    run = keyword._Query.blended

    def counted(self: keyword._Query, match: str, limit: int) -> list[tuple[object, ...]]:
        blended.append(limit)
        return run(self, match, limit)

    monkeypatch.setattr(keyword._Query, "blended", counted)
    one_statement = _answers(brain)
    assert blended  # the small brain took the one statement
    monkeypatch.setattr(keyword, "BLENDED_MAX", -1)  # as a brain past it: the slices
    count = len(blended)
    slices = _answers(brain)
    assert len(blended) == count
    assert any(one_statement.values())
    assert one_statement == slices


@pytest.mark.parametrize("blended", [True, False])
def test_the_tool_returns_what_the_search_returns(
    brain: Brain, monkeypatch: pytest.MonkeyPatch, blended: bool
) -> None:
    _fill(brain, 200)
    now = brain.now()
    brain.clock = lambda: now
    if not blended:
        monkeypatch.setattr(keyword, "BLENDED_MAX", -1)
    ctx = ToolContext(brain, "mcp:agentos-host")
    for query in QUERIES:
        for args in ({}, {"type": "semantic"}, {"scope": "user", "limit": 3}):
            found = call(ctx, TOOLS, "memory_search", {"query": query, **args}).data["results"]
            flt = TraceFilter(type=args.get("type"), scope=args.get("scope"))
            hits = brain.search(
                query, flt, limit=args.get("limit", 10), mode="keyword", record_recall=False
            ).hits
            assert found == [_result(h.trace) for h in hits], (query, args)


def test_the_pending_rows_are_looked_for_after_a_write_only(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        kept = brain.add("the harbour crane at dusk")
        assert [t.id for t in brain.search("crane", record_recall=False).traces] == [kept.id]

        def pending_looks() -> int:  # 1 when the search asked the pending table
            _, statements = selects_run(
                brain.db.conn, lambda: brain.search("crane", record_recall=False)
            )
            return int(any("memgui_fts_pending" in sql for sql, _ in statements))

        assert [pending_looks() for _ in range(2)] == [1, 0]
        # After a write, a search looks and indexes what waits (a write of its own), the
        # next finds nothing waiting, and from then on none looks until the next write.
        added = brain.add("another crane")  # this connection's write
        assert [pending_looks() for _ in range(3)] == [1, 1, 0]
        other = apsw.Connection(str(brain_path))  # as AgentOS: a write memgui's code never saw
        other.execute("UPDATE memory_traces SET content = 'an anchor' WHERE id = ?", (kept.id,))
        other.close()
        assert pending_looks() == 1
        assert [t.id for t in brain.search("crane", record_recall=False).traces] == [added.id]
        assert [t.id for t in brain.search("anchor", record_recall=False).traces] == [kept.id]
