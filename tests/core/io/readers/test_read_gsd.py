"""The GSD STATE.md reader: sections, fences, the deferred table and the byte cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers.gsd_reader import read_gsd
from memgui.core.io.records import NEW, REFUSED, TRACE, ImportRecord
from memgui.core.progress import Progress
from tests.support.paths import FIXTURES

STATE = FIXTURES / "io" / "gsd" / ".planning" / "STATE.md"


def records_of(path: Path, **options: object) -> list[ImportRecord]:
    return [e for e in read_gsd(path, options=options or None) if isinstance(e, ImportRecord)]


def write_state(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "STATE.md"
    path.write_text(text, encoding="utf-8", newline="")
    return path


def test_every_item_of_the_fixture_is_accounted_for() -> None:
    records = records_of(STATE)
    assert all(r.kind == TRACE for r in records)
    listed = [(r.source, r.verdict, r.fields.get("category")) for r in records]
    assert listed == [
        ("STATE.md:27", NEW, "DECISION"),
        ("STATE.md:28", NEW, "DECISION"),
        ("STATE.md:29", NEW, "DECISION"),
        ("STATE.md:37", NEW, "TODO"),
        ("STATE.md:41", NEW, "CONSTRAINT"),
        ("STATE.md:42", REFUSED, None),  # a lone "-"
        ("STATE.md:55", NEW, "TODO"),
        ("STATE.md:56", NEW, "TODO"),
        ("STATE.md:57", REFUSED, None),  # a row of two cells
    ]


def test_fields_tags_and_scope_of_the_items() -> None:
    records = [r for r in records_of(STATE) if r.verdict == NEW]
    first = records[0].fields
    assert first["content"] == "[Roadmap]: Readers yield records and never touch a brain"
    assert (first["type"], first["scope"], first["scope_id"]) == ("semantic", "user", "gsd")
    assert first["metadata"]["source"] == "gsd-state" and first["metadata"]["scopeId"] == "gsd"
    assert [r.fields["tags"] for r in records].count(["gsd"]) == 5
    deferred = [r.fields for r in records if "deferred" in r.fields["tags"]]
    assert [d["content"] for d in deferred] == [
        "JSONL v2 records \u2014 Deferred to v2",
        "Canvas files \u2014 Later",
    ]
    assert all(d["tags"] == ["gsd", "deferred"] and d["type"] == "prospective" for d in deferred)
    pinned, todo = records[0].fields["stability_ms"], deferred[0]["stability_ms"]
    assert pinned == pytest.approx(6 * todo, rel=1e-9)  # 180-day vs 30-day half-life


def test_fences_unknown_sections_prose_and_none_yet_are_ignored() -> None:
    contents = " ".join(r.fields.get("content", "") for r in records_of(STATE))
    for absent in ("fenced bullet", "star bullet", "plus bullet", "None yet.", "does not know"):
        assert absent not in contents


def test_options_override_scope_and_scope_id() -> None:
    records = records_of(STATE, scope="organization", scope_id="memgui")
    assert {(r.fields["scope"], r.fields["scope_id"]) for r in records if r.verdict == NEW} == {
        ("organization", "memgui")
    }
    with pytest.raises(InvalidArgument) as raised:
        records_of(STATE, scope="galaxy")
    assert raised.value.field == "scope"


def test_the_cap_is_8192_bytes_of_utf8(tmp_path: Path) -> None:
    fits = "é" * 4096  # 8,192 bytes, 4,096 characters
    too_long = "é" * 4096 + "x"
    path = write_state(tmp_path, f"### Decisions\n- {fits}\n- {too_long}\n")
    kept, refused = records_of(path)
    assert kept.verdict == NEW and kept.fields["content"] == fits
    assert refused.verdict == REFUSED and refused.problem_field == "content"
    assert refused.value == 8193 and "8192 bytes" in refused.reason


def test_tilde_fences_are_not_fences_and_crlf_reads(tmp_path: Path) -> None:
    text = "## Pending Todos\r\n~~~\r\n- inside tildes counts\r\n~~~\r\n  - indented bullet  \r\n"
    records = records_of(write_state(tmp_path, text))
    assert [r.fields["content"] for r in records] == ["inside tildes counts", "indented bullet"]


def test_heading_text_must_match_exactly(tmp_path: Path) -> None:
    text = "### decisions\n- lower case heading\n#### Decisions\n- any level works\n"
    records = records_of(write_state(tmp_path, text))
    assert [r.fields["content"] for r in records] == ["any level works"]


def test_progress_brackets_the_records() -> None:
    events = list(read_gsd(STATE))
    assert isinstance(events[0], Progress) and isinstance(events[-1], Progress)
    assert events[-1].done == events[-1].total == 1


def test_every_refused_reason_names_its_field() -> None:
    refused = [r for r in records_of(STATE) if r.verdict == REFUSED]
    assert [r.reason for r in refused] == [
        "content is empty: the bullet holds no text",
        "content: a deferred item needs 3 cells (got 2)",
    ]
