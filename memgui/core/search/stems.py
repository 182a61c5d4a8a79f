"""Plain-word queries asked of memgui_stems (schema 9): one Porter stem per word.

memgui_fts keeps words as written, so a query finds a word's other forms by asking for each
(`word_forms`: ~40 a word, those the index holds from 10k rows on, `vocabulary`), and FTS5
ranks every asked form as a phrase of its own. memgui_stems holds the same rows with each
word stemmed by FTS5's `porter` (the tokenizer AgentOS's index runs): a word is one term,
two when its forms have two stems (Porter's final `i` and `y`: `deploy` → deploi, but
`deployment` → deploy). It finds what the forms found (each form's stem is one of the
word's), plus the forms no list makes ("redeployability" is not made, its stem is found).

The ranking is FTS5's bm25 on the stemmed index: a word's matches weigh as one term with
its stem's document count, as AgentOS's index weighs them, where the forms summed a bm25
part per form (a row holding "deploy" and "deployed" scored as if it matched two words).
Where no two forms of a word stand in the brain, the scores are the same to the last bit:
Porter keeps every token, so a row's length and the averages are those of memgui_fts.

Only a query of plain words takes this way: letters and digits (one token each), with
AND, OR, NOT and parentheses in a valid order. A phrase, a prefix, a column, NEAR, `^`, a
word of an unspaced script or a query FTS5 would refuse goes to memgui_fts as before.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from memgui.core.search import fts_merge, fulltext, textindex, word_forms
from memgui.core.storage import schema

if TYPE_CHECKING:
    from memgui.core.storage.db import Database

log = logging.getLogger(__name__)

TABLE = schema.STEMS_TABLE
_OPERATORS = frozenset({"AND", "OR", "NOT"})


def is_plain(query: str) -> bool:
    """Whether `query` is plain words (each one token for unicode61), AND, OR, NOT and
    parentheses, in an order FTS5 accepts."""
    if not query.isascii() and textindex.has_unspaced(query):
        return False
    want_operand = True
    after_group = False  # FTS5 joins a word to a group only by a written operator
    depth = 0
    for token in word_forms.TOKEN.findall(query):
        if token == "(":
            if not want_operand:
                return False
            depth += 1
        elif token == ")":
            if want_operand or depth == 0:
                return False
            depth -= 1
        elif token in _OPERATORS:
            if want_operand:
                return False
            want_operand = True
        elif token.isalnum() and token != "NEAR" and not after_group:
            want_operand = False
        else:
            return False
        after_group = token == ")"
    return depth == 0 and not want_operand


def match(query: str) -> str | None:
    """The MATCH text for memgui_stems of a plain-word `query` (each word and, where its
    forms have another stem, one form for it), or None when the query is not plain."""
    if not is_plain(query):
        return None
    return word_forms.expand(query, alternatives=word_forms.other_stems)


def create_and_fill(db: Database) -> int:
    """Schema 9, inside the migrating write: memgui_stems made and filled from every row.
    What waited for the indexes goes into memgui_fts first (memgui_stems is not there yet,
    so no row enters it twice); the fill's progress is logged. Rows indexed."""
    fulltext.flush_in_transaction(db)
    conn = db.conn
    # A table of that name in a brain of an older schema is no index of ours: made afresh.
    conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    conn.execute(schema.MEMGUI_STEMS)
    for statement in schema.MEMGUI_STEMS_CONFIG:
        conn.execute(statement)
    total = int(conn.execute("SELECT count(*) FROM memory_traces").get)
    started = time.monotonic()
    taken = 0
    for taken in fulltext.fill_stems_steps(conn):
        log.info("%s: stemmed index %d of %d rows (%.1f s)", db.path, taken, total,
                 time.monotonic() - started)  # fmt: skip
    fts_merge.merge_all(conn, TABLE)
    return taken
