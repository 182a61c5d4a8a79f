"""Exporting a shared brain: every export format says of it what it says of a file of it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.engines import copy_brain, export_store
from memgui.core.io import EXPORT_FORMATS, ExportOptions
from memgui.core.progress import Progress, run_to_end
from memgui.core.shared_brain import SharedBrain
from tests.support.brain_rows import file_rows

pytestmark = pytest.mark.slow  # a real server

# Written at export time, so never the same twice: left out of the comparison.
_MOMENT_KEYS = frozenset({"exported_at", "exportedAt"})


def _without_moments(value: object) -> object:
    """An export's document without its time, and its lists of rows by id: a file lists
    rows in the order they were written (rowid), which PostgreSQL does not keep; a copy
    back writes them by creation time."""
    if isinstance(value, dict):
        return {k: _without_moments(v) for k, v in value.items() if k not in _MOMENT_KEYS}
    if isinstance(value, list):
        rows = [_without_moments(v) for v in value]
        if all(isinstance(row, dict) and "id" in row for row in rows):
            return sorted(rows, key=lambda row: str(row["id"]))  # type: ignore[index]
        return rows
    return value


def _written(path: Path, fmt: str) -> object:
    """What an export wrote, comparable between two exports."""
    if fmt == "sqlite":
        return file_rows(path, "brain")
    if fmt == "json":
        return _without_moments(json.loads(path.read_text()))
    if fmt == "jsonl":
        return _without_moments([json.loads(line) for line in path.read_text().splitlines()])
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_every_format_exports_the_shared_brain_as_the_file(
    fmt: str,
    agentos_copy: Path,
    pg_address: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    staging = tmp_path / "staging"  # where the shared brain's file is made, then removed
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))
    pg = pg_address.replace("brain_id=team", "brain_id=brain")
    run_to_end(copy_brain(agentos_copy, pg))
    # The file to compare with is the brain copied back: an AgentOS file exports AgentOS's
    # columns alone (it is never migrated by a copy), a memgui file memgui's too.
    back = tmp_path / "back.sqlite"
    run_to_end(copy_brain(pg, back))
    name = {"sqlite": "out.sqlite", "json": "out.json", "jsonl": "out.jsonl"}.get(fmt, "out")
    options = ExportOptions(include_embeddings=True)
    for side in ("file", "pg"):
        (tmp_path / side).mkdir()
    with Brain.open(back, "brain", create=False) as brain:
        from_file = run_to_end(export_store(brain, tmp_path / "file" / name, fmt, options))
    seen: list[Progress] = []
    with SharedBrain.open(pg) as shared:
        from_pg = run_to_end(
            export_store(shared, tmp_path / "pg" / name, fmt, options), seen.append
        )
    assert from_pg.exported == from_file.exported
    assert set(from_pg.refused) == set(from_file.refused)
    assert from_pg.exported + len(from_pg.refused) > 0
    assert seen[0].message == "copying traces"
    assert _written(tmp_path / "pg" / name, fmt) == _written(tmp_path / "file" / name, fmt)
    assert list(staging.iterdir()) == []
