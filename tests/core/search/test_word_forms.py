"""A word finds its other forms (Porter's, as AgentOS's index stems them) in memgui's search,
every script and prefix it found before still found; a title is found by its words."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.search import word_forms
from memgui.core.storage import migration, schema
from tests.support.brains import agentos_index_ids

ENGLISH = {
    "a": "The deployment of the billing service failed twice",
    "b": "We deployed the new search index on Friday",
    "c": "Deploying from a laptop is not allowed",
    "d": "Each deploy needs a second reviewer",
    "e": "Happiness is a warm cup of tea",
    "f": "A happy team ships small changes",
    "g": "The relational model of the archive",
    "h": "Relations between notes are links",
    "i": "Running the indexer takes an hour",
    "j": "She runs the weekly planning meeting",
}
# One sentence per script the corpora hold (Latin with marks, Cyrillic, Arabic, Hebrew, CJK,
# Thai, Khmer, Hangul, Vietnamese) and a word from inside each.
SCRIPTS = {
    "Łączenie notatek i plików w Obsidianie": "notatek",
    "Создание заметок и ссылок между ними": "заметок",
    "إنشاء الملاحظات وربطها ببعضها": "الملاحظات",
    "יצירת פתקים וקישור ביניהם": "פתקים",
    "在笔记之间创建链接非常简单": "创建链接",
    "ノートの間にリンクを作成します": "リンク",
    "การสร้างลิงก์ระหว่างบันทึก": "ลิงก์",
    "ការបង្កើតតំណភ្ជាប់រវាងកំណត់ចំណាំ": "តំណភ្ជាប់",
    "노트 사이에 링크를 만듭니다": "링크를",
    "Tạo liên kết giữa các ghi chú": "liên",
    "Verknüpfungen zwischen Notizen anlegen": "Notizen",
}


def ids(brain: Brain, query: str) -> set[str]:
    return {t.id for t in brain.search(query, limit=200, record_recall=False).traces}


@pytest.fixture
def english(brain: Brain) -> dict[str, str]:
    return {key: brain.add(text).id for key, text in ENGLISH.items()}


def test_a_word_finds_its_other_forms(brain: Brain, english: dict[str, str]) -> None:
    deploy = {english[k] for k in "abcd"}
    for query in ("deploy", "deployment", "deployed", "Deploying"):
        assert ids(brain, query) == deploy, query
    assert ids(brain, "happy") == {english["e"], english["f"]}
    assert ids(brain, "relation") == {english["g"], english["h"]}
    assert ids(brain, "running") == {english["i"], english["j"]}
    # Porter stems `deploy` to `deploi` and `deployment` to `deploy`: AgentOS's own index
    # misses one for the other; memgui finds them all.
    brain.flush_index()
    assert english["a"] not in agentos_index_ids(brain, "deploy")


@pytest.mark.parametrize("word", sorted({w.split()[0].lower() for w in ENGLISH.values()}))
def test_memgui_finds_whatever_agentos_porter_index_finds(
    brain: Brain, english: dict[str, str], word: str
) -> None:
    brain.flush_index()
    for query in [word, *[w.lower() for t in ENGLISH.values() for w in t.split()]][:40]:
        assert agentos_index_ids(brain, query) <= ids(brain, query), query


def test_phrases_prefixes_and_operators_keep_their_meaning(
    brain: Brain, english: dict[str, str]
) -> None:
    assert ids(brain, '"deployed"') == {english["b"]}  # a phrase is the words as written
    assert ids(brain, "relati*") == {english["g"], english["h"]}  # a stemming index loses it
    assert ids(brain, "deploy NOT laptop") == {english[k] for k in "abd"}
    assert ids(brain, "NEAR(deployed index, 4)") == {english["b"]}
    assert ids(brain, "content: happy") == {english["e"], english["f"]}
    assert word_forms.expand('"a b" c* {title}: d ^e f + g') == '"a b" c* {title}: d ^e f + g'


@pytest.mark.parametrize(("text", "word"), sorted(SCRIPTS.items()))
def test_every_script_is_found_as_before(brain: Brain, text: str, word: str) -> None:
    trace = brain.add(text)
    brain.add("an unrelated note in English")
    assert ids(brain, word) == {trace.id}


def test_a_title_is_found_by_its_words(brain: Brain) -> None:
    titled = brain.add("Body text only.", metadata={"title": "Quarterly planning offsite"})
    brain.add("Another memory, about planning in general")
    assert ids(brain, "quarterly") == {titled.id}
    assert ids(brain, "offsite planned") == {titled.id}  # a form of a title word too
    assert ids(brain, "title:planning") == {titled.id}


def test_a_title_another_program_changes_is_found_by_its_new_words(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        trace = brain.add("A note about nothing much", metadata={"title": "Zanzibar trip"})
        brain.flush_index()
    conn = apsw.Connection(str(brain_path))  # as AgentOS: a write memgui's code never saw
    conn.execute(
        "UPDATE memory_traces SET metadata = ? WHERE id = ?",
        (json.dumps({"title": "Kilimanjaro climb"}), trace.id),
    )
    conn.close()
    with Brain.open(brain_path, actor="test") as brain:
        assert ids(brain, "kilimanjaro") == {trace.id}
        assert ids(brain, "zanzibar") == set()


def back_to_schema_2(path: Path) -> None:
    """The brain as schema 2 left it: memgui_fts without a title column, version 2."""
    conn = apsw.Connection(str(path))
    conn.execute("DROP TABLE memgui_fts")
    conn.execute("DROP TABLE memgui_stems")  # schema 9's
    conn.execute(
        "CREATE VIRTUAL TABLE memgui_fts USING fts5(content, tags, content='', "
        "contentless_delete=1, tokenize='unicode61 remove_diacritics 2')"
    )
    conn.execute(
        "INSERT INTO memgui_fts(rowid, content, tags) SELECT rowid, content, '' FROM memory_traces"
    )
    conn.execute("UPDATE brain_meta SET value = '2' WHERE key = ?", (schema.SCHEMA_KEY,))
    conn.close()


def test_a_schema_2_brain_gets_titles_indexed_by_its_first_write(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        titled = brain.add("Body text only.", metadata={"title": "Quarterly planning offsite"})
    back_to_schema_2(brain_path)
    with Brain.open(brain_path, actor="test") as brain:
        assert brain.info()["schema_version"] == 2 and not brain.db.is_current
        assert ids(brain, "body") == {titled.id}  # read as it is, nothing written
        assert ids(brain, "quarterly") == set()
        migrating = brain.pending_migration()
        assert migrating is not None and migrating.from_version == 2
        assert migrating.changes == (
            "memgui's full-text index takes each memory's title, so a search finds it",
            "each node's count of links and edges is kept in a table of memgui's, so the "
            "graph's overview ranks a large brain at once",
            "the journal keeps only what each later edit changed, not the memory twice (history "
            "and undo of earlier edits go on working; an older memgui opens the brain read-only)",
            "memgui's full-text index tidies itself in the background, never during a write",
            "the knowledge graph's edges are indexed by both their ends, so the graph finds the "
            "edge between two nodes at once",
            "links are indexed by the memory they point to with both their ends and kind, so the "
            "graph reads a memory's incoming links from the index alone",
            migration._STEMS_INDEXED,
        )
        brain.add("the first write migrates")
        assert brain.info()["schema_version"] == schema.SCHEMA_VERSION
        assert ids(brain, "quarterly") == {titled.id}
    assert list(brain_path.parent.glob(f"{brain_path.name}.backup-pre-{schema.SCHEMA_VERSION}-*"))
