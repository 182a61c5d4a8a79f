"""An imported chat's conversation read on both engines (`conversation`, `conversation_of`):
the same head and messages in order from a SQLite file and from a real PostgreSQL server,
a memory typed by hand has none, and an unknown or malformed id is refused by name."""

from __future__ import annotations

from typing import Any

import pytest

from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.io.planning.plan import plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from memgui.core.shared_brain import SharedBrain
from memgui.core.shared_import import SharedImport
from memgui.core.storage.engine import BrainStore
from tests.support.paths import CORPORA

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server

CHAT_EXPORT = CORPORA / "chatgpt" / "librechat__chatgpt-export.json"


def import_chats(store: BrainStore) -> None:
    """The export imported as the app and the command line import it on each engine."""
    if isinstance(store, SharedBrain):
        with SharedImport(store) as job:
            run_to_end(job.commit(run_to_end(job.plan(CHAT_EXPORT, "chatgpt"))))
    else:
        brain: Any = store
        run_to_end(commit(brain, run_to_end(plan(brain, CHAT_EXPORT, format="chatgpt"))))


def shape(conversation: dict[str, Any]) -> tuple[Any, ...]:
    messages = tuple((m["role"], m["content"], m["created_at"]) for m in conversation["messages"])
    return conversation["title"], conversation["created_at"], messages


def test_a_chat_memory_has_its_conversation_in_order(store: Any) -> None:
    import_chats(store)
    chats = [t for t in store.list_traces(limit=200) if t.metadata.get("conversation_id")]
    assert chats
    for trace in chats:
        found = store.conversation_of(trace.id)
        assert found is not None and found["id"] == trace.metadata["conversation_id"]
        times = [m["created_at"] for m in found["messages"]]
        assert times == sorted(times) and found["messages"]
        assert found == store.conversation(found["id"])
        assert isinstance(found["metadata"], dict)
    assert store.conversation_of(store.add("A memory typed by hand").id) is None


def test_both_engines_read_the_same_conversations(tmp_path, pg_address: str) -> None:
    from memgui.core.engines import open_store

    shapes = []
    for where in (tmp_path / "brain.sqlite", pg_address):
        with open_store(where, "team", actor="test") as store:
            import_chats(store)
            chats = [t for t in store.list_traces(limit=200) if t.metadata.get("conversation_id")]
            by_id = {t.metadata["conversation_id"] for t in chats}
            shapes.append(sorted(shape(store.conversation(c)) for c in by_id))  # type: ignore[attr-defined]
    assert shapes[0] == shapes[1] and shapes[0]


def test_an_unknown_or_malformed_conversation_id_is_refused(store: Any) -> None:
    with pytest.raises(NotFound, match="no-such-chat"):
        store.conversation("no-such-chat")
    with pytest.raises(InvalidArgument, match="conversation_id"):
        store.conversation("")
