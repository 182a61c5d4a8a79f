"""The Obsidian vault reader: tags, wikilinks, embeds and the export's round trip."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from memgui.core.io.readers.obsidian_reader import (
    read_obsidian,
    scan_markdown,
    split_export_trailer,
)
from memgui.core.io.readers.text_utils import normalize_newlines
from memgui.core.io.records import NEW, REFUSED, SKIPPED, TRACE, UNREAD, ImportRecord
from memgui.core.progress import Progress
from tests.support.paths import FIXTURES, SHARED

VAULT = FIXTURES / "io" / "vault"
AGENTOS = SHARED / "fixtures" / "agentos"
HELP_VAULT = SHARED / "corpora" / "obsidian-help"
KEPANO = SHARED / "corpora" / "markdown" / "kepano-obsidian"


def records_of(path: Path) -> list[ImportRecord]:
    return [e for e in read_obsidian(path) if isinstance(e, ImportRecord)]


def note(records: list[ImportRecord], name: str) -> ImportRecord:
    (found,) = [r for r in records if r.kind == TRACE and r.source.startswith(f"{name}:")]
    return found


def test_every_entry_of_the_vault_is_accounted_for() -> None:
    records = records_of(VAULT)
    listed = sorted((r.source, r.kind, r.verdict) for r in records)
    assert listed == sorted(
        [
            (".obsidian", UNREAD, SKIPPED),
            ("Attachments/diagram.png", UNREAD, SKIPPED),
            ("Bad front matter.md:3", TRACE, REFUSED),
            ("CRLF note.md:5", TRACE, NEW),
            ("Exported trace.md:12", TRACE, NEW),
            ("JS front matter.md:4", TRACE, NEW),
            ("Languages/Русская заметка.md:4", TRACE, NEW),
            ("Languages/บันทึกภาษาไทย.md:1", TRACE, NEW),
            ("Languages/日本語のノート.md:4", TRACE, NEW),
            ("Only properties.md:5", TRACE, SKIPPED),  # blank: skipped (seed 000)
            ("Table links.md:6", TRACE, NEW),
            ("Table links.md:14", UNREAD, SKIPPED),
            ("Table links.md:16", UNREAD, SKIPPED),
        ]
    )


def test_wikilinks_in_tables_aliases_and_headings_become_related_to_links() -> None:
    record = note(records_of(VAULT), "Table links.md")
    links = [(link["target"], link["origin"], link["line"]) for link in record.links]
    assert links == [
        ("Plain target", "body", 8),
        ("Roadmap", "body", 8),
        ("Docs hub", "body", 13),
        ("Index", "front_matter", 3),
    ]
    assert all(link["type"] == "related_to" for link in record.links)


def test_tags_skip_numbers_headings_code_and_comments() -> None:
    record = note(records_of(VAULT), "Table links.md")
    assert record.fields["tags"] == ["project/alpha", "réunion", "日本", "snake_case", "y1984"]
    assert "#nope" in record.fields["content"]  # code stays in the content, only untagged


def test_embeds_are_listed_unread_with_their_line() -> None:
    embeds = [r for r in records_of(VAULT) if r.kind == UNREAD and "embed" in r.fields]
    assert [(r.source, r.fields["embed"], r.fields["note"]) for r in embeds] == [
        ("Table links.md:14", "diagram.png", "Table links.md"),
        ("Table links.md:16", "Embedded note", "Table links.md"),
    ]
    assert all(r.verdict == SKIPPED and "not imported" in r.reason for r in embeds)


def test_an_exported_note_gives_back_its_text_tags_and_related_list() -> None:
    record = note(records_of(VAULT), "Exported trace.md")
    assert record.fields["content"] == "Alice is Bob's manager; see [[Team page]]."
    assert record.fields["tags"] == ["people", "org chart", "added-in-obsidian"]
    assert [(link["target"], link["origin"]) for link in record.links] == [
        ("Team page", "body"),
        ("Alice", "related_list"),
        ("Bob", "related_list"),
    ]
    assert record.fields["id"] == "mt_0a1b2c3d-0000-4000-8000-000000000001"
    assert record.fields["scope_id"] == "user-42"


def test_trailer_rules() -> None:
    # No tags in the front matter: the export wrote no tag line, so the hashtags are text.
    assert split_export_trailer("Text\n\n#keep", []) == ("Text\n\n#keep", [], [])
    # A paragraph after the list: not what the export wrote, nothing is cut.
    body = "Text\n\n**Related:**\n- [[A]]\n\nAdded later."
    assert split_export_trailer(body, ["t"]) == (body, [], [])
    # A label the graph holds with a line break in it.
    body = "Text\n\n#t\n\n**Related:**\n- [[two\nlines]]\n- [[B]]"
    assert split_export_trailer(body, ["t"]) == ("Text", ["t"], ["two\nlines", "B"])


@pytest.mark.parametrize(
    ("text", "tags", "links"),
    [
        ("~~~\n#in-fence [[A]]\n~~~\n#after", ["after"], []),
        ("```\nnever closed #x [[A]]", [], []),
        ("```js``` is inline #real", ["real"], []),
        ("#1984 #2024/05 #v2 ##double", ["v2"], []),
        ("see [[A|the #1 pick]] and [[B.md]]", [], ["A", "B"]),
        ("> ```\n> #quoted-code\n> ```\n#out", ["out"], []),
    ],
)
def test_scan_markdown_cases(text: str, tags: list[str], links: list[str]) -> None:
    found = scan_markdown(text, 1)
    assert found.tags == tags
    assert [label for label, _ in found.links] == links


def test_agentos_obsidian_export_round_trips_to_its_traces() -> None:
    if not AGENTOS.is_dir():
        pytest.skip("shared AgentOS fixtures not present")
    traces = {t["id"]: t for t in json.loads((AGENTOS / "export.json").read_text())["traces"]}
    records = records_of(AGENTOS / "obsidian")
    assert len(records) == 45
    for record in records:
        trace = traces[record.fields["id"]]
        if "fake front-matter" not in trace["content"]:
            assert record.fields["content"] == normalize_newlines(trace["content"]).strip()
        assert set(json.loads(trace["tags"])) <= set(record.fields["tags"])
    related = {r.fields["id"]: [link["target"] for link in r.links] for r in records if r.links}
    assert related["mt_b7e867c6-54d1-4056-a2da-bc199d2c9dc5"] == ["Alice"]
    assert related["mt_6ac47b78-4c99-4ab2-b32e-82edd63a9c08"] == ["memgui"]


def test_non_latin_notes_read_intact_with_their_tags_and_links() -> None:
    records = records_of(VAULT / "Languages")
    ja = note(records, "日本語のノート.md")
    th = note(records, "บันทึกภาษาไทย.md")
    ru = note(records, "Русская заметка.md")
    assert ja.fields["content"] == "東京タワーは1958年に完成しました。 #日本 [[東京]]"
    assert ja.fields["tags"] == ["言語", "日本"] and ja.links[0]["target"] == "東京"
    assert th.fields["tags"] == ["ประเทศไทย"]
    assert ru.fields["tags"] == ["Россия"] and ru.links[0]["target"] == "Москва"
    assert ru.fields["type"] == "semantic"


def _count_vault(root: Path) -> tuple[int, int]:
    notes = others = 0
    for path in root.rglob("*"):
        if path.is_file() and not any(part.startswith(".") for part in path.parts[-8:]):
            if path.suffix == ".md":
                notes += 1
            else:
                others += 1
    return notes, others


@pytest.mark.parametrize("vault", [HELP_VAULT, KEPANO], ids=["obsidian-help", "kepano"])
def test_real_vaults_read_whole_and_counts_add_up(vault: Path) -> None:
    if not vault.is_dir():
        pytest.skip("shared corpora not present")
    started = time.process_time()  # CPU time: other work on the machine does not count
    events = list(read_obsidian(vault))
    elapsed = time.process_time() - started
    records = [e for e in events if isinstance(e, ImportRecord)]
    notes, others = _count_vault(vault)
    traces = [r for r in records if r.kind == TRACE]
    files = [r for r in records if r.kind == UNREAD and "file" in r.fields]
    hidden = [r for r in files if r.reason.startswith("hidden")]
    assert len(traces) == notes
    assert len(files) - len(hidden) == others
    assert all(r.kind in (TRACE, UNREAD) for r in records)
    assert all(r.verdict in (NEW, REFUSED, SKIPPED) for r in traces)
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[-1].done == progress[-1].total == notes
    if vault == HELP_VAULT:
        assert all(r.verdict == NEW for r in traces)
        assert sum(len(r.links) for r in traces) > 10_000
        assert elapsed < 2.0, f"reading the help vault took {elapsed:.2f} s of CPU"


def test_a_double_percent_inside_code_opens_no_comment() -> None:
    text = (
        "Comments use the `%%` marker.\n"
        "See [[Target A]] and #tag-a.\n"
        "```\n%% in a fence\n```\n"
        "Then [[Visible One]] %% a real [[Hidden]] comment %% and [[Visible Two]].\n"
        "``%%`` again, then [[Last]].\n"
    )
    found = scan_markdown(text, 1)
    assert found.links == [("Target A", 2), ("Visible One", 6), ("Visible Two", 6), ("Last", 7)]
    assert found.tags == ["tag-a"]


def test_the_help_vaults_internal_links_note_keeps_every_link() -> None:
    path = HELP_VAULT / "en" / "Linking notes and files" / "Internal links.md"
    text = path.read_text(encoding="utf-8")
    assert "`# | ^ : %% [[ ]]`" in text  # the `%%` in inline code that hid every later link
    targets = {label for label, _line in scan_markdown(text, 1).links}
    assert {"Command palette", "Accepted file formats", "Embed Files"} <= targets
