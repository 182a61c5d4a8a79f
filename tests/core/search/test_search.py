"""Keyword search: FTS5 syntax, the natural-language fallback, every script, recall."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument, QuerySyntaxError
from memgui.core.model import TraceFilter
from tests.support.paths import CORPORA


def ids(result) -> list[str]:
    return [t.id for t in result.traces]


def test_fts5_syntax_works(brain: Brain) -> None:
    a = brain.add("the quick brown fox jumps")
    b = brain.add("a quick red car")
    c = brain.add("foxes are quick and brown")
    assert set(ids(brain.search('"quick brown"'))) == {a.id}
    assert set(ids(brain.search("quick NOT fox*"))) == {b.id}
    assert set(ids(brain.search("fox*"))) == {a.id, c.id}
    assert set(ids(brain.search("red OR jumps"))) == {a.id, b.id}
    assert brain.search("quick").search_mode == "keyword"


def test_tags_are_searched(brain: Brain) -> None:
    t = brain.add("nothing in the text", tags=["kubernetes"])
    assert ids(brain.search("kubernetes")) == [t.id]


def test_bad_syntax_falls_back_to_natural_language(brain: Brain) -> None:
    t = brain.add("What are my command palette preferences")
    assert ids(brain.search('command palette "preferences')) == [t.id]
    assert ids(brain.search("palette AND (")) == [t.id]


@pytest.mark.parametrize("query", ["*Can't stop", "nosuchcolumn: word", "word AND", "NEAR(x"])
def test_queries_fts5_cannot_parse_fall_back(brain: Brain, query: str) -> None:
    t = brain.add("I can't stop the word nosuchcolumn near x")
    assert t.id in ids(brain.search(query))


def test_a_query_with_no_words_finds_nothing(brain: Brain) -> None:
    brain.add("something")
    for query in ("", "   ", '"', "***", "()"):
        assert brain.search(query).traces == []


def test_unusable_query_is_a_typed_error() -> None:
    assert "not a valid FTS5 match expression" in str(QuerySyntaxError('"'))


def test_diacritics_and_case_fold(brain: Brain) -> None:
    t = brain.add("Café CRÈME brûlée à Zürich")
    for query in ("cafe", "creme", "ZURICH", "brûlée"):
        assert ids(brain.search(query)) == [t.id], query


def test_filters_apply_before_the_cut(brain: Brain) -> None:
    for i in range(30):
        brain.add(f"shared word {i}", scope="thread" if i % 3 else "user")
    result = brain.search("shared", TraceFilter(scope="user"), limit=10)
    assert len(result.traces) == 10
    assert all(t.scope == "user" for t in result.traces)


def test_deleted_traces_are_not_found_unless_asked(brain: Brain) -> None:
    t = brain.add("ephemeral thought")
    brain.forget(t.id)
    assert brain.search("ephemeral").traces == []
    assert ids(brain.search("ephemeral", TraceFilter(deleted=True))) == [t.id]


def test_only_returned_results_are_recalled(brain: Brain) -> None:
    traces = [brain.add(f"apple number {i}") for i in range(5)]
    result = brain.search("apple", limit=2)
    returned = set(ids(result))
    for t in traces:
        count = brain.get(t.id).retrieval_count
        assert count == (1 if t.id in returned else 0)
    assert all(brain.get(i).version == 1 for i in returned)  # recall is not an edit
    brain.search("apple", limit=2, record_recall=False)
    assert sum(brain.get(t.id).retrieval_count for t in traces) == 2


def test_stronger_trace_ranks_first_at_equal_text(brain: Brain) -> None:
    weak = brain.add("identical words here", strength=0.2)
    strong = brain.add("identical words here", strength=0.9)
    assert ids(brain.search("identical", record_recall=False)) == [strong.id, weak.id]


@pytest.mark.parametrize("limit", [0, 201, -1])
def test_search_limit_bounds(brain: Brain, limit: int) -> None:
    with pytest.raises(InvalidArgument, match=rf"limit must be between 1 and 200 \(got {limit}\)"):
        brain.search("x", limit=limit)


def test_unknown_mode(brain: Brain) -> None:
    with pytest.raises(InvalidArgument, match="mode must be one of"):
        brain.search("x", mode="psychic")


def _middle_word(text: str, pattern: str) -> str:
    words = re.findall(pattern, text)
    assert words, pattern
    return words[len(words) // 2]


@pytest.mark.parametrize(
    ("lang", "pattern", "size"),
    [
        ("ja", r"[\u3040-\u30ff\u4e00-\u9fff]+", 2),
        ("th", r"[\u0e00-\u0e7f]+", 4),
        ("ru", r"[а-яА-ЯёЁ]{6,}", 0),
        ("zh", r"[\u4e00-\u9fff]+", 2),
        ("ko", r"[\uac00-\ud7af]+", 2),
        ("ar", r"[\u0621-\u064a]{4,}", 0),
        ("he", r"[\u05d0-\u05ea]{4,}", 0),
    ],
)
def test_words_in_every_script_are_found(brain: Brain, lang: str, pattern: str, size: int) -> None:
    notes = sorted((CORPORA / "obsidian-help" / lang).rglob("*.md"))[:40]
    added = {}
    for note in notes:
        text = note.read_text(encoding="utf-8")
        added[brain.add(text).id] = text
    target_id, text = list(added.items())[len(added) // 2]
    body = text.split("---", 2)[-1]
    word = _middle_word(body, pattern)
    if size:  # a piece from inside an unspaced run: the middle of a sentence
        start = max(0, len(word) // 2 - size // 2)
        word = word[start : start + size] if len(word) > size else word
    found = ids(brain.search(word, limit=200, record_recall=False))
    assert target_id in found, (lang, word, Path(notes[0]).parent)
