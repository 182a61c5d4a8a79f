"""The real AgentOS package and memgui share one brain in PostgreSQL: AgentOS opens what
memgui wrote with `Memory.createPostgres` (`Brain.openPostgres`), finds it with its own
`memory_search`, and memgui reads what AgentOS remembered there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.engines import copy_brain
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from memgui.core.shared_brain import SharedBrain
from tests.interop.npm_env import INSTALL_TIMEOUT_SECS, PROBE_SCRIPT, NpmEnv, run_script
from tests.support.postgres import BRAIN_ID, PostgresServer

SCRIPT = PROBE_SCRIPT.with_name("agentos_postgres.mjs")

pytestmark = pytest.mark.slow  # npm, node and a real server


def _agentos_on(env: NpmEnv, url: str, queries: list[str], remember: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = run_script(
        env, SCRIPT, url, BRAIN_ID, json.dumps(queries), json.dumps(remember)
    )
    for search in report["searches"]:
        assert search["success"], f"memory_search({search['query']!r}): {search['error']}"
    return report


@pytest.mark.timeout(2 * INSTALL_TIMEOUT_SECS)  # the first run installs AgentOS
def test_agentos_and_memgui_share_a_postgres_brain(
    agentos: NpmEnv, pg_server: PostgresServer, tmp_path: Path
) -> None:
    database = pg_server.create_database()
    with SharedBrain.open(pg_server.address(database), actor="test") as brain:
        server = brain.add("The build server is named hal9000", tags=["ops"])
        deploys = brain.add("We deploy on Fridays after the standup")
        brain.link(server.id, deploys.id, "relates_to")
        gone = brain.add("An old note about hal9000, forgotten")
        brain.forget(gone.id)
    report = _agentos_on(
        agentos,
        pg_server.address(database, brain_id=None),  # AgentOS takes the brain id apart
        ["hal9000", "deploy"],
        ["AgentOS remembered the staging database is on port 5433"],
    )
    hits = {s["query"]: [h["id"] for h in s["results"]] for s in report["searches"]}
    assert hits == {"hal9000": [server.id], "deploy": [deploys.id]}  # stemmed, as memgui's
    assert {t["id"] for t in report["brain_traces"]} == {server.id, deploys.id}  # not forgotten
    (written,) = report["remembered"]
    with SharedBrain.open(pg_server.address(database), actor="test") as brain:
        assert brain.get(written).content == (
            "AgentOS remembered the staging database is on port 5433"
        )
        assert [h.trace.id for h in brain.search("staging database").hits] == [written]
        assert brain.count(TraceFilter(include_deleted=True)) == 4
        assert brain.get(server.id).version == 1  # AgentOS read memgui's rows, never wrote them
        assert [r.id for r in brain.related(server.id)] == [deploys.id]
        # AgentOS's row, with no version of memgui's yet (0), takes a compare-and-set edit.
        edited = brain.update(written, {"content": "staging is on port 5434"}, expect_version=0)
        assert brain.get(written).content == "staging is on port 5434" == edited.content
    # What both wrote comes out as a file, as memgui and AgentOS read files.
    snapshot = tmp_path / "team.sqlite"
    run_to_end(copy_brain(pg_server.address(database), snapshot, read_only=True))
    with Brain.open(snapshot, BRAIN_ID) as copied:
        assert copied.count(TraceFilter(include_deleted=True)) == 4
        assert copied.get(written).content == "staging is on port 5434"
        assert [h.trace.id for h in copied.search("hal9000", mode="keyword").hits] == [server.id]
