"""After memgui writes an AgentOS brain, the real AgentOS package still reads it.

Each check opens a copy of a brain with `@framers/agentos` (installed once by npm into
`.npm-cache/`) and asks AgentOS's own `memory_search` tool what it finds. Opening a brain with
AgentOS writes to it, so only copies in tmp_path are ever handed to it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.storage import schema
from tests.interop.npm_env import (
    INSTALL_TIMEOUT_SECS,
    PROBE_SCRIPT,
    NpmEnv,
    ensure_agentos,
    run_script,
)
from tests.support.paths import SHARED

WRITER_SCRIPT = PROBE_SCRIPT.with_name("agentos_writer.mjs")

FIXTURE_BRAIN = SHARED / "fixtures" / "agentos" / "brain.sqlite"

# Traces of the shared fixture brain, as AgentOS wrote them.
KREUZBERG_ID = "mt_c23b6e57-8d47-406e-b4e3-f0f7175ca778"  # "The user lives in Berlin-Kreuzberg…"
HAL9000_ID = "csv_001"  # "CSV fact: the build server is named hal9000."
FIXTURE_TOTAL, FIXTURE_ACTIVE = 51, 45
# The first run installs AgentOS (npm may compile better-sqlite3: 2.5 to 5.5 minutes here),
# which is longer than the suite's default per-test timeout.
FIRST_RUN_TIMEOUT_SECS = 2 * INSTALL_TIMEOUT_SECS


def run_node(env: NpmEnv, script: Path, brain: Path, brain_id: str, payload: list) -> Any:
    """Run one of the AgentOS scripts on `brain`; its JSON answer."""
    return run_script(env, script, str(brain), brain_id, json.dumps(payload))


def run_probe(env: NpmEnv, brain: Path, brain_id: str, queries: list[str]) -> dict[str, Any]:
    """What AgentOS reports for `brain`: its memory_search results per query, health()."""
    report = run_node(env, PROBE_SCRIPT, brain, brain_id, queries)
    for search in report["searches"]:
        assert search["success"], f"memory_search({search['query']!r}): {search['error']}"
    return report


def found(report: dict[str, Any], query: str) -> dict[str, str]:
    """{trace id: content} that AgentOS's memory_search returned for `query`."""
    (search,) = [s for s in report["searches"] if s["query"] == query]
    return {hit["id"]: hit["content"] for hit in search["results"]}


def copy_fixture(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copyfile(FIXTURE_BRAIN, target)
    return target


@pytest.mark.slow
@pytest.mark.timeout(FIRST_RUN_TIMEOUT_SECS)
def test_probe_reads_an_untouched_fixture_copy(agentos: NpmEnv, tmp_path: Path) -> None:
    # The control for the checks below: on the brain as AgentOS wrote it, the old words match.
    brain = copy_fixture(tmp_path, "brain.sqlite")
    report = run_probe(agentos, brain, "brain", ["Kreuzberg", "hal9000", "東京タワー"])
    assert set(found(report, "Kreuzberg")) == {KREUZBERG_ID}
    assert set(found(report, "hal9000")) == {HAL9000_ID}
    assert "mt_a433ab74-33e5-4672-ac65-c0a3e53e761c" in found(report, "東京タワー")
    assert report["health"]["totalTraces"] == FIXTURE_TOTAL
    assert report["health"]["activeTraces"] == FIXTURE_ACTIVE
    assert "memory_search" in report["tool_names"]


@pytest.mark.slow
@pytest.mark.timeout(FIRST_RUN_TIMEOUT_SECS)
def test_probe_rejects_bad_arguments(agentos: NpmEnv, tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None
    fixture_copy = copy_fixture(tmp_path, "brain.sqlite")
    missing = tmp_path / "never-created.sqlite"
    cases = [
        (fixture_copy, "not json", "queries must be a JSON list of strings"),
        (fixture_copy, '{"query": "x"}', "queries must be a JSON list of strings"),
        (fixture_copy, "[1, 2]", "queries must be a JSON list of strings"),
        (missing, '["x"]', f"brain file not found: {missing}"),
    ]
    for brain, queries, message in cases:
        result = subprocess.run(
            [node, str(PROBE_SCRIPT), str(brain), "brain", queries],
            env=agentos.probe_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (result.returncode, result.stdout) == (2, ""), queries
        assert message in result.stderr
    # Rejected before AgentOS opened anything: no file created, the copy left as it was.
    assert not missing.exists()
    assert fixture_copy.read_bytes() == FIXTURE_BRAIN.read_bytes()
    assert not fixture_copy.with_name("brain.sqlite-wal").exists()


@pytest.mark.slow
@pytest.mark.timeout(FIRST_RUN_TIMEOUT_SECS)
def test_agentos_finds_memgui_edits_to_its_brain(agentos: NpmEnv, tmp_path: Path) -> None:
    # A different file name: memgui takes the brain_id from the data, as AgentOS must be told.
    path = copy_fixture(tmp_path, "edited-by-memgui.sqlite")
    brain = Brain.open(path)
    try:
        brain_id = brain.brain_id
        assert brain_id == "brain"
        assert "hal9000" in brain.get(HAL9000_ID).content
        ledger = brain.add(
            "Quokkaberry harvest: the orchard ledger lives in the cobalt binder.",
            type="semantic",
            scope="user",
            scope_id="user-42",
            tags=["interop", "zanzibarite"],
        )
        meeting = brain.add(
            "Treffpunkt am Münsterplatz, danach Smørrebrød 🎄 und 集合場所 は 東京駅",
            type="episodic",
            scope="thread",
            scope_id="thread-009",
            tags=["unicode", "reise"],
        )
        checklist = brain.add(
            "Flumbleworth deploy checklist: rotate the grommet keys before Friday.",
            type="procedural",
            scope="persona",
            scope_id="user-42::ada",
        )
        brain.update(KREUZBERG_ID, {"content": "The user moved to Lisbon, in the Alfama quarter."})
        brain.forget(HAL9000_ID)
    finally:
        brain.close()

    queries = [
        "Quokkaberry",
        "zanzibarite",
        "Münsterplatz",
        "Smørrebrød",
        "集合場所",
        "grommet",
        "Lisbon",
        "Alfama",
        "Kreuzberg",
        "hal9000",
    ]
    report = run_probe(agentos, path, brain_id, queries)

    assert found(report, "Quokkaberry") == {ledger.id: ledger.content}
    assert set(found(report, "zanzibarite")) == {ledger.id}  # the tags column is indexed too
    assert found(report, "Münsterplatz") == {meeting.id: meeting.content}
    assert set(found(report, "Smørrebrød")) == {meeting.id}
    assert set(found(report, "集合場所")) == {meeting.id}
    assert set(found(report, "grommet")) == {checklist.id}

    new_content = "The user moved to Lisbon, in the Alfama quarter."
    assert found(report, "Lisbon") == {KREUZBERG_ID: new_content}
    assert set(found(report, "Alfama")) == {KREUZBERG_ID}
    assert found(report, "Kreuzberg") == {}  # the old words left the index with the old content
    assert found(report, "hal9000") == {}  # forgotten: AgentOS skips it as soft-deleted

    health = report["health"]
    assert health["totalTraces"] == FIXTURE_TOTAL + 3
    assert health["activeTraces"] == FIXTURE_ACTIVE + 3 - 1
    # recentTraces() filters by brain_id: the new traces carry the brain's own id.
    live_ids = {trace["id"] for trace in report["brain_traces"]}
    assert {ledger.id, meeting.id, checklist.id, KREUZBERG_ID} <= live_ids
    assert HAL9000_ID not in live_ids
    assert len(live_ids) == FIXTURE_ACTIVE + 3 - 1


def run_writer(env: NpmEnv, brain: Path, brain_id: str, ops: list[dict]) -> list[dict]:
    """What AgentOS's own writes (remember, its tools) reported on `brain`."""
    return run_node(env, WRITER_SCRIPT, brain, brain_id, ops)


@pytest.mark.slow
@pytest.mark.timeout(FIRST_RUN_TIMEOUT_SECS)
def test_memgui_finds_what_agentos_writes_after_memgui_migrated(
    agentos: NpmEnv, tmp_path: Path
) -> None:
    path = copy_fixture(tmp_path, "shared.sqlite")
    with Brain.open(path) as brain:
        brain.add("memgui's note about pomegranates")  # the first write migrates the brain
    results = run_writer(
        agentos,
        path,
        "brain",
        [
            {"op": "remember", "content": "Snorkelberry jam, says the agent", "scope": "user",
             "scopeId": "user-42"},
            {"op": "tool", "name": "memory_update",
             "args": {"traceId": KREUZBERG_ID, "content": "The user moved to Wibbleflux."}},
        ],
    )  # fmt: skip
    added = results[0]["id"]
    with Brain.open(path) as brain:

        def ids(query: str) -> list[str]:
            return [t.id for t in brain.search(query, record_recall=False).traces]

        assert ids("Snorkelberry") == [added]
        assert ids("Wibbleflux") == [KREUZBERG_ID]
        assert ids("Kreuzberg") == []
        assert brain.get(added).scope_id == "user-42"
        brain.update(added, {"tags": ["jam"]})  # memgui's edit keeps AgentOS's scope id
    report = run_probe(agentos, path, "brain", ["Snorkelberry", "Wibbleflux"])
    assert set(found(report, "Snorkelberry")) == {added}
    assert set(found(report, "Wibbleflux")) == {KREUZBERG_ID}


@pytest.mark.slow
@pytest.mark.timeout(FIRST_RUN_TIMEOUT_SECS)
def test_agentos_reads_a_brain_memgui_created(agentos: NpmEnv, tmp_path: Path) -> None:
    path = tmp_path / "fresh.sqlite"
    brain = Brain.open(path)
    try:
        brain_id = brain.brain_id
        first = brain.add("Marmalade telescope points at the Vexlor nebula.", tags=["sky"])
        second = brain.add(
            "Rendez-vous près du château de Chenonceau, café au lait ☕",
            type="semantic",
            scope="persona",
            scope_id="ada",
        )
        # memgui's review mark (Agent activity) is a brain_meta row AgentOS must read past.
        assert brain.mark_reviewed(through=brain.last_journal_id()).batch_id
    finally:
        brain.close()

    report = run_probe(agentos, path, brain_id, ["Vexlor", "telescope", "Chenonceau", "château"])

    assert found(report, "Vexlor") == {first.id: first.content}
    assert set(found(report, "telescope")) == {first.id}
    assert found(report, "Chenonceau") == {second.id: second.content}
    assert set(found(report, "château")) == {second.id}
    assert report["health"]["totalTraces"] == 2
    assert report["health"]["activeTraces"] == 2
    assert {trace["id"] for trace in report["brain_traces"]} == {first.id, second.id}


# --- the install helper's skip reasons (no AgentOS install needed) ------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX shell scripts as stand-ins")
def test_missing_node_gives_a_skip_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    env = ensure_agentos(tmp_path / "cache")
    assert env.prefix is None
    assert env.skip_reason is not None and "node is not installed" in env.skip_reason
    assert not env.install_failed
    assert not (tmp_path / "cache").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX shell scripts as stand-ins")
def test_failed_npm_install_reports_its_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "node").symlink_to(node)
    # An npm that fails the way an offline registry does.
    npm = bin_dir / "npm"
    npm.write_text(
        "#!/bin/sh\necho 'npm error code ENOTFOUND' >&2\necho 'npm error network offline' >&2\n"
        "exit 1\n"
    )
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    cache = tmp_path / "cache"

    env = ensure_agentos(cache)

    assert env.prefix is None and env.install_failed
    assert env.skip_reason is not None
    assert "npm install failed (exit 1)" in env.skip_reason
    assert "npm error network offline" in env.skip_reason
    assert not (cache / ".installed.json").exists()  # the next run tries again


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
