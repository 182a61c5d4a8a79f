"""The Conversation tab: the chat a memory was imported from, its messages in order.

The core keeps at most a few thousand messages per conversation, so the whole chat is read
in one call and shown as read-only rich text (the message text is escaped, never rendered).
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from memgui.ui.models.trace_columns import format_ms
from memgui.ui.theme import colours
from memgui.ui.views.detail_tabs import DetailTab

ROLE_NAMES = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}


def message_html(message: dict[str, Any]) -> str:
    """One message as HTML: who and when in a header line, the text below, escaped."""
    role = str(message.get("role") or "")
    who = ROLE_NAMES.get(role, role or "unknown")
    when = message.get("created_at")
    stamp = format_ms(when) if isinstance(when, int) else ""
    text = html.escape(str(message.get("content") or ""))
    return (
        f'<p style="margin-bottom:2px"><b>{html.escape(who)}</b>'
        f' <span style="color:{colours.FAINT}">{stamp}</span></p>'
        # pre-wrap keeps the chat's line breaks and indentation (code in answers).
        f'<p style="margin-top:0; margin-bottom:10px; white-space:pre-wrap">{text}</p>'
    )


class ConversationTab(DetailTab):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conversation: dict[str, Any] | None = None
        self.title = QLabel()
        self.title.setObjectName("conversation_title")
        self.title.setWordWrap(True)
        self.text = QTextBrowser()
        self.text.setObjectName("conversation_text")
        self.text.setAccessibleName("Conversation")
        self.text.setOpenLinks(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.message)
        layout.addWidget(self.text, 1)

    def reload(self) -> None:
        brain, trace = self.brain, self.trace
        found = brain.conversation_of(trace.id) if brain and trace else None
        self.show_conversation(found)

    def show_conversation(self, conversation: dict[str, Any] | None) -> None:
        self.conversation = conversation
        if conversation is None:
            self.title.setText(
                "This memory was not imported from a chat."
                if self.trace is not None
                else "No memory is selected."
            )
            self.text.clear()
            self.text.hide()
            return
        messages = conversation.get("messages") or []
        noun = "message" if len(messages) == 1 else "messages"
        title = conversation.get("title") or "Untitled conversation"
        self.title.setText(f"<b>{html.escape(str(title))}</b> · {len(messages)} {noun}")
        self.text.setHtml("".join(message_html(m) for m in messages))
        self.text.show()

    def messages(self) -> list[tuple[str, str]]:
        """(role, content) of the messages shown, in order."""
        if self.conversation is None:
            return []
        return [(m.get("role", ""), m.get("content", "")) for m in self.conversation["messages"]]
