"""A word's other forms, as Porter stemming groups them: `deploy` finds "deployed" and
"deployment".

memgui's own index keeps words as written (every script, and a prefix query such as
`applicatio*` finds "applications", which a stemming index would not); AgentOS's
`porter ascii` index stems them. A query finds a word's other forms by asking for them: each
bare English word of the query becomes `(word OR form OR …)`. The forms are the word's root
with common English endings, kept when SQLite's own Porter stemmer (FTS5's `porter`, the one
AgentOS's index runs) gives them the word's stem. Porter stems `deploy` to `deploi` but
`deployment` to `deploy` (its `y` becomes `i` only at the end of a word): a final `i` and `y`
count as one here, so the word and all its forms find each other.

Nothing is looked up in a brain: about 200 candidates are made, stemmed by FTS5's own
tokenizer (called through apsw), and the answer is remembered for the word.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Sequence

import apsw

MIN_CHARS, MAX_CHARS = 3, 40
MAX_FORMS = 48  # forms asked for one word, the likeliest first (a long query stays small)
# Endings of English words, the commonest first: the forms are made in this order.
_ENDINGS = (
    "s", "es", "ed", "d", "ing", "er", "ers", "ment", "ments", "ion", "ions", "ation",
    "ations", "ly", "ness", "able", "ible", "al", "ally", "ity", "ities", "ive", "ively", "est",
    "ance", "ence", "ant", "ent", "ize", "ized", "izes", "izing", "ization", "ise", "ised",
    "ises", "ising", "ism", "ist", "ists", "or", "ors", "ful", "ative",
)  # fmt: skip
_AFTER_I = ("es", "ed", "er", "est", "ly", "ness", "ful")  # happi-: happier, happily, …
_AFTER_DOUBLE = ("ing", "ed", "er", "ers", "est")  # runn-: running, runner
_STOP = frozenset(
    "and are for from how not the was were what when where who why with you your".split()
)
_ASCII_WORD = re.compile(r"[a-z]+")

_lock = threading.Lock()
_stemmer: apsw.FTS5Tokenizer | None = None


def _stems(words: list[str]) -> list[str]:
    """Porter stems of ASCII words, one per word, by SQLite's FTS5 `porter` tokenizer
    (called directly through apsw: under a microsecond a word)."""
    global _stemmer
    with _lock:
        if _stemmer is None:
            # A private in-memory database's tokenizer (the connection stays open with it).
            _stemmer = apsw.Connection(":memory:").fts5_tokenizer("porter", ["ascii"])
        stems = _stemmer(
            " ".join(words).encode(),
            apsw.FTS5_TOKENIZE_DOCUMENT,
            None,
            include_offsets=False,
            include_colocated=False,
        )
    return [str(stem) for stem in stems]


def _key(stem: str) -> str:
    return stem[:-1] + "y" if stem.endswith("i") else stem


@functools.lru_cache(maxsize=4096)
def forms(word: str) -> tuple[str, ...]:
    """Other forms of an English `word` that Porter gives its stem (likeliest first), or ()
    for a word that is not one (another script, digits, too short or long, a stop word)."""
    word = word.lower()
    if not (MIN_CHARS <= len(word) <= MAX_CHARS) or not _ASCII_WORD.fullmatch(word):
        return ()
    if word in _STOP:
        return ()
    stem = _stems([word])[0]
    roots = [word, stem]
    if stem.endswith("i"):  # deployed → deploi: deploy, deployment; happy → happier
        roots.append(stem[:-1] + "y")
    # The word without an ending it has: relations → relation (relational).
    roots += [word[: -len(e)] for e in _ENDINGS if word.endswith(e) and len(word) - len(e) >= 3]
    roots = list(dict.fromkeys(roots))
    candidates = [*roots[1:], stem + "e"]
    for ending in _ENDINGS:
        candidates += [root + ending for root in roots]
    if stem.endswith("i"):
        candidates += [stem + ending for ending in _AFTER_I]
    if len(stem) > 2 and stem[-1] not in "aeiouwxy" and stem[-2] in "aeiou":
        candidates += [stem + stem[-1] + ending for ending in _AFTER_DOUBLE]  # run → running
    candidates = [
        c for c in dict.fromkeys(candidates) if c != word and MIN_CHARS <= len(c) <= MAX_CHARS
    ]
    wanted = _key(stem)
    found = [c for c, s in zip(candidates, _stems(candidates), strict=True) if _key(s) == wanted]
    return tuple(found[:MAX_FORMS])


@functools.lru_cache(maxsize=4096)
def other_stems(word: str) -> tuple[str, ...]:
    """A word whose Porter stem is `word`'s other key form, when its stem ends in `i` or `y`
    (`deploy` → deploi, its forms' `deployment` → deploy), else (): asked of memgui_stems,
    whose `porter` stems both again, the two find every form of the word. For a word
    that is not English (as `forms` says), ()."""
    word = word.lower()
    if not (MIN_CHARS <= len(word) <= MAX_CHARS) or not _ASCII_WORD.fullmatch(word):
        return ()
    if word in _STOP:
        return ()
    stem = _stems([word])[0]
    if stem.endswith("i"):  # deploi: a form keeping the y (deployment, deployer, …)
        other = stem[:-1] + "y"
        candidates = [other + ending for ending in _ENDINGS]
    elif stem.endswith("y"):  # deploy: the y of a word's end becomes i (deploy, deploys)
        other = stem[:-1] + "i"
        candidates = [stem, stem + "s", stem + "ed", stem[:-1] + "ies", stem[:-1] + "ied"]
    else:
        return ()
    for candidate, found in zip(candidates, _stems(candidates), strict=True):
        if found == other:
            return (candidate,)
    return ()


# A bareword of FTS5's query syntax (non-ASCII, letters, digits, `_`), a quoted phrase, or one
# character of syntax.
TOKEN = re.compile(r'"(?:[^"]|"")*"?|[\w\x80-\U0010ffff]+|\S', re.UNICODE)
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})


def expand(
    query: str,
    keep: Callable[[Sequence[str]], Sequence[str]] | None = None,
    alternatives: Callable[[str], tuple[str, ...]] = forms,
) -> str:
    """`query` (FTS5 syntax) with each bare English word `w` asked for as `(w OR form …)`;
    `keep` picks the forms asked for (`vocabulary.present_filter`: those the index holds);
    `alternatives` gives a word's forms (`other_stems` for memgui_stems).

    Phrases (`"…"`), prefixes (`w*`), column names (`col:`, `{a b}`), NEAR groups, words
    joined by `+` and words after `^` are kept as written: FTS5 takes no alternatives there.
    FTS5 joins words by AND only between phrases: next to a group the AND is written out.
    """
    tokens = [(m.group(), m.start(), m.end()) for m in TOKEN.finditer(query)]
    out: list[str] = []
    pos = 0
    near_depth = depth = 0
    in_braces = False
    ended = grouped = False  # the last token ended an operand; it was a group made here
    for i, (text, start, end) in enumerate(tokens):
        out.append(query[pos:start])
        pos = end
        before = tokens[i - 1][0] if i else ""
        after = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        word = text[0] not in '"(){}*:^+,' and text not in _OPERATORS
        if text == "{":
            in_braces = True
        elif text == "}":
            in_braces = False
        elif text == "(":
            depth += 1
            if before == "NEAR" and not near_depth:
                near_depth = depth
        elif text == ")":
            if depth == near_depth:
                near_depth = 0
            depth = max(0, depth - 1)
        expandable = (
            word
            and not in_braces
            and not near_depth
            and after not in ("*", ":", "+", "(")
            and before not in ("^", "+")
        )
        found = alternatives(text) if expandable else ()
        if found and keep is not None:
            found = tuple(keep(found))
        starts = word or text[0] in '"(^{' or text == "NEAR"
        if starts and (grouped or (found and ended)):
            out.append("AND ")
        out.append(f"({' OR '.join((text, *found))})" if found else text)
        grouped = bool(found)
        ended = (word and after != ":") or text[0] == '"' or text in (")", "*")
    out.append(query[pos:])
    return "".join(out)
