"""The DDL of a PostgreSQL brain (`storage/postgres.py` runs it): AgentOS's Postgres layout
(its SQLite DDL with INTEGER as BIGINT and BLOB as BYTEA, the full-text entry a tsvector)
plus memgui's additions. REAL is DOUBLE PRECISION, as `strength` is: PostgreSQL's REAL has
four bytes, and a copy from a file and back would change a confidence of 0.9. Every
statement is IF NOT EXISTS: running it again adds nothing.
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS brain_meta (
  brain_id TEXT NOT NULL,
  key      TEXT NOT NULL,
  value    TEXT NOT NULL,
  PRIMARY KEY (brain_id, key)
);
CREATE TABLE IF NOT EXISTS memory_traces (
  brain_id        TEXT             NOT NULL,
  id              TEXT             NOT NULL,
  type            TEXT             NOT NULL,
  scope           TEXT             NOT NULL,
  content         TEXT             NOT NULL,
  embedding       BYTEA,
  strength        DOUBLE PRECISION NOT NULL DEFAULT 1.0,
  created_at      BIGINT           NOT NULL,
  last_accessed   BIGINT,
  retrieval_count BIGINT           NOT NULL DEFAULT 0,
  tags            TEXT             NOT NULL DEFAULT '[]',
  emotions        TEXT             NOT NULL DEFAULT '{}',
  metadata        TEXT             NOT NULL DEFAULT '{}',
  deleted         INTEGER          NOT NULL DEFAULT 0,
  _tsv            TSVECTOR,
  PRIMARY KEY (brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_memory_traces_tsv ON memory_traces USING GIN (_tsv);
ALTER TABLE memory_traces
  ADD COLUMN IF NOT EXISTS scope_id TEXT NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS expires_at BIGINT,
  ADD COLUMN IF NOT EXISTS category TEXT,
  ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS updated_at BIGINT,
  ADD COLUMN IF NOT EXISTS embedding_status INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS idx_memory_traces_created ON memory_traces (brain_id, created_at);
CREATE TABLE IF NOT EXISTS memory_links (
  brain_id   TEXT   NOT NULL,
  from_id    TEXT   NOT NULL,
  to_id      TEXT   NOT NULL,
  kind       TEXT   NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (brain_id, from_id, to_id, kind)
);
CREATE TABLE IF NOT EXISTS memgui_journal (
  id       BIGSERIAL PRIMARY KEY,
  brain_id TEXT   NOT NULL,
  at       BIGINT NOT NULL,
  actor    TEXT   NOT NULL,
  batch_id TEXT   NOT NULL,
  op       TEXT   NOT NULL,
  trace_id TEXT   NOT NULL,
  before   TEXT,
  after    TEXT
);
CREATE INDEX IF NOT EXISTS idx_memgui_journal_trace ON memgui_journal (brain_id, trace_id, id);
CREATE INDEX IF NOT EXISTS idx_memgui_journal_batch ON memgui_journal (batch_id);
CREATE INDEX IF NOT EXISTS idx_memgui_journal_link_to
  ON memgui_journal (brain_id, (coalesce(after, before)::jsonb ->> 'to_id'))
  WHERE op IN ('link', 'unlink');
CREATE TABLE IF NOT EXISTS knowledge_nodes (
  brain_id   TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  label      TEXT    NOT NULL,
  properties TEXT    NOT NULL DEFAULT '{}',
  embedding  BYTEA,
  confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0,
  source     TEXT    NOT NULL DEFAULT '{}',
  created_at BIGINT  NOT NULL,
  PRIMARY KEY (brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_knowledge_nodes_brain_type ON knowledge_nodes (brain_id, type);
CREATE TABLE IF NOT EXISTS knowledge_edges (
  brain_id      TEXT    NOT NULL,
  id            TEXT    NOT NULL,
  source_id     TEXT    NOT NULL,
  target_id     TEXT    NOT NULL,
  type          TEXT    NOT NULL,
  weight        DOUBLE PRECISION NOT NULL DEFAULT 1.0,
  bidirectional BIGINT  NOT NULL DEFAULT 0,
  metadata      TEXT    NOT NULL DEFAULT '{}',
  created_at    BIGINT  NOT NULL,
  PRIMARY KEY (brain_id, id),
  FOREIGN KEY (brain_id, source_id) REFERENCES knowledge_nodes(brain_id, id),
  FOREIGN KEY (brain_id, target_id) REFERENCES knowledge_nodes(brain_id, id)
);
CREATE INDEX IF NOT EXISTS idx_knowledge_edges_brain_source
  ON knowledge_edges (brain_id, source_id);
CREATE INDEX IF NOT EXISTS idx_knowledge_edges_brain_target
  ON knowledge_edges (brain_id, target_id);
CREATE INDEX IF NOT EXISTS idx_memory_links_to ON memory_links (brain_id, to_id);
CREATE INDEX IF NOT EXISTS idx_memgui_knowledge_nodes_trace
  ON knowledge_nodes (brain_id,
    (CASE WHEN properties IS JSON OBJECT THEN properties::jsonb ->> 'trace_id' END));
"""
