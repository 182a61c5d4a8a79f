"""Auto-ingest end to end: the real `ollama` client asks the test server's chat model."""

from __future__ import annotations

import json

import apsw
import pytest

from memgui.core.ingest import SYSTEM_PROMPT, ingest_turn, parse_facts, user_prompt
from memgui.core.ingest_config import AutoIngestConfig
from memgui.core.llm import OllamaChat
from memgui.core.model import TraceFilter
from tests.support.cli import snapshot

USER = "I prefer dark mode in every editor. Yesterday I went to Berlin. I hate long meetings."
ASSISTANT = "Noted: dark mode everywhere."


@pytest.fixture
def chat(ollama_server):
    llm = OllamaChat(ollama_server.url)
    yield llm
    llm.close()


def test_a_turn_becomes_tagged_traces_beside_the_kept_conversation(brain, chat, ollama_server):
    result = ingest_turn(brain, USER, ASSISTANT, AutoIngestConfig(), chat, scope_id="u1")
    [request] = ollama_server.chat_requests
    assert request["messages"] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"User: {USER}\n\nAssistant: {ASSISTANT}"},
    ]
    assert [(f.category, f.verdict) for f in result.facts] == [
        ("user_preference", "stored"),
        ("episodic", "skipped"),  # 0.3 < 0.4
        ("user_preference", "stored"),
    ]
    assert (result.stored, result.skipped) == (2, 1)
    stored = [brain.get(f.trace_id) for f in result.facts if f.trace_id]
    first = stored[0]
    assert first.content == "I prefer dark mode in every editor."
    assert (first.type, first.scope, first.scope_id) == ("semantic", "user", "u1")
    assert first.category == "user_preference" and first.tags == ("user_preference", "auto_ingest")
    assert first.stored_strength == 0.8 and first.metadata["importance"] == 0.8
    assert first.metadata["conversation_id"] == result.conversation_id
    assert first.metadata["sourceType"] == "user_statement"
    chat_kept = brain.conversation(result.conversation_id)
    assert [(m["role"], m["content"]) for m in chat_kept["messages"]] == [
        ("user", USER),
        ("assistant", ASSISTANT),
    ]
    assert brain.conversation_of(first.id)["id"] == result.conversation_id
    # two writes: the turn, then the facts; each revertible
    assert {e.op for e in brain.batch_entries(result.turn_batch_id)} == {"conversation", "message"}
    assert {e.op for e in brain.batch_entries(result.batch_id)} == {"add"}
    brain.revert(result.batch_id)
    assert brain.count() == 0 and brain.conversation(result.conversation_id)


def test_the_turn_is_kept_before_the_call_and_no_call_runs_in_a_write(brain, chat, ollama_server):
    seen = []

    def look(_body):
        conn = apsw.Connection(str(brain.path))
        try:
            conn.setbusytimeout(0)
            conn.execute("BEGIN IMMEDIATE")  # BusyError while memgui holds a write open
            conn.execute("ROLLBACK")
            seen.append(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
        except apsw.BusyError:
            seen.append("a write transaction was open")
        finally:
            conn.close()

    ollama_server.chat_hook = look
    ingest_turn(brain, USER, ASSISTANT, AutoIngestConfig(), chat)
    assert seen == [2]


def test_a_failed_call_stores_no_fact_and_keeps_the_turn(brain, chat, ollama_server):
    ollama_server.fail_next_chat = 1
    result = ingest_turn(brain, USER, ASSISTANT, AutoIngestConfig(), chat)
    assert result.facts == [] and result.batch_id is None and brain.count() == 0
    assert "failed to answer (HTTP 500" in result.error and "the turn was kept" in result.error
    assert len(brain.conversation(result.conversation_id)["messages"]) == 2
    ollama_server.stop()
    down = ingest_turn(brain, "I like tea.", "Sure.", AutoIngestConfig(), chat)
    assert "is not reachable" in down.error and brain.count() == 0
    assert brain.conversation(down.conversation_id)["messages"][0]["content"] == "I like tea."


def test_a_dry_run_writes_nothing_and_says_what_would_be_stored(brain, chat):
    before = snapshot(brain.path)
    result = ingest_turn(brain, USER, ASSISTANT, AutoIngestConfig(), chat, dry_run=True)
    assert snapshot(brain.path) == before
    assert result.stored == 2 and result.conversation_id is None
    assert all(f.trace_id is None for f in result.facts)


def test_turned_off_it_asks_no_model_and_writes_nothing(brain, chat, ollama_server):
    before = snapshot(brain.path)
    result = ingest_turn(brain, USER, ASSISTANT, AutoIngestConfig(enabled=False), chat)
    assert result.error.startswith("auto-ingest is off") and ollama_server.chat_requests == []
    empty = ingest_turn(brain, " ", "", AutoIngestConfig(), chat)
    assert empty.error == "the turn holds no text" and ollama_server.chat_requests == []
    assert snapshot(brain.path) == before


def test_the_personality_decides_what_is_kept(brain, chat, ollama_server):
    ollama_server.chat_replies.append(
        json.dumps(
            [
                {
                    "content": "The user is tired today.",
                    "category": "emotional_context",
                    "importance": 0.35,
                },
                {"content": "Book the flight.", "category": "action_item", "importance": 0.3},
                {
                    "content": "The user was at the dentist.",
                    "category": "episodic",
                    "importance": 0.3,
                },
            ]
        )
    )
    traits = {"emotionality": 0.9, "conscientiousness": 0.9}
    result = ingest_turn(brain, "…", "…", AutoIngestConfig(traits=traits), chat)
    assert [(f.category, f.importance, f.verdict) for f in result.facts] == [
        ("emotional_context", pytest.approx(0.45), "stored"),
        ("action_item", pytest.approx(0.45), "stored"),
        ("episodic", pytest.approx(0.4), "stored"),
    ]
    assert {t.category for t in brain.list_traces(TraceFilter())} == {
        "emotional_context",
        "action_item",
        "episodic",
    }


def test_facts_over_the_limit_are_neither_stored_nor_skipped(brain, chat, ollama_server):
    many = [{"content": f"Fact {n}.", "category": "knowledge", "importance": 0.9} for n in range(5)]
    ollama_server.chat_replies.append(json.dumps(many))
    result = ingest_turn(brain, "x", "y", AutoIngestConfig(max_per_turn=2), chat)
    assert [f.verdict for f in result.facts] == ["stored"] * 2 + ["over the limit"] * 3
    assert (result.stored, result.skipped, brain.count()) == (2, 0, 2)


def test_a_second_turn_joins_its_conversation(brain, chat):
    first = ingest_turn(brain, "I like tea.", "OK.", AutoIngestConfig(), chat)
    ingest_turn(
        brain,
        "I love jazz.",
        "OK.",
        AutoIngestConfig(),
        chat,
        conversation_id=first.conversation_id,
    )
    messages = brain.conversation(first.conversation_id)["messages"]
    assert [m["content"] for m in messages] == ["I like tea.", "OK.", "I love jazz.", "OK."]


@pytest.mark.parametrize(
    ("reply", "contents"),
    [
        ('[{"content": "A", "category": "goal", "importance": 0.5}]', ["A"]),
        ('```json\n[{"content": "B", "category": "goal", "importance": 1}]\n```', ["B"]),
        ('{"facts": [{"content": "C", "category": "goal", "importance": 0.5}]}', ["C"]),
        ('Here you go: [{"content": "D", "category": "goal", "importance": 0.5}] done', ["D"]),
        ("I found nothing worth keeping.", []),
        ("[not json", []),
        ('{"content": "E", "category": "goal", "importance": 0.5}', []),
        (
            '[{"content": "F", "category": "goal", "importance": "high"}, 7, '
            '{"content": 3, "category": "goal", "importance": 0.5}, '
            '{"content": "G", "category": "goal", "importance": true}]',
            [],
        ),  # fmt: skip
    ],
)
def test_the_answer_is_read_as_wunderland_reads_it(reply, contents):
    assert [f.content for f in parse_facts(reply)] == contents


def test_entities_are_kept_when_they_are_an_array():
    [kept, dropped] = parse_facts(
        '[{"content": "A", "category": "goal", "importance": 0.5, "entities": ["Ada", 3]},'
        ' {"content": "B", "category": "goal", "importance": 0.5, "entities": "Ada"}]'
    )
    assert kept.entities == ["Ada"] and dropped.entities == []
    assert user_prompt("u", "a") == "User: u\n\nAssistant: a"
