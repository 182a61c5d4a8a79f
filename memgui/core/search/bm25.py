"""The one ranking expression of keyword search: FTS5's bm25, computed by `memgui_bm25` (a
small SQLite extension, csrc/memgui_bm25.c, built by the install) when it is loaded, else by
FTS5's own `bm25()`. Both give the same score to the last bit; the extension is quicker at a
million traces: it keeps each phrase's document count (which bm25 counts again in every
statement, reading the phrase's whole doclist) while no connection changed the file (a
query of plain words each word's, for any query with that word: csrc/count_cache.c), and,
told the statement's LIMIT, reads no row length for a match that cannot reach the best rows
(docs/performance.md, "The C ranking function").

Every connection memgui opens to a brain loads it (`storage/db.py`); without it (not built:
no C compiler at install) the search ranks the same rows in the same order, slower.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import weakref

import apsw

log = logging.getLogger(__name__)

FUNCTION = "memgui_bm25"
# The compiled file: an SQLite extension, not a Python module (setup.py builds it under this
# module's name so that it lands beside the package, in a wheel and a frozen build alike).
MODULE = "memgui.core.search._memgui_bm25"
ENTRY_POINT = "sqlite3_memguibm_init"
# MEMGUI_BM25=fts5: never load it (FTS5's bm25 ranks): the fallback, for a test or a doubt.
DISABLE_ENV = "MEMGUI_BM25"

# Per connection: whether `memgui_bm25` is registered on it.
_loaded: weakref.WeakKeyDictionary[apsw.Connection, bool] = weakref.WeakKeyDictionary()
_warned = False


def extension_path() -> str | None:
    """The built extension's file, found without importing it; None when it was not built."""
    spec = importlib.util.find_spec(MODULE)
    return spec.origin if spec is not None and spec.origin else None


def load(conn: apsw.Connection) -> bool:
    """Register `memgui_bm25` on `conn` (writes nothing); False when it is not available,
    and then `score_sql` names FTS5's bm25."""
    if conn in _loaded:
        return _loaded[conn]
    path = None if os.environ.get(DISABLE_ENV) == "fts5" else extension_path()
    ok = False
    if path is not None:
        try:
            conn.enable_load_extension(True)
            try:
                conn.load_extension(path, ENTRY_POINT)
                ok = True
            finally:
                conn.enable_load_extension(False)
        except (apsw.Error, AttributeError, OSError) as error:
            _warn(f"{path} cannot be loaded ({error})")
    elif os.environ.get(DISABLE_ENV) != "fts5":
        _warn("it was not built (no C compiler at install)")
    _loaded[conn] = ok
    return ok


def _warn(why: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        log.info("memgui_bm25: %s; keyword search ranks with FTS5's bm25 (same order)", why)


def available(conn: apsw.Connection) -> bool:
    """Whether `score_sql` on this connection uses the extension."""
    return _loaded.get(conn, False)


def score_sql(conn: apsw.Connection, table: str, match: str, limit: str | None = None) -> str:
    """The bm25 score of a row of full-text table `table` (lower is better), as an SQL
    expression. `match` is the SQL of the statement's MATCH text (a parameter such as `?1`):
    the document counts are kept under it. `limit`, the SQL of the statement's LIMIT, only
    in a statement that ranks the index alone (`ORDER BY` this score `LIMIT` it, no other
    condition): a row that cannot be among that many best is then given a bound, not its
    score (it sorts after every row the LIMIT keeps)."""
    if not available(conn):
        return f"bm25({table})"
    return f"{FUNCTION}({table}, '{table}', {match}, {limit or 0})"
