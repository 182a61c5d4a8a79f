"""The agentos tool's keyword results built from the rows its ranking read (what the
search returns, read again after a write), and the rows waiting for the indexes looked for
only after a write (this connection's or another program's)."""

from __future__ import annotations

import random
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import searching
from memgui.core.tools import ToolContext, call, profile
from memgui.core.tools.agentos import _result
from tests.support.query_plans import selects_run

WORDS = "harbour crane lantern quay dusk boat rope tide gull anchor deploy deployed".split()
QUERIES = ["harbour", "crane tide", "lantern OR quay", "gull NOT rope", "deploy", '"boat rope"']
TOOLS = profile("agentos")


def _fill(brain: Brain, count: int) -> None:
    rng = random.Random(9)
    with brain.batch():
        for n in range(count):
            trace = brain.add(
                " ".join(rng.choices(WORDS, k=rng.randint(1, 12))),
                type=rng.choice(("episodic", "semantic")), scope=rng.choice(("user", "thread")),
                # One word a tag, no query's: a write of another tag (below) moves no score.
                tags=[f"tag{n}"], strength=rng.random(),
            )  # fmt: skip
            if n % 9 == 0:
                brain.forget(trace.id)
    brain.flush_index()


@pytest.mark.parametrize("written", [False, True])
def test_the_tool_returns_what_the_search_returns(
    brain: Brain, monkeypatch: pytest.MonkeyPatch, written: bool
) -> None:
    _fill(brain, 200)
    now = brain.now()
    brain.clock = lambda: now
    read_again: list[object] = []
    writing: list[bool] = []  # while it holds True, each ranking is followed by a write
    if written:  # a write after each ranking: the tool's answer is the search's, read again
        ranking = searching.keyword_ranking

        def ranked_then_written(*args: object, **kwargs: object) -> object:
            hits = ranking(*args, **kwargs)  # type: ignore[arg-type]
            if hits and writing:
                brain.update(hits[0].id, {"tags": [f"new{len(read_again)}"]})
            return hits

        monkeypatch.setattr(searching, "keyword_ranking", ranked_then_written)
        search = searching.search

        def noted(*args: object, **kwargs: object) -> object:
            read_again.append(args[1])
            return search(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(searching, "search", noted)
    ctx = ToolContext(brain, "mcp:agentos-host")
    for query in QUERIES:
        for args in ({}, {"type": "semantic"}, {"scope": "user", "limit": 3}):
            before = len(read_again)
            writing.append(True)
            found = call(ctx, TOOLS, "memory_search", {"query": query, **args}).data["results"]
            writing.clear()
            # Written since the ranking: the tool's answer came from the search, read again.
            assert (len(read_again) > before) == (written and bool(found)), (query, args)
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
