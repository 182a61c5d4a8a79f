"""Strengthen and derive on both engines: the same candidates from the same feedback and
links on a SQLite file and on a real PostgreSQL server, the same rows written in the run's
one batch, which a revert undoes; a plan whose co-activation edge changed since writes
nothing. The chat model is the test Ollama server's (tests/support/ollama_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memgui.core import consolidate, shared_consolidate
from memgui.core.brain import Brain
from memgui.core.consolidate import ConsolidationOptions
from memgui.core.consolidate_apply import ConsolidationResult
from memgui.core.errors import ConsolidationOutdated
from memgui.core.llm import OllamaChat
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import BrainStore
from tests.support.consolidation import NOW

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server

STRENGTHEN = ConsolidationOptions(steps=("strengthen",))


def add_feedback(store: BrainStore, query: str, ids: list[str], signal: str = "used") -> None:
    """AgentOS's `feedback(id, signal, query)` rows, as AgentOS writes them on each engine."""
    rows = [(store.brain_id, i, signal, query, NOW) for i in ids]
    sql = (
        "INSERT INTO retrieval_feedback (brain_id, trace_id, signal, query, created_at) "
        "VALUES (?, ?, ?, ?, ?)"
    )
    if isinstance(store, SharedBrain):
        with store.conn.transaction():
            store.conn.cursor().executemany(sql.replace("?", "%s"), rows)
        return
    assert isinstance(store, Brain)
    with store.db.lock:
        store.db.conn.executemany(sql, rows)


def graph(store: BrainStore) -> tuple[dict[tuple[str, str], float], set[str]]:
    edges = {(e["source_id"], e["target_id"]): e["weight"] for e in store.edges()}
    return edges, {n["id"] for n in store.nodes()}


def traces(store: BrainStore) -> dict[str, tuple[str, tuple[str, ...], bool]]:
    found = store.list_traces(TraceFilter(include_deleted=True), limit=200)
    return {t.id: (t.content, t.tags, t.deleted) for t in found}


def plan(store: BrainStore, options: ConsolidationOptions) -> consolidate.ConsolidationPlan:
    return run_to_end(consolidate.plan_consolidation(store, options))  # type: ignore[arg-type]


def apply(store: BrainStore, p: consolidate.ConsolidationPlan) -> ConsolidationResult:
    return run_to_end(consolidate.apply(store, p))  # type: ignore[arg-type]


def test_strengthen_grows_co_activation_edges_once_per_feedback(store: BrainStore) -> None:
    a, b, c = (store.add(t).id for t in ("red", "green", "blue"))
    add_feedback(store, "colours", [a, b, c])
    add_feedback(store, "ignored", [a, b], signal="ignored")
    first = plan(store, STRENGTHEN)
    [candidate] = first.strengthen
    assert candidate.query == "colours" and len(candidate.pairs) == 3
    assert all(p.weight_before is None and p.weight_after == 0.1 for p in candidate.pairs)
    assert not any(n.startswith("strengthen") for n in first.notes)  # not skipped

    result = apply(store, first)

    assert result.strengthened == 1 and result.seed_counts()["derived"] == 1
    edges, nodes = graph(store)
    pairs = ((a, b), (a, c), (b, c))
    assert edges == {tuple(sorted(p)): pytest.approx(0.1) for p in pairs}
    assert nodes == {a, b, c}
    assert plan(store, STRENGTHEN).strengthen == []  # counted already
    add_feedback(store, "colours", [a, b])
    again = plan(store, STRENGTHEN)
    assert again.strengthen[0].pairs[0].weight_before == pytest.approx(0.1)
    second = apply(store, again)
    assert sorted(graph(store)[0].values()) == pytest.approx([0.1, 0.1, 0.2])

    store.revert(second.batch_id)  # type: ignore[arg-type]
    assert graph(store) == (edges, nodes)
    store.revert(result.batch_id)  # type: ignore[arg-type]
    assert graph(store) == ({}, set())


def test_a_plan_whose_edge_grew_since_writes_nothing(store: BrainStore) -> None:
    a, b = store.add("left").id, store.add("right").id
    add_feedback(store, "sides", [a, b])
    stale = plan(store, STRENGTHEN)
    apply(store, plan(store, STRENGTHEN))  # another run grows the edge first
    add_feedback(store, "sides", [a, b])
    grown = graph(store)
    with pytest.raises(ConsolidationOutdated) as outdated:
        apply(store, stale)
    assert "co-activation edge" in str(outdated.value)
    assert graph(store) == grown


@pytest.fixture
def chat(ollama_server: object) -> Iterator[OllamaChat]:
    llm = OllamaChat(ollama_server.url)  # type: ignore[attr-defined]
    yield llm
    llm.close()


def linked(store: BrainStore, contents: list[str], scope_id: str) -> list[str]:
    ids = [store.add(c, scope_id=scope_id).id for c in contents]
    for x, y in zip(ids, ids[1:], strict=False):
        store.link(x, y, "relates_to")
    return ids


def test_a_linked_cluster_gets_one_insight_a_revert_takes_back(
    store: BrainStore, chat: OllamaChat
) -> None:
    members = linked(store, [f"Python build step {n} compiles the parser" for n in range(5)], "t")
    store.add("Unrelated memory about lunch")
    before = traces(store)
    options = ConsolidationOptions(steps=("derive",), llm=chat)
    first = plan(store, options)
    [candidate] = first.derive
    # oldest first; adds in one millisecond keep their order on a file (its rowids) and
    # are ordered by id on PostgreSQL, so the order is checked by time only
    assert sorted(candidate.member_ids) == sorted(members) and candidate.model == "llama3.2"
    added = [store.get(i).created_at for i in candidate.member_ids]
    assert added == sorted(added)
    assert candidate.insight == "Insight: these memories are about build, compiles, parser"
    candidate.set_insight("The parser is compiled in every build step")

    result = apply(store, first)

    [insight] = [store.get(i) for i in result.derived_ids]
    assert result.derived == 1 and insight.id.startswith("insight_")
    assert (insight.content, insight.type, insight.scope, insight.scope_id) == (
        "The parser is compiled in every build step",
        "semantic",
        "user",
        "t",
    )
    assert insight.tags == ("derived", "insight") and insight.stored_strength == 0.7
    assert insight.metadata["derivedFrom"] == sorted(members)
    again = plan(store, options)
    assert again.derive == [] and any("without an insight yet" in n for n in again.notes)
    store.revert(result.batch_id)  # type: ignore[arg-type]
    assert traces(store) == before


def reflect(store: BrainStore, options: ConsolidationOptions) -> ConsolidationResult:
    if isinstance(store, SharedBrain):
        return shared_consolidate.reflect(store, options)
    assert isinstance(store, Brain)
    return consolidate.reflect(store, options)


def test_reflect_strengthens_and_derives_alike(store: BrainStore, chat: OllamaChat) -> None:
    members = linked(store, [f"Release note {n} mentions the installer" for n in range(5)], "r")
    add_feedback(store, "installer", members[:2])
    steps = ("strengthen", "derive")
    quiet = reflect(store, ConsolidationOptions(steps=steps))  # no chat model: said so
    assert (quiet.strengthened, quiet.derived) == (1, 0)
    assert "derive skipped: 1 cluster(s) found, but no chat model was given" in quiet.notes
    result = reflect(store, ConsolidationOptions(steps=steps, llm=chat))
    assert (result.strengthened, result.derived, result.busy) == (0, 1, None)
    [insight] = [store.get(i) for i in result.derived_ids]
    assert insight.content == "Insight: these memories are about installer, mentions, note"
    assert insight.metadata["derivedFrom"] == sorted(members)
    assert reflect(store, ConsolidationOptions(steps=steps, llm=chat)).derived == 0
