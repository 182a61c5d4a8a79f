"""`GraphRows.incident(ids, among=…)` (a neighbourhood's last level) sifts in the query what
the unsifted read sifted after: the same edges, seen from the same ends, on both engines."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.graph_view.rows import Incident
from tests.support.paths import AGENTOS

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server


def _seen(found: list[Incident]) -> list[tuple[str, str, str]]:
    return sorted((owner, other, edge.key) for owner, other, edge in found)


def _same_when_sifted(rows: Any, ids: list[str], among: set[str]) -> int:
    whole = rows.incident(ids)
    sifted = rows.incident(ids, among=among)
    assert _seen(sifted) == _seen([i for i in whole if i[1] in among])
    return len(sifted)


def test_sifting_by_the_other_end_keeps_the_same_edges(store: Any) -> None:
    memories = [store.add(f"memory {k}").id for k in range(8)]
    for k in range(7):
        store.link(memories[k], memories[k + 1], "relates_to")
        store.link(memories[k + 1], memories[(k + 3) % 8], "caused_by")
    nodes = [store.add_node(f"concept {k}", "concept").id for k in range(3)]
    copies = [store.add_node(memory, "memory_graph").id for memory in memories]
    for k, copy in enumerate(copies):
        store.add_edge(copy, nodes[k % 3], "mentions")
        store.add_edge(nodes[(k + 1) % 3], copy, "about")
    store.add_edge(nodes[0], nodes[0], "loop")  # loops are left out either way
    ids = memories[:5] + copies[:5] + nodes[:2]
    among = set(memories[3:] + copies[3:] + nodes[1:])
    with store.graph_rows() as rows:
        assert _same_when_sifted(rows, ids, among) > 5
        assert _same_when_sifted(rows, ids, set()) == 0
        assert _same_when_sifted(rows, [], among) == 0


def test_an_agentos_brain_sifts_the_same(tmp_path: Path) -> None:
    path = tmp_path / "agentos.sqlite"
    shutil.copyfile(AGENTOS / "brain.sqlite", path)  # the fixture itself is read-only
    with Brain.open(path, actor="test") as brain:
        ids = [r[0] for r in brain.db.conn.execute("SELECT id FROM knowledge_nodes")]
        assert ids, "the fixture has a knowledge graph"
        with brain.graph_rows() as rows:
            assert _same_when_sifted(rows, ids[::2], set(ids[1::2])) > 0
            assert _same_when_sifted(rows, ids, set(ids)) > 0
