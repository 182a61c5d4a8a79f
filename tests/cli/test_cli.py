"""The `memgui` command, run in-process through `memgui.cli.main` on real brain files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgui.__main__ import main
from tests.support.cli import add, isolate_user_dirs, run_cli, run_text, without_strength


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_user_dirs(tmp_path, monkeypatch)


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    return tmp_path / "brain.sqlite"


# --- add, get, list --------------------------------------------------------------------------


def test_add_prints_the_new_trace_and_get_reads_it_back(capsys, any_brain):
    added = add(
        capsys,
        any_brain,
        "The build uses Python 3.11",
        "--type",
        "semantic",
        "--scope",
        "user",
        "--scope-id",
        "u1",
        "--category",
        "DECISION",
        "--tag",
        "build",
        "--tag",
        "python",
        "--ttl-secs",
        "3600",
    )
    assert added["id"].startswith("mt_")
    assert added["content"] == "The build uses Python 3.11"
    assert (added["type"], added["scope"], added["scope_id"]) == ("semantic", "user", "u1")
    assert added["category"] == "DECISION"
    assert added["tags"] == ["build", "python"]
    assert added["expires_at"] - added["created_at"] == 3_600_000
    assert added["deleted"] is False and added["version"] == 1
    assert set(added) >= {"strength", "last_accessed", "retrieval_count"}

    got = run_cli(capsys, any_brain, "get", added["id"])
    assert got.code == 0
    assert without_strength(got.json()) == without_strength(added)


def test_add_without_options_takes_the_core_defaults(capsys, any_brain):
    added = add(capsys, any_brain, "plain")
    assert (added["type"], added["scope"], added["scope_id"]) == ("episodic", "user", "")
    assert added["category"] is None and added["tags"] == [] and added["expires_at"] is None


def test_json_after_the_command_and_brain_after_the_command(capsys, any_brain):
    code = main(["add", "late options", "--brain", str(any_brain), "--json"])
    added = json.loads(capsys.readouterr().out)
    assert code == 0 and added["content"] == "late options"
    code = main(["get", added["id"], "--json", "--brain", str(any_brain)])
    assert code == 0 and json.loads(capsys.readouterr().out)["id"] == added["id"]


def test_readable_output_without_json(capsys, any_brain):
    out = run_text(capsys, any_brain, "add", "Readable memory", "--tag", "t1")
    assert out.code == 0 and out.out.startswith("added mt_")
    trace_id = out.out.split()[1]
    listing = run_text(capsys, any_brain, "list")
    assert trace_id in listing.out and "Readable memory" in listing.out and "#t1" in listing.out
    details = run_text(capsys, any_brain, "get", trace_id)
    assert "id:" in details.out and "Readable memory" in details.out
    assert "traces:" in run_text(capsys, any_brain, "info").out
    assert "no traces found" in run_text(capsys, any_brain, "list", "--tag", "nothing").out


def test_list_filters_by_every_field(capsys, any_brain):
    a = add(
        capsys,
        any_brain,
        "alpha",
        "--type",
        "semantic",
        "--scope",
        "user",
        "--scope-id",
        "u1",
        "--category",
        "DECISION",
        "--tag",
        "Red",
    )
    b = add(
        capsys,
        any_brain,
        "beta",
        "--type",
        "procedural",
        "--scope",
        "thread",
        "--scope-id",
        "t9",
        "--category",
        "TODO",
        "--tag",
        "red",
    )
    c = add(capsys, any_brain, "gamma", "--type", "semantic", "--scope", "user", "--scope-id", "u2")

    def ids(*filters: str) -> list[str]:
        result = run_cli(capsys, any_brain, "list", *filters)
        assert result.code == 0, result.err
        return [t["id"] for t in result.json()["results"]]

    assert ids() == [c["id"], b["id"], a["id"]]  # newest first
    assert ids("--type", "semantic") == [c["id"], a["id"]]
    assert ids("--scope", "thread") == [b["id"]]
    assert ids("--scope-id", "u2") == [c["id"]]
    assert ids("--category", "DECISION") == [a["id"]]
    assert ids("--tag", "Red") == [a["id"]]  # exact, case-sensitive
    assert ids("--tag", "red") == [b["id"]]
    assert ids("--limit", "1") == [c["id"]]
    assert ids("--limit", "2", "--offset", "1") == [b["id"], a["id"]]
    assert ids("--limit", "200") == [c["id"], b["id"], a["id"]]


def test_list_trash_and_everything(capsys, any_brain):
    live = add(capsys, any_brain, "stays")
    gone = add(capsys, any_brain, "goes")
    assert run_cli(capsys, any_brain, "forget", gone["id"]).code == 0

    def ids(*filters: str) -> set[str]:
        return {t["id"] for t in run_cli(capsys, any_brain, "list", *filters).json()["results"]}

    assert ids() == {live["id"]}
    assert ids("--deleted") == {gone["id"]}
    assert ids("--include-deleted") == {live["id"], gone["id"]}


def test_list_and_search_expand_links(capsys, any_brain):
    a = add(capsys, any_brain, "the parser was rewritten")
    b = add(capsys, any_brain, "the old parser was slow")
    assert run_cli(capsys, any_brain, "link", a["id"], b["id"], "supersedes").code == 0

    listed = run_cli(capsys, any_brain, "list", "--expand-links").json()["results"]
    by_id = {t["id"]: t for t in listed}
    assert by_id[a["id"]]["related"][0]["id"] == b["id"]
    assert by_id[a["id"]]["related"][0]["direction"] == "out"
    assert by_id[b["id"]]["related"][0]["kind"] == "superseded_by"
    assert "related" not in run_cli(capsys, any_brain, "list").json()["results"][0]

    found = run_cli(capsys, any_brain, "search", "rewritten", "--expand-links").json()
    assert [r["id"] for r in found["results"]] == [a["id"]]
    assert found["results"][0]["related"][0]["id"] == b["id"]
    text = run_text(capsys, any_brain, "list", "--expand-links").out
    assert "superseded_by (in)" in text


# --- search ----------------------------------------------------------------------------------


def test_search_finds_words_and_reports_the_mode(capsys, brain):
    a = add(capsys, brain, "Deploys go through the staging cluster", "--tag", "ops")
    add(capsys, brain, "Lunch is at noon", "--scope", "thread", "--scope-id", "t1")
    result = run_cli(capsys, brain, "search", "staging")
    assert result.code == 0
    doc = result.json()
    assert doc["search_mode"] == "keyword"
    assert [r["id"] for r in doc["results"]] == [a["id"]]
    assert isinstance(doc["results"][0]["score"], float)
    assert run_cli(capsys, brain, "search", "staging", "--scope", "thread").json()["results"] == []
    assert len(run_cli(capsys, brain, "search", "staging", "--tag", "ops").json()["results"]) == 1
    assert run_cli(capsys, brain, "search", "lunch OR staging").json()["results"] != []
    assert run_cli(capsys, brain, "search", "stag*", "--mode", "keyword").json()["results"]
    text = run_text(capsys, brain, "search", "staging")
    assert a["id"] in text.out and "keyword" in text.out


def test_search_records_recall_only_for_returned_results(capsys, brain):
    a = add(capsys, brain, "recall me")
    b = add(capsys, brain, "not me")
    run_cli(capsys, brain, "search", "recall")
    assert run_cli(capsys, brain, "get", a["id"]).json()["retrieval_count"] == 1
    assert run_cli(capsys, brain, "get", b["id"]).json()["retrieval_count"] == 0


@pytest.mark.parametrize("query", ["!!!", "   ", "-", '"'])
def test_search_without_words_returns_nothing(capsys, any_brain, query):
    add(capsys, any_brain, "anything at all")
    result = run_cli(capsys, any_brain, "search", query)
    assert result.code == 0, result.err
    assert result.json()["results"] == []


# --- update, forget, restore, purge, merge --------------------------------------------------


def test_update_changes_only_the_given_fields(capsys, any_brain):
    t = add(capsys, any_brain, "draft", "--tag", "a", "--category", "TODO", "--ttl-secs", "60")
    result = run_cli(
        capsys,
        any_brain,
        "update",
        t["id"],
        "--content",
        "final",
        "--tag",
        "b",
        "--tag",
        "c",
        "--expect-version",
        str(t["version"]),
    )
    assert result.code == 0, result.err
    updated = result.json()
    assert updated["content"] == "final" and updated["tags"] == ["b", "c"]
    assert updated["category"] == "TODO" and updated["version"] == t["version"] + 1
    assert updated["expires_at"] is not None

    cleared = run_cli(
        capsys, any_brain, "update", t["id"], "--clear-tags", "--no-category", "--no-ttl"
    ).json()
    assert cleared["tags"] == [] and cleared["category"] is None
    assert cleared["expires_at"] is None and cleared["content"] == "final"

    moved = run_cli(
        capsys,
        any_brain,
        "update",
        t["id"],
        "--scope",
        "persona",
        "--scope-id",
        "p1",
        "--category",
        "PATTERN",
        "--type",
        "procedural",
        "--ttl-secs",
        "10",
    ).json()
    assert (moved["scope"], moved["scope_id"], moved["category"]) == ("persona", "p1", "PATTERN")
    assert moved["type"] == "procedural" and moved["expires_at"] is not None
    assert without_strength(run_cli(capsys, any_brain, "get", t["id"]).json()) == without_strength(
        moved
    )
    assert run_text(capsys, any_brain, "update", t["id"], "--content", "x").out.startswith(
        "updated"
    )


def test_forget_restore_purge(capsys, any_brain):
    t = add(capsys, any_brain, "short-lived")
    forgotten = run_cli(capsys, any_brain, "forget", t["id"])
    assert forgotten.code == 0 and forgotten.json()["deleted"] is True
    restored = run_cli(capsys, any_brain, "restore", t["id"])
    assert restored.code == 0 and restored.json()["deleted"] is False
    purged = run_cli(capsys, any_brain, "purge", t["id"])
    assert purged.code == 0 and purged.json() == {"id": t["id"], "op": "purged"}
    assert run_cli(capsys, any_brain, "get", t["id"]).code == 3
    assert run_cli(capsys, any_brain, "info").json()["traces"] == 0


def test_merge_keeps_the_first_on_a_tie_and_joins_contents(capsys, any_brain):
    a = add(capsys, any_brain, "first", "--tag", "x")
    b = add(capsys, any_brain, "second", "--tag", "y")
    merged = run_cli(capsys, any_brain, "merge", a["id"], b["id"])
    assert merged.code == 0, merged.err
    survivor = merged.json()
    assert survivor["id"] == a["id"]
    assert survivor["content"] == "first | second" and survivor["tags"] == ["x", "y"]
    assert run_cli(capsys, any_brain, "get", b["id"]).json()["deleted"] is True
    c = add(capsys, any_brain, "third")
    given = run_cli(capsys, any_brain, "merge", a["id"], c["id"], "--content", "all of it").json()
    assert given["content"] == "all of it"
