"""Running the `memgui` command in the test's process, and what a CLI test compares."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest

from memgui.__main__ import main
from memgui.core.storage.engine import is_postgres_address, parse_postgres_address

# Both engines: a CLI test taking `any_brain` runs on a file and on a real PostgreSQL server
# (slow: it starts one), for the commands that work on both.
ENGINES = ["file", pytest.param("postgresql", marks=pytest.mark.slow)]


@pytest.fixture(params=ENGINES)
def any_brain(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """A new brain: a file's path, or a `postgresql://…?brain_id=team` address."""
    if request.param == "file":
        return tmp_path / "brain.sqlite"
    address: str = request.getfixturevalue("pg_address")
    return address


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


# The tables of a PostgreSQL brain a command may write (every row holds its brain id).
_PG_TABLES = (
    "brain_meta",
    "memory_traces",
    "memory_links",
    "memgui_journal",
    "knowledge_nodes",
    "knowledge_edges",
)


def snapshot(path: Path | str) -> dict[str, list[tuple]]:
    """Every row of every table: equal snapshots mean nothing was written (a brain file, or
    the database of a postgresql:// address)."""
    if isinstance(path, str) and is_postgres_address(path):
        import psycopg

        conninfo = parse_postgres_address(path).conninfo
        with psycopg.connect(conninfo) as pg:
            return {
                t: sorted(map(repr, pg.execute(f"SELECT * FROM {t}").fetchall()))
                for t in _PG_TABLES
            }
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
