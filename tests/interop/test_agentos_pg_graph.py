"""The real AgentOS package and memgui share one knowledge graph in PostgreSQL: AgentOS's
`SqlKnowledgeGraph` (`Memory.createPostgres`) walks the nodes and edges memgui wrote, and
memgui's `neighbours`, merge and revert work on the entities and relations AgentOS adds."""

from __future__ import annotations

from typing import Any

import pytest

from memgui.core.shared_brain import SharedBrain
from tests.interop.npm_env import INSTALL_TIMEOUT_SECS, PROBE_SCRIPT, NpmEnv, run_script
from tests.support.postgres import BRAIN_ID, PostgresServer

SCRIPT = PROBE_SCRIPT.with_name("agentos_pg_graph.mjs")

pytestmark = pytest.mark.slow  # npm, node and a real server


@pytest.mark.timeout(2 * INSTALL_TIMEOUT_SECS)  # the first run installs AgentOS
def test_agentos_and_memgui_share_a_knowledge_graph(
    agentos: NpmEnv, pg_server: PostgresServer
) -> None:
    database = pg_server.create_database()
    with SharedBrain.open(pg_server.address(database), actor="test") as brain:
        trace = brain.add("The staging database runs on hal9000")
        server = brain.add_node("hal9000", "host", {"trace_id": trace.id}).id
        rack = brain.add_node("Rack 7", "place").id
        brain.add_edge(server, rack, "stands_in", 0.5)
    report: dict[str, Any] = run_script(
        agentos, SCRIPT, pg_server.address(database, brain_id=None), BRAIN_ID, server
    )
    # AgentOS 0.9.164 cannot read a graph row on Postgres as it stands (a BIGINT arrives as
    # text: an invalid date), memgui's or its own; with BIGINT read as a number it reads
    # memgui's rows: both nodes, the edge with its type and weight.
    assert report["unpatched_read_error"] == "RangeError: Invalid time value"
    seen = report["neighbourhood"]
    assert {(e["id"], e["label"], e["type"]) for e in seen["entities"]} == {
        (server, "hal9000", "host"),
        (rack, "Rack 7", "place"),
    }
    assert [(r["sourceId"], r["targetId"], r["type"], r["weight"]) for r in seen["relations"]] == [
        (server, rack, "stands_in", 0.5)
    ]
    added = report["added"]
    with SharedBrain.open(pg_server.address(database), actor="test") as brain:
        # memgui reads AgentOS's rows: its entities, its relation to memgui's node.
        near = {n.node_id: n for n in brain.neighbours(trace.id, depth=2)}
        assert set(near) == {rack, added["entity"], added["other"]}
        assert (near[added["entity"]].label, near[added["entity"]].edge_type) == (
            "Staging database",
            "runs_on",
        )
        assert (near[added["other"]].hop, near[added["other"]].via) == (2, "Staging database")
        (relation,) = [e for e in brain.edges() if e["id"] == added["relation"]]
        assert (relation["target_id"], relation["weight"]) == (server, 0.75)
        assert brain.degrees([server, added["entity"]]) == {server: 2, added["entity"]: 2}
        # A merge moves AgentOS's relation to the survivor's node; the revert puts it back.
        other = brain.add("hal9000 is in rack 7")
        merged = brain.merge([other.id, trace.id], keep=other.id)
        moved = {e["id"]: (e["source_id"], e["target_id"]) for e in brain.edges()}
        assert moved[added["relation"]] == (added["entity"], other.id)
        brain.revert(merged.changes.batch_id)
        back = {e["id"]: (e["source_id"], e["target_id"]) for e in brain.edges()}
        assert back[added["relation"]] == (added["entity"], server)
