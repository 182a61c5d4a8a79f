"""The graph view's edits as undoable commands: each a core call whose batch a revert undoes.

Links between memories and forgetting a memory are the window's own commands (`LinkCommand`,
`SetDeletedCommand`); these add what only the graph offers: an edge to a knowledge node,
removing one, deleting or merging knowledge nodes, and a merge of memories into the
survivor the person picked.
"""

from __future__ import annotations

from typing import Any

from memgui.core import graph_view
from memgui.core.model import Changes
from memgui.ui.commands import CoreCommand, memories
from memgui.ui.session import ACTOR, BrainSession


class ConnectCommand(CoreCommand):
    def __init__(self, session: BrainSession, source: str, target: str, edge_type: str) -> None:
        super().__init__(session, f"Connect ({edge_type})")
        self.source, self.target, self.edge_type = source, target, edge_type

    def _perform(self) -> tuple[Any, Changes]:
        brain = self.session.brain
        return self._batch(
            lambda: graph_view.connect(brain, self.source, self.target, self.edge_type, ACTOR)
        )


class RemoveEdgeCommand(CoreCommand):
    def __init__(self, session: BrainSession, edge_id: str, kind: str) -> None:
        super().__init__(session, f"Remove edge ({kind})")
        self.edge_id = edge_id

    def _perform(self) -> tuple[Any, Changes]:
        brain = self.session.brain
        return self._batch(lambda: graph_view.remove_edge(brain, self.edge_id, ACTOR))


class DeleteNodeCommand(CoreCommand):
    def __init__(self, session: BrainSession, node_id: str, label: str) -> None:
        super().__init__(session, f"Delete node “{label}”")
        self.node_id = node_id

    def _perform(self) -> tuple[Any, Changes]:
        brain = self.session.brain
        return self._batch(lambda: graph_view.delete_node(brain, self.node_id, ACTOR))


class MergeNodesCommand(CoreCommand):
    def __init__(self, session: BrainSession, ids: list[str], survivor: str) -> None:
        super().__init__(session, f"Merge {len(ids)} nodes")
        self.ids, self.survivor = list(ids), survivor

    def _perform(self) -> tuple[Any, Changes]:
        brain = self.session.brain
        return self._batch(lambda: graph_view.merge_nodes(brain, self.ids, self.survivor, ACTOR))


class MergeIntoCommand(CoreCommand):
    """Merge memories into the one the person picked (their texts joined, as the window's
    merge joins them without an edited text)."""

    def __init__(self, session: BrainSession, ids: list[str], survivor: str) -> None:
        super().__init__(session, f"Merge {memories(len(ids))}")
        self.ids, self.survivor = list(ids), survivor

    def _perform(self) -> tuple[Any, Changes]:
        brain = self.session.brain
        return self._batch(lambda: brain.merge(self.ids, actor=ACTOR, keep=self.survivor))
