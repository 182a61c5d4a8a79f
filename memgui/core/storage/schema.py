"""DDL of a brain: the AgentOS layout, verbatim, and memgui's additions.

memgui adds, never removes. The AgentOS tables are created exactly as the real package
creates them so that AgentOS reads what memgui writes; memgui's own columns and tables are
recorded as numbered migrations in `brain_meta` under `memgui_schema_version` (the AgentOS
`schema_version` key is left to AgentOS).
"""

from __future__ import annotations

from memgui.core.storage import degrees

AGENTOS_SCHEMA_VERSION = "2"
# memgui's own schema version. 4: each node's degree kept in memgui_degrees by triggers;
# 5: the journal keeps a trace's changed fields, not two snapshots (journal_states);
# 6: memgui_fts merges its segments only when asked (MEMGUI_FTS_CONFIG);
# 7: knowledge edges indexed by both ends together (EDGE_PAIR_INDEXES), so the edge between
# two given nodes is one seek; 8: links indexed by their target with every key column
# (LINK_TARGET_INDEX), so the links into a set of ids are read from the index alone;
# 9: memgui_stems, the same text with one Porter stem per word (MEMGUI_STEMS), so a query of
# plain words asks one term per word.
SCHEMA_VERSION = 9
SCHEMA_KEY = "memgui_schema_version"
SHARED_KEY = "memgui_shared"  # another program writes this brain too (brain_meta)

# memgui's own indexes on AgentOS's knowledge_edges (schema 7): an extra index changes
# nothing AgentOS reads or writes (its INSERT OR REPLACE keeps every index up to date).
# Without them the edge between a given source and target is found by walking one end's
# edges and reading each row: the two hubs of a neighbourhood cost a walk of thousands.
EDGE_SOURCE_TARGET_INDEX = "memgui_knowledge_edges_source_target"
EDGE_TARGET_SOURCE_INDEX = "memgui_knowledge_edges_target_source"
EDGE_PAIR_INDEXES = f"""
CREATE INDEX IF NOT EXISTS {EDGE_SOURCE_TARGET_INDEX}
  ON knowledge_edges (brain_id, source_id, target_id);
CREATE INDEX IF NOT EXISTS {EDGE_TARGET_SOURCE_INDEX}
  ON knowledge_edges (brain_id, target_id, source_id);
"""

# memgui's covering index of `memory_links` by target (schema 8): `idx_memory_links_to` holds
# only (brain, to), so each link found by its target was a row lookup for `from_id` and
# `kind` (a 1,500-node neighbourhood: ~3,600 of them). The older index stays: an older memgui
# names it, and reads a newer brain.
LINK_TARGET_INDEX = "memgui_memory_links_target_cover"
LINK_TARGET_INDEX_SQL = f"""
CREATE INDEX IF NOT EXISTS {LINK_TARGET_INDEX}
  ON memory_links (brain_id, to_id, from_id, kind);
"""

AGENTOS_TABLES = """
CREATE TABLE IF NOT EXISTS brain_meta (
  brain_id TEXT NOT NULL,
  key      TEXT NOT NULL,
  value    TEXT NOT NULL,
  PRIMARY KEY (brain_id, key)
);
CREATE TABLE IF NOT EXISTS memory_traces (
  brain_id        TEXT    NOT NULL,
  id              TEXT    NOT NULL,
  type            TEXT    NOT NULL,
  scope           TEXT    NOT NULL,
  content         TEXT    NOT NULL,
  embedding       BLOB,
  strength        REAL    NOT NULL DEFAULT 1.0,
  created_at      INTEGER NOT NULL,
  last_accessed   INTEGER,
  retrieval_count INTEGER NOT NULL DEFAULT 0,
  tags            TEXT    NOT NULL DEFAULT '[]',
  emotions        TEXT    NOT NULL DEFAULT '{}',
  metadata        TEXT    NOT NULL DEFAULT '{}',
  deleted         INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_memory_traces_brain_type
  ON memory_traces (brain_id, type, created_at DESC);
CREATE INDEX IF NOT EXISTS idx_memory_traces_brain_scope
  ON memory_traces (brain_id, scope);
CREATE TABLE IF NOT EXISTS knowledge_nodes (
  brain_id   TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  label      TEXT    NOT NULL,
  properties TEXT    NOT NULL DEFAULT '{}',
  embedding  BLOB,
  confidence REAL    NOT NULL DEFAULT 1.0,
  source     TEXT    NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  PRIMARY KEY (brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_knowledge_nodes_brain_type
  ON knowledge_nodes (brain_id, type);
CREATE TABLE IF NOT EXISTS knowledge_edges (
  brain_id      TEXT    NOT NULL,
  id            TEXT    NOT NULL,
  source_id     TEXT    NOT NULL,
  target_id     TEXT    NOT NULL,
  type          TEXT    NOT NULL,
  weight        REAL    NOT NULL DEFAULT 1.0,
  bidirectional INTEGER NOT NULL DEFAULT 0,
  metadata      TEXT    NOT NULL DEFAULT '{}',
  created_at    INTEGER NOT NULL,
  PRIMARY KEY (brain_id, id),
  FOREIGN KEY (brain_id, source_id) REFERENCES knowledge_nodes(brain_id, id),
  FOREIGN KEY (brain_id, target_id) REFERENCES knowledge_nodes(brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_knowledge_edges_brain_source
  ON knowledge_edges (brain_id, source_id);
CREATE INDEX IF NOT EXISTS idx_knowledge_edges_brain_target
  ON knowledge_edges (brain_id, target_id);
CREATE TABLE IF NOT EXISTS documents (
  brain_id     TEXT    NOT NULL,
  id           TEXT    NOT NULL,
  path         TEXT    NOT NULL,
  format       TEXT    NOT NULL,
  title        TEXT,
  content_hash TEXT    NOT NULL,
  chunk_count  INTEGER NOT NULL DEFAULT 0,
  metadata     TEXT    NOT NULL DEFAULT '{}',
  ingested_at  INTEGER NOT NULL,
  PRIMARY KEY (brain_id, id)
);
CREATE TABLE IF NOT EXISTS document_chunks (
  brain_id     TEXT    NOT NULL,
  id           TEXT    NOT NULL,
  document_id  TEXT    NOT NULL,
  trace_id     TEXT,
  content      TEXT    NOT NULL,
  chunk_index  INTEGER NOT NULL,
  page_number  INTEGER,
  embedding    BLOB,
  PRIMARY KEY (brain_id, id),
  FOREIGN KEY (brain_id, document_id) REFERENCES documents(brain_id, id),
  FOREIGN KEY (brain_id, trace_id) REFERENCES memory_traces(brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_document_chunks_brain_document
  ON document_chunks (brain_id, document_id, chunk_index);
CREATE TABLE IF NOT EXISTS document_images (
  brain_id    TEXT    NOT NULL,
  id          TEXT    NOT NULL,
  document_id TEXT    NOT NULL,
  chunk_id    TEXT,
  data        BLOB    NOT NULL,
  mime_type   TEXT    NOT NULL,
  caption     TEXT,
  page_number INTEGER,
  embedding   BLOB,
  PRIMARY KEY (brain_id, id),
  FOREIGN KEY (brain_id, document_id) REFERENCES documents(brain_id, id),
  FOREIGN KEY (brain_id, chunk_id) REFERENCES document_chunks(brain_id, id)
);
CREATE TABLE IF NOT EXISTS consolidation_log (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  brain_id    TEXT    NOT NULL,
  ran_at      INTEGER NOT NULL,
  pruned      INTEGER NOT NULL DEFAULT 0,
  merged      INTEGER NOT NULL DEFAULT 0,
  derived     INTEGER NOT NULL DEFAULT 0,
  compacted   INTEGER NOT NULL DEFAULT 0,
  duration_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS idx_consolidation_log_brain_time
  ON consolidation_log (brain_id, ran_at DESC);
CREATE TABLE IF NOT EXISTS retrieval_feedback (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  brain_id   TEXT    NOT NULL,
  trace_id   TEXT    NOT NULL,
  signal     TEXT    NOT NULL,
  query      TEXT,
  created_at INTEGER NOT NULL,
  FOREIGN KEY (brain_id, trace_id) REFERENCES memory_traces(brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_retrieval_feedback_brain_trace
  ON retrieval_feedback (brain_id, trace_id, created_at DESC);
CREATE TABLE IF NOT EXISTS conversations (
  brain_id   TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  title      TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  metadata   TEXT    NOT NULL DEFAULT '{}',
  PRIMARY KEY (brain_id, id)
);
CREATE TABLE IF NOT EXISTS messages (
  brain_id        TEXT    NOT NULL,
  id              TEXT    NOT NULL,
  conversation_id TEXT    NOT NULL,
  role            TEXT    NOT NULL,
  content         TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  metadata        TEXT    NOT NULL DEFAULT '{}',
  PRIMARY KEY (brain_id, id),
  FOREIGN KEY (brain_id, conversation_id) REFERENCES conversations(brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_messages_brain_conversation
  ON messages (brain_id, conversation_id, created_at);
CREATE TABLE IF NOT EXISTS prospective_items (
  brain_id             TEXT    NOT NULL,
  id                   TEXT    NOT NULL,
  content              TEXT    NOT NULL,
  trigger_type         TEXT    NOT NULL,
  trigger_at           INTEGER,
  trigger_event        TEXT,
  cue_text             TEXT,
  cue_embedding        BLOB,
  similarity_threshold REAL    DEFAULT 0.7,
  importance           REAL    NOT NULL DEFAULT 0.5,
  triggered            INTEGER NOT NULL DEFAULT 0,
  recurring            INTEGER NOT NULL DEFAULT 0,
  source_trace_id      TEXT,
  created_at           INTEGER NOT NULL,
  PRIMARY KEY (brain_id, id)
);
CREATE TABLE IF NOT EXISTS archived_traces (
  brain_id         TEXT    NOT NULL,
  trace_id         TEXT    NOT NULL,
  agent_id         TEXT    NOT NULL,
  verbatim_content TEXT    NOT NULL,
  content_hash     TEXT    NOT NULL,
  trace_type       TEXT    NOT NULL,
  emotional_context TEXT   NOT NULL DEFAULT '{}',
  entities         TEXT    NOT NULL DEFAULT '[]',
  tags             TEXT    NOT NULL DEFAULT '[]',
  created_at       INTEGER NOT NULL,
  archived_at      INTEGER NOT NULL,
  archive_reason   TEXT    NOT NULL,
  byte_size        INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (brain_id, trace_id)
);
CREATE INDEX IF NOT EXISTS idx_archived_traces_brain_time
  ON archived_traces (brain_id, archived_at);
CREATE INDEX IF NOT EXISTS idx_archived_traces_brain_reason
  ON archived_traces (brain_id, archive_reason);
CREATE TABLE IF NOT EXISTS archive_access_log (
  brain_id        TEXT    NOT NULL,
  trace_id        TEXT    NOT NULL,
  accessed_at     INTEGER NOT NULL,
  request_context TEXT,
  PRIMARY KEY (brain_id, trace_id, accessed_at)
);
CREATE INDEX IF NOT EXISTS idx_archive_access_recency
  ON archive_access_log (brain_id, trace_id, accessed_at DESC);
"""

AGENTOS_FTS = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memory_traces_fts USING fts5(content, tags, "
    "content='memory_traces', content_rowid='rowid', tokenize='porter ascii')"
)

# Columns memgui adds to memory_traces (name, declaration).
TRACE_COLUMNS = (
    ("scope_id", "TEXT NOT NULL DEFAULT ''"),
    ("expires_at", "INTEGER"),
    ("category", "TEXT"),
    ("version", "INTEGER NOT NULL DEFAULT 0"),
    ("updated_at", "INTEGER"),
    ("embedding_status", "INTEGER NOT NULL DEFAULT 0"),
)

# memgui's own tables and indexes (migration 1). Journal ids only grow without AUTOINCREMENT
# (rows are never deleted, so max + 1 is never an old id); AUTOINCREMENT would write
# sqlite_sequence's page into the WAL on every add. Brains made before keep theirs.
# memgui_fts tokenizes so: a TEMP index that stands in for it must do the same. Words are
# kept as written (a prefix query `relati*` finds "relational"); a query finds a word's other
# forms by asking for them (`search/word_forms.py`), not by a stemming tokenizer.
MEMGUI_TOKENIZE = "unicode61 remove_diacritics 2"
# Its columns (schema 3 added the title): the text, the tags as words, and the title
# (`metadata.title`), which AgentOS's index has no column for.
MEMGUI_FTS_COLUMNS = ("content", "tags", "title")
MEMGUI_FTS = f"""CREATE VIRTUAL TABLE IF NOT EXISTS memgui_fts USING fts5(
  {", ".join(MEMGUI_FTS_COLUMNS)}, content='', contentless_delete=1,
  tokenize='{MEMGUI_TOKENIZE}'
)"""
# Schema 6: memgui_fts merges its segments only when asked, in small steps on the upkeep
# thread and at the end of a bulk write (`search/fts_merge.py`); inside a single write only
# a small level 0 (`fts_merge.merge_inline`: a burst's segments). FTS5 keeps these in the
# table's `_config` shadow table: they travel with the file and roll back with the
# transaction that set them. `crisismerge` (FTS5's default is 16) is the backstop when no
# upkeep runs: a level of that many segments is merged by the write that fills it, so the
# count stays bounded; higher, it leaves the upkeep room to merge first, and a search reads
# no more segments than before.
MEMGUI_FTS_AUTOMERGE = 0
MEMGUI_FTS_CRISISMERGE = 16
MEMGUI_FTS_USERMERGE = 4  # FTS5's default: `merge` merges a level of this many segments
MEMGUI_FTS_CONFIG = (
    f"INSERT INTO memgui_fts(memgui_fts, rank) VALUES ('automerge', {MEMGUI_FTS_AUTOMERGE})",
    f"INSERT INTO memgui_fts(memgui_fts, rank) VALUES ('crisismerge', {MEMGUI_FTS_CRISISMERGE})",
    f"INSERT INTO memgui_fts(memgui_fts, rank) VALUES ('usermerge', {MEMGUI_FTS_USERMERGE})",
)
# Schema 9: the same rows and columns again, each English word stemmed by FTS5's `porter`
# (the tokenizer AgentOS's index runs) over memgui's own. A query of plain words
# (`search/stems.py`) asks it one term per word where memgui_fts needs a word's every form;
# phrases, prefixes and unspaced scripts go on to memgui_fts (words as written). Porter
# keeps each token's count, so a row has the same length in both indexes.
STEMS_TABLE = "memgui_stems"
MEMGUI_STEMS_TOKENIZE = f"porter {MEMGUI_TOKENIZE}"
MEMGUI_STEMS = f"""CREATE VIRTUAL TABLE IF NOT EXISTS {STEMS_TABLE} USING fts5(
  {", ".join(MEMGUI_FTS_COLUMNS)}, content='', contentless_delete=1,
  tokenize='{MEMGUI_STEMS_TOKENIZE}'
)"""
# Both merge as schema 6 has memgui_fts merge.
MEMGUI_STEMS_CONFIG = tuple(
    statement.replace("memgui_fts", STEMS_TABLE) for statement in MEMGUI_FTS_CONFIG
)
# The title as memgui_fts indexes it, from a row's metadata: text only, invalid JSON none.
TITLE_SQL = (
    "CASE WHEN json_valid({m}) AND json_type({m}, '$.title') = 'text' "
    "THEN json_extract({m}, '$.title') END"
)
MEMGUI_TABLES = f"""
CREATE TABLE IF NOT EXISTS memory_links (
  brain_id   TEXT    NOT NULL,
  from_id    TEXT    NOT NULL,
  to_id      TEXT    NOT NULL,
  kind       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (brain_id, from_id, to_id, kind)
);
CREATE INDEX IF NOT EXISTS idx_memory_links_to ON memory_links (brain_id, to_id);
CREATE TABLE IF NOT EXISTS memgui_journal (
  id       INTEGER PRIMARY KEY,
  brain_id TEXT    NOT NULL,
  at       INTEGER NOT NULL,
  actor    TEXT    NOT NULL,
  batch_id TEXT    NOT NULL,
  op       TEXT    NOT NULL,
  trace_id TEXT    NOT NULL,
  before   TEXT,
  after    TEXT
);
CREATE INDEX IF NOT EXISTS idx_memgui_journal_trace ON memgui_journal (brain_id, trace_id, id);
CREATE INDEX IF NOT EXISTS idx_memgui_journal_batch ON memgui_journal (batch_id);
CREATE INDEX IF NOT EXISTS idx_memgui_journal_link_to
  ON memgui_journal (brain_id, json_extract(coalesce(after, before), '$.to_id'))
  WHERE op IN ('link', 'unlink');
{MEMGUI_FTS};
CREATE TABLE IF NOT EXISTS memgui_fts_pending (
  rowid   INTEGER PRIMARY KEY,
  indexed INTEGER NOT NULL,
  content TEXT,
  tags    TEXT
);
CREATE INDEX IF NOT EXISTS idx_memory_traces_created ON memory_traces (brain_id, created_at);
CREATE INDEX IF NOT EXISTS idx_memory_traces_accessed ON memory_traces (brain_id, last_accessed);
CREATE INDEX IF NOT EXISTS idx_memory_traces_scope_id ON memory_traces (brain_id, scope, scope_id);
CREATE INDEX IF NOT EXISTS idx_memory_traces_expires
  ON memory_traces (expires_at) WHERE expires_at IS NOT NULL;
"""

# Migration 2: rows another program (an AgentOS agent) writes reach memgui's index and scope
# id column. Another program does not know the `version` column: a row it adds has version
# 0, and a text it changes keeps the row's version, while every write of memgui's sets or
# bumps it. Such a row is marked `indexed = 2` in `memgui_fts_pending`, for `memgui_fts`
# alone (that program kept AgentOS's index itself), and gets its `scope_id` from its
# metadata's `scopeId` (AgentOS reads a missing or non-text one as ''), as migration 1
# filled the column for the rows there then. A delete
# is another program's when memgui left no mark for it (memgui marks before it deletes).
# Such a write also records `memgui_shared` in `brain_meta`: from then on memgui writes its
# share of AgentOS's index at every commit (see `fulltext`), as that program does.
# A trigger's INSERT OR IGNORE takes the conflict policy of the statement that fired it
# (an upsert's, or INSERT OR REPLACE's): so no statement here may meet a conflict at all;
# each inserts only where nothing is yet.
_MARK = """
  INSERT INTO memgui_fts_pending(rowid, indexed) SELECT {rowid}, 2
  WHERE NOT EXISTS (SELECT 1 FROM memgui_fts_pending WHERE rowid = {rowid});
  INSERT INTO brain_meta(brain_id, key, value) SELECT {row}.brain_id, 'memgui_shared', '1'
  WHERE NOT EXISTS (
    SELECT 1 FROM brain_meta WHERE brain_id = {row}.brain_id AND key = 'memgui_shared');"""

MEMGUI_TRIGGER_SQL = {
    # INSERT OR REPLACE deletes the row it replaces without firing delete triggers (unless
    # the writer turned recursive triggers on): that row's words would stay in memgui_fts.
    "memgui_fts_mark_replace": """
CREATE TRIGGER IF NOT EXISTS memgui_fts_mark_replace BEFORE INSERT ON memory_traces
WHEN new.version = 0
BEGIN
  INSERT INTO memgui_fts_pending(rowid, indexed)
  SELECT t.rowid, 2 FROM memory_traces t WHERE t.brain_id = new.brain_id AND t.id = new.id
  AND NOT EXISTS (SELECT 1 FROM memgui_fts_pending p WHERE p.rowid = t.rowid);
END;
""",
    "memgui_fts_mark_insert": f"""
CREATE TRIGGER IF NOT EXISTS memgui_fts_mark_insert AFTER INSERT ON memory_traces
WHEN new.version = 0
BEGIN{_MARK.format(rowid="new.rowid", row="new")}
END;
""",
    "memgui_fts_mark_update": f"""
CREATE TRIGGER IF NOT EXISTS memgui_fts_mark_update
AFTER UPDATE OF content, tags, metadata ON memory_traces
WHEN new.version = old.version
  AND (new.content IS NOT old.content OR new.tags IS NOT old.tags
    OR ({TITLE_SQL.format(m="old.metadata")}) IS NOT ({TITLE_SQL.format(m="new.metadata")}))
BEGIN{_MARK.format(rowid="new.rowid", row="new")}
END;
""",
    "memgui_fts_mark_delete": f"""
CREATE TRIGGER IF NOT EXISTS memgui_fts_mark_delete AFTER DELETE ON memory_traces
WHEN NOT EXISTS (SELECT 1 FROM memgui_fts_pending WHERE rowid = old.rowid)
BEGIN{_MARK.format(rowid="old.rowid", row="old")}
END;
""",
    "memgui_scope_id_insert": """
CREATE TRIGGER IF NOT EXISTS memgui_scope_id_insert AFTER INSERT ON memory_traces
WHEN new.version = 0 AND new.scope_id = '' AND json_valid(new.metadata)
  AND json_type(new.metadata, '$.scopeId') = 'text'
BEGIN
  UPDATE memory_traces SET scope_id = json_extract(new.metadata, '$.scopeId')
  WHERE rowid = new.rowid;
END;
""",
    "memgui_scope_id_update": """
CREATE TRIGGER IF NOT EXISTS memgui_scope_id_update AFTER UPDATE OF metadata ON memory_traces
WHEN new.version = old.version
  AND (CASE WHEN json_valid(old.metadata) AND json_type(old.metadata, '$.scopeId') = 'text'
       THEN json_extract(old.metadata, '$.scopeId') ELSE '' END)
   IS NOT (CASE WHEN json_valid(new.metadata) AND json_type(new.metadata, '$.scopeId') = 'text'
       THEN json_extract(new.metadata, '$.scopeId') ELSE '' END)
BEGIN
  UPDATE memory_traces SET scope_id = CASE
    WHEN json_valid(new.metadata) AND json_type(new.metadata, '$.scopeId') = 'text'
    THEN json_extract(new.metadata, '$.scopeId') ELSE '' END
  WHERE rowid = new.rowid;
END;
""",
}
# The triggers of schema 2 (and 3): they mark rows for memgui's own index and scope id.
MEMGUI_TRIGGERS = "".join(MEMGUI_TRIGGER_SQL.values())
# Schema 4's, which keep each node's degree (core/storage/degrees.py).
MEMGUI_TRIGGER_SQL.update(degrees.TRIGGER_SQL)

MEMGUI_TRIGGER_NAMES = tuple(MEMGUI_TRIGGER_SQL)


def same_trigger(stored: str, name: str) -> bool:
    """Whether `stored` (sqlite_master's text) is `name` as this code makes it; SQLite keeps
    the text without `IF NOT EXISTS` and the last `;`."""
    wanted = MEMGUI_TRIGGER_SQL[name].replace(" IF NOT EXISTS", "", 1).strip().rstrip(";")
    return " ".join(stored.split()) == " ".join(wanted.split())


def is_memgui_trigger(name: str) -> bool:
    """Whether a trigger of the file is one of memgui's. Any other (another program's, a
    hostile file's) runs on every write to its table, memgui's included. One under memgui's
    name but with another text (an earlier memgui's) is made again from this code by the
    first write (`Database.ensure_triggers`), before that write's own statements run."""
    return name in MEMGUI_TRIGGER_SQL


# The triggers schema 2 began with: a file without meta rows that has them is of schema 2.
# Triggers added since are made at a brain's first write (Database.ensure_triggers).
SCHEMA_2_TRIGGER_NAMES = (
    "memgui_fts_mark_insert", "memgui_fts_mark_update", "memgui_fts_mark_delete",
    "memgui_scope_id_insert", "memgui_scope_id_update",
)  # fmt: skip
# The ones a bulk insert of memgui's own rows pauses (it marks its rows itself).
INSERT_TRIGGERS = ("memgui_fts_mark_replace", "memgui_fts_mark_insert", "memgui_scope_id_insert")
