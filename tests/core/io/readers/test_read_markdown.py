"""The Markdown folder reader: front matter, defaults, refusals, streaming."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers.markdown_reader import read_markdown
from memgui.core.io.readers.text_utils import normalize_newlines
from memgui.core.io.records import ERROR, NEW, REFUSED, SKIPPED, TRACE, UNREAD, ImportRecord
from memgui.core.model import TYPES
from memgui.core.progress import Progress
from tests.support.paths import SHARED, TESTS

FIXTURES = TESTS / "fixtures" / "io"
AGENTOS = SHARED / "fixtures" / "agentos"
KEPANO = SHARED / "corpora" / "markdown" / "kepano-obsidian"


def read_all(path: Path, **options: object) -> tuple[list[Progress], list[ImportRecord]]:
    progress, records = [], []
    for event in read_markdown(path, options=options or None):
        (progress if isinstance(event, Progress) else records).append(event)
    return progress, records


def by_file(records: list[ImportRecord]) -> dict[str, ImportRecord]:
    return {r.source.rsplit(":", 1)[0]: r for r in records if r.kind == TRACE}


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def test_agentos_export_maps_back_to_its_traces() -> None:
    if not AGENTOS.is_dir():
        pytest.skip("shared AgentOS fixtures not present")
    traces = {t["id"]: t for t in json.loads((AGENTOS / "export.json").read_text())["traces"]}
    _, records = read_all(AGENTOS / "markdown")
    assert len(records) == 45 and all(r.kind == TRACE and r.verdict == NEW for r in records)
    for record in records:
        trace = traces[record.fields["id"]]
        assert record.fields["type"] == trace["type"]
        assert record.fields["scope"] == trace["scope"]
        assert record.fields["tags"] == json.loads(trace["tags"])
        assert record.fields["created_at"] == trace["created_at"]
        assert record.fields["strength"] == pytest.approx(trace["strength"])
        if "fake front-matter" not in trace["content"]:  # the peer's export loses that one
            assert record.fields["content"] == normalize_newlines(trace["content"]).strip()
        metadata = record.fields["metadata"]
        assert metadata["source_file"].endswith(f"/{trace['id']}.md")
        digest = hashlib.sha256(record.fields["content"].encode()).hexdigest()
        assert metadata["import_hash"] == digest


def test_crlf_and_cr_read_as_lf(tmp_path: Path) -> None:
    write(tmp_path, "cr.md", b"---\rid: cr\r---\rone\rtwo\r")
    _, records = read_all(FIXTURES / "vault" / "CRLF note.md")
    assert records[0].fields["content"] == "First line saved on Windows.\nSecond line."
    assert records[0].fields["id"] == "crlf-note"
    _, records = read_all(tmp_path)
    assert records[0].fields["content"] == "one\ntwo" and records[0].fields["id"] == "cr"


def test_a_js_block_gives_no_fields_and_never_runs() -> None:
    _, records = read_all(FIXTURES / "vault" / "JS front matter.md")
    (record,) = records
    assert record.verdict == NEW and "id" not in record.fields
    assert record.fields["type"] == "episodic"
    assert record.fields["content"] == "This body follows a JavaScript block that is never run."
    assert "js" in record.reason
    assert record.source == "JS front matter.md:4"


def test_template_front_matter_is_refused_with_the_parser_reason() -> None:
    _, records = read_all(FIXTURES / "vault" / "Bad front matter.md")
    (record,) = records
    assert record.verdict == REFUSED and record.problem_field == "front_matter"
    assert "not valid YAML" in record.reason
    assert record.value == "created: {{date}}"
    assert record.source == "Bad front matter.md:3"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\nid: x\nno closing line\n", "never closed"),
        ("---\n- a\n- b\n---\nbody\n", "mapping"),
        ("---\ncreated: 2023-02-30\n---\nbody\n", "could not be read"),
    ],
)
def test_unreadable_notes_are_refused(tmp_path: Path, text: str, reason: str) -> None:
    write(tmp_path, "note.md", text)
    _, records = read_all(tmp_path)
    (record,) = records
    assert record.verdict == REFUSED and reason in record.reason


def test_a_blank_note_is_skipped_not_refused(tmp_path: Path) -> None:
    # Seed 000: `skipped` counts "a Markdown or Obsidian note whose body is blank".
    write(tmp_path, "note.md", "---\nid: x\n---\n  \n\n")
    _, records = read_all(tmp_path)
    (record,) = records
    assert (record.verdict, record.problem_field) == (SKIPPED, "content")
    assert record.reason == "content is blank: the note holds no text to import"


def test_a_refused_note_names_its_field_in_the_reason(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\nid: [1, 2]\n---\nbody\n")
    write(tmp_path, "b.md", "---\nid: b\ntype: dream\n---\nbody\n")
    write(tmp_path, "c.md", "---\nid: c\ntags: [ok, 3]\n---\nbody\n")
    _, records = read_all(tmp_path)
    assert [(r.problem_field, r.reason) for r in records] == [
        ("id", "id must be a text (got [1, 2])"),
        ("type", f"type must be one of {', '.join(TYPES)} (got 'dream')"),
        ("tags[1]", "tags[1] must be a non-empty string (got 3)"),
    ]


def test_a_note_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "latin1.md", "caf\xe9".encode("latin-1"))
    _, records = read_all(tmp_path)
    assert records[0].verdict == ERROR and "not UTF-8" in records[0].reason


def test_an_exported_note_with_a_bad_field_is_refused_naming_field_and_line(
    tmp_path: Path,
) -> None:
    write(tmp_path, "a.md", "---\nid: a\ntype: dream\n---\nbody\n")
    write(tmp_path, "b.md", "---\nid: b\ncreatedAt: next tuesday\n---\nbody\n")
    write(tmp_path, "c.md", "---\nid: c\nstrength: 3\n---\nbody\n")
    _, records = read_all(tmp_path)
    problems = {r.source: (r.verdict, r.problem_field, r.value) for r in records}
    assert problems == {
        "a.md:3": (REFUSED, "type", "dream"),
        "b.md:3": (REFUSED, "createdAt", "next tuesday"),
        "c.md:3": (REFUSED, "strength", 3),
    }


def test_a_plain_note_keeps_its_own_properties(tmp_path: Path) -> None:
    write(tmp_path, "book.md", '---\ntype: "[[Books]]"\nrating: 4\nstart: 2024-05-01\n---\nGood.\n')
    _, records = read_all(tmp_path)
    fields = records[0].fields
    assert records[0].verdict == NEW and fields["type"] == "episodic"
    assert fields["metadata"]["front_matter"] == {
        "type": "[[Books]]",
        "rating": 4,
        "start": "2024-05-01",
    }


def test_created_dates_a_note_without_created_at_and_is_never_refused(tmp_path: Path) -> None:
    write(tmp_path, "obsidian.md", "---\ncreated: 2024-05-01\n---\nA day note.\n")
    write(tmp_path, "dendron.md", "---\nid: d1\ncreated: 1636500326451\n---\nA page.\n")
    write(tmp_path, "odd.md", "---\nid: o1\ncreated: soon\n---\nLater.\n")
    _, records = read_all(tmp_path)
    notes = by_file(records)
    assert notes["obsidian.md"].fields["created_at"] == 1714521600000
    assert notes["dendron.md"].fields["created_at"] == 1636500326451
    odd = notes["odd.md"]
    assert odd.verdict == NEW and "created_at" not in odd.fields
    assert odd.fields["metadata"]["front_matter"] == {"created": "soon"}


def test_front_matter_fields_and_defaults(tmp_path: Path) -> None:
    text = (
        "---\nid: n1\ntype: semantic\nscope: persona\nscopeId: ada\nturnUserId: bob\n"
        "category: DECISION\ntags: [a, b, a]\nstrength: 0.25\ncreatedAt: 2024-01-02T03:04:05Z\n"
        "---\n\n  The body.  \n\n"
    )
    write(tmp_path, "n1.md", text)
    write(tmp_path, "bare.md", "Just text, tags: none.\n")
    _, records = read_all(tmp_path)
    full, bare = by_file(records)["n1.md"].fields, by_file(records)["bare.md"].fields
    assert full["content"] == "The body."
    assert (full["id"], full["type"], full["scope"], full["scope_id"]) == (
        "n1",
        "semantic",
        "persona",
        "ada",
    )
    assert full["category"] == "DECISION" and full["tags"] == ["a", "b"]
    assert full["strength"] == 0.25 and full["created_at"] == 1704164645000
    assert full["metadata"]["scopeId"] == "ada" and full["metadata"]["turnUserId"] == "bob"
    assert "id" not in bare and "created_at" not in bare
    assert (bare["type"], bare["scope"], bare["scope_id"], bare["tags"]) == (
        "episodic",
        "user",
        "",
        [],
    )
    assert bare["strength"] == 1.0


def test_non_latin_notes_read_intact() -> None:
    _, records = read_all(FIXTURES / "vault" / "Languages")
    contents = {r.source.rsplit(":", 1)[0]: r.fields["content"] for r in records}
    assert contents["日本語のノート.md"] == "東京タワーは1958年に完成しました。 #日本 [[東京]]"
    assert contents["บันทึกภาษาไทย.md"] == "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย #ประเทศไทย"
    assert contents["Русская заметка.md"].startswith("Москва — столица России. Ёлка, щётка")


def test_kepano_vault_reads_whole_and_counts_add_up() -> None:
    if not KEPANO.is_dir():
        pytest.skip("shared corpora not present")
    progress, records = read_all(KEPANO)
    notes = [p for p in KEPANO.rglob("*.md") if ".obsidian" not in p.parts]
    others = [p for p in KEPANO.rglob("*") if p.is_file() and p.suffix != ".md"]
    traces = [r for r in records if r.kind == TRACE]
    unread = [r for r in records if r.kind == UNREAD]
    assert len(traces) == len(notes)
    hidden = [r for r in unread if r.reason.startswith("hidden")]
    assert len(unread) - len(hidden) == len([p for p in others if ".obsidian" not in p.parts])
    assert all(r.verdict == SKIPPED for r in unread)
    templates = [r for r in traces if "{{" in str(r.value)]
    assert templates and all(r.verdict == REFUSED for r in templates)
    assert progress[0].total == len(notes) and progress[-1].done == len(notes)


def test_the_reader_streams_one_file_at_a_time(tmp_path: Path) -> None:
    for name in ("a.md", "b.md", "c.md"):
        write(tmp_path, name, f"note {name}\n")
    events = read_markdown(tmp_path)
    assert isinstance(next(events), Progress)
    first = next(events)
    assert first.fields["content"] == "note a.md"
    (tmp_path / "c.md").unlink()  # read lazily: the reader has not opened it yet
    rest = [e for e in events if isinstance(e, ImportRecord)]
    assert [(r.source, r.verdict) for r in rest] == [("b.md:1", NEW), ("c.md:1", ERROR)]
    assert "could not be read" in rest[1].reason


def test_closing_the_reader_stops_it(tmp_path: Path) -> None:
    for i in range(5):
        write(tmp_path, f"n{i}.md", "text\n")
    events = read_markdown(tmp_path)
    next(events)
    next(events)
    events.close()
    assert list(events) == []


def test_a_missing_folder_is_an_invalid_argument(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument) as raised:
        list(read_markdown(tmp_path / "nowhere"))
    assert raised.value.field == "path"
