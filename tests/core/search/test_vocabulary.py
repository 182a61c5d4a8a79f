"""A search asks only for the forms of its words that memgui_fts holds (`vocabulary`): the
same ranking to the last bit as asking for every form, and a form written after a search is
found by the next one, whoever wrote it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import fts_merge, fulltext, stems, vocabulary
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
    # These plain words would go to memgui_stems (one term a word, no forms asked): here they
    # take memgui_fts's way, as a query with a phrase or a prefix does.
    monkeypatch.setattr(stems, "match", lambda _query: None)


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


def test_a_form_written_after_a_search_is_found_by_the_next(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        first = brain.add("we deploy on fridays").id
        assert vocabulary.present_filter(brain.db) is not None
        # "deployed" is found absent and not asked for.
        assert ids(brain, "deploy") == {first}
        assert ids(brain, "deploy") == {first}
        second = brain.add("the cranes were deployed at dawn").id
        assert ids(brain, "deploy") == {first, second}
        with Brain.open(brain_path) as other:  # another connection writes
            third = other.add("a deployment of cranes").id
        assert ids(brain, "deploy") == {first, second, third}
        # As many words as before (FTS5's row and token counts stay), one a new form.
        brain.update(third, {"content": "a deployable of cranes"})
        assert ids(brain, '"deployable"') == {third}
        assert ids(brain, "deploy") == {first, second, third}
        brain.forget(second)
        assert ids(brain, "deploy") == {first, third}
    with Brain.open(brain_path) as again:  # the same file opened again: what was learnt holds
        assert ids(again, "deploy") == {first, third}
        assert again.add("deploying cranes").id in ids(again, "deploy")


def test_what_a_search_learnt_outlasts_a_merge_not_a_write(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "FLUSH_AFTER", 1)  # a segment per add: merges are due
    monkeypatch.setattr(fts_merge, "INLINE_MERGE_PAGES", 0)  # every segment for the upkeep
    with Brain.open(brain_path) as brain:
        for text in TEXTS * 3:
            brain.add(text)
        assert fts_merge.needs_merge(fts_merge.levels(brain.db.conn))
        vocabulary.present_filter(brain.db)
        learnt = vocabulary._known[brain.db.identity]
        before = learnt.state
        assert fts_merge.merge_pass(brain.db, gap_s=0.0) > 0
        vocabulary.present_filter(brain.db)
        assert learnt.state == before  # merged: the same rows, the same words
        brain.add("a brand new sentence")
        vocabulary.present_filter(brain.db)
        assert learnt.state != before


def test_a_small_index_asks_for_every_form(brain: Brain, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocabulary, "MIN_ROWS", 10)
    brain.add("we deploy on fridays")
    assert vocabulary.present_filter(brain.db) is None
