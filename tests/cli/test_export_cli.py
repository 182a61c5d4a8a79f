"""`memgui export`: formats, the JSON report, stdout for JSONL, errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from tests.support.cli import run_cli, run_text
from tests.support.paths import ROOT


@pytest.fixture
def brain_file(tmp_path: Path) -> Path:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        brain.add("We chose WAL", id="d1", category="DECISION", tags=["db"])
        brain.add("no category", id="plain")
        brain.add("hostile", id="../evil")
    return path


def test_json_report_lists_refused_traces(capsys, brain_file: Path, tmp_path: Path) -> None:
    result = run_cli(capsys, brain_file, "export", str(tmp_path / "notes"), "--format", "markdown")
    assert result.code == 0
    assert result.json() == {
        "exported": 2,
        "refused": [
            {"id": "../evil", "field": "id", "problem": "must not contain / (got '../evil')"}
        ],
    }
    assert not (tmp_path / "evil.md").exists()


def test_format_follows_the_path_and_options_reach_json(
    capsys, brain_file: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "out.json"
    result = run_cli(capsys, brain_file, "export", str(dest), "--no-conversations")
    assert result.code == 0 and result.json()["exported"] == 3
    assert list(json.loads(dest.read_text()))[0] == "meta"
    text = run_text(capsys, brain_file, "export", str(tmp_path / "o"), "--format", "obsidian")
    assert text.code == 0 and "exported 2 traces as obsidian" in text.out
    assert "'../evil' (id: must not contain /" in text.out


def test_sqlite_refuses_an_existing_path(capsys, brain_file: Path, tmp_path: Path) -> None:
    dest = tmp_path / "taken.sqlite"
    dest.write_bytes(b"keep")
    result = run_cli(capsys, brain_file, "export", str(dest))
    assert result.code == 2 and "already exists" in result.err
    assert dest.read_bytes() == b"keep"


def test_stdout_is_only_for_jsonl(capsys, brain_file: Path) -> None:
    result = run_cli(capsys, brain_file, "export", "-", "--format", "json")
    assert result.code == 2 and "only for --format jsonl" in result.err


@pytest.mark.slow  # a real process
def test_jsonl_to_stdout_with_the_report_on_stderr(brain_file: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memgui", "--brain", str(brain_file), "export", "-", "--json"],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert json.loads(lines[0])["record"] == "header" and len(lines) == 2
    report = json.loads(done.stderr.decode())
    assert report["exported"] == 1
    assert {r["id"] for r in report["refused"]} == {"plain", "../evil"}
