"""`memgui --version` names memgui, the brain schemas it reads and writes, SQLite, sqlite-vec
(loaded for real) and Qt, without opening a brain or starting the app; `memgui
sample-brain` writes the sample brain to a new file only."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memgui import __version__
from memgui.core.storage import schema
from tests.support.cli import run_text, snapshot


def test_version_names_every_part(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    brain = tmp_path / "never-opened.sqlite"
    result = run_text(capsys, brain, "--version")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == f"memgui {__version__}"
    assert re.search(
        rf"brain schema: memgui {schema.SCHEMA_VERSION} \(reads 0–{schema.SCHEMA_VERSION};",
        result.out,
    )
    assert re.search(r"AgentOS 2 \(reads up to 2; newer: opened read-only\)", result.out)
    assert re.search(r"^SQLite 3\.\d+\.\d+ \(apsw ", result.out, re.M)
    assert re.search(r"^sqlite-vec v\d+\.\d+\.\d+$", result.out, re.M)
    assert re.search(r"^keyword ranking: memgui_bm25$", result.out, re.M)
    assert re.search(r"^Qt 6\.\d+\.\d+ \(PySide6 6\.\d+\.\d+\)$", result.out, re.M)
    assert not brain.exists(), "--version opened the brain"


def test_version_as_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = run_text(capsys, tmp_path / "b.sqlite", "--json", "--version")
    found = json.loads(result.out)
    assert found["memgui"] == __version__
    assert found["schema"]["memgui"] == {
        "writes": schema.SCHEMA_VERSION,
        "reads_from": 0,
        "reads_up_to": schema.SCHEMA_VERSION,
        "older": "migrated on the first write, after a backup beside the file",
        "newer": "refused, the file untouched",
    }
    assert found["schema"]["agentos"]["writes"] == int(schema.AGENTOS_SCHEMA_VERSION)
    assert found["sqlite_vec"].startswith("v") and found["qt"].startswith("6.")
    assert found["keyword_ranking"] == "memgui_bm25"  # the install built it


def test_version_starts_no_app_and_loads_no_numpy() -> None:
    """Qt's version is read from QtCore; the widgets, the app and numpy stay unloaded."""
    probe = (
        "import sys, contextlib, io\n"
        "from memgui.__main__ import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--version']) == 0\n"
        "print(sorted(m for m in ('PySide6.QtWidgets', 'PySide6.QtGui', 'memgui.ui.app',"
        " 'numpy', 'memgui.core.brain') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_sample_brain_is_written_to_a_new_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "sample.sqlite"
    result = run_text(capsys, tmp_path / "unused.sqlite", "sample-brain", str(target))
    assert result.code == 0, result.err
    assert result.out.strip() == f"wrote the sample brain to {target} (brain id sample)"
    rows = snapshot(target)
    assert len(rows["memory_traces"]) > 10 and rows["memory_links"]


def test_sample_brain_refuses_a_file_that_exists(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "mine.sqlite"
    target.write_bytes(b"not mine to replace")
    result = run_text(capsys, tmp_path / "unused.sqlite", "sample-brain", str(target))
    assert result.code == 2
    assert result.err.strip() == (
        "memgui: invalid argument: path exists; the sample brain is only written to a new "
        f"file (got '{target}')"
    )
    assert target.read_bytes() == b"not mine to replace"


def test_sample_brain_refuses_a_missing_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "no-such-folder" / "sample.sqlite"
    result = run_text(capsys, tmp_path / "unused.sqlite", "sample-brain", str(target))
    assert result.code == 2
    assert "path is in a folder that does not exist" in result.err
    assert not target.parent.exists()
