"""Running the `memgui` command in the test's process, and what a CLI test compares."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest

from memgui.__main__ import main


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(capsys: pytest.CaptureFixture[str], brain: Path | str, *argv: str) -> Result:
    """`memgui --brain BRAIN --json ARGV...` in this process."""
    code = main(["--brain", str(brain), "--json", *argv])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def run_text(capsys: pytest.CaptureFixture[str], brain: Path | str, *argv: str) -> Result:
    """The same without --json: readable output."""
    code = main(["--brain", str(brain), *argv])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def add(capsys: pytest.CaptureFixture[str], brain: Path | str, content: str, *options: str) -> dict:
    result = run_cli(capsys, brain, "add", content, *options)
    assert result.code == 0, result.err
    return result.json()


def without_strength(trace: dict) -> dict:
    """A trace's JSON minus its strength, which decays between two reads."""
    return {k: v for k, v in trace.items() if k != "strength"}


def snapshot(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table: equal snapshots mean nothing was written."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"'))) for t in tables}
    finally:
        conn.close()


def isolate_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default brain and the log file go under tmp_path, never the real home."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MEMGUI_BRAIN", raising=False)
    return tmp_path
