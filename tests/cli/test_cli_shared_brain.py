"""`memgui --brain postgresql://…?brain_id=NAME`: the trace commands on a shared brain, what is
not served there yet, and `memgui copy`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgui.__main__ import main
from tests.support.cli import add, run_cli, run_text
from tests.support.ollama_server import FakeOllama

pytestmark = pytest.mark.slow  # a real server


def test_trace_commands_work_on_a_shared_brain(
    capsys: pytest.CaptureFixture[str], pg_address: str
) -> None:
    trace = add(capsys, pg_address, "Release deployed to production", "--tag", "ops")
    assert trace["version"] == 1
    got = run_cli(capsys, pg_address, "get", trace["id"])
    assert got.code == 0 and got.json()["content"] == "Release deployed to production"
    found = run_cli(capsys, pg_address, "search", "deploy")
    assert found.code == 0, found.err
    assert [r["id"] for r in found.json()["results"]] == [trace["id"]]
    assert found.json()["search_mode"] == "keyword"
    updated = run_cli(
        capsys,
        pg_address,
        "update",
        trace["id"],
        "--content",
        "Rolled back",
        "--expect-version",
        "1",
    )
    assert updated.code == 0 and updated.json()["version"] == 2
    stale = run_cli(
        capsys, pg_address, "update", trace["id"], "--content", "x", "--expect-version", "1"
    )
    assert stale.code == 4 and "conflict" in stale.err
    listed = run_cli(capsys, pg_address, "list", "--tag", "ops")
    assert [r["content"] for r in listed.json()["results"]] == ["Rolled back"]
    history = run_cli(capsys, pg_address, "history", trace["id"])
    entries = history.json()["entries"]
    assert [e["op"] for e in entries] == ["add", "update"]
    reverted = run_cli(capsys, pg_address, "revert", entries[1]["batch_id"])
    assert reverted.code == 0, reverted.err
    assert run_cli(capsys, pg_address, "get", trace["id"]).json()["content"] == (
        "Release deployed to production"
    )
    assert run_cli(capsys, pg_address, "forget", trace["id"]).json()["deleted"] is True
    info = run_cli(capsys, pg_address, "info")
    assert info.json()["engine"] == "postgresql" and info.json()["deleted"] == 1
    purged = run_cli(capsys, pg_address, "purge", trace["id"])
    assert purged.code == 0
    assert run_cli(capsys, pg_address, "get", trace["id"]).code == 3


def test_what_is_not_served_on_postgres_says_so_and_writes_nothing(
    capsys: pytest.CaptureFixture[str],
    pg_address: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may take the address for a file's path here
    add(capsys, pg_address, "one")
    add(capsys, pg_address, "two")
    for argv in (("install-desktop",),):
        result = run_text(capsys, pg_address, *argv)
        assert result.code == 2, argv
        assert "not available on a PostgreSQL brain yet" in result.err, argv
    listed = run_cli(capsys, pg_address, "list")
    assert sorted(r["version"] for r in listed.json()["results"]) == [1, 1]
    assert list(tmp_path.iterdir()) == []


def test_export_writes_a_shared_brain_out(
    capsys: pytest.CaptureFixture[str], pg_address: str, tmp_path: Path
) -> None:
    trace = add(capsys, pg_address, "exported from the server", "--tag", "ops")
    out = tmp_path / "out.json"
    result = run_cli(capsys, pg_address, "export", str(out))
    assert result.code == 0, result.err
    assert result.json()["exported"] == 1
    assert [t["id"] for t in json.loads(out.read_text())["traces"]] == [trace["id"]]
    notes = tmp_path / "notes"
    assert run_cli(capsys, pg_address, "export", str(notes), "--format", "obsidian").code == 0
    assert [p.read_text().count("exported from the server") for p in notes.rglob("*.md")] == [1]


def test_embed_then_search_by_meaning(
    capsys: pytest.CaptureFixture[str], pg_address: str, ollama_server: FakeOllama
) -> None:
    car = add(capsys, pg_address, "my automobile stalled")
    url = ("--ollama-url", ollama_server.url)
    status = run_cli(capsys, pg_address, *url, "embed", "--status")
    assert status.code == 0, status.err
    assert status.json()["pending"] == 1 and status.json()["model"] is None
    embedded = run_cli(capsys, pg_address, *url, "embed")
    assert embedded.json() == {"embedded": 1, "stale": 0, "pending": 0}
    found = run_cli(capsys, pg_address, *url, "search", "vehicle breakdown", "--mode", "semantic")
    assert found.code == 0, found.err
    assert found.json()["search_mode"] == "semantic"
    assert [r["id"] for r in found.json()["results"]] == [car["id"]]
    assert run_cli(capsys, pg_address, "get", car["id"]).json()["retrieval_count"] == 1


def test_import_then_revert_on_a_shared_brain(
    capsys: pytest.CaptureFixture[str], pg_address: str, tmp_path: Path
) -> None:
    source = tmp_path / "in.csv"
    source.write_text("content,tags\nfirst memory,a\nsecond memory,b\n", encoding="utf-8")
    dry = run_cli(capsys, pg_address, "import", str(source), "--dry-run")
    assert dry.code == 0, dry.err
    assert run_cli(capsys, pg_address, "list").json()["results"] == []
    done = run_cli(capsys, pg_address, "import", str(source))
    assert done.code == 0, done.err
    result = done.json()["result"]
    assert result["imported"] == 2
    assert len(run_cli(capsys, pg_address, "list").json()["results"]) == 2
    assert run_cli(capsys, pg_address, "import", str(source)).json()["result"]["imported"] == 0
    assert run_cli(capsys, pg_address, "revert", result["batch_id"]).code == 0
    assert run_cli(capsys, pg_address, "list").json()["results"] == []


def test_a_missing_brain_id_is_refused_clearly_by_the_app_and_commands(
    capsys: pytest.CaptureFixture[str], pg_address: str
) -> None:
    no_id = pg_address.replace("&brain_id=team", "")
    assert main([no_id]) == 2  # the app is refused before it starts
    assert "is required for a PostgreSQL brain" in capsys.readouterr().err
    assert main(["--brain", no_id, "list"]) == 2
    err = capsys.readouterr().err
    assert "brain_id" in err and "is required for a PostgreSQL brain" in err
    assert main(["--brain", no_id, "--brain-id", "team", "--json", "info"]) == 0
    assert '"brain_id": "team"' in capsys.readouterr().out


def test_copy_puts_a_brain_file_into_a_shared_brain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pg_address: str
) -> None:
    path = tmp_path / "brain.sqlite"
    trace = add(capsys, path, "copied across", "--tag", "x")
    result = run_cli(capsys, path, "copy", str(path), pg_address)
    assert result.code == 0, result.err
    assert result.json()["copied"] == 1
    got = run_cli(capsys, pg_address, "get", trace["id"])
    assert got.json() == run_cli(capsys, path, "get", trace["id"]).json() | {
        "strength": got.json()["strength"]
    }
    again = run_text(capsys, path, "copy", str(path), pg_address)
    assert again.code == 2 and "already holds 1 traces" in again.err


def test_copy_back_and_snapshot_make_files_of_a_shared_brain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pg_address: str
) -> None:
    trace = add(capsys, pg_address, "kept on the server", "--tag", "x")
    back = tmp_path / "back.sqlite"
    result = run_cli(capsys, back, "copy", pg_address, str(back))
    assert result.code == 0, result.err
    assert result.json()["copied"] == 1 and result.json()["destination"] == str(back)
    got = run_cli(capsys, back, "get", trace["id"]).json()
    # strength decays with the seconds between the two reads
    assert got == run_cli(capsys, pg_address, "get", trace["id"]).json() | {
        "strength": got["strength"]
    }
    snap = tmp_path / "snap.sqlite"
    result = run_cli(capsys, pg_address, "snapshot", str(snap))
    assert result.code == 0, result.err
    assert result.json()["source"].endswith("brain_id=team")
    assert run_cli(capsys, snap, "get", trace["id"]).json()["content"] == "kept on the server"
    refused = run_text(capsys, snap, "add", "offline")
    assert refused.code != 0 and "read-only" in refused.err
    again = run_text(capsys, pg_address, "snapshot", str(snap))
    assert again.code == 2 and "already exists" in again.err
    from_file = run_text(capsys, back, "snapshot", str(tmp_path / "other.sqlite"))
    assert from_file.code == 2 and "postgresql:// address for a snapshot" in from_file.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back.sqlite", "snap.sqlite"]


def test_links_work_on_a_shared_brain(capsys: pytest.CaptureFixture[str], pg_address: str) -> None:
    a = add(capsys, pg_address, "the release plan")
    b = add(capsys, pg_address, "the rollback plan")
    linked = run_cli(capsys, pg_address, "link", a["id"], b["id"], "supersedes")
    assert linked.code == 0 and linked.json()["linked"] is True, linked.err
    listed = run_cli(capsys, pg_address, "list", "--expand-links")
    related = {r["id"]: r["related"] for r in listed.json()["results"]}
    assert [(r["id"], r["kind"]) for r in related[a["id"]]] == [(b["id"], "supersedes")]
    assert [(r["id"], r["kind"]) for r in related[b["id"]]] == [(a["id"], "superseded_by")]
    found = run_cli(capsys, pg_address, "search", "release", "--expand-links")
    assert [r["id"] for r in found.json()["results"][0]["related"]] == [b["id"]]
    history = run_cli(capsys, pg_address, "history", b["id"]).json()["entries"]
    assert [e["op"] for e in history] == ["add", "link"]
    unlinked = run_cli(capsys, pg_address, "unlink", a["id"], b["id"], "supersedes")
    assert unlinked.json()["unlinked"] is True
    again = run_cli(capsys, pg_address, "unlink", a["id"], b["id"], "supersedes")
    assert again.code == 0 and again.json()["reason"] == "not_found"
    reverted = run_cli(capsys, pg_address, "revert", history[1]["batch_id"])
    assert reverted.code == 4 and "no longer exists" in reverted.err  # unlinked since
    bad = run_text(capsys, pg_address, "link", a["id"], b["id"], "likes")
    assert bad.code == 2 and "kind" in bad.err


def test_reflect_on_a_shared_brain_and_its_revert(
    capsys: pytest.CaptureFixture[str], pg_address: str
) -> None:
    a = add(capsys, pg_address, "We ship on Mondays")
    b = add(capsys, pg_address, "We ship on Mondays")
    planned = run_cli(capsys, pg_address, "reflect", "--dry-run")
    assert planned.code == 0, planned.err
    assert planned.json()["dry_run"] is True and len(planned.json()["merge"]) == 1
    assert run_cli(capsys, pg_address, "get", b["id"]).json()["deleted"] is False
    done = run_cli(capsys, pg_address, "reflect")
    assert done.code == 0, done.err
    assert (done.json()["merged"], done.json()["busy"]) == (1, None)
    assert run_cli(capsys, pg_address, "get", b["id"]).json()["deleted"] is True
    text = run_text(capsys, pg_address, "reflect")
    assert text.code == 0 and "merged 0" in text.out.replace(":", "")
    assert run_cli(capsys, pg_address, "revert", done.json()["batch_id"]).code == 0
    assert run_cli(capsys, pg_address, "get", b["id"]).json()["deleted"] is False
    assert run_cli(capsys, pg_address, "get", a["id"]).json()["content"] == "We ship on Mondays"


def test_a_long_command_on_a_held_brain_exits_busy_naming_the_holder(
    capsys: pytest.CaptureFixture[str], pg_address: str
) -> None:
    import psycopg

    from memgui.core.storage.engine import parse_postgres_address

    add(capsys, pg_address, "a", "--scope", "thread", "--scope-id", "t1")
    with psycopg.connect(parse_postgres_address(pg_address).conninfo, autocommit=True) as other:
        other.execute("SET application_name = 'agentos migration'")
        with other.transaction():
            other.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("agentos_brain:team",))
            refused = run_text(capsys, pg_address, "scope-refile", "thread", "t1", "t2")
            busy = run_cli(capsys, pg_address, "reflect")
            busy_plan = run_cli(capsys, pg_address, "reflect", "--dry-run")
    assert busy_plan.code == 5 and "'agentos migration'" in busy_plan.json()["busy"]
    assert refused.code == 5 and "is busy: 'agentos migration'" in refused.err, refused.err
    assert "scope-refile was not done, nothing was written" in refused.err
    assert busy.code == 5 and "'agentos migration'" in busy.json()["busy"]
    listed = run_cli(capsys, pg_address, "list").json()["results"]
    assert [(t["scope_id"], t["version"]) for t in listed] == [("t1", 1)]


def test_reflect_derives_an_insight_on_a_shared_brain(
    capsys: pytest.CaptureFixture[str], pg_address: str, ollama_server: FakeOllama
) -> None:
    notes = [f"Release note {n} mentions the installer" for n in "abcde"]
    ids = [add(capsys, pg_address, note)["id"] for note in notes]
    for a, b in zip(ids, ids[1:], strict=False):
        assert run_cli(capsys, pg_address, "link", a, b, "relates_to").code == 0
    url = ("--ollama-url", ollama_server.url)
    done = run_cli(capsys, pg_address, *url, "reflect", "--chat-model", "llama3.2")
    assert done.code == 0, done.err
    assert (done.json()["insights"], done.json()["busy"]) == (1, None)
    listed = run_cli(capsys, pg_address, "list", "--tag", "insight").json()["results"]
    assert [t["content"] for t in listed] == [
        "Insight: these memories are about installer, mentions, note"
    ]
    assert run_cli(capsys, pg_address, "revert", done.json()["batch_id"]).code == 0
    assert run_cli(capsys, pg_address, "list", "--tag", "insight").json()["results"] == []
