"""The detail pane's Conversation tab on a shared brain (a real PostgreSQL): a ChatGPT export
imported through the import window, a memory of it shows the chat, its messages in order,
read on the server; a memory typed by hand has no such tab, as on a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.shared_brain import SharedBrain
from tests.support.import_export import commit_and_wait, open_and_plan
from tests.support.paths import CORPORA
from tests.support.shared_window import open_shared_window
from tests.support.waiting import WAIT_MS
from tests.support.window import select_row

pytestmark = pytest.mark.slow  # a real server

CHAT_EXPORT = CORPORA / "chatgpt" / "librechat__chatgpt-export.json"


def test_a_chat_memory_shows_its_conversation_from_the_server(
    qtbot, tmp_path: Path, pg_address: str
) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        plain = brain.add("A memory typed by hand").id
    window = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        # The chat export imported through the import window, its review the file's.
        dialog = open_and_plan(qtbot, window, CHAT_EXPORT)
        assert dialog.run.plan.format == "chatgpt"
        assert commit_and_wait(qtbot, dialog).imported > 0
        dialog.close()
        with SharedBrain.open(pg_address, actor="check") as check:
            from_chat = next(
                t for t in check.list_traces(limit=200) if t.metadata.get("conversation_id")
            )
            expected = check.conversation_of(from_chat.id)
        assert expected is not None and expected["messages"]
        qtbot.waitUntil(lambda: window.model.row_of(from_chat.id) >= 0, timeout=WAIT_MS)
        pane, tab = window.detail, window.detail.conversation
        index = pane.indexOf(tab)
        select_row(window, window.model.row_of(from_chat.id))
        assert pane.isTabEnabled(index) and pane.isTabVisible(index)
        assert pane.tabToolTip(index) == ""
        pane.setCurrentWidget(tab)
        qtbot.waitUntil(lambda: tab.conversation is not None, timeout=WAIT_MS)
        messages = expected["messages"]
        assert tab.messages() == [(m["role"], m["content"]) for m in messages]
        assert f"{len(messages)} message" in tab.title.text()
        select_row(window, window.model.row_of(plain))
        assert not pane.isTabVisible(index)
        assert pane.currentWidget() is pane.editor
    finally:
        window.close()
