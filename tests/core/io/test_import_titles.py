"""A memory imported from a note or a chat knows its title (`metadata.title`); a chat's
citation marks are not kept as text; an imported memory starts decaying when it arrives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io import ImportOptions, commit, plan
from memgui.core.io.readers.chatgpt_reader import read_chatgpt
from memgui.core.io.readers.markdown_reader import read_markdown
from memgui.core.io.readers.obsidian_reader import read_obsidian
from memgui.core.io.records import TRACE, ImportRecord
from memgui.core.model import DAY_MS
from memgui.core.progress import run_to_end
from tests.support.paths import SHARED, TESTS

CHATGPT = SHARED / "corpora" / "chatgpt"


def traces_of(events) -> dict[str, ImportRecord]:
    return {
        e.source.rsplit(":", 1)[0]: e
        for e in events
        if isinstance(e, ImportRecord) and e.kind == TRACE
    }


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


NOTES = {
    "Plain name.md": "No front matter, no heading.\n",
    "fm.md": "---\ntitle: Front matter wins\n---\n# A heading\nbody\n",
    "numeric.md": "---\ntitle: 0.04\ndate: 2021-08-01\n---\nRelease notes body\n",
    "sub/Nested note.md": "# Heading is not the title\nThe file name is.\n",
    "mt_0001.md": "---\nid: mt_0001\ntype: semantic\n---\n## Exported heading\nText of an export\n",
    "mt_0002.md": "---\nid: mt_0002\n---\nAn exported note without a heading\n",
    "listed.md": "---\ntitle: [not, a, title]\n---\nbody of listed\n",
}


@pytest.mark.parametrize("reader", [read_markdown, read_obsidian])
def test_a_note_is_titled_by_its_front_matter_else_file_name_else_heading(
    tmp_path: Path, reader
) -> None:
    found = traces_of(reader(write(tmp_path / "vault", NOTES)))
    titles = {name: r.fields["metadata"].get("title") for name, r in found.items()}
    assert titles == {
        "Plain name.md": "Plain name",
        "fm.md": "Front matter wins",
        "numeric.md": "0.04",  # YAML reads it as a number: the title is its text
        "sub/Nested note.md": "Nested note",
        "mt_0001.md": "Exported heading",  # an id is no title: the heading is
        "mt_0002.md": None,
        "listed.md": "listed",
    }
    assert "front_matter" not in found["fm.md"].fields["metadata"]  # kept as the title
    assert found["numeric.md"].fields["metadata"]["front_matter"] == {"date": "2021-08-01"}
    assert found["listed.md"].fields["metadata"]["front_matter"] == {"title": ["not", "a", "title"]}
    assert found["sub/Nested note.md"].fields["metadata"]["source_file"] == "sub/Nested note.md"


def test_a_chat_memory_is_titled_by_its_conversation() -> None:
    events = list(read_chatgpt(CHATGPT / "chatlore__fixture-conversations.json"))
    traces = [e for e in events if isinstance(e, ImportRecord) and e.kind == TRACE]
    assert {t.fields["metadata"]["title"] for t in traces} == {"Postgres indexing", "Trip ideas"}


def test_citation_marks_are_not_kept_as_text() -> None:
    texts = []
    for name in ("librechat__chatgpt-citations.json", "pkuppens-my_chat_gpt__conversations.json"):
        events = read_chatgpt(CHATGPT / name)
        texts += [e.fields["content"] for e in events if isinstance(e, ImportRecord)
                  and e.kind in ("trace", "message")]  # fmt: skip
    assert texts and not [t for t in texts if "†" in t or "【" in t]
    assert any("business" in t for t in texts)  # the words around the marks stay


def imported(brain: Brain, source: Path, **options) -> list:
    the_plan = run_to_end(plan(brain, source, options=ImportOptions(**options)))
    result = run_to_end(commit(brain, the_plan))
    assert result.imported
    return brain.list_traces(limit=200)


def test_a_memory_from_last_year_starts_decaying_when_it_arrives(brain: Brain) -> None:
    now = brain.now()
    year_ago = (now - 365 * DAY_MS) / 1000
    chat = [
        {
            "id": "c1",
            "title": "An old chat",
            "create_time": year_ago,
            "current_node": "b",
            "mapping": {
                "a": {"id": "a", "parent": None, "children": ["b"], "message": {
                    "author": {"role": "user"}, "create_time": year_ago,
                    "content": {"content_type": "text", "parts": ["What was decided?"]}}},
                "b": {"id": "b", "parent": "a", "children": [], "message": {
                    "author": {"role": "assistant"}, "create_time": year_ago + 5,
                    "content": {"content_type": "text", "parts": ["Postgres, not Mongo."]}}},
            },
        }
    ]  # fmt: skip
    path = brain.path.parent / "conversations.json"
    path.write_text(json.dumps(chat), encoding="utf-8")
    (trace,) = imported(brain, path)
    assert trace.created_at == round(year_ago * 1000)  # the chat's own time is kept
    assert trace.last_accessed is not None and trace.last_accessed >= now
    assert trace.strength > 0.99
    assert trace.title == "An old chat"


def test_a_note_starts_decaying_on_import_but_an_agentos_row_keeps_its_state(
    brain: Brain, tmp_path: Path
) -> None:
    now = brain.now()
    notes = write(tmp_path / "notes", {"old.md": "---\ncreatedAt: 1000\n---\nAn old note\n"})
    (note,) = imported(brain, notes)
    assert note.last_accessed is not None and note.last_accessed >= now and note.strength > 0.99
    export = {"traces": [{"id": "mt_x", "type": "semantic", "scope": "user",
                          "content": "An AgentOS memory never recalled", "strength": 1,
                          "created_at": 1000, "last_accessed": None, "tags": "[]",
                          "metadata": "{}", "deleted": 0}]}  # fmt: skip
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    imported(brain, path)
    assert brain.get("mt_x").last_accessed is None  # AgentOS's own state, as it was


def test_fixtures_vault_is_titled(tmp_path: Path) -> None:
    found = traces_of(read_obsidian(TESTS / "fixtures" / "io" / "vault"))
    assert found and all(r.fields["metadata"].get("title") for r in found.values()
                         if r.verdict == "new")  # fmt: skip
