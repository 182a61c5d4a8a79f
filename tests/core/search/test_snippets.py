"""A line of a memory around where the search matched it."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.search.snippets import match_span, query_words, snippet

LONG = (
    "Weekly notes. We talked about the holidays, the new coffee machine and the office "
    "plants for a long while before anything else came up in the meeting. Then: the "
    "deployment to production goes through staging first, and only on green checks. "
    "After that we ended early."
)


def test_the_line_is_cut_around_the_match_not_at_the_start():
    line = snippet(LONG, "staging", width=80)
    assert "staging" in line
    assert line.startswith("…")
    assert len(line) <= 82
    assert not line.startswith("Weekly")


def test_fts_syntax_is_not_part_of_the_words():
    words = query_words('"green checks" OR deploy* NOT content:plants')
    assert set(words) == {"green", "checks", "deploy", "plants"}


def test_a_words_other_forms_and_unspaced_scripts_are_found():
    assert LONG[slice(*match_span(LONG, "deploying"))].lower().startswith("deploy")
    thai = "บันทึกการประชุม เราคุยเรื่องการปรับใช้ระบบใหม่ในวันจันทร์"
    assert "ปรับใช้" in snippet(thai * 4, "ปรับใช้", width=40)
    japanese = "会議のメモ。" * 20 + "本番環境へのデプロイはステージングを通す。"
    assert "デプロイ" in snippet(japanese, "デプロイ", width=30)
    assert match_span("redeploy later", "deploy") is None  # a word's start only


def test_a_short_text_starts_a_few_words_before_a_late_match():
    text = "SQLite access goes through apsw: the stdlib sqlite3 here cannot load extensions."
    assert snippet(text, "extensions") == "…here cannot load extensions."
    assert snippet(text, "access") == text  # early enough: from the start


def test_no_word_of_the_query_shows_the_beginning():
    assert snippet(LONG, "automobile", width=30).startswith("Weekly notes.")
    assert snippet("short\n\ntext", "short") == "short text"


def test_search_hits_carry_their_snippet(tmp_path):
    with Brain.open(tmp_path / "b.sqlite") as brain:
        brain.add(LONG)
        [hit] = brain.search("staging", record_recall=False).hits
        assert "staging" in hit.snippet and hit.snippet != LONG[: len(hit.snippet)]
