"""The CSV reader: header rules, cells, refusals and errors, row by row."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memgui.core.io.readers.csv_reader import read_csv
from memgui.core.io.records import ERROR, NEW, REFUSED, SKIPPED, TRACE, UNREAD, ImportRecord
from memgui.core.model import TYPES
from memgui.core.progress import Progress
from tests.support.paths import FIXTURES, SHARED

FIXTURE = FIXTURES / "io" / "csv" / "traces.csv"


def rows(path: Path, **options: object) -> list[ImportRecord]:
    return [e for e in read_csv(path, options=options or None) if isinstance(e, ImportRecord)]


def at(records: list[ImportRecord], line: int) -> ImportRecord:
    (found,) = [r for r in records if r.source.endswith(f":{line}")]
    return found


def write(tmp_path: Path, data: str | bytes) -> Path:
    path = tmp_path / "in.csv"
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8", newline="")
    return path


def test_every_row_of_the_fixture_is_accounted_for() -> None:
    records = rows(FIXTURE)
    verdicts = [(r.source, r.verdict, r.problem_field) for r in records]
    assert verdicts == [
        ("traces.csv:2", NEW, None),
        ("traces.csv:3", NEW, None),
        ("traces.csv:6", SKIPPED, "content"),  # blank: skipped (seed 000)
        ("traces.csv:7", ERROR, "metadata"),
        ("traces.csv:8", ERROR, "metadata"),
        ("traces.csv:9", REFUSED, "type"),
        ("traces.csv:10", REFUSED, "created_at"),
        ("traces.csv:11", NEW, None),
        ("traces.csv:13", NEW, None),  # the blank line 12 is no row
    ]


def test_bom_and_header_case_are_ignored_and_cells_map_to_fields() -> None:
    first = at(rows(FIXTURE), 2).fields
    assert first["content"] == "First row, plain"
    assert (first["type"], first["category"], first["strength"]) == ("semantic", "DECISION", 0.5)
    assert first["tags"] == ["alpha", "beta"] and first["created_at"] == 1700000000000
    assert first["scope_id"] == "team-1" and first["deleted"] is False
    assert first["metadata"]["source"] == "sheet" and first["metadata"]["scopeId"] == "team-1"
    digest = hashlib.sha256(b"First row, plain").hexdigest()
    assert first["metadata"]["import_hash"] == digest
    assert "colour" not in first and "colour" not in first["metadata"]


def test_a_quoted_multi_line_cell_with_crlf_reads_as_lf() -> None:
    fields = at(rows(FIXTURE), 3).fields
    assert fields["content"] == 'A cell over\nthree lines\nwith "quotes"'
    assert fields["tags"] == ["json", "tags"]
    assert fields["created_at"] == 1714564800000  # 2024-05-01T12:00:00Z, not "now"


def test_refusals_and_errors_name_field_reason_and_value() -> None:
    records = rows(FIXTURE)
    assert at(records, 6).reason.startswith("content is blank")
    assert at(records, 7).value == "{not json" and "not valid JSON" in at(records, 7).reason
    assert "must be a JSON object (got list)" in at(records, 8).reason
    assert at(records, 9).value == "dream"
    assert at(records, 9).reason.startswith("type must be one of")
    assert at(records, 10).value == "next tuesday"


def test_metadata_scope_id_wins_over_the_cell_and_comma_tags_split() -> None:
    fields = at(rows(FIXTURE), 11).fields
    assert fields["scope_id"] == "from-meta" and fields["metadata"]["scopeId"] == "from-meta"
    assert fields["tags"] == ["one", "two"] and fields["deleted"] is True


def test_unicode_row_reads_intact() -> None:
    assert at(rows(FIXTURE), 13).fields["content"] == "Ünïcode row: 東京 → Москва ✈️"


def test_agentos_csv_input() -> None:
    path = SHARED / "fixtures" / "agentos" / "csv-input.csv"
    if not path.is_file():
        pytest.skip("shared AgentOS fixtures not present")
    records = rows(path)
    assert len(records) == 9 and all(r.kind == TRACE for r in records)
    assert [r.verdict for r in records].count(NEW) == 7
    assert at(records, 7).verdict == SKIPPED  # the "   " content
    assert at(records, 8).verdict == ERROR and at(records, 8).problem_field == "metadata"
    multi = at(records, 3).fields
    assert multi["content"] == 'CSV multi-line:\nstep one\nstep two, with a comma and "quotes"'
    assert multi["tags"] == ["csv", "multi line"] and multi["scope"] == "persona"
    assert at(records, 12).fields["deleted"] is True and at(records, 12).fields["strength"] == 0.4
    assert at(records, 9).fields["tags"] == ["csv", "travel"]


def test_missing_content_column_is_one_file_error_and_content_column_option_reads_it() -> None:
    path = SHARED / "corpora" / "csv" / "useless-facts__facts.csv"
    if not path.is_file():
        pytest.skip("shared corpora not present")
    (problem,) = rows(path)
    assert problem.kind == UNREAD and problem.verdict == ERROR
    assert problem.problem_field == "content" and "id, text" in problem.reason
    events = list(read_csv(path, options={"content_column": "Text"}))
    records = [e for e in events if isinstance(e, ImportRecord)]
    assert len(records) == 3000 and all(r.verdict == NEW for r in records)
    assert records[0].fields["id"] == "1" and records[0].fields["content"].startswith("The plastic")
    assert isinstance(events[-1], Progress) and events[-1].done == 3000


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"\xef\xbb\xbf\r\n\r\n", "empty"),
        (b"Content,tags\nok,a\ncaf\xe9,b\n", "not UTF-8"),
    ],
)
def test_files_that_cannot_be_read_say_why(tmp_path: Path, data: bytes, reason: str) -> None:
    records = rows(write(tmp_path, data))
    assert records[-1].verdict == ERROR and reason in records[-1].reason


def test_cells_that_do_not_parse_are_refused(tmp_path: Path) -> None:
    data = (
        "content,strength,retrieval_count,deleted,tags,scope\n"
        "a,high,,,,\n"
        "b,,-1,,,\n"
        "c,,,maybe,,\n"
        'd,,,,"[1,2]",\n'
        "e,,,,,galaxy\n"
        "f,,,,,,extra\n"
        "g,1,2,yes,[],thread\n"
    )
    records = rows(write(tmp_path, data))
    assert [(r.verdict, r.problem_field) for r in records] == [
        (REFUSED, "strength"),
        (REFUSED, "retrieval_count"),
        (REFUSED, "deleted"),
        (REFUSED, "tags[0]"),
        (REFUSED, "scope"),
        (ERROR, None),
        (NEW, None),
    ]
    last = records[-1].fields
    assert (last["retrieval_count"], last["deleted"], last["scope"]) == (2, True, "thread")


def test_rows_stream_and_the_reader_can_be_closed(tmp_path: Path) -> None:
    path = write(tmp_path, "content\n" + "".join(f"row {i}\n" for i in range(1000)))
    events = read_csv(path)
    assert isinstance(next(events), Progress)
    assert next(events).fields["content"] == "row 0"
    events.close()
    assert list(events) == []


def test_every_refused_reason_names_its_field_and_value() -> None:
    refused = [r for r in rows(FIXTURE) if r.verdict == REFUSED]
    assert [(r.problem_field, r.reason) for r in refused] == [
        ("type", f"type must be one of {', '.join(TYPES)} (got 'dream')"),
        (
            "created_at",
            "created_at must be epoch milliseconds or an ISO 8601 date (got 'next tuesday')",
        ),
    ]
