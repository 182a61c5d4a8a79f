"""The strict agent-memory JSONL v1 reader."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers.jsonl_reader import read_jsonl, stability_ms
from memgui.core.io.readers.text_utils import content_hash
from memgui.core.io.records import (
    DUPLICATE,
    ERROR,
    LINE,
    NEW,
    REFUSED,
    SKIPPED,
    UNREAD,
    ImportRecord,
)
from memgui.core.model import DAY_MS
from memgui.core.progress import Progress
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "jsonl"
VALID = FIXTURES / "valid.jsonl"


def records(path: Path) -> list[ImportRecord]:
    return [event for event in read_jsonl(path) if isinstance(event, ImportRecord)]


def valid_rows() -> list[dict]:
    return [json.loads(line) for line in VALID.read_text(encoding="utf-8").splitlines()]


def write_rows(tmp_path: Path, rows: list[object]) -> Path:
    path = tmp_path / "memories.jsonl"
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_valid_file_reads_every_memory_with_its_verdict() -> None:
    by_line = {r.source.rsplit(":", 1)[1]: r for r in records(VALID)}
    assert [by_line[str(n)].verdict for n in range(2, 7)] == [NEW, SKIPPED, NEW, DUPLICATE, NEW]
    decision = by_line["2"]
    assert decision.fields["content"] == "We chose io.github.unityinflow as the Maven group."
    assert decision.fields["category"] == "DECISION"
    assert decision.fields["type"] == "semantic"
    assert decision.fields["scope"] == "user"
    assert decision.fields["scope_id"] == "kore-runtime"
    assert decision.fields["tags"] == ["maven", "release"]
    assert decision.fields["created_at"] == 1767225600 * 1000
    assert decision.fields["retrieval_count"] == 3
    assert decision.fields["metadata"]["source"] == "cli"
    assert decision.fields["id"].startswith("mt_")
    # last_accessed is refreshed to the import time (fresh, not months stale)
    assert decision.fields["last_accessed"] > 1767312000 * 1000
    assert by_line["6"].fields["expires_at"] == 4102444800 * 1000
    assert by_line["3"].fields["scope_id"] == ""  # null scope: global
    assert "source" not in by_line["3"].fields["metadata"]


def test_stability_makes_strength_equal_agent_memory_decay() -> None:
    assert stability_ms("TODO") == round(30 * DAY_MS / math.log(2))
    assert stability_ms("ARCHITECTURE") == round(180 * DAY_MS / math.log(2))
    # after one half-life the core's strength exp(-t / stability) is exactly one half
    assert math.exp(-30 * DAY_MS / stability_ms("ERROR")) == pytest.approx(0.5)
    assert math.exp(-180 * DAY_MS / stability_ms("DECISION")) == pytest.approx(0.5)
    by_line = {r.source.rsplit(":", 1)[1]: r for r in records(VALID)}
    assert by_line["2"].fields["stability_ms"] == stability_ms("DECISION")
    assert by_line["4"].fields["stability_ms"] == stability_ms("PATTERN")


def test_duplicates_expired_rows_and_links_are_remapped() -> None:
    by_line = {r.source.rsplit(":", 1)[1]: r for r in records(VALID)}
    first, expired, pattern, twin, error = (by_line[str(n)] for n in range(2, 7))
    assert twin.existing_id == first.fields["id"]
    assert "line 2" in twin.reason
    assert expired.problem_field == "expires_at" and "expired" in expired.reason
    assert first.fields["metadata"]["import_hash"] == content_hash(first.fields["content"])
    assert first.fields["metadata"]["scopeId"] == "kore-runtime"
    # 1->3 kept; 1->4 collapsed into one memory (dropped); 2->3 touches an expired row
    # (dropped); 4->5 moves to the memory 4 repeats.
    ends = sorted((first.fields["id"], pattern.fields["id"]))  # relates_to: smaller id first
    every_link = {
        (link["from_id"], link["to_id"], link["kind"]) for r in (first, pattern) for link in r.links
    }
    assert every_link == {
        (ends[0], ends[1], "relates_to"),
        (first.fields["id"], error.fields["id"], "supersedes"),
    }
    every_link = [link for r in (first, pattern, error) for link in r.links]
    assert all(link["created_at"] % 1000 == 0 for link in every_link)
    assert not twin.links and not expired.links


def test_progress_reports_expired_and_dropped_counts() -> None:
    last = [e for e in read_jsonl(VALID) if isinstance(e, Progress)][-1]
    assert "1 expired" in last.message and "2 links dropped" in last.message


def test_newer_format_version_is_refused_whole() -> None:
    (record,) = records(FIXTURES / "newer_version.jsonl")
    assert record.verdict == REFUSED
    assert record.problem_field == "version" and record.value == 2
    assert "format version 2" in record.reason and "up to version 1" in record.reason


def test_unknown_field_rejects_the_file_in_one_record_per_defect_and_one_summary() -> None:
    defect, summary = records(FIXTURES / "unknown_field.jsonl")
    assert defect.source.endswith(":4") and defect.kind == LINE and defect.verdict == ERROR
    assert defect.reason.startswith("line 4: unknown field `ttl`")
    assert defect.problem_field == "ttl"
    # the other four memories once, not one error each "rejected as a whole"
    assert summary.source.endswith("unknown_field.jsonl") and summary.verdict == ERROR
    assert summary.kind == UNREAD and not summary.fields
    assert summary.reason == (
        "4 other memories not imported: a file with a defect is rejected whole "
        "(1 defect, the first on line 4)"
    )


def _mutate(rows: list[dict], line: int, change: dict | str) -> list[object]:
    out: list[object] = [dict(r) for r in rows]
    if isinstance(change, str):
        out[line - 1] = change
    else:
        out[line - 1].update(change)  # type: ignore[union-attr]
        for key, value in change.items():
            if value is ...:
                del out[line - 1][key]  # type: ignore[union-attr]
    return out


DEFECTS = [
    (1, {"format": "other-export"}, "line 1: format must be agent-memory-export"),
    (1, {"version": 0}, "line 1: version must be a positive integer"),
    (1, {"version": "1"}, "line 1: `version` must be an integer (got a string)"),
    (1, {"record": "memory"}, "line 1: the first line must be the header record"),
    (1, {"exported_at": ...}, "line 1: missing field `exported_at`"),
    (3, "not json at all", "line 3: not valid JSON"),
    (3, "[1, 2]", "line 3: not a JSON object (got an array)"),
    (3, {"record": "memo"}, "line 3: unknown record tag 'memo'"),
    (3, {"type": "decision"}, "line 3: unknown type 'decision'"),
    (3, {"content": "   "}, "line 3: content must not be empty"),
    (3, {"content": "\u3000\n"}, "line 3: content must not be empty"),
    (3, {"content": None}, "line 3: `content` must be a string (got null)"),
    (3, {"access_count": True}, "line 3: `access_count` must be an integer (got a boolean)"),
    (3, {"source": 7}, "line 3: `source` must be a string or null (got an integer)"),
    (3, {"access_count": -1}, "line 3: access_count must be between 0 and 2**63 - 1"),
    (3, {"created_at": 1.5}, "line 3: `created_at` must be an integer (got a number)"),
    # Read by the plan, these died in the commit: milliseconds past SQLite's 64 bits.
    (3, {"created_at": 2**63 - 1}, "line 3: `created_at` must be seconds within ±2**63 millis"),
    (3, {"last_accessed": -(2**62)}, "line 3: `last_accessed` must be seconds within ±2**63"),
    (3, {"expires_at": 2**60}, "line 3: `expires_at` must be seconds within ±2**63"),
    (3, {"access_count": 2**63}, "line 3: access_count must be between 0 and 2**63 - 1"),
    (7, {"created_at": 2**62}, "line 7: `created_at` must be seconds within ±2**63"),
    (3, {"tags": ["ok", 3]}, "line 3: tags must be an array of strings"),
    # Read by the plan, refused by the commit: memgui holds no blank tag.
    (3, {"tags": ["ok", ""]}, "line 3: tags[1] must be a non-empty string (got '')"),
    (3, {"tags": [" "]}, "line 3: tags[0] must be a non-empty string (got ' ')"),
    (3, {"key": 1}, "line 3: duplicate key 1 (first on line 2)"),
    (7, {"kind": "likes"}, "line 7: unknown kind 'likes'"),
    (7, {"to": 1}, "line 7: a link from key 1 to itself"),
    (7, {"to": 99}, "line 7: link to key 99, which no memory has"),
    (3, {"record": "header"}, "line 3: a second header record"),
]


@pytest.mark.parametrize(("line", "change", "message"), DEFECTS)
def test_each_defect_names_its_line_and_nothing_is_importable(
    tmp_path: Path, line: int, change: dict | str, message: str
) -> None:
    path = write_rows(tmp_path, _mutate(valid_rows(), line, change))
    result = records(path)
    assert result and all(r.verdict == ERROR and r.kind in (LINE, UNREAD) for r in result)
    *defects, summary = result
    reasons = [r.reason for r in defects]
    assert any(reason.startswith(message) for reason in reasons), reasons
    assert len(reasons) == len(set(reasons))  # each defect once
    left = 5 if line in (1, 7) else 4  # the memories whose own line has no defect
    assert summary.reason.startswith(f"{left} other memories not imported")


@pytest.mark.parametrize("bad", ["not json at all", '{"record": "memory", broken', "[1, 2]",
                                 '{"record": "memo", "key": 2}'])  # fmt: skip
def test_an_unreadable_line_is_one_defect_with_no_count_mismatch_on_top(
    tmp_path: Path, bad: str
) -> None:
    # Line 3 is memory key 2, which a link names: what the line held cannot be known, so
    # neither the header's counts nor the link to key 2 are held against the file.
    path = write_rows(tmp_path, _mutate(valid_rows(), 3, bad))
    defect, summary = records(path)
    assert defect.source.endswith(":3") and defect.reason.startswith("line 3: ")
    assert (defect.kind, defect.verdict, summary.verdict) == (LINE, ERROR, ERROR)


def test_counts_must_match_the_header(tmp_path: Path) -> None:
    rows = valid_rows()
    path = write_rows(tmp_path, rows[:-1])  # one link fewer than exported_links says
    reasons = [r.reason for r in records(path) if r.kind == LINE]
    assert reasons == ["line 1: exported_links is 4 but the file holds 3"]


def test_empty_file_and_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    (record,) = records(empty)
    assert record.verdict == ERROR and "header record is missing" in record.reason
    with pytest.raises(InvalidArgument) as caught:
        records(tmp_path / "absent.jsonl")
    assert caught.value.field == "path"


def test_optional_fields_may_be_omitted(tmp_path: Path) -> None:
    rows = valid_rows()[:2]
    rows[0].update(exported_rows=1, exported_links=0)
    for key in ("source", "scope", "expires_at"):
        del rows[1][key]
    (record,) = records(write_rows(tmp_path, rows))
    assert record.verdict == NEW
    assert record.fields["scope_id"] == "" and record.fields["expires_at"] is None


def test_reading_can_stop_between_events() -> None:
    events = read_jsonl(VALID)
    assert isinstance(next(events), Progress | ImportRecord)
    events.close()  # a cancelled job closes the generator; nothing is left open


def test_each_memory_gets_its_own_fresh_id(tmp_path: Path) -> None:
    rows = valid_rows()
    header, memory = rows[0], rows[1]
    many = [dict(memory, key=k, content=f"memory {k}") for k in range(50)]
    path = write_rows(tmp_path, [dict(header, exported_rows=50, exported_links=0), *many])
    first = [r.fields["id"] for r in records(path)]
    again = [r.fields["id"] for r in records(path)]
    shape = re.compile(r"mt_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
    assert all(shape.fullmatch(i) for i in first), first[:3]
    assert len(set(first)) == 50 and first == sorted(first)  # in order: the id index appends
    assert not set(first) & set(again)  # another read, other ids
