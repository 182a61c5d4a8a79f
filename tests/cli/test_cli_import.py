"""`memgui import`: dry runs, JSON output, options and exit codes, on real brain files."""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from tests.support.cli import run_cli, run_text
from tests.support.paths import ROOT
from tests.support.privileges import (
    NO_PERMISSIONS_REASON,
    honouring_permissions,
    memgui_honouring_permissions,
)

AGENTOS = ROOT.parent / "shared" / "fixtures" / "agentos"
CSV = str(AGENTOS / "csv-input.csv")


def trace_count(path: Path) -> int:
    with Brain.open(path) as brain:
        return brain.count(TraceFilter(include_deleted=True))


def test_dry_run_prints_counts_then_each_record_that_is_not_new(
    capsys: pytest.CaptureFixture[str], brain_path: Path
) -> None:
    result = run_text(capsys, brain_path, "import", CSV, "--dry-run")
    lines = result.out.splitlines()
    assert lines[0] == "plan (csv): 7 new, 0 duplicate, 0 update, 0 refused, 1 error, 1 skipped"
    assert lines[1].startswith("skipped   csv-input.csv:7")  # a blank row (seed 000)
    assert lines[2].startswith("error     csv-input.csv:8") and "metadata" in lines[2]
    assert len(lines) == 3
    assert result.code == 1  # a record could not be read
    assert not brain_path.exists()  # nothing to write: the brain is not even created


def test_json_plan_and_result(capsys: pytest.CaptureFixture[str], brain_path: Path) -> None:
    dry = run_cli(capsys, brain_path, "import", str(AGENTOS / "json-input.json"), "--dry-run")
    doc = dry.json()
    assert dry.code == 0
    assert doc["plan"] == {
        "new": 6,
        "duplicate": 0,
        "update": 0,
        "refused": 0,
        "error": 0,
        "skipped": 0,
    }
    assert "result" not in doc
    first = doc["records"][0]
    assert set(first) >= {"source", "verdict", "reason", "trace_id"}
    assert first["trace_id"] == "seed_trace_1" and first["verdict"] == "new"
    done = run_cli(capsys, brain_path, "import", str(AGENTOS / "json-input.json")).json()
    assert done["result"]["imported"] == 6 and done["result"]["errors"] == []
    again = run_cli(capsys, brain_path, "import", str(AGENTOS / "json-input.json")).json()
    assert again["plan"]["duplicate"] == 6
    assert again["result"] == {**again["result"], "imported": 0, "skipped": 6}
    assert trace_count(brain_path) == 2


def test_import_commits_and_reports(capsys: pytest.CaptureFixture[str], brain_path: Path) -> None:
    result = run_text(capsys, brain_path, "import", CSV)
    assert result.out.splitlines()[-1].startswith("imported 7, skipped 1 (0 updated), refused 0")
    assert trace_count(brain_path) == 7


def test_options_reach_the_plan(capsys: pytest.CaptureFixture[str], brain_path: Path) -> None:
    run_cli(capsys, brain_path, "import", CSV)
    again = run_cli(
        capsys, brain_path, "import", CSV, "--no-dedup", "--scope", "thread", "--scope-id", "t9"
    ).json()
    assert again["result"]["imported"] == 7
    with Brain.open(brain_path) as brain:
        refiled = [
            t
            for t in brain.list_traces(TraceFilter(include_deleted=True), limit=50)
            if t.scope_id == "t9"
        ]
    assert len(refiled) == 7 and {t.scope for t in refiled} == {"thread"}


def test_format_is_named_or_detected(capsys: pytest.CaptureFixture[str], brain_path: Path) -> None:
    folder = str(AGENTOS / "obsidian")
    doc = run_cli(capsys, brain_path, "import", folder, "--format", "obsidian", "--dry-run")
    assert doc.json()["format"] == "obsidian"
    bad = run_text(capsys, brain_path, "import", CSV, "--format", "docx")
    assert bad.code == 2 and "docx" in bad.err


def test_an_unreadable_source_exits_2_naming_it(
    capsys: pytest.CaptureFixture[str], brain_path: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    result = run_text(capsys, brain_path, "import", str(broken), "--format", "json")
    assert result.code == 2 and str(broken) in result.err and "not valid JSON" in result.err
    missing = run_text(capsys, brain_path, "import", str(tmp_path / "nowhere.csv"))
    assert missing.code == 2 and "nowhere.csv" in missing.err
    assert not brain_path.exists()  # nothing to write: the brain is not even created


def test_a_source_that_cannot_be_opened_exits_2_with_the_reason(
    capsys: pytest.CaptureFixture[str], brain_path: Path, tmp_path: Path
) -> None:
    # A socket cannot be opened as a file, not even by root: ENXIO. (In a short folder: a
    # socket's path may not exceed 107 bytes, and a test's temporary folder can be long.)
    folder = Path(tempfile.mkdtemp(prefix="mg-", dir="/tmp" if Path("/tmp").is_dir() else None))
    holder = socket.socket(socket.AF_UNIX)
    holder.bind(str(folder / "notes.jsonl"))
    try:
        for fmt in ("auto", "jsonl", "csv"):
            result = run_text(capsys, brain_path, "import", str(folder / "notes.jsonl"),
                              "--format", fmt)  # fmt: skip
            assert result.code == 2, result.err
            assert "path is not a regular file or folder" in result.err
            assert "notes.jsonl" in result.err
    finally:
        holder.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow  # a real process
@pytest.mark.skipif(honouring_permissions() is None, reason=NO_PERMISSIONS_REASON)
@pytest.mark.parametrize("fmt", ["auto", "jsonl", "markdown"])
def test_a_source_without_read_permission_exits_2(tmp_path: Path, fmt: str) -> None:
    source = tmp_path / ("vault" if fmt == "markdown" else "notes.jsonl")
    if fmt == "markdown":
        source.mkdir()
        (source / "a.md").write_text("a note", encoding="utf-8")
    else:
        source.write_text("{}\n", encoding="utf-8")
    source.chmod(0)
    result = memgui_honouring_permissions(
        tmp_path / "b.sqlite", "import", str(source), "--format", fmt, cwd=ROOT
    )
    source.chmod(0o700)
    assert result.returncode == 2, result.stderr
    assert "path cannot be read: Permission denied" in result.stderr


JSONL = ROOT / "tests" / "fixtures" / "jsonl"


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        ((str(JSONL / "unknown_field.jsonl"),), 1),  # a defect: every memory is an error
        ((str(JSONL / "newer_version.jsonl"),), 2),  # refused whole
        ((str(JSONL / "valid.jsonl"), "--dry-run"), 0),
        ((CSV, "--format", "jsonl"), 2),  # not agent-memory JSONL at all
    ],
)
def test_an_import_that_writes_nothing_creates_no_brain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: tuple[str, ...], code: int
) -> None:
    target = tmp_path / "new" / "brain.sqlite"
    result = run_text(capsys, target, "import", *argv)
    assert result.code == code, result.err
    assert not target.parent.exists()


def test_an_import_into_a_missing_brain_creates_it_and_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "new" / "team.sqlite"
    result = run_cli(capsys, target, "import", str(JSONL / "valid.jsonl"))
    assert result.code == 0, result.err
    assert result.json()["result"]["imported"] == 3
    assert trace_count(target) == 3
    with Brain.open(target) as brain:
        assert brain.brain_id == "team"  # the file's stem, as for any new brain
    named = run_cli(capsys, tmp_path / "b.sqlite", "--brain-id", "mine", "import", CSV)
    assert named.code == 1  # the fixture's one unreadable row
    with Brain.open(tmp_path / "b.sqlite", brain_id="mine") as brain:
        assert brain.db.brain_ids() == ["mine"]
        assert brain.count(TraceFilter(include_deleted=True)) == 7


def test_all_branches_flag(capsys: pytest.CaptureFixture[str], brain_path: Path) -> None:
    source = str(ROOT.parent / "shared" / "corpora" / "chatgpt" / "librechat__chatgpt-tree.json")
    seen = run_cli(capsys, brain_path, "import", source, "--dry-run").json()["plan"]["new"]
    every = run_cli(capsys, brain_path, "import", source, "--dry-run", "--all-branches")
    assert every.json()["plan"]["new"] >= seen
