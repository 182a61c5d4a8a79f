"""Reader of ChatGPT exports (conversations.json, single conversations, split folders)."""

from __future__ import annotations

import json
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers.chatgpt_reader import (
    chatgpt_trace_id,
    conversation_row_id,
    read_chatgpt,
)
from memgui.core.io.records import DUPLICATE, ERROR, NEW, REFUSED, SKIPPED, ImportRecord
from memgui.core.progress import Progress
from tests.support.paths import SHARED, TESTS

CORPUS = SHARED / "corpora" / "chatgpt"
FIXTURES = TESTS / "fixtures" / "chatgpt"


def records(path: Path, **options: object) -> list[ImportRecord]:
    return [e for e in read_chatgpt(path, **options) if isinstance(e, ImportRecord)]


def of_kind(result: list[ImportRecord], kind: str) -> list[ImportRecord]:
    return [r for r in result if r.kind == kind]


def test_current_branch_is_the_default() -> None:
    result = records(FIXTURES / "branching.json")
    traces = [r.fields["content"] for r in of_kind(result, "trace")]
    assert traces == [
        "[user]: Where should we hike on Saturday?\n"
        "[assistant]: Try the ridge trail above the lake.",
        "[user]: Is it suitable for kids?\n[assistant]: Yes, the first five kilometres are flat.",
    ]
    messages = of_kind(result, "message")
    assert [m.fields["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    (conversation,) = of_kind(result, "conversation")
    assert conversation.fields["id"] == conversation_row_id({"conversation_id": "conv-branch-1"})
    assert conversation.fields["metadata"]["chatgpt_id"] == "conv-branch-1"
    assert conversation.fields["created_at"] == 1700000000000
    assert conversation.fields["updated_at"] == 1700000100000
    assert all(m.fields["conversation_id"] == conversation.fields["id"] for m in messages)
    # messages are chained to the message they answer, so the app can draw the thread
    assert messages[0].fields["metadata"]["parent_id"] is None
    assert messages[1].fields["metadata"]["parent_id"] == messages[0].fields["id"]


def test_all_branches_reads_every_edit_and_regeneration() -> None:
    result = records(FIXTURES / "branching.json", all_branches=True)
    traces = sorted(r.fields["content"] for r in of_kind(result, "trace"))
    assert len(traces) == 4
    assert "[user]: How long is it?\n[assistant]: About twelve kilometres." in traces
    assert "[user]: Is it suitable for kids?\n[assistant]: Old answer: not really." in traces
    assert len(of_kind(result, "message")) == 7


def test_tool_messages_between_question_and_answer_and_hidden_nodes() -> None:
    result = records(FIXTURES / "tool_and_image.json")
    first, unanswered = of_kind(result, "trace")
    assert first.fields["content"] == (
        "[user]: [image]\nWhy is this plan slow?\n[file: plan.txt]\n"
        "[assistant]: Add an index on customer_id."
    )
    assert first.fields["created_at"] == 1700000001000
    assert unanswered.fields["content"] == "[user]: Thanks, I will try it."
    text = "\n".join(r.fields["content"] for r in result if r.kind in ("trace", "message"))
    for hidden in ("SECRET", "HIDDEN USER TEXT", "TOOL CALL", "TOOL OUTPUT", "private chain"):
        assert hidden not in text
    roles = [(m.fields["role"], m.fields["content"]) for m in of_kind(result, "message")]
    assert ("assistant", "[reasoning]") in roles
    assert roles[0] == ("user", "[image]\nWhy is this plan slow?\n[file: plan.txt]")


def test_ids_are_stable_so_a_reimport_adds_nothing() -> None:
    first = records(FIXTURES / "tool_and_image.json")
    again = records(FIXTURES / "tool_and_image.json")
    assert [r.fields["id"] for r in first] == [r.fields["id"] for r in again]
    trace = of_kind(first, "trace")[0]
    assert trace.fields["id"] == chatgpt_trace_id("brain", trace.fields["content"])
    assert trace.fields["id"].startswith("mt_chatgpt_") and len(trace.fields["id"]) == 75
    other = of_kind(records(FIXTURES / "tool_and_image.json", brain_id="work"), "trace")[0]
    assert other.fields["id"] == chatgpt_trace_id("work", trace.fields["content"])
    assert trace.fields["metadata"]["source"] == "chatgpt_export"
    assert conversation_row_id({"title": "t", "create_time": 1.5}) != conversation_row_id(
        {"title": "t"}
    )


def test_split_export_folder() -> None:
    result = records(FIXTURES / "split_export")
    conversations = of_kind(result, "conversation")
    assert [c.fields["title"] for c in conversations] == [
        "Split one",
        "Split two",
        "No mapping here",
    ]
    assert [c.verdict for c in conversations] == [NEW, NEW, REFUSED]
    assert conversations[2].problem_field == "mapping"
    unread = {Path(r.source).name: r for r in of_kind(result, "unread")}
    assert set(unread) == {"file-abc.png", "user.json"}
    assert all(r.verdict == SKIPPED for r in unread.values())
    assert len(of_kind(result, "trace")) == 2


def test_the_same_pair_twice_in_one_export_is_a_duplicate(tmp_path: Path) -> None:
    conversation = json.loads((FIXTURES / "branching.json").read_text(encoding="utf-8"))[0]
    copy = dict(conversation, conversation_id="conv-branch-2", id="conv-branch-2")
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conversation, copy]), encoding="utf-8")
    traces = of_kind(records(path), "trace")
    assert [t.verdict for t in traces] == [NEW, NEW, DUPLICATE, DUPLICATE]
    assert traces[2].existing_id == traces[0].fields["id"]


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*.json")))
def test_every_corpus_file_reads_and_accounts_for_each_conversation(name: str) -> None:
    path = CORPUS / name
    raw = json.loads(path.read_text(encoding="utf-8"))
    expected = len(raw) if isinstance(raw, list) else 1
    for all_branches in (False, True):
        result = records(path, all_branches=all_branches)
        conversations = of_kind(result, "conversation")
        assert len(conversations) == expected
        assert all(r.verdict in (NEW, REFUSED) for r in conversations)
        for conversation in conversations:
            traces = [
                t
                for t in of_kind(result, "trace")
                if t.fields["metadata"]["conversation_id"] == conversation.fields["id"]
            ]
            # a conversation with no pair says why
            assert traces or conversation.reason
        for message in of_kind(result, "message"):
            assert message.fields["role"] in ("user", "assistant", "tool")
            assert message.fields["content"].strip()


def test_corpus_details() -> None:
    chatlore = records(CORPUS / "chatlore__fixture-conversations.json")
    reasons = {c.fields["title"]: c.reason for c in of_kind(chatlore, "conversation")}
    assert reasons["Broken record"] == 'the conversation has no "mapping": no messages'
    assert reasons["No id"] == "mapping holds no message a person saw"
    citations = records(CORPUS / "librechat__chatgpt-citations.json")
    (conversation,) = of_kind(citations, "conversation")
    assert conversation.verdict == NEW and "no question" in conversation.reason
    images = records(CORPUS / "pionxzh-chatgpt-exporter__image-generation.conversation.json")
    assert of_kind(images, "trace")[0].fields["content"] == (
        "[user]: [image]\nquestion 1\n[assistant]: [image]"
    )


def test_files_that_are_not_exports(tmp_path: Path) -> None:
    broken = tmp_path / "conversations.json"
    broken.write_text('[{"title": "a", "mapping": {}}, {"title": ', encoding="utf-8")
    result = records(broken)
    assert result[-1].verdict == ERROR and "not valid JSON" in result[-1].reason
    other = tmp_path / "other.json"
    other.write_text('{"traces": []}', encoding="utf-8")
    (record,) = records(other)
    assert record.verdict == ERROR and "keys traces" in record.reason
    with pytest.raises(InvalidArgument):
        records(tmp_path / "absent.json")


def test_big_export_is_read_in_bounded_memory(tmp_path: Path) -> None:
    conversation = json.loads((FIXTURES / "branching.json").read_text(encoding="utf-8"))[0]
    many = [dict(conversation, conversation_id=f"c{i}", id=f"c{i}") for i in range(400)]
    path = tmp_path / "conversations.json"
    path.write_bytes(json.dumps(many, separators=(",", ":")).encode())
    size = path.stat().st_size
    tracemalloc.start()
    count = sum(1 for e in read_chatgpt(path) if isinstance(e, ImportRecord))
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 400 * 7
    # One conversation at a time: parsing the whole file would hold the file's bytes and
    # objects worth about four times them.
    assert peak < 2 * size


def test_progress_and_cancel() -> None:
    events = read_chatgpt(CORPUS / "pkuppens-my_chat_gpt__conversations.json")
    seen = [next(events) for _ in range(50)]
    events.close()
    progress = [e for e in seen if isinstance(e, Progress)]
    assert progress and progress[-1].total and progress[-1].done <= progress[-1].total
    assert Counter(type(e).__name__ for e in seen)["ImportRecord"] > 0


def test_a_trace_shares_its_question_message_strings() -> None:
    # A big export is held in memory while it is reviewed: each string is held once.
    result = records(FIXTURES / "branching.json", all_branches=True)
    by_node = {m.fields["metadata"]["chatgpt_node_id"]: m for m in of_kind(result, "message")}
    for trace in of_kind(result, "trace"):
        node_ids = trace.fields["metadata"]["chatgpt_node_ids"]
        question = by_node[node_ids[0]]
        assert trace.source is question.source
        assert trace.fields["created_at"] == question.fields["created_at"]
        assert all(n is by_node[n].fields["metadata"]["chatgpt_node_id"] for n in node_ids)
