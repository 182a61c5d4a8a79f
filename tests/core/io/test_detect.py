"""Format auto-detection of import sources."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.io.detect import FORMATS, detect_format
from tests.support.paths import FIXTURES, SHARED

AGENTOS = SHARED / "fixtures" / "agentos"
CORPORA = SHARED / "corpora"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (AGENTOS / "export.json", "json"),
        (AGENTOS / "export-embeddings.json", "json"),
        (AGENTOS / "json-input.json", "json"),
        (AGENTOS / "chatgpt-input.json", "chatgpt"),
        (AGENTOS / "brain.sqlite", "sqlite"),
        (AGENTOS / "export.sqlite", "sqlite"),
        (AGENTOS / "csv-input.csv", "csv"),
        (AGENTOS / "markdown", "markdown"),
        (CORPORA / "markdown" / "kepano-obsidian", "obsidian"),
        (CORPORA / "chatgpt", "chatgpt"),
        (FIXTURES / "chatgpt" / "split_export", "chatgpt"),
        (FIXTURES / "jsonl" / "valid.jsonl", "jsonl"),
        # ChatGPT by content: the pkuppens export has no "conversation_id" at all
        (CORPORA / "chatgpt" / "pkuppens-my_chat_gpt__conversations.json", "chatgpt"),
        (
            CORPORA / "chatgpt" / "pionxzh-chatgpt-exporter__thinking-summaries.conversation.json",
            "chatgpt",
        ),
    ],
)
def test_real_sources(path: Path, expected: str) -> None:
    assert detect_format(path) == expected
    assert expected in FORMATS


def test_every_chatgpt_corpus_file_is_chatgpt() -> None:
    for path in (CORPORA / "chatgpt").glob("*.json"):
        assert detect_format(path) == "chatgpt", path.name


def test_names_and_content(tmp_path: Path) -> None:
    state = tmp_path / "STATE.md"
    state.write_text("## Decisions\n", encoding="utf-8")
    assert detect_format(state) == "gsd"
    note = tmp_path / "note.md"
    note.write_text("# Note\n", encoding="utf-8")
    assert detect_format(note) == "markdown"
    renamed = tmp_path / "brain.backup"
    shutil.copyfile(AGENTOS / "brain.sqlite", renamed)
    assert detect_format(renamed) == "sqlite"  # SQLite by its header
    empty_array = tmp_path / "conversations.json"
    empty_array.write_text("[]", encoding="utf-8")
    assert detect_format(empty_array) == "chatgpt"
    database = tmp_path / "fresh.db"
    apsw.Connection(str(database)).execute("CREATE TABLE t(x)")
    assert detect_format(database) == "sqlite"


def test_folders(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "a.md").write_text("x", encoding="utf-8")
    assert detect_format(vault) == "obsidian"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("x", encoding="utf-8")
    shutil.copyfile(FIXTURES / "chatgpt" / "branching.json", notes / "chat.json")
    assert detect_format(notes) == "markdown"  # Markdown wins over a stray export
    nested = tmp_path / "export"
    (nested / "conversations").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "chatgpt" / "branching.json", nested / "conversations" / "1.json")
    assert detect_format(nested) == "chatgpt"
    assert detect_format(tmp_path / "notes") == "markdown"


@pytest.mark.parametrize(
    ("name", "content", "saw"),
    [
        ("fake.sqlite", b"not a database", "a .sqlite file that is not a SQLite database"),
        ("data.json", b'{"something": 1}', "neither a ChatGPT nor an AgentOS export"),
        ("data.json", b"[1, 2, 3]", "neither a ChatGPT nor an AgentOS export"),
        ("picture.png", b"\x89PNG\r\n", "a .png file of unknown content"),
        ("README", b"hello", "an extensionless file of unknown content"),
    ],
)
def test_unsupported_sources_name_what_was_seen(
    tmp_path: Path, name: str, content: bytes, saw: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InvalidArgument) as caught:
        detect_format(path)
    assert caught.value.field == "format"
    assert saw in str(caught.value) and str(path) in str(caught.value)
    assert "name one of sqlite, json, jsonl" in str(caught.value)


def test_missing_source(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="does not exist") as caught:
        detect_format(tmp_path / "nowhere.json")
    assert caught.value.field == "format"
