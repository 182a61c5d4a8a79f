"""A few words of a memory around where a search matched it, for a list of results.

A result list shows one line per memory; the first line of a long note seldom holds the
word searched for. `snippet` finds the first place a word of the query occurs — at the
start of a word in spaced scripts, anywhere inside unspaced ones (CJK, Thai) — or a
word sharing its stem (`deploying` finds `deployment`), and cuts a line of about `width`
characters around it. FTS5 syntax (quotes, `AND`/`OR`/`NOT`, `prefix*`, `column:`) is
not part of the words. A memory found by meaning alone, with no word of the query, shows
its beginning.
"""

from __future__ import annotations

import re
import unicodedata

SNIPPET_WIDTH = 120
# How much of the line goes before the match: a few words, so that in a narrow column the
# match shows near the start rather than past the cut.
LEAD_CHARS = 18
_OPERATORS = {"AND", "OR", "NOT", "NEAR"}
_WORD = re.compile(r"[^\s\"'()*:^+{}\[\],]+")
_SPACE = re.compile(r"\s+")
_COLUMN = re.compile(r"\b\w+:(?=\S)")
_SUFFIXES = ("ments", "ment", "ings", "ing", "ers", "ed", "es", "er", "s")
_MIN_STEM = 3


def query_words(query: str) -> list[str]:
    """The words of a search query, FTS5 operators and syntax dropped, longest first."""
    query = _COLUMN.sub(" ", query)  # `content:plants` searches plants
    words = [w for w in _WORD.findall(query) if w not in _OPERATORS]
    found = {unicodedata.normalize("NFC", w) for w in words if w}
    return sorted(found, key=len, reverse=True)


def _unspaced(word: str) -> bool:
    """Written without spaces between words (CJK, kana, Hangul, Thai…): no word starts."""
    return any(
        unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI"))
        for ch in word
    )


def _stem(word: str) -> str:
    lowered = word.lower()
    for suffix in _SUFFIXES:
        if lowered.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            return word[: len(word) - len(suffix)]
    return word


def match_span(text: str, query: str) -> tuple[int, int] | None:
    """(start, end) of the first place in `text` a word of `query` (or its stem) occurs."""
    best: tuple[int, int] | None = None
    for word in query_words(query):
        tries = [word]
        stem = _stem(word)
        if stem != word:
            tries.append(stem)
        for term in tries:
            start = "" if _unspaced(term) else r"(?<!\w)"
            found = re.search(start + re.escape(term), text, re.IGNORECASE)
            if found is not None:
                if best is None or found.start() < best[0]:
                    best = (found.start(), found.end())
                break
    return best


def snippet(text: str, query: str, width: int = SNIPPET_WIDTH) -> str:
    """About `width` characters of `text` around the first match of `query`'s words, on
    one line, with `…` where the text goes on; the beginning when no word matches. A match
    further in than a few words starts the line a few words before it, however short the
    text: a list shows only the start of each line."""
    flat = _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()
    span = match_span(flat, query) if query.strip() else None
    if span is None or span[0] <= LEAD_CHARS:
        return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"
    start = span[0] - LEAD_CHARS
    space = flat.find(" ", start, span[0])
    start = space + 1 if space >= 0 else start  # begin at a word
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", max(span[1], start + width // 2), end)
        end = space if space > 0 else end
    return "…" + flat[start:end].strip() + ("…" if end < len(flat) else "")
