"""A search asks only for the forms of its words that memgui_fts holds (`vocabulary`): the
same ranking to the last bit as asking for every form, and a form written after a search is
found by the next one, whoever wrote it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import vocabulary
from memgui.core.search.keyword import keyword_ranking

TEXTS = (
    "we deploy the service on fridays", "the deployment failed twice", "names of the files",
    "a file was named after the release", "the release notes were filed", "deploying again",
    "naming things is hard", "a harbour crane unloads", "the cranes were deployed at dawn",
)  # fmt: skip
QUERIES = ("deploy", "file names", "release", "crane deploy", "naming OR release", "files")


def ids(brain: Brain, query: str) -> set[str]:
    return {h.id for h in keyword_ranking(brain, query, TraceFilter(), 100)}


@pytest.fixture(autouse=True)
def checked_at_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocabulary, "MIN_ROWS", 0)  # the forms are checked in a small brain


def test_asking_only_for_held_forms_ranks_exactly_as_asking_for_all(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in TEXTS * 3:
        brain.add(text)
    now = brain.now()
    brain.clock = lambda: now  # one decay for both rankings
    pruned = {q: keyword_ranking(brain, q, TraceFilter(), 100) for q in QUERIES}
    asked: list[Sequence[str]] = []

    def every_form(_db: object):  # noqa: ANN202
        def keep(forms: Sequence[str]) -> tuple[str, ...]:
            asked.append(forms)
            return tuple(forms)

        return keep

    monkeypatch.setattr(vocabulary, "present_filter", every_form)
    full = {q: keyword_ranking(brain, q, TraceFilter(), 100) for q in QUERIES}
    assert asked  # the forms were asked for
    assert pruned == full  # ids, bm25 and strength, to the last bit
    assert all(pruned[q] for q in QUERIES)


def searched(brain: Brain, query: str) -> tuple[set[str], bool]:
    """The ids a keyword search finds, and whether it asked only for held forms."""
    pruned = vocabulary.present_filter(brain.db) is not None
    return ids(brain, query), pruned


def test_a_form_written_after_a_search_is_found_by_the_next(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        first = brain.add("we deploy on fridays").id
        brain.flush_index()
        ids(brain, "deploy")  # the first search of a file learns nothing yet
        # The index unchanged: "deployed" is found absent and not asked for.
        assert searched(brain, "deploy") == ({first}, True)
        assert searched(brain, "deploy") == ({first}, True)
        second = brain.add("the cranes were deployed at dawn").id
        brain.flush_index()
        # The index changed: every form is asked for, then the held ones again.
        assert searched(brain, "deploy") == ({first, second}, False)
        assert searched(brain, "deploy") == ({first, second}, True)
        with Brain.open(brain_path) as other:  # another connection writes
            third = other.add("a deployment of cranes").id
        assert ids(brain, "deploy") == {first, second, third}
        assert searched(brain, "deploy") == ({first, second, third}, True)
        brain.forget(second)
        assert ids(brain, "deploy") == {first, third}
    with Brain.open(brain_path) as again:  # the same file opened again: what was learnt holds
        assert searched(again, "deploy") == ({first, third}, True)
        assert again.add("deployable cranes").id in ids(again, "deploy")


def test_a_small_index_asks_for_every_form(brain: Brain, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocabulary, "MIN_ROWS", 10)
    brain.add("we deploy on fridays")
    assert vocabulary.present_filter(brain.db) is None
