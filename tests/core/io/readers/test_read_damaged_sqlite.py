"""A damaged SQLite file given as an import source: the source cannot be read, the brain is
fine. Its damage is named, the rows read before it stay, and a row of bad text is refused
alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.io.records import ERROR, NEW, TRACE, UNREAD
from tests.support.cli import run_text
from tests.support.paths import AGENTOS
from tests.support.planning import planned


def overwrite_page(path: Path, page: int, data: bytes) -> None:
    connection = apsw.Connection(str(path))
    size = connection.execute("PRAGMA page_size").fetchall()[0][0]
    connection.close()
    with open(path, "r+b") as file:
        file.seek((page - 1) * size)
        file.write(data)


def pages(path: Path, table: str, kind: str) -> list[int]:
    connection = apsw.Connection(str(path))
    try:
        found = connection.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ? ORDER BY pageno",
            (table, kind),
        ).fetchall()
    finally:
        connection.close()
    return [page for (page,) in found]


@pytest.fixture
def damaged_export(tmp_path: Path) -> Path:
    """The AgentOS fixture export with its traces table's root page overwritten."""
    source = tmp_path / "src.sqlite"
    shutil.copyfile(AGENTOS / "export.sqlite", source)
    source.chmod(0o600)
    connection = apsw.Connection(str(source))
    (root,) = connection.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'memory_traces'"
    ).fetchall()[0]
    connection.close()
    overwrite_page(source, root, b"\x0d\xff\xff\xff\xff\xff\xff\xff")
    return source


def test_a_damaged_source_cannot_be_read(brain: Brain, damaged_export: Path) -> None:
    the_plan = planned(brain, damaged_export, "sqlite")  # raised apsw.CorruptError
    assert the_plan.unreadable == f"{damaged_export}: is damaged: database disk image is malformed"


def test_the_command_says_it_cannot_read_the_source(
    capsys: pytest.CaptureFixture[str], brain_path: Path, damaged_export: Path
) -> None:
    result = run_text(capsys, brain_path, "import", str(damaged_export), "--dry-run")
    assert result.code == 2  # was 1: "import failed due to a storage error"
    assert result.err.startswith(f"memgui: cannot read {damaged_export}: ")
    assert "is damaged: database disk image is malformed" in result.err
    assert "storage error" not in result.err


def test_a_schema_that_is_not_utf8_cannot_be_read(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "schema.sqlite"
    with Brain.open(source) as other:
        other.add("a memory")
    connection = apsw.Connection(str(source))
    connection.execute("CREATE TABLE extra (label TEXT)")
    connection.execute("PRAGMA writable_schema = ON")
    connection.execute(  # a column name SQLite parses, and that is not UTF-8
        "UPDATE sqlite_master SET sql = replace(sql, 'label', CAST(x'ff' AS TEXT)) "
        "WHERE name = 'extra'"
    )
    connection.close()
    the_plan = planned(brain, source, "sqlite")  # raised UnicodeDecodeError
    assert the_plan.unreadable == (
        f"{source}: is damaged: its schema is not UTF-8 text (invalid start byte at byte 0)"
    )


def test_damage_met_midway_keeps_the_rows_before_it(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "midway.sqlite"
    with Brain.open(source) as other:
        other.add("the first memory")
    connection = apsw.Connection(str(source))
    connection.execute(  # its title on overflow pages, which counting rows never reads
        "INSERT INTO conversations VALUES ('midway', 'c1', ?, 1, 1, '{}')", ("t" * 20_000,)
    )
    connection.close()
    overflow = pages(source, "conversations", "overflow")
    overwrite_page(source, overflow[0], b"\xff\xff\xff\xff")  # points past the file
    the_plan = planned(brain, source, "sqlite")
    read = [(r.kind, r.verdict) for r in the_plan.records]
    assert read == [(TRACE, NEW), (UNREAD, ERROR)]
    assert the_plan.records[0].fields["content"] == "the first memory"
    assert the_plan.records[1].reason == (
        "is damaged: database disk image is malformed; the row before it was read"
    )
    assert the_plan.unreadable is None  # what was read can be imported


def test_a_row_of_text_that_is_not_utf8_is_an_error_alone(brain: Brain, tmp_path: Path) -> None:
    source = tmp_path / "text.sqlite"
    with Brain.open(source) as other:
        for text in ("first", "second", "third"):
            other.add(f"the {text} memory")
    connection = apsw.Connection(str(source))
    connection.execute(
        "UPDATE memory_traces SET content = CAST(x'6261647fff' AS TEXT) "
        "WHERE content = 'the second memory'"
    )
    connection.close()
    the_plan = planned(brain, source, "sqlite")
    assert [(r.source.split("#")[1], r.verdict) for r in the_plan.records] == [
        (f"memory_traces/{the_plan.records[0].fields['id']}", NEW),
        ("memory_traces[1]", ERROR),
        (f"memory_traces/{the_plan.records[2].fields['id']}", NEW),
    ]
    assert (
        the_plan.records[1].reason == "holds text that is not UTF-8 (invalid start byte at byte 4)"
    )
