"""Both full-text indexes follow every write, including the AgentOS one its own search reads."""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.search import fulltext, stand_ins, textindex
from tests.support.brains import agentos_index_ids


def agentos_match(path: Path, query: str) -> set[str]:
    """What AgentOS's own index (porter ascii, external content) returns, read directly."""
    with Brain.open(path) as brain:
        return agentos_index_ids(brain, query)


def test_pending_rows_are_found_before_any_flush(brain: Brain) -> None:
    t = brain.add("zebra crossing")
    assert fulltext.has_pending(brain.db)
    assert [x.id for x in brain.search("zebra").traces] == [t.id]
    assert not fulltext.has_pending(brain.db)


def test_close_brings_the_agentos_index_up_to_date(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        a = brain.add("original words")
        b = brain.add("to be purged")
    assert agentos_match(brain_path, "original") == {a.id}
    with Brain.open(brain_path) as brain:
        brain.update(a.id, {"content": "replacement text", "tags": ["label"]})
        brain.purge(b.id)
    assert agentos_match(brain_path, "original") == set()
    assert agentos_match(brain_path, "replacement") == {a.id}
    assert agentos_match(brain_path, "label") == {a.id}
    assert agentos_match(brain_path, "purged") == set()
    with Brain.open(brain_path) as brain:
        check = brain.db.conn.execute(
            "INSERT INTO memory_traces_fts(memory_traces_fts, rank) VALUES ('integrity-check', 1)"
        )
        assert check.fetchall() == []


def test_many_adds_flush_in_batches(brain: Brain) -> None:
    count = 3 * fulltext.FLUSH_AFTER + 5
    most_pending = 0
    for i in range(count):
        brain.add(f"note {i}")
        most_pending = max(most_pending, fulltext.pending_count(brain.db))
    # No write leaves more than a batch waiting: the write that indexes them stays short.
    assert 0 < most_pending < fulltext.FLUSH_AFTER
    assert fulltext.pending_count(brain.db) == count % fulltext.FLUSH_AFTER
    assert len(brain.search("note", limit=count + 10).traces) == count


def test_migrated_agentos_brain_keeps_its_index_consistent(agentos_copy: Path) -> None:
    with Brain.open(agentos_copy) as brain:
        target = brain.search("dark mode", record_recall=False).traces[0]
        brain.update(target.id, {"content": "prefers light themes now"})
    assert target.id not in agentos_match(agentos_copy, '"dark mode"')
    assert agentos_match(agentos_copy, "light") == {target.id}


def _reference_segment(text: str) -> str:
    """The definition: composed (NFC), each unspaced run split character by character,
    marks attached."""
    text = unicodedata.normalize("NFC", text)

    def graphemes(run: str) -> list[str]:
        out: list[str] = []
        for ch in run:
            if out and unicodedata.category(ch).startswith("M"):
                out[-1] += ch
            else:
                out.append(ch)
        return out

    return textindex._UNSPACED_RUN.sub(lambda m: " " + " ".join(graphemes(m.group())) + " ", text)


def test_segment_splits_unspaced_runs_into_graphemes() -> None:
    assert textindex.segment("東京の天気") == " 東 京 の 天 気 "
    assert textindex.segment("ok 한국어, да") == "ok  한 국 어 , да"
    # Thai marks stay on their consonant; a run may open with a mark.
    assert textindex.segment("กิน") == " กิ น "
    assert textindex.segment("\u0e34x") == " \u0e34 x"
    assert textindex.segment("プ\u3099ロ") == " プ\u3099 ロ "  # a combining voiced mark
    plain = "plain ASCII text, left as it is"
    assert textindex.segment(plain) is plain
    assert textindex.segment("") == ""


def test_segment_equals_its_definition_on_mixed_scripts() -> None:
    rng = random.Random(7)
    blocks = [(0x20, 0x7E), (0xC0, 0x24F), (0x300, 0x36F), (0xE00, 0xEFF), (0xF00, 0xFFF)]
    blocks += [(0x1000, 0x109F), (0x1780, 0x17FF), (0x3040, 0x30FF), (0x1100, 0x11FF)]
    blocks += [(0xAC00, 0xD7AF), (0x4E00, 0x9FFF), (0xFF66, 0xFF9F), (0x20000, 0x2A6DF)]
    for _ in range(3000):
        text = "".join(chr(rng.randint(*rng.choice(blocks))) for _ in range(rng.randint(1, 16)))
        assert textindex.segment(text) == _reference_segment(text), repr(text)


def test_one_flush_of_new_changed_and_removed_rows(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        kept = brain.add("stays the same")
        changed = brain.add("old wording", tags=["before"])
        removed = brain.add("will be purged")
    with Brain.open(brain_path) as brain:
        brain.update(changed.id, {"content": "新しい言葉", "tags": ["after"]})
        brain.purge(removed.id)
        added = [brain.add(f"fresh note {i}").id for i in range(5)]
        # The first new row takes the purged one's rowid: one pending row covers both.
        assert fulltext.flush(brain.db) == 6
        found = {t.id for t in brain.search("言葉", record_recall=False).traces}
        assert found == {changed.id}
        assert {t.id for t in brain.search("fresh", record_recall=False).traces} == set(added)
        for gone in ("old", "before", "purged"):
            assert brain.search(gone, record_recall=False).traces == [], gone
    assert agentos_match(brain_path, "after") == {changed.id}
    assert agentos_match(brain_path, "wording OR purged") == set()
    assert agentos_match(brain_path, "stays") == {kept.id}


def test_a_flush_larger_than_a_batch_indexes_every_row(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "FLUSH_BATCH", 3)
    with Brain.open(brain_path) as brain:
        early = brain.add("early draft")
    with Brain.open(brain_path) as brain:
        added = [brain.add(f"batch note {i}").id for i in range(10)]
        brain.update(early.id, {"content": "final version"})
        assert fulltext.flush(brain.db) == 11
        assert not fulltext.has_pending(brain.db)
        found = {t.id for t in brain.search("batch", limit=50, record_recall=False).traces}
        assert found == set(added)
    assert agentos_match(brain_path, "final") == {early.id}
    assert agentos_match(brain_path, "draft") == set()


def test_mark_class_skips_only_blocks_without_marks() -> None:
    # The quick scan (ideograph and syllable blocks skipped) equals a scan of every code point.
    import re

    spans = re.findall(r"(.)(?:-(.))?", textindex._UNSPACED + "\u0300-\u036f", re.DOTALL)
    every = "".join(
        re.escape(chr(code))
        for first, last in spans
        for code in range(ord(first), ord(last or first) + 1)
        if unicodedata.category(chr(code)).startswith("M")
    )
    assert textindex._marks() == every


@pytest.mark.parametrize("word", ["대한민국", "Αθήνα", "столицей", "です", "crème"])
def test_a_word_is_found_composed_or_decomposed(brain: Brain, word: str) -> None:
    import unicodedata

    nfc, nfd = (unicodedata.normalize(form, word) for form in ("NFC", "NFD"))
    assert nfc != nfd
    stored = [brain.add(f"before {nfc} after").id, brain.add(f"before {nfd} after").id]
    for query in (nfc, nfd):
        found = {t.id for t in brain.search(query, record_recall=False).traces}
        assert found == set(stored), (word, query)


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u3000", "\u202f"])
def test_words_apart_by_any_space_are_two_words(brain: Brain, space: str) -> None:
    far = brain.add("deploy the new parser").id
    assert [t.id for t in brain.search(f"deploy{space}parser").traces] == [far]


@pytest.mark.parametrize("word", ["Αθήνα", "столицей", "Ελλάδα"])
def test_rows_indexed_decomposed_before_are_found_in_either_form(brain: Brain, word) -> None:
    nfc, nfd = (unicodedata.normalize(form, word) for form in ("NFC", "NFD"))
    trace = brain.add(f"before {nfd} after")
    brain.flush_index()
    rowid = brain.db.conn.execute(
        "SELECT rowid FROM memory_traces WHERE id = ?", (trace.id,)
    ).fetchone()[0]
    # As a build before composing wrote it: the text as stored, decomposed.
    brain.db.conn.execute("DELETE FROM memgui_fts WHERE rowid = ?", (rowid,))
    brain.db.conn.execute(
        "INSERT INTO memgui_fts(rowid, content, tags, title) VALUES (?, ?, '', '')",
        (rowid, f"before {nfd} after"),
    )
    for query in (nfc, nfd):
        assert [t.id for t in brain.search(query, record_recall=False).traces] == [trace.id]


def test_agentos_index_finds_a_decomposed_word_in_either_form(
    agentos_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import apsw

    word = "Αθήνα"
    nfc, nfd = (unicodedata.normalize(form, word) for form in ("NFC", "NFD"))
    conn = apsw.Connection(str(agentos_copy))  # AgentOS adds a note, stored decomposed
    conn.execute(
        "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
        "VALUES ('brain', 'mt_nfd', 'semantic', 'user', ?, 1)",
        (f"capital {nfd}",),
    )
    conn.execute(
        "INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, ?, '[]')",
        (conn.last_insert_rowid(), f"capital {nfd}"),
    )
    conn.close()
    monkeypatch.setattr(stand_ins, "UNMIGRATED_MAX", 2)  # too big for an index in memory
    with Brain.open(agentos_copy) as brain:
        for query in (nfc, nfd):
            found = [t.id for t in brain.search(query, record_recall=False).traces]
            assert found == ["mt_nfd"], query
