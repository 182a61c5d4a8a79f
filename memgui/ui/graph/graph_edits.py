"""Edits made in the graph view: link, unlink, merge, forget — each an undoable command.

Between two memories a link is one of memgui's kinds (relates_to, supersedes, caused_by);
where a knowledge node is an end it is a knowledge edge of a type. Questions (which kind,
which survivor, which node) go through `GraphAsker`, which a test replaces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QInputDialog, QWidget

from memgui.core.errors import MemguiError
from memgui.core.graph_view import GRAPH, LINK, TRACE, GraphEdge, GraphNode
from memgui.core.model import LINK_KINDS
from memgui.ui import commands as cmd
from memgui.ui.graph import graph_commands as gcmd

if TYPE_CHECKING:
    from memgui.ui.graph.graph_scene import GraphScene
    from memgui.ui.graph.graph_window import GraphWindow

EDGE_TYPES = ("related_to", "mentions", "about", "part_of")


class GraphAsker:
    """The questions graph edits ask; tests put fixed answers in its place."""

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent

    def _choose(self, title: str, label: str, choices: list[str], editable: bool) -> str | None:
        text, ok = QInputDialog.getItem(self.parent, title, label, choices, 0, editable)
        return text.strip() if ok and text.strip() else None

    def link_kind(self, source: GraphNode, target: GraphNode, kinds: list[str]) -> str | None:
        editable = not (source.kind == TRACE and target.kind == TRACE)
        title = f"Link “{source.label}” to “{target.label}”"
        return self._choose(title, "Kind:", kinds, editable)

    def survivor(self, nodes: list[GraphNode]) -> str | None:
        labels = [f"{n.label}  ({n.id})" for n in nodes]
        picked = self._choose("Merge into", "Keep this one:", labels, False)
        return None if picked is None else nodes[labels.index(picked)].id

    def node(self, title: str, nodes: list[GraphNode]) -> str | None:
        labels = [f"{n.label}  ({n.id})" for n in nodes]
        picked = self._choose(title, "Node:", labels, False)
        return None if picked is None else nodes[labels.index(picked)].id

    def edge(self, title: str, edges: list[tuple[str, str]]) -> str | None:
        labels = [text for _key, text in edges]
        picked = self._choose(title, "Edge:", labels, False)
        return None if picked is None else edges[labels.index(picked)][0]


class GraphEdits:
    def __init__(self, window: GraphWindow) -> None:
        self.window = window
        self.ask = GraphAsker(window)

    @property
    def scene(self) -> GraphScene:
        return self.window.scene

    def _push(self, command: cmd.CoreCommand) -> bool:
        try:
            cmd.push(self.window.session, command)
        except MemguiError as exc:
            self.window.show_error(str(exc))
            return False
        return command.changed_something

    # --- link ---------------------------------------------------------------------------

    def link(self, source_id: str, target_id: str) -> bool:
        nodes = self.scene.nodes
        source, target = nodes.get(source_id), nodes.get(target_id)
        if source is None or target is None or source_id == target_id:
            return False
        both_traces = source.kind == TRACE and target.kind == TRACE
        seen = sorted({e.kind for e in self.scene.edges.values() if e.origin == GRAPH})
        kinds = (
            list(LINK_KINDS)
            if both_traces
            else [*EDGE_TYPES, *(k for k in seen if k not in EDGE_TYPES)]
        )
        kind = self.ask.link_kind(source, target, kinds)
        if kind is None:
            return False
        if both_traces and kind in LINK_KINDS:
            command: cmd.CoreCommand = cmd.LinkCommand(
                self.window.session, source_id, target_id, kind, add=True
            )
        else:
            command = gcmd.ConnectCommand(self.window.session, source_id, target_id, kind)
        return self._push(command)

    def link_selected(self) -> bool:
        """Link from the selected node to one picked from the shown (the keyboard's drag)."""
        selected = self.window.selected
        if not selected:
            return False
        others = [n for i, n in sorted(self.scene.nodes.items()) if i != selected[0]]
        target = self.ask.node("Link to", sorted(others, key=lambda n: n.label.casefold()))
        return target is not None and self.link(selected[0], target)

    # --- unlink -------------------------------------------------------------------------

    def unlink(self, key: str) -> bool:
        edge = self.scene.edges.get(key)
        if edge is None:
            return False
        if edge.origin == LINK:
            command: cmd.CoreCommand = cmd.LinkCommand(
                self.window.session, edge.source, edge.target, edge.kind, add=False
            )
        else:
            command = gcmd.RemoveEdgeCommand(
                self.window.session, key.removeprefix("edge|"), edge.kind
            )
        return self._push(command)

    def unlink_selected(self) -> bool:
        key = self.window.selected_edge()
        if key is None and self.window.selected:
            node = self.window.selected[0]
            edges = [
                (k, self._describe(e))
                for k, e in self.scene.edges.items()
                if node in (e.source, e.target)
            ]
            key = self.ask.edge("Unlink", edges) if edges else None
        return key is not None and self.unlink(key)

    def _describe(self, edge: GraphEdge) -> str:
        nodes = self.scene.nodes
        return f"{nodes[edge.source].label} —{edge.kind}→ {nodes[edge.target].label}"

    # --- merge and forget ---------------------------------------------------------------

    def merge_selected(self) -> bool:
        chosen = [self.scene.nodes[i] for i in self.window.selected if i in self.scene.nodes]
        if len(chosen) < 2:
            self.window.show_error("Select two nodes or more to merge (Ctrl+click adds one)")
            return False
        kinds = {n.kind for n in chosen}
        if len(kinds) > 1:
            self.window.show_error("A memory merges with memories, a node with nodes")
            return False
        survivor = self.ask.survivor(chosen)
        if survivor is None:
            return False
        ids = [n.id for n in chosen]
        session = self.window.session
        command: cmd.CoreCommand = (
            gcmd.MergeIntoCommand(session, ids, survivor)
            if kinds == {TRACE}
            else gcmd.MergeNodesCommand(session, ids, survivor)
        )
        return self._push(command)

    def forget_selected(self) -> bool:
        chosen = [self.scene.nodes[i] for i in self.window.selected if i in self.scene.nodes]
        if not chosen:
            return False
        session = self.window.session
        traces = [n.id for n in chosen if n.kind == TRACE]
        done = False
        if traces:
            done = self._push(cmd.SetDeletedCommand(session, traces, True))
        for node in (n for n in chosen if n.kind != TRACE):
            done = self._push(gcmd.DeleteNodeCommand(session, node.id, node.label)) or done
        return done
