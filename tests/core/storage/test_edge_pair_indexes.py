"""Schema 7: knowledge edges indexed by both ends together. A brain gains the indexes on its
first write, and a neighbourhood reads the same before and after (the edges between two
hubs, sought pairwise, come from the new indexes once there)."""

from __future__ import annotations

from pathlib import Path

import apsw

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.graph_view import rows
from memgui.core.storage import schema

HUB_DEGREE = 3


def _hubs_brain(path: Path) -> tuple[str, list[str]]:
    """A centre linked to four concepts, each mentioned by five memories, and the concepts
    joined to each other: every concept is a hub (above HUB_DEGREE)."""
    with Brain.open(path, actor="test") as brain:
        centre = brain.add("the centre").id
        concepts = [brain.add_node(f"concept {k}", "concept").id for k in range(4)]
        for k, concept in enumerate(concepts):
            graph_view.connect(brain, centre, concept, "mentions")
            for j in range(5):
                graph_view.connect(brain, brain.add(f"memory {k}.{j}").id, concept, "mentions")
            for other in concepts[:k]:
                graph_view.connect(brain, concept, other, "related_to")
    return centre, concepts


def _as_schema_5(path: Path) -> None:
    conn = apsw.Connection(str(path))
    conn.execute(f"DROP INDEX {schema.EDGE_SOURCE_TARGET_INDEX}")
    conn.execute(f"DROP INDEX {schema.EDGE_TARGET_SOURCE_INDEX}")
    conn.execute("DROP TABLE memgui_stems")  # schema 9's
    conn.execute("UPDATE brain_meta SET value = '5' WHERE key = ?", (schema.SCHEMA_KEY,))
    conn.close()


def _shape(found: graph_view.Neighbourhood) -> tuple[object, ...]:
    edges = sorted((e.key, e.source, e.target, e.kind) for e in found.edges.values())
    return sorted(found.nodes), edges, sorted(found.more.items())


def test_a_new_brain_has_the_pair_indexes(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "new.sqlite", actor="test") as brain:
        assert brain.db.schema_version == schema.SCHEMA_VERSION >= 7
        assert {schema.EDGE_SOURCE_TARGET_INDEX, schema.EDGE_TARGET_SOURCE_INDEX} <= (
            brain.db.indexes
        )
        assert rows._pair_indexes(brain.db)[0] == schema.EDGE_SOURCE_TARGET_INDEX


def test_a_schema_5_brain_gains_them_and_reads_the_same_neighbourhood(tmp_path: Path) -> None:
    path = tmp_path / "hubs.sqlite"
    centre, concepts = _hubs_brain(path)
    _as_schema_5(path)
    with Brain.open(path, actor="test") as brain:
        assert brain.db.schema_version == 5
        assert rows._pair_indexes(brain.db)[0] == "idx_knowledge_edges_brain_source"
        before = graph_view.neighbourhood(brain, centre, 2, hub_degree=HUB_DEGREE)
        brain.add("the first write migrates")
        assert brain.db.schema_version == schema.SCHEMA_VERSION
        assert rows._pair_indexes(brain.db)[0] == schema.EDGE_SOURCE_TARGET_INDEX
        after = graph_view.neighbourhood(brain, centre, 2, hub_degree=HUB_DEGREE)
        plan = brain.db.conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM knowledge_edges INDEXED BY "
            f"{schema.EDGE_SOURCE_TARGET_INDEX} WHERE brain_id = ? AND source_id = ? "
            "AND target_id = ?",
            (brain.brain_id, concepts[1], concepts[0]),
        ).fetchall()
    assert "source_id=? AND target_id=?" in str(plan)
    assert _shape(before) == _shape(after)
    hub_pairs = {(e.source, e.target) for e in after.edges.values() if e.kind == "related_to"}
    assert hub_pairs == {(concepts[k], concepts[j]) for k in range(4) for j in range(k)}
    assert list(path.parent.glob(f"{path.name}.backup-pre-{schema.SCHEMA_VERSION}-*"))
