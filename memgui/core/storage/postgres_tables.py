"""AgentOS's other tables on PostgreSQL: the knowledge graph, documents, conversations and the
rest of a brain's portable tables, so a copy between a file and PostgreSQL loses nothing.

The DDL is the file's (`schema.AGENTOS_TABLES`) turned into PostgreSQL the way AgentOS's
`Brain.openPostgres` turns it (`_normalizeDdlForDialect`): an AUTOINCREMENT key becomes an
identity column, INTEGER BIGINT, BLOB BYTEA, foreign keys kept. One difference: REAL is
DOUBLE PRECISION here (as `memory_traces.strength` already is), since PostgreSQL's REAL is
four bytes and a copy there and back would change a confidence of 0.9; AgentOS reads both as
a number. Whichever program makes a table first makes it; both use IF NOT EXISTS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memgui.core.storage import schema

# AgentOS's PORTABLE_TABLES after brain_meta and memory_traces: parents before children.
TABLE_NAMES = (
    "knowledge_nodes",
    "knowledge_edges",
    "documents",
    "document_chunks",
    "document_images",
    "consolidation_log",
    "retrieval_feedback",
    "conversations",
    "messages",
    "prospective_items",
    "archived_traces",
    "archive_access_log",
)
# The key each table is ordered by (AgentOS's PORTABLE_TABLE_PRIMARY_KEYS, brain_id left out).
_ORDER = {
    "consolidation_log": "id",
    "retrieval_feedback": "id",
    "archived_traces": "trace_id",
    "archive_access_log": "trace_id, accessed_at",
}
_NOT_COLUMNS = ("PRIMARY", "FOREIGN", "UNIQUE", "CONSTRAINT", "CHECK")


@dataclass(frozen=True)
class Table:
    """One portable table: its columns but brain_id, in the DDL's order."""

    name: str
    columns: tuple[str, ...]
    identity: bool  # an AUTOINCREMENT id: copied as it is, the sequence moved past it

    @property
    def column_list(self) -> str:
        return ", ".join(self.columns)

    @property
    def order(self) -> str:
        return _ORDER.get(self.name, "id")


def _statements() -> list[str]:
    return [s.strip() for s in schema.AGENTOS_TABLES.split(";") if s.strip()]


def _target(statement: str) -> str | None:
    found = re.search(r"(?:CREATE TABLE IF NOT EXISTS|\bON)\s+(\w+)", statement)
    return found.group(1) if found else None


def _table(statement: str) -> Table:
    name = _target(statement)
    assert name is not None
    body = statement[statement.index("(") + 1 : statement.rindex(")")]
    columns = []
    for line in body.splitlines():
        words = line.strip().split()
        if words and words[0] not in _NOT_COLUMNS and words[0] != "brain_id":
            columns.append(words[0])
    return Table(name, tuple(columns), "AUTOINCREMENT" in statement)


def postgres_ddl(statement: str) -> str:
    """A file's DDL statement as PostgreSQL takes it (AgentOS's rewriting, REAL widened)."""
    return (
        re.sub(
            r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b",
            "INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
            statement,
        )
        .replace("INTEGER", "BIGINT")
        .replace("BLOB", "BYTEA")
        .replace("REAL", "DOUBLE PRECISION")
    )


_OURS = [s for s in _statements() if _target(s) in TABLE_NAMES]
TABLES = tuple(_table(s) for s in _OURS if s.startswith("CREATE TABLE"))
# The knowledge graph's tables are layout 3's (`postgres_schema`); the rest are made here,
# run by `postgres.connect` after it (layout 4).
_GRAPH = ("knowledge_nodes", "knowledge_edges")
SCHEMA = "".join(f"{postgres_ddl(s)};\n" for s in _OURS if _target(s) not in _GRAPH)
# The last statement's index, to tell whether the layout is all there.
LAST_INDEX = re.findall(r"CREATE INDEX IF NOT EXISTS (\w+)", SCHEMA)[-1]
