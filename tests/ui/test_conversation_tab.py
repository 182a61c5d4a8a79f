"""The Conversation tab: a memory imported from a chat shows the chat, messages in order."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from memgui.ui.views.conversation_view import ConversationTab, message_html
from tests.support.paths import CORPORA
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window

CHAT_EXPORT = CORPORA / "chatgpt" / "librechat__chatgpt-export.json"


@pytest.fixture
def chat_brain(tmp_path):
    path = tmp_path / "chats.sqlite"
    with Brain.open(path, actor="test") as brain:
        run_to_end(commit(brain, run_to_end(plan(brain, CHAT_EXPORT, format="chatgpt"))))
        from_chat = next(
            t for t in brain.list_traces(limit=200) if t.metadata.get("conversation_id")
        )
        expected = brain.conversation_of(from_chat.id)
        plain = brain.add("A memory typed by hand").id
    return path, from_chat.id, expected, plain


def test_conversation_tab_shows_the_chat_in_order(qtbot, tmp_path, chat_brain):
    path, trace_id, expected, plain = chat_brain
    window = open_window(qtbot, tmp_path, path)
    tab = window.detail.conversation
    window.detail.setCurrentWidget(tab)
    assert window.select_id(trace_id)
    qtbot.waitUntil(lambda: tab.conversation is not None, timeout=WAIT_MS)
    messages = expected["messages"]
    assert messages and tab.messages() == [(m["role"], m["content"]) for m in messages]
    shown = " ".join(tab.text.toPlainText().split())
    first = " ".join(messages[0]["content"].split())[:60]
    last = " ".join(messages[-1]["content"].split())[-60:]
    assert shown.index(first) < shown.rindex(last)
    assert f"{len(messages)} message" in tab.title.text()

    # A memory typed by hand has no conversation: its tab is left out and the pane goes
    # back to the editor.
    pane = window.detail
    assert window.select_id(plain)
    assert not pane.isTabVisible(pane.indexOf(tab))
    assert pane.currentWidget() is pane.editor
    pane.setCurrentIndex(pane.indexOf(tab) - 1)
    qtbot.keyClick(pane, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert pane.currentWidget() is pane.editor  # Ctrl+Tab skips the hidden tab

    assert window.select_id(trace_id)
    assert pane.isTabVisible(pane.indexOf(tab))
    window.close()


def test_the_conversation_tab_is_shown_only_for_a_memory_from_a_chat(qtbot, tmp_path, chat_brain):
    path, trace_id, _expected, plain = chat_brain
    window = open_window(qtbot, tmp_path, path)
    pane = window.detail
    index = pane.indexOf(pane.conversation)
    assert window.select_id(plain)
    assert not pane.isTabVisible(index)
    assert window.select_id(trace_id)
    assert pane.isTabVisible(index)
    window.edits.new_memory()
    assert not pane.isTabVisible(index)
    window.close()


def test_no_chat_means_no_conversation_text(qtbot):
    tab = ConversationTab()
    qtbot.addWidget(tab)
    tab.show_conversation(None)
    assert "No memory is selected" in tab.title.text() and tab.text.isHidden()


def test_message_text_is_escaped_not_rendered(qtbot):
    tab = ConversationTab()
    qtbot.addWidget(tab)
    tab.show_conversation(
        {
            "id": "cv1",
            "title": "<b>t</b>",
            "messages": [
                {"role": "user", "content": "<script>x</script>\nline 2", "created_at": 0},
                {"role": "odd", "content": "", "created_at": None},
            ],
        }
    )
    assert "<script>x</script>" in tab.text.toPlainText()
    assert "&lt;b&gt;t&lt;/b&gt;" in tab.title.text()
    assert "<b>odd</b>" in message_html({"role": "odd"})
