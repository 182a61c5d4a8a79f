"""A ChatGPT import with "extract facts": the facts join its plan and its batch."""

from __future__ import annotations

import json

import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.ingest_config import AutoIngestConfig
from memgui.core.io import ImportOptions, commit, plan
from memgui.core.llm import OllamaChat
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from tests.support.chatgpt_conversations import linear_conversation


@pytest.fixture
def export(tmp_path):
    path = tmp_path / "conversations.json"
    chats = [
        linear_conversation(1, ["I prefer green tea. I went to Kyoto.", "Lovely!"], "c1"),
        linear_conversation(2, ["What is 2 + 2?", "4."], "c2"),
        linear_conversation(3, ["I want to learn Go.", "Good plan."], "c3"),
    ]
    path.write_text(json.dumps(chats))
    return path


def options(url, **more):
    return ImportOptions(extract_facts=True, facts_llm=OllamaChat(url), **more)


def test_the_facts_join_the_plan_and_its_batch(brain, export, ollama_server):
    p = run_to_end(plan(brain, export, options=options(ollama_server.url)))
    facts = [r for r in p.records if "#fact-" in r.source]
    assert [(r.fields["content"], r.fields["category"], r.verdict) for r in facts] == [
        ("I prefer green tea.", "user_preference", "new"),
        ("I want to learn Go.", "goal", "new"),
    ]  # Kyoto's episodic 0.3 is below 0.4; the sum asked for no fact
    assert len(ollama_server.chat_requests) == 3
    tea = facts[0]
    assert tea.fields["tags"] == ["user_preference", "auto_ingest"]
    assert tea.fields["metadata"]["conversation_id"].startswith("cv_chatgpt_")
    assert tea.reason.startswith("user_preference: importance 0.8 >= threshold 0.4")
    tea.accepted = False  # reviewed with the rest: this one is left out
    result = run_to_end(commit(brain, p))
    stored = brain.list_traces(TraceFilter(tag="auto_ingest"))
    assert [t.content for t in stored] == ["I want to learn Go."]
    assert {e.batch_id for e in brain.history(stored[0].id)} == {result.batch_id}
    pairs = [t for t in brain.list_traces(TraceFilter()) if t.content.startswith("[user]: ")]
    assert len(pairs) == 3
    # a second import of the same export asks nothing: its pairs are in the brain
    again = run_to_end(plan(brain, export, options=options(ollama_server.url)))
    assert len(ollama_server.chat_requests) == 3
    assert not [r for r in again.records if "#fact-" in r.source]


def test_a_fact_the_brain_holds_is_a_duplicate(brain, export, ollama_server):
    held = brain.add("I want to learn Go.", type="episodic", category="goal").id
    p = run_to_end(plan(brain, export, options=options(ollama_server.url)))
    [go] = [r for r in p.records if "#fact-" in r.source and "Go" in r.fields["content"]]
    assert (go.verdict, go.existing_id) == ("duplicate", held)


def test_the_personality_filters_the_facts(brain, export, ollama_server):
    config = AutoIngestConfig(traits={"openness": 1.0})  # threshold 0.2: Kyoto is kept
    p = run_to_end(plan(brain, export, options=options(ollama_server.url, facts_config=config)))
    contents = [r.fields["content"] for r in p.records if "#fact-" in r.source]
    assert contents == ["I prefer green tea.", "I went to Kyoto.", "I want to learn Go."]


def test_no_chat_model_no_facts_and_the_plan_says_so(brain, export, ollama_server):
    ollama_server.stop()
    p = run_to_end(plan(brain, export, options=options(ollama_server.url)))
    assert not [r for r in p.records if "#fact-" in r.source]
    assert [r.reason for r in p.not_read] == [
        f"facts not extracted: Ollama at {ollama_server.url} is not reachable"
    ]
    assert p.counts["new"] == 3 + 3 + 6  # the chats themselves still import


def test_a_failed_call_leaves_that_chat_without_facts(brain, export, ollama_server):
    ollama_server.fail_next_chat = 1
    p = run_to_end(plan(brain, export, options=options(ollama_server.url)))
    assert [r.fields["content"] for r in p.records if "#fact-" in r.source] == [
        "I want to learn Go."
    ]
    [missed] = p.not_read
    assert (
        missed.reason.startswith("facts not extracted: Ollama at") and "HTTP 500" in missed.reason
    )


def test_extract_facts_is_for_chatgpt_exports(brain, tmp_path, ollama_server):
    notes = tmp_path / "notes.csv"
    notes.write_text("content\nhello\n")
    with pytest.raises(InvalidArgument, match="extract_facts works on ChatGPT exports only"):
        run_to_end(plan(brain, notes, options=options(ollama_server.url)))
    with pytest.raises(InvalidArgument, match="extract_facts must be True or False"):
        run_to_end(plan(brain, notes, options=ImportOptions(extract_facts="yes")))
