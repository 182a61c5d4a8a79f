"""The conversations of a chat export's plan: which records belong to which, and their names.

A ChatGPT plan's records name their source by the export's ids (`conversations.json#<uuid>/
<node>`), which say nothing to a person. This index, built in one pass the first time a
view asks, knows for each record its conversation, and for each conversation its row, title,
time and the rows of its messages and memories; so a record is named by its conversation's
title (`Trip ideas › message 3`), and a conversation's check box can take its records along.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memgui.core.io import ImportPlan, RecordKind, conversation_of

UNTITLED = "Untitled"
_CHAT_KINDS = frozenset({RecordKind.CONVERSATION, RecordKind.MESSAGE, RecordKind.TRACE})


@dataclass
class PlanChats:
    """Conversation id -> its row, title, time and members; row -> conversation, ordinal."""

    row_of: dict[str, int] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    times: dict[str, int] = field(default_factory=dict)
    messages: dict[str, list[int]] = field(default_factory=dict)
    memories: dict[str, list[int]] = field(default_factory=dict)
    of_row: dict[int, str] = field(default_factory=dict)  # a chat record's conversation
    ordinal: dict[int, int] = field(default_factory=dict)  # its place among its kind, from 1

    @classmethod
    def of(cls, plan: ImportPlan | None) -> PlanChats:
        chats = cls()
        for row, record in enumerate(plan.records if plan is not None else ()):
            if record.kind not in _CHAT_KINDS:
                continue
            of = conversation_of(record)
            if of is None:
                continue
            chats.of_row[row] = of
            if record.kind == RecordKind.CONVERSATION:
                chats.row_of.setdefault(of, row)
                title = record.fields.get("title")
                chats.titles[of] = title if isinstance(title, str) and title else UNTITLED
                created = record.fields.get("created_at")
                chats.times[of] = created if isinstance(created, int) else 0
            else:
                group = chats.messages if record.kind == RecordKind.MESSAGE else chats.memories
                members = group.setdefault(of, [])
                members.append(row)
                chats.ordinal[row] = len(members)
        return chats

    @property
    def conversations(self) -> list[str]:
        """The conversation ids, in the plan's order."""
        return sorted(self.row_of, key=self.row_of.__getitem__)

    def source(self, row: int, kind: str) -> str | None:
        """How a person knows a chat record: its conversation's title, and for a message or
        a memory its place there (`Trip ideas › message 3`); None for any other record."""
        of = self.of_row.get(row)
        if of is None:
            return None
        title = self.titles.get(of, UNTITLED)
        if kind == RecordKind.CONVERSATION:
            return title
        what = "message" if kind == RecordKind.MESSAGE else "memory"
        return f"{title} › {what} {self.ordinal.get(row, 0)}"
