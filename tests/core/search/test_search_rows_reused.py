"""A keyword search builds its answer from the candidate rows its ranking read, while the
brain is as it was then; after any write in between, its own connection's or another's,
it reads the rows again (test_search_consistency.py has another connection's)."""

from __future__ import annotations

import random

import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import searching

WORDS = "harbour crane lantern quay dusk boat rope tide gull anchor".split()
QUERIES = ["harbour", "crane tide", "lantern OR quay", "gull NOT rope", "anchor boat dusk"]
FILTERS = [TraceFilter(), TraceFilter(type="semantic"), TraceFilter(tag="crane")]


def _fill(brain: Brain, count: int) -> None:
    rng = random.Random(3)
    with brain.batch():
        for _ in range(count):
            brain.add(
                " ".join(rng.choices(WORDS, k=rng.randint(1, 12))),
                type=rng.choice(("episodic", "semantic")),
                tags=rng.sample(WORDS, rng.randint(0, 2)), strength=rng.random(),
            )  # fmt: skip
    brain.flush_index()


def _answer(brain: Brain, query: str, flt: TraceFilter) -> list[tuple[object, ...]]:
    result = brain.search(query, flt, limit=10, mode="keyword", record_recall=False)
    return [(h.score, h.trace) for h in result.hits]


def test_the_answer_built_from_the_ranked_rows_is_the_answer_read_again(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(brain, 300)
    now = brain.now()
    brain.clock = lambda: now  # decay depends on the time: both ways answer at the same one
    reused: list[bool] = []
    rows_current = searching._rows_current

    def noted(*args: object) -> bool:
        reused.append(rows_current(*args))  # type: ignore[arg-type]
        return reused[-1]

    monkeypatch.setattr(searching, "_rows_current", noted)
    built = {(q, i): _answer(brain, q, f) for q in QUERIES for i, f in enumerate(FILTERS)}
    assert reused and all(reused)  # nothing written: every answer came from the ranked rows
    monkeypatch.setattr(searching, "_rows_current", lambda *args: False)
    read = {(q, i): _answer(brain, q, f) for q in QUERIES for i, f in enumerate(FILTERS)}
    assert any(built.values())
    assert built == read


def test_a_write_of_the_same_connection_after_the_ranking_is_read_again(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = brain.add("hello harbour kept")
    forgotten = brain.add("hello harbour forgotten later")
    edited = brain.add("hello harbour edited later")
    brain.flush_index()
    ranking = searching.keyword_ranking

    def ranked_then_written(*args: object, **kwargs: object) -> object:
        hits = ranking(*args, **kwargs)  # type: ignore[arg-type]
        brain.forget(forgotten.id)
        brain.update(edited.id, {"tags": ["new"]})
        return hits

    monkeypatch.setattr(searching, "keyword_ranking", ranked_then_written)
    result = brain.search("hello", mode="keyword", record_recall=False)
    by_id = {t.id: t for t in result.traces}
    assert set(by_id) == {kept.id, edited.id}
    assert by_id[edited.id].tags == ("new",)
