"""ChatGPT exports of valid JSON but an odd shape: one bad conversation is refused alone, and
what the plan accepts the commit writes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportOptions, ImportPlan, plan
from memgui.core.io.records import CONVERSATION, NEW, REFUSED
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.support.chatgpt_conversations import linear_conversation
from tests.support.planning import plan_in_thread

GOOD = linear_conversation(0, ["What is the build tool?", "Gradle."], "good")


def odd(change: Any) -> dict[str, Any]:
    conversation = copy.deepcopy(linear_conversation(1, ["Which port?", "8080."], "odd"))
    change(conversation)
    return conversation


def set_in(path: list[str], value: Any) -> Any:
    def change(conversation: dict[str, Any]) -> None:
        target = conversation
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def planned(
    brain: Brain, tmp_path: Path, conversations: list[Any], all_branches: bool = False
) -> ImportPlan:
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps(conversations), encoding="utf-8")
    options = ImportOptions(format="chatgpt", all_branches=all_branches)
    return run_to_end(plan(brain, source, options=options))


def conversation_verdicts(the_plan: ImportPlan) -> dict[str, tuple[str, str]]:
    return {
        r.source.rsplit("#", 1)[1]: (r.verdict, r.reason)
        for r in the_plan.records
        if r.kind == CONVERSATION
    }


# Each of these made the whole planning raise (AttributeError, KeyError, OverflowError).
READ_ANYWAY = {
    "a node that is no object": set_in(["mapping", "stray"], 5),
    "a node that is a list, no current node": lambda c: (
        set_in(["mapping", "stray"], [1])(c),
        set_in(["current_node"], None)(c),
    ),
    "a node id that differs from its key": set_in(["mapping", "n0", "id"], "other"),
    "a node id that is a number": set_in(["mapping", "n1", "id"], 7),
    "attachments that are no list": set_in(
        ["mapping", "n0", "message", "metadata"], {"attachments": 5}
    ),
}


@pytest.mark.parametrize("all_branches", [False, True], ids=["current", "all-branches"])
@pytest.mark.parametrize("change", READ_ANYWAY.values(), ids=READ_ANYWAY.keys())
def test_an_odd_node_is_read_around(
    brain: Brain, tmp_path: Path, change: Any, all_branches: bool
) -> None:
    the_plan = planned(brain, tmp_path, [GOOD, odd(change)], all_branches)
    assert conversation_verdicts(the_plan) == {"good": (NEW, ""), "odd": (NEW, "")}
    odd_traces = [
        r for r in the_plan.records if r.kind == "trace" and "8080" in r.fields["content"]
    ]
    assert [r.fields["content"] for r in odd_traces] == ["[user]: Which port?\n[assistant]: 8080."]
    result = run_to_end(commit(brain, the_plan))
    assert result.imported == 2 * 4 and not result.errors  # two conversations, their rows


REFUSED_ALONE = {
    "create_time 1e308": (
        set_in(["create_time"], 1e308),
        "create_time must be seconds since 1970 within ±2**63 milliseconds (got 1e+308)",
    ),
    # The plan took it and the commit died on it (OverflowError: int too big to convert).
    "update_time 1e17": (
        set_in(["update_time"], 1e17),
        "update_time must be seconds since 1970 within ±2**63 milliseconds (got 1e+17)",
    ),
    "a message create_time -1e308": (
        set_in(["mapping", "n0", "message", "create_time"], -1e308),
        "mapping['n0'].message.create_time must be seconds since 1970 within ±2**63 "
        "milliseconds (got -1e+308)",
    ),
}


@pytest.mark.parametrize(("change", "reason"), REFUSED_ALONE.values(), ids=REFUSED_ALONE.keys())
def test_a_time_past_64_bits_refuses_its_conversation_alone(
    brain: Brain, tmp_path: Path, change: Any, reason: str
) -> None:
    the_plan = planned(brain, tmp_path, [GOOD, odd(change)])
    assert conversation_verdicts(the_plan) == {"good": (NEW, ""), "odd": (REFUSED, reason)}
    assert {r.source.split("#")[1].split("/")[0] for r in the_plan.records} == {"good", "odd"}
    result = run_to_end(commit(brain, the_plan))
    assert result.imported == 4 and not result.errors  # the good conversation, whole


def test_a_conversation_nested_past_what_json_parsers_read_is_lost_alone(
    brain: Brain, tmp_path: Path
) -> None:
    tricky = json.dumps('brackets ] } and a quote " in a string [ {')  # not counted
    deep = '{"title": ' + tricky + ', "mapping": {"x": ' + "[" * 10_000 + "]" * 10_000 + "}}"
    later = linear_conversation(2, ["Which region?", "eu-west-1."], "later")
    text = "[" + json.dumps(GOOD) + ", " + deep + ", " + json.dumps(later) + "]"
    source = tmp_path / "conversations.json"
    source.write_text(text, encoding="utf-8")
    the_plan = run_to_end(plan(brain, source, options=ImportOptions(format="chatgpt")))
    conversations = [r for r in the_plan.records if r.kind == CONVERSATION]
    assert [(r.source.rsplit("#", 1)[1], r.verdict) for r in conversations] == [
        ("good", NEW),
        ("[1]", "error"),
        ("later", NEW),
    ]
    at = len(json.dumps(GOOD)) + 3
    assert conversations[1].reason == (
        f"the item at byte {at} nests deeper than 1,024 levels: not read"
    )
    assert the_plan.counts["new"] == 2 * 4


def test_many_messages_under_one_long_hidden_stretch(tmp_path: Path, brain_path: Path) -> None:
    """Each message looked for its shown ancestor up the whole stretch: 8,000 took two
    minutes, time squared; 15,000 take seconds (`plan_in_thread` stops at two minutes)."""
    question = {"author": {"role": "user"}, "content": {"content_type": "text", "parts": ["Q?"]}}
    mapping: dict[str, Any] = {
        "root": {"parent": None, "children": ["q"], "message": None},
        "q": {"parent": "root", "children": ["h0"], "message": question},
    }
    stretch = 15_000
    for n in range(stretch):  # nodes the person never saw (no message)
        children = [f"h{n + 1}"] if n + 1 < stretch else [f"a{k}" for k in range(stretch)]
        mapping[f"h{n}"] = {"parent": "q" if n == 0 else f"h{n - 1}", "children": children}
    for k in range(stretch):  # as many replies, each under the end of the stretch
        text = {"content_type": "text", "parts": [f"answer {k}"]}
        message = {"author": {"role": "assistant"}, "content": text}
        mapping[f"a{k}"] = {"parent": f"h{stretch - 1}", "children": [], "message": message}
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps([{"title": "t", "conversation_id": "c", "mapping": mapping}]))
    the_plan = plan_in_thread(brain_path, source, format="chatgpt", all_branches=True)
    messages = [r for r in the_plan.records if r.kind == "message"]
    assert len(messages) == 1 + stretch
    question_id = messages[0].fields["id"]
    assert all(m.fields["metadata"]["parent_id"] == question_id for m in messages[1:])
    assert the_plan.counts["error"] == 0
