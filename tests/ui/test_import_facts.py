"""A ChatGPT import's "Extract facts": the facts join the review, and the import's batch."""

from __future__ import annotations

import json

from memgui.core.model import TraceFilter
from tests.support.chatgpt_conversations import linear_conversation
from tests.support.import_export import WAIT_MS, commit_and_wait, open_and_plan, wait_for_plan


def test_extract_facts_adds_them_to_the_plan_and_the_commit(
    qtbot, window, tmp_path, ollama_server, monkeypatch
):
    monkeypatch.setenv("MEMGUI_OLLAMA_URL", ollama_server.url)
    export = tmp_path / "conversations.json"
    chats = [linear_conversation(1, ["I prefer green tea. I want to learn Go.", "Noted."], "c1")]
    export.write_text(json.dumps(chats))
    dialog = open_and_plan(qtbot, window, export)
    check = dialog.review.options_bar.facts_check
    assert check.isVisibleTo(dialog) and not check.isChecked()
    assert not [r for r in dialog.run.plan.records if "#fact-" in r.source]
    first = dialog.run.plan
    check.setChecked(True)
    qtbot.waitUntil(lambda: dialog.run.plan is not first, timeout=WAIT_MS)
    wait_for_plan(qtbot, dialog)
    facts = [r for r in dialog.run.plan.records if "#fact-" in r.source]
    assert [r.fields["content"] for r in facts] == ["I prefer green tea.", "I want to learn Go."]
    assert ollama_server.chat_requests[-1]["model"] == "llama3.2"
    facts[1].accepted = False
    result = commit_and_wait(qtbot, dialog)
    stored = window.session.brain.list_traces(TraceFilter(tag="auto_ingest"))
    assert [t.content for t in stored] == ["I prefer green tea."]
    assert {e.batch_id for e in window.session.brain.history(stored[0].id)} == {result.batch_id}


def test_the_option_is_only_offered_for_chatgpt(qtbot, window, tmp_path):
    csv = tmp_path / "notes.csv"
    csv.write_text("content\nhello\n")
    dialog = open_and_plan(qtbot, window, csv)
    assert not dialog.review.options_bar.facts_check.isVisibleTo(dialog)
