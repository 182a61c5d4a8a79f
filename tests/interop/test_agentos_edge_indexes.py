"""memgui's own indexes on AgentOS's knowledge_edges (schema 7) stay true under AgentOS's
writes: its addRelation is an INSERT OR REPLACE by (brain, id), which moves an edge's ends."""

from __future__ import annotations

import pytest

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.storage import schema
from tests.interop.npm_env import NpmEnv
from tests.interop.test_agentos_interop import (
    FIRST_RUN_TIMEOUT_SECS,
    copy_fixture,
    run_writer,
)


@pytest.mark.slow
@pytest.mark.timeout(FIRST_RUN_TIMEOUT_SECS)
def test_agentos_replaces_an_edge_and_memgui_finds_it_by_its_new_ends(
    agentos: NpmEnv, tmp_path
) -> None:
    path = copy_fixture(tmp_path, "indexed.sqlite")
    with Brain.open(path) as brain:
        brain.add("memgui's first write: the brain gets the edge pair indexes")
        assert brain.db.schema_version == schema.SCHEMA_VERSION
        assert schema.EDGE_SOURCE_TARGET_INDEX in brain.db.indexes
    entities = [{"op": "entity", "label": name, "type": "concept"} for name in "ABC"]
    a, b, c = (r["id"] for r in run_writer(agentos, path, "brain", entities))
    first = run_writer(agentos, path, "brain", [
        {"op": "relation", "sourceId": a, "targetId": b, "type": "uses"},
    ])[0]["id"]  # fmt: skip
    again = run_writer(agentos, path, "brain", [
        {"op": "relation", "id": first, "sourceId": a, "targetId": c, "type": "uses"},
    ])[0]["id"]  # fmt: skip
    assert again == first  # the same edge, its target moved from B to C
    with Brain.open(path) as brain:
        conn = brain.db.conn
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        for index in (schema.EDGE_SOURCE_TARGET_INDEX, schema.EDGE_TARGET_SOURCE_INDEX):
            by_index = conn.execute(
                f"SELECT id FROM knowledge_edges INDEXED BY {index} "
                "WHERE brain_id = 'brain' AND source_id = ? AND target_id = ?",
                (a, c),
            ).fetchall()
            assert by_index == [(first,)], index
        around = graph_view.neighbourhood(brain, a)
        assert set(around.nodes) == {a, c}
        assert [(e.source, e.target) for e in around.edges.values()] == [(a, c)]
