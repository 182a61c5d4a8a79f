"""Each reader's last guard: a unit (note, row, conversation, line) whose reading raises
what no rule foresaw is lost alone, saying what went wrong, and the rest is read.

The fuzz suite (test_fuzz_import.py) keeps every reader from reaching this guard; here a
reader's step is made to raise on one unit, to see the guard hold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportPlan
from memgui.core.io.readers import (
    agentos_rows,
    chatgpt_tree,
    csv_reader,
    gsd_reader,
    jsonl_reader,
    markdown_reader,
)
from memgui.core.io.readers.text_utils import UNEXPECTED
from memgui.core.io.records import ERROR, NEW
from tests.support.chatgpt_conversations import linear_conversation
from tests.support.paths import FIXTURES
from tests.support.planning import planned

VALID = FIXTURES / "jsonl" / "valid.jsonl"  # agent-memory's own export, as the JSONL tests read it

FAILURE = f"{UNEXPECTED} (RuntimeError: an unforeseen shape)"


def fail_on(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, marker: str) -> None:
    """Make `module.name` raise when its arguments mention `marker`."""
    original = getattr(module, name)

    def failing(*args: Any, **kwargs: Any) -> Any:
        if marker in repr(args):
            raise RuntimeError("an unforeseen shape")
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, failing)


def verdicts(the_plan: ImportPlan) -> list[tuple[str, str]]:
    return [(r.verdict, r.reason) for r in the_plan.records]


def test_a_note(brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a.md", "bad.md", "c.md"):
        (tmp_path / name).write_text(f"the note {name}\n")
    fail_on(monkeypatch, markdown_reader, "trace_record", "bad.md")
    the_plan = planned(brain, tmp_path, "markdown")
    assert verdicts(the_plan) == [(NEW, ""), (ERROR, FAILURE), (NEW, "")]
    assert the_plan.records[1].source == "bad.md:1"


def test_a_csv_row(brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("content\nfirst\nbad row\nthird\n")
    fail_on(monkeypatch, csv_reader, "row_fields", "bad row")
    the_plan = planned(brain, source, "csv")
    assert verdicts(the_plan) == [(NEW, ""), (ERROR, FAILURE), (NEW, "")]
    assert the_plan.records[1].source == "rows.csv:3"


def test_an_agentos_row(brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    traces = [{"id": name, "content": f"text {name}"} for name in ("a", "bad", "c")]
    source = tmp_path / "export.json"
    source.write_text(json.dumps({"traces": traces}))
    fail_on(monkeypatch, agentos_rows, "trace_record", "'bad'")
    the_plan = planned(brain, source, "json")
    assert verdicts(the_plan) == [(NEW, ""), (ERROR, FAILURE), (NEW, "")]
    assert the_plan.records[1].source == f"{source}#traces[1]"


def test_a_conversation(brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conversations = [
        linear_conversation(n, [f"question {n}", f"answer {n}"], name)
        for n, name in enumerate(["first", "bad", "third"])
    ]
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps(conversations))
    fail_on(monkeypatch, chatgpt_tree, "render", "question 1")
    the_plan = planned(brain, source, "chatgpt")
    lost = [r for r in the_plan.records if r.verdict == ERROR]
    assert [(r.source, r.reason) for r in lost] == [(f"{source}#bad", FAILURE)]
    assert the_plan.counts["new"] == 2 * 4  # the other two, whole


def test_a_jsonl_line(brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = jsonl_reader._check_line

    def failing(state: Any, line: int, obj: Any) -> None:
        if line == 3:
            raise RuntimeError("an unforeseen shape")
        original(state, line, obj)

    monkeypatch.setattr(jsonl_reader, "_check_line", failing)
    the_plan = planned(brain, VALID, "jsonl")
    assert all(r.verdict == ERROR for r in the_plan.records)  # strict: the file, whole
    assert f"line 3: {FAILURE}" in [r.reason for r in the_plan.records]


def test_a_state_file(brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "STATE.md"
    state.write_text("## Decisions\n\n- one\n")
    fail_on(monkeypatch, gsd_reader, "scan_state", "one")
    assert planned(brain, state, "gsd").unreadable == f"STATE.md:1: {FAILURE}"
