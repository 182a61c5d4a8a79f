"""memgui's own full-text index: words in every script, including unspaced CJK and Thai.

The AgentOS index (`porter ascii`) folds only ASCII case and does not segment CJK, so memgui
keeps a second, contentless FTS5 table (`memgui_fts`, unicode61 with diacritics removed).
Text in scripts written without spaces is indexed one character (grapheme) per token and
searched as a phrase of consecutive characters, which finds a word anywhere inside a run.
The user's query is rewritten the same way; everything else of FTS5 syntax is kept.
"""

from __future__ import annotations

import re
import unicodedata

from memgui.core.search import word_forms

# Scripts written without spaces between words (and Hangul, whose particles attach to words).
_UNSPACED = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u0f00-\u0fff"  # Tibetan
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u19e0-\u19ff"  # Khmer symbols
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified
    "\uf900-\ufaff"  # CJK compatibility
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"  # Hangul
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0002fa1f"  # CJK extensions B–F
)
_UNSPACED_RUN = re.compile(f"[{_UNSPACED}][{_UNSPACED}\u0300-\u036f\u0e31-\u0e3a\u0e47-\u0e4e]*")
_WORD = re.compile(r"[\w]+", re.UNICODE)

STOP_WORDS = frozenset(
    (
        "a an and are as at be by for from how i in is it me my of on or our the to us we "
        "what when where who why with you your"
    ).split(" ")
)


_MARK_CLASS: str | None = None
# Blocks of ideographs and Hangul syllables: Unicode assigns only letters (Lo) there, so the
# scan for marks skips their ~230,000 code points (0.2-0.3 s on first use otherwise).
_LETTERS_ONLY = frozenset("\u3400\u4e00\uf900\uac00\U00020000")


def _marks() -> str:
    """A regex class of every combining mark an unspaced run can hold (built on first use).

    It lists the code points of the run's ranges whose Unicode category is a mark (M*), so
    the regexes below split exactly where a per-character category check would.
    """
    global _MARK_CLASS
    if _MARK_CLASS is None:
        spans = re.findall(r"(.)(?:-(.))?", _UNSPACED + "\u0300-\u036f", re.DOTALL)
        marks = [
            chr(code)
            for first, last in spans
            if first not in _LETTERS_ONLY
            for code in range(ord(first), ord(last or first) + 1)
            if unicodedata.category(chr(code)).startswith("M")
        ]
        _MARK_CLASS = "".join(re.escape(ch) for ch in marks)
    return _MARK_CLASS


_GRAPHEME: re.Pattern[str] | None = None
_MARK: re.Pattern[str] | None = None
_RUN_SPLIT = re.compile(f"({_UNSPACED_RUN.pattern})")  # runs land at the odd indexes


def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    global _GRAPHEME, _MARK
    if _GRAPHEME is None or _MARK is None:
        marks = _marks()
        # Any character opens a grapheme (a run may open with a mark); marks attach to it.
        _GRAPHEME = re.compile(f"(?s).[{marks}]*")
        _MARK = re.compile(f"[{marks}]")
    return _GRAPHEME, _MARK


def _graphemes(run: str) -> list[str]:
    """Split a run into base characters with their combining marks attached."""
    return _patterns()[0].findall(run)


def segment(text: str) -> str:
    """Text as it goes into `memgui_fts`: composed (NFC), unspaced runs split into single
    graphemes.

    Each run becomes " g1 g2 … gn ". Most text has no run (ASCII is checked in C first),
    and CJK text has no combining marks, so its graphemes are its characters. Composing
    first makes a word stored decomposed (NFD: macOS file names, some pasted text) the
    same tokens as the word typed, in every script (FTS5 folds only Latin's marks).
    """
    if not text or text.isascii():  # no unspaced script can be in it: the common case
        return text or ""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    parts = _RUN_SPLIT.split(text)
    if len(parts) == 1:
        return text
    grapheme, mark = _patterns()
    split = grapheme.findall if mark.search(text) else None
    for i in range(1, len(parts), 2):
        run = parts[i]
        parts[i] = " " + " ".join(split(run) if split else run) + " "
    return "".join(parts)


def has_unspaced(text: str) -> bool:
    """Whether `text` holds a character of a script written without spaces."""
    return _UNSPACED_RUN.search(text) is not None


def tags_text(tags: list[str] | tuple[str, ...]) -> str:
    return segment(" ".join(tags))


def _segment_query_run(run: str, in_phrase: bool) -> str:
    joined = " ".join(_graphemes(run))
    return f" {joined} " if in_phrase else f' "{joined}" '


_OTHER_SPACE = re.compile(r"(?:(?![\x00-\x7f])\s)+")


def query_forms(query: str) -> list[str]:
    """The query with any Unicode space a plain one (FTS5 reads a no-break or ideographic
    space as part of a bareword, which made two words one phrase), composed (NFC, as
    `memgui_fts` holds text now) and, when that differs, decomposed too (NFD: as rows
    indexed before, and AgentOS's index, may hold a word stored that way)."""
    if query.isascii():
        return [query]
    spaced = _OTHER_SPACE.sub(" ", query)
    forms = [unicodedata.normalize("NFC", spaced), unicodedata.normalize("NFD", spaced)]
    return forms if forms[0] != forms[1] else forms[:1]


def either(expressions: list[str]) -> str:
    """One FTS5 expression matching what any of `expressions` matches."""
    kept = [e for e in dict.fromkeys(expressions) if e]
    return kept[0] if len(kept) == 1 else " OR ".join(f"({e})" for e in kept)


def rewrite_query(query: str) -> str:
    """The user's FTS5 query with unspaced runs turned into phrases of graphemes."""
    out: list[str] = []
    in_phrase = False
    pos = 0
    for m in re.finditer(r'"|' + _UNSPACED_RUN.pattern, query):
        out.append(query[pos : m.start()])
        token = m.group()
        if token == '"':
            in_phrase = not in_phrase
            out.append(token)
        else:
            out.append(_segment_query_run(token, in_phrase))
        pos = m.end()
    out.append(query[pos:])
    text = "".join(out)
    # A prefix star after a CJK phrase means nothing to FTS5: drop it.
    return re.sub(r'"\s*\*', '"', text)


def words(query: str) -> list[str]:
    """The words of a query (used to decide that a query with no words finds nothing)."""
    return _WORD.findall(query)


def natural_language_query(query: str) -> str:
    """The AgentOS rewrite (`tok1* OR tok2*`) for a query FTS5 rejected; '' when no words."""
    tokens: list[str] = []
    for token in (w.lower() for w in _WORD.findall(query.strip())):
        if token not in tokens:
            tokens.append(token)
    kept = [t for t in tokens if len(t) > 1 and t not in STOP_WORDS] or tokens
    parts: list[str] = []
    for token in kept:
        if _UNSPACED_RUN.fullmatch(token) or _UNSPACED_RUN.search(token):
            parts.append(rewrite_query(token).strip())
        else:
            parts.append(f'"{token}"*')
            # Its other forms the prefix does not reach (`happy`: happiness).
            parts += [f'"{form}"' for form in word_forms.forms(token) if not form.startswith(token)]
    return " OR ".join(parts)
