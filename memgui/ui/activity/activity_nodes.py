"""The nodes of the Agent activity tree (actor runs, batches, changes) and their cells."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgui.core.activity import CHANGED, GONE, UNDONE, ActivityBatch
from memgui.core.model import JournalEntry
from memgui.ui.activity import activity_text as text
from memgui.ui.theme import colours


class Node:
    __slots__ = ("key", "row")

    def __init__(self, key: int) -> None:
        self.key = key
        self.row = 0


class GroupNode(Node):
    __slots__ = ("actor", "batches")

    def __init__(self, key: int, actor: str) -> None:
        super().__init__(key)
        self.actor = actor
        self.batches: list[BatchNode] = []


class BatchNode(Node):
    __slots__ = ("group", "batch", "changes", "complete")

    def __init__(self, key: int, group: GroupNode, batch: ActivityBatch) -> None:
        super().__init__(key)
        self.group = group
        self.batch = batch
        self.changes: list[ChangeNode] = []
        self.complete = False

    @property
    def single(self) -> bool:
        return self.batch.size == 1


class ChangeNode(Node):
    __slots__ = ("parent", "entry", "state")

    def __init__(self, key: int, parent: BatchNode, entry: JournalEntry, state: str) -> None:
        super().__init__(key)
        self.parent = parent
        self.entry = entry
        self.state = state


def renumber(nodes: list[Any]) -> None:
    for row, node in enumerate(nodes):
        node.row = row


def cell_text(node: Node, column: int, labels: Mapping[str, str]) -> str:
    """What a node shows in a column of the tree."""
    if isinstance(node, GroupNode):
        count = len(node.batches)
        changes = sum(b.batch.size for b in node.batches)
        return (
            text.short_time(node.batches[0].batch.at),
            node.actor,
            f"{text.changes_word(changes)} in {count} batch{'es' if count > 1 else ''}",
            "",
        )[column]
    if isinstance(node, BatchNode):
        b = node.batch
        if node.single and node.changes:
            change = node.changes[0]
            what = text.describe(change.entry, labels)
            return (text.short_time(b.at), b.actor, what, change.state)[column]
        return (text.short_time(b.at), b.actor, text.summarize(b.ops, b.size), "")[column]
    assert isinstance(node, ChangeNode)
    entry = node.entry
    what = text.describe(entry, labels)
    return (text.short_time(entry.at), "", what, node.state)[column]


STATE_COLOURS = {CHANGED: colours.ERROR, GONE: colours.FAINT, UNDONE: colours.FAINT}
