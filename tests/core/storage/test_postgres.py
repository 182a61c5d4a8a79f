"""The PostgreSQL engine on a real server: AgentOS's layout, brains side by side in one
database, English full text, compare-and-set between connections, refusals."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from memgui.core.errors import (
    Conflict,
    InvalidArgument,
    PostgresUnavailable,
    SchemaTooNew,
)
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage import postgres
from memgui.core.storage.engine import parse_postgres_address
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.slow  # a real server


def _conninfo(address: str) -> str:
    return parse_postgres_address(address).conninfo


def test_opening_makes_the_agentos_layout_and_writes_no_brain_rows(pg_address: str) -> None:
    with SharedBrain.open(pg_address):
        pass
    with psycopg.connect(_conninfo(pg_address)) as conn:
        types = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'memory_traces'"
            ).fetchall()
        )
        indexes = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_traces'"
        ).fetchall()
        meta = conn.execute("SELECT count(*) FROM brain_meta").fetchone()
    assert types["created_at"] == "bigint" and types["embedding"] == "bytea"
    assert types["_tsv"] == "tsvector" and types["version"] == "bigint"
    assert any("gin (_tsv)" in row[0] for row in indexes)
    assert meta == (0,)  # opening writes nothing; the first write marks the brain


def test_first_write_records_the_layout_per_brain(pg_address: str) -> None:
    with SharedBrain.open(pg_address) as brain:
        brain.add("hello")
    with psycopg.connect(_conninfo(pg_address)) as conn:
        meta = dict(conn.execute("SELECT key, value FROM brain_meta WHERE brain_id = 'team'"))
    assert meta[postgres.SCHEMA_KEY] == str(postgres.SCHEMA_VERSION)
    assert meta["schema_version"] == postgres.AGENTOS_SCHEMA_VERSION


def test_a_brain_written_by_a_newer_memgui_is_refused_untouched(pg_address: str) -> None:
    with SharedBrain.open(pg_address) as brain:
        brain.add("hello")
    with psycopg.connect(_conninfo(pg_address), autocommit=True) as conn:
        conn.execute("UPDATE brain_meta SET value = '99' WHERE key = %s", (postgres.SCHEMA_KEY,))
    with pytest.raises(SchemaTooNew) as caught:
        SharedBrain.open(pg_address)
    assert "99" in str(caught.value) and "password" not in str(caught.value)


def test_a_brain_of_the_first_layout_gets_the_graph_and_is_marked_with_this_one(
    pg_address: str,
) -> None:
    """Layout 1 had no knowledge graph: a database made then gets its tables on the next
    open (AgentOS's DDL: BIGINT times; weights DOUBLE PRECISION), and the brain's mark moves
    up on its next write, so an older memgui, which would purge without the graph copy,
    refuses it."""
    with SharedBrain.open(pg_address) as brain:
        brain.add("hello")
    with psycopg.connect(_conninfo(pg_address), autocommit=True) as conn:
        conn.execute("DROP TABLE knowledge_edges; DROP TABLE knowledge_nodes")
        conn.execute("UPDATE brain_meta SET value = '1' WHERE key = %s", (postgres.SCHEMA_KEY,))
    with SharedBrain.open(pg_address) as brain:
        assert brain.nodes() == []
        brain.add_node("Alpha", "concept")
    with psycopg.connect(_conninfo(pg_address)) as conn:
        mark = conn.execute(
            "SELECT value FROM brain_meta WHERE key = %s", (postgres.SCHEMA_KEY,)
        ).fetchone()
        types = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'knowledge_edges'"
            ).fetchall()
        )
    assert mark == (str(postgres.SCHEMA_VERSION),)
    # REAL widened to DOUBLE PRECISION (layout 4), so a copy from a file and back is exact.
    assert (types["created_at"], types["weight"], types["metadata"]) == (
        "bigint",
        "double precision",
        "text",
    )


def test_brains_in_one_database_see_only_their_own_traces(pg_server: PostgresServer) -> None:
    database = pg_server.create_database()
    with (
        SharedBrain.open(pg_server.address(database, "alpha")) as alpha,
        SharedBrain.open(pg_server.address(database, "beta")) as beta,
    ):
        a = alpha.add("shared words here")
        beta.add("shared words there")
        assert [t.id for t in alpha.list_traces()] == [a.id]
        assert [h.trace.id for h in alpha.search("shared").hits] == [a.id]
        assert alpha.info()["brain_ids"] == ["alpha", "beta"]
        with pytest.raises(Exception, match="not found"):
            beta.get(a.id)


def test_english_full_text_finds_other_forms_of_a_word(pg_address: str) -> None:
    with SharedBrain.open(pg_address) as brain:
        hit = brain.add("We deployed the migrations on Friday")
        brain.add("Nothing to see")
        for query in ("deploy", "deployment", "migration", "deploy -lunch", '"deployed the"'):
            assert [h.trace.id for h in brain.search(query).hits] == [hit.id], query
        assert brain.search("the").hits == ()  # a stop word alone finds nothing
        assert brain.search("   ").hits == ()


def test_compare_and_set_across_connections_loses_nothing(pg_address: str) -> None:
    with SharedBrain.open(pg_address) as first:
        trace = first.add("counter", metadata={"n": 0})
    writers, rounds = 4, 25
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            with SharedBrain.open(pg_address, actor=f"w{worker}") as brain:
                done = 0
                while done < rounds:
                    seen = brain.get(trace.id)
                    try:
                        brain.update(trace.id, {"tags": [*seen.tags, f"{worker}-{done}"]},
                                     expect_version=seen.version)  # fmt: skip
                    except Conflict:
                        continue
                    done += 1
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with SharedBrain.open(pg_address) as brain:
        final = brain.get(trace.id)
        assert final.version == 1 + writers * rounds
        assert len(final.tags) == len(set(final.tags)) == writers * rounds
        assert len(brain.history(trace.id)) == 1 + writers * rounds


def test_what_postgres_cannot_hold_is_refused_by_name(pg_address: str) -> None:
    with SharedBrain.open(pg_address) as brain:
        with pytest.raises(InvalidArgument) as caught:
            brain.add("a\x00b")
        assert caught.value.field == "content"
        trace = brain.add("fine")
        with pytest.raises(InvalidArgument) as caught:
            brain.update(trace.id, {"tags": ["ok", "b\x00d"]})
        assert caught.value.field == "tags"
        assert brain.get(trace.id).version == 1 and brain.count() == 1


def test_search_modes_answer_as_on_a_file(pg_address: str) -> None:
    with SharedBrain.open(pg_address) as brain:
        brain.add("words")
        assert brain.search("words", mode="cognitive").search_mode == "cognitive"
        # Without an embedder, by meaning answers by keyword and says so, as on a file.
        assert brain.search("words", mode="semantic").search_mode == "keyword"
        with pytest.raises(InvalidArgument, match="mood is for the cognitive mode only"):
            brain.search("words", mood=0.5)
        with pytest.raises(InvalidArgument, match="mode must be one of"):
            brain.search("words", mode="fuzzy")


def test_an_unreachable_server_is_named_without_its_password(tmp_path: Path) -> None:
    address = f"postgresql://me:secret@/nodb?host={tmp_path}&brain_id=team"
    with pytest.raises(PostgresUnavailable) as caught:
        SharedBrain.open(address)
    assert "cannot reach the PostgreSQL brain" in str(caught.value)
    assert "secret" not in str(caught.value) and "me:***@" in str(caught.value)
