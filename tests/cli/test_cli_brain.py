"""The `memgui` command on links, the graph, the journal, scopes and whole brains."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from memgui.__main__ import main
from memgui.core import brain as brain_module
from memgui.core import shared_brain as shared_brain_module
from memgui.core.brain import Brain
from memgui.core.engines import open_store
from tests.support.cli import add, isolate_user_dirs, run_cli, run_text, snapshot
from tests.support.paths import ROOT


@pytest.fixture(autouse=True)
def user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_user_dirs(tmp_path, monkeypatch)


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    return tmp_path / "brain.sqlite"


# --- links, graph, journal, scopes, sweep, info ---------------------------------------------


def test_link_is_idempotent_and_unlink_removes_it(capsys, any_brain):
    a, b = add(capsys, any_brain, "cause")["id"], add(capsys, any_brain, "effect")["id"]
    for _ in range(2):
        linked = run_cli(capsys, any_brain, "link", b, a, "caused_by")
        assert linked.code == 0 and linked.json()["linked"] is True
    related = run_cli(capsys, any_brain, "list", "--expand-links").json()["results"]
    assert sum(len(t["related"]) for t in related) == 2  # one link, seen from both sides
    unlinked = run_cli(capsys, any_brain, "unlink", b, a, "caused_by")
    assert unlinked.code == 0
    assert unlinked.json() == {"from": b, "to": a, "kind": "caused_by", "unlinked": True}
    related = run_cli(capsys, any_brain, "list", "--expand-links").json()["results"]
    assert all(t["related"] == [] for t in related)


def test_unlink_of_a_missing_link_says_so_and_writes_nothing(capsys, any_brain):
    new, old = add(capsys, any_brain, "new rule")["id"], add(capsys, any_brain, "old rule")["id"]
    assert run_cli(capsys, any_brain, "link", new, old, "supersedes").code == 0
    before = snapshot(any_brain)
    for ends in ((old, new), (new, old)):  # the wrong direction, then a kind never linked
        kind = "supersedes" if ends == (old, new) else "caused_by"
        missing = run_cli(capsys, any_brain, "unlink", *ends, kind)
        assert missing.code == 0, missing.err
        assert missing.json() == {
            "from": ends[0],
            "to": ends[1],
            "kind": kind,
            "unlinked": False,
            "reason": "not_found",
        }
    text = run_text(capsys, any_brain, "unlink", old, new, "supersedes")
    assert text.code == 0
    assert text.out == f"not unlinked: no link {old} supersedes {new} (nothing changed)\n"
    assert snapshot(any_brain) == before
    removed = run_text(capsys, any_brain, "unlink", new, old, "supersedes")
    assert removed.out == f"unlinked {new} supersedes {old}\n"


def test_neighbours_prints_the_graph_around_a_trace(capsys, any_brain):
    t = add(capsys, any_brain, "a node of its own")
    result = run_cli(capsys, any_brain, "neighbours", t["id"], "--depth", "3")
    assert result.code == 0, result.err
    doc = result.json()
    assert doc["id"] == t["id"] and isinstance(doc["neighbours"], list)
    assert doc["truncated"] is False
    assert run_text(capsys, any_brain, "neighbours", t["id"]).code == 0


def test_neighbours_say_when_more_were_left_out(capsys, any_brain):
    with open_store(any_brain, actor="test") as opened:
        hub = opened.add_node("hub", "thing").id
        for i in range(4):
            opened.add_edge(hub, opened.add_node(f"leaf {i}", "thing").id, "has")
    doc = run_cli(capsys, any_brain, "neighbours", hub, "--limit", "3").json()
    assert len(doc["neighbours"]) == 3
    assert doc["truncated"] is True
    assert (
        run_cli(capsys, any_brain, "neighbours", hub, "--limit", "4").json()["truncated"] is False
    )
    text = run_text(capsys, any_brain, "neighbours", hub, "--limit", "3").out
    assert text.splitlines()[-1] == "(the 3 nearest are shown; there are more: --limit N)"


def test_history_and_revert_of_a_cli_change(capsys, any_brain):
    t = add(capsys, any_brain, "before")
    run_cli(capsys, any_brain, "update", t["id"], "--content", "after")
    entries = run_cli(capsys, any_brain, "history", t["id"]).json()["entries"]
    assert [e["op"] for e in entries][-1] == "update"
    assert {e["actor"] for e in entries} == {"cli"}
    reverted = run_cli(capsys, any_brain, "revert", entries[-1]["batch_id"])
    assert reverted.code == 0, reverted.err
    assert t["id"] in reverted.json()["traces"]
    assert run_cli(capsys, any_brain, "get", t["id"]).json()["content"] == "before"
    assert run_text(capsys, any_brain, "history", t["id"]).out.count(t["id"]) >= 3


def test_sweep_removes_expired_traces(capsys, any_brain, monkeypatch):
    now = [brain_module.now_ms()]
    for module in (brain_module, shared_brain_module):  # the clock of every command
        monkeypatch.setattr(module, "now_ms", lambda: now[0])
    short = add(capsys, any_brain, "expires", "--ttl-secs", "1")
    keep = add(capsys, any_brain, "stays")
    now[0] += 1_001  # just past the second the first one had
    report = run_cli(capsys, any_brain, "sweep")
    assert report.code == 0, report.err
    assert report.json()["expired"] == 1
    assert run_cli(capsys, any_brain, "get", short["id"]).code == 3
    assert run_cli(capsys, any_brain, "get", keep["id"]).code == 0


def test_info_reports_ids_schema_and_counts(capsys, brain):
    add(capsys, brain, "one")
    gone = add(capsys, brain, "two")
    run_cli(capsys, brain, "forget", gone["id"])
    info = run_cli(capsys, brain, "info").json()
    assert info["brain_id"] == "brain" and info["brain_ids"] == ["brain"]
    assert isinstance(info["schema_version"], int) and info["schema_version"] >= 1
    assert (info["traces"], info["live"], info["deleted"]) == (2, 1, 1)


def test_scope_delete_and_refile(capsys, any_brain):
    a = add(capsys, any_brain, "a", "--scope", "user", "--scope-id", "alice")
    add(capsys, any_brain, "b", "--scope", "user", "--scope-id", "alice")
    c = add(capsys, any_brain, "c", "--scope", "user", "--scope-id", "bob")
    refiled = run_cli(capsys, any_brain, "scope-refile", "user", "alice", "alicia")
    assert refiled.code == 0 and refiled.json()["refiled"] == 2
    assert run_cli(capsys, any_brain, "get", a["id"]).json()["scope_id"] == "alicia"
    deleted = run_cli(capsys, any_brain, "scope-delete", "user", "alicia")
    assert deleted.code == 0 and deleted.json()["deleted"] == 2
    remaining = run_cli(capsys, any_brain, "list", "--include-deleted").json()["results"]
    assert [t["id"] for t in remaining] == [c["id"]]
    assert run_text(capsys, any_brain, "scope-delete", "user", "bob").out.startswith("deleted 1")


def test_scope_refile_to_the_same_id_writes_nothing(capsys, any_brain):
    a = add(capsys, any_brain, "a", "--scope", "user", "--scope-id", "alice")
    before = snapshot(any_brain)
    same = run_cli(capsys, any_brain, "scope-refile", "user", "alice", "alice")
    assert same.code == 0, same.err
    assert same.json() == {"scope": "user", "from": "alice", "to": "alice", "refiled": 0}
    text = run_text(capsys, any_brain, "scope-refile", "user", "alice", "alice")
    assert text.out.startswith("re-filed 0 trace(s)") and "nothing changed" in text.out
    assert snapshot(any_brain) == before
    assert run_cli(capsys, any_brain, "get", a["id"]).json()["version"] == 1


# --- which brain ----------------------------------------------------------------------------


def test_default_brain_is_in_the_user_data_folder(capsys, user_dirs):
    assert main(["add", "where am I"]) == 0
    capsys.readouterr()
    assert (user_dirs / "data" / "memgui" / "brain.sqlite").is_file()


def test_memgui_brain_variable_names_the_brain(capsys, tmp_path, monkeypatch):
    target = tmp_path / "elsewhere" / "agent.sqlite"
    monkeypatch.setenv("MEMGUI_BRAIN", str(target))
    assert main(["--json", "info"]) == 0
    assert json.loads(capsys.readouterr().out)["brain_id"] == "agent"
    assert target.is_file()


def test_brain_id_chooses_among_several(capsys, brain):
    add(capsys, brain, "in the first brain")
    conn = apsw.Connection(str(brain))
    conn.execute("INSERT INTO brain_meta SELECT 'second', key, value FROM brain_meta")
    conn.close()
    info = run_cli(capsys, brain, "--brain-id", "second", "info")
    assert info.code == 0, info.err
    assert info.json()["brain_id"] == "second" and info.json()["traces"] == 0
    assert info.json()["brain_ids"] == ["brain", "second"]


# --- a real AgentOS brain ---------------------------------------------------------------------

AGENTOS_BRAIN = ROOT.parent / "shared/fixtures/agentos/brain.sqlite"
ALICE_TRACE = "mt_b7e867c6-54d1-4056-a2da-bc199d2c9dc5"


@pytest.fixture
def agentos_brain(tmp_path: Path) -> Path:
    if not AGENTOS_BRAIN.is_file():
        pytest.skip(f"fixture missing: {AGENTOS_BRAIN}")
    copy = tmp_path / "agentos.sqlite"
    copy.write_bytes(AGENTOS_BRAIN.read_bytes())
    return copy


def test_reading_an_agentos_brain_leaves_the_file_untouched(capsys, agentos_brain):
    before = agentos_brain.read_bytes()
    info = run_cli(capsys, agentos_brain, "info").json()
    assert (info["traces"], info["live"], info["deleted"]) == (51, 45, 6)
    assert len(run_cli(capsys, agentos_brain, "list", "--limit", "200").json()["results"]) == 45
    assert run_cli(capsys, agentos_brain, "get", ALICE_TRACE).code == 0
    assert run_cli(capsys, agentos_brain, "list", "--deleted").code == 0
    assert agentos_brain.read_bytes() == before
    assert sorted(p.name for p in agentos_brain.parent.iterdir()) == ["agentos.sqlite"]


def test_neighbours_walk_the_knowledge_graph(capsys, agentos_brain):
    one = run_cli(capsys, agentos_brain, "neighbours", ALICE_TRACE).json()["neighbours"]
    assert [(n["label"], n["type"], n["edge_type"], n["hop"]) for n in one] == [
        ("Alice", "person", "mentions", 1)
    ]
    two = run_cli(capsys, agentos_brain, "neighbours", ALICE_TRACE, "--depth", "2").json()
    assert [n["hop"] for n in two["neighbours"]] == [1, 2]
    text = run_text(capsys, agentos_brain, "neighbours", ALICE_TRACE).out
    assert "hop 1" in text and "Alice" in text


def test_neighbours_limit_takes_its_largest_value(capsys, brain):
    with Brain.open(brain) as opened:
        hub = opened.add_node("hub", "thing").id
        opened.add_edge(hub, opened.add_node("leaf", "thing").id, "has")
    doc = run_cli(capsys, brain, "neighbours", hub, "--limit", "5000").json()
    assert len(doc["neighbours"]) == 1 and doc["truncated"] is False
