"""A trace imported from a chat shows its conversation, messages in order."""

from __future__ import annotations

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import NotFound
from memgui.core.io.planning.plan import plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.support.paths import CORPORA


def test_imported_chatgpt_trace_shows_its_conversation(brain: Brain) -> None:
    source = CORPORA / "chatgpt" / "librechat__chatgpt-export.json"
    run_to_end(commit(brain, run_to_end(plan(brain, source, format="chatgpt"))))
    trace = next(t for t in brain.list_traces(limit=200) if t.metadata.get("conversation_id"))
    conv = brain.conversation_of(trace.id)
    assert conv is not None and conv["messages"]
    roles = {m["role"] for m in conv["messages"]}
    assert roles <= {"user", "assistant"} and "user" in roles
    times = [m["created_at"] for m in conv["messages"]]
    assert times == sorted(times)


def test_trace_without_conversation_and_unknown_conversation(brain: Brain) -> None:
    t = brain.add("plain memory")
    assert brain.conversation_of(t.id) is None
    with pytest.raises(NotFound, match="cv_nope"):
        brain.conversation("cv_nope")
