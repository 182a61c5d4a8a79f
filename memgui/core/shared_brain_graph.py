"""The knowledge graph, merge, scopes and sweep of a shared brain: the calls `SharedBrain`
takes in from here, with a file's rules (`shared_graph.py`, `shared_upkeep.py`)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from memgui.core import graph, shared_graph, shared_upkeep
from memgui.core.changes import ChangesWithCount, ChangesWithId, with_id
from memgui.core.model import MAX_NEIGHBOURS, Neighbour, Trace
from memgui.core.scopes import SweepReport
from memgui.core.storage import postgres_graph, postgres_graph_view

if TYPE_CHECKING:
    import psycopg

    from memgui.core.shared_brain import SharedBrain
    from memgui.core.storage.postgres_graph_view import PostgresGraphRows
    from memgui.core.storage.transaction import WriteBatch


class SharedBrainGraph:
    """Mixed into `SharedBrain`, which has the connection, the clock and the transaction."""

    conn: psycopg.Connection[tuple[Any, ...]]
    brain_id: str

    def writing(
        self, actor: str | None, kind: str = "edit", lock: str | None = None
    ) -> AbstractContextManager[WriteBatch]:
        raise NotImplementedError  # SharedBrain's

    def now(self) -> int:
        raise NotImplementedError  # SharedBrain's

    def _brain(self) -> SharedBrain:
        raise NotImplementedError  # SharedBrain's: itself, as the helpers take it

    def add_node(
        self,
        label: str,
        type: str,
        properties: dict[str, Any] | None = None,
        actor: str | None = None,
    ) -> ChangesWithId:
        node = shared_graph.new_node(label, type, properties, self.now())
        with self.writing(actor) as batch:
            postgres_graph.insert_row(self.conn, batch, self.brain_id, "node", node)
        return with_id(batch.changes(), node["id"])

    def add_edge(
        self,
        source_id: str,
        target_id: str,
        type: str,
        weight: float = 1.0,
        actor: str | None = None,
    ) -> ChangesWithId:
        weight = graph.check_edge(source_id, target_id, type, weight)
        with self.writing(actor) as batch:
            ends = (source_id, target_id)
            edge_id = shared_graph.add_edge(
                self.conn, batch, self.brain_id, ends, type, weight, self.now()
            )
        return with_id(batch.changes(), edge_id)

    def nodes(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
        graph.check_page(limit, offset)
        return postgres_graph.page(self.conn, self.brain_id, "node", limit, offset)

    def edges(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
        graph.check_page(limit, offset)
        return postgres_graph.page(self.conn, self.brain_id, "edge", limit, offset)

    def neighbours(
        self, start_id: str, depth: int = 1, limit: int = MAX_NEIGHBOURS
    ) -> list[Neighbour]:
        return self.neighbours_and_more(start_id, depth, limit)[0]

    def neighbours_and_more(
        self, start_id: str, depth: int = 1, limit: int = MAX_NEIGHBOURS
    ) -> tuple[list[Neighbour], bool]:
        """Breadth-first over edges both ways, up to `depth` hops, nearest first; and
        whether more than `limit` lie within `depth`."""
        return shared_graph.neighbours(self.conn, self.brain_id, start_id, depth, limit)

    def graph_rows(self) -> AbstractContextManager[PostgresGraphRows]:
        """What the graph view reads (`graph_view/query.py`), in one read-only snapshot."""
        return postgres_graph_view.reading(self.conn, self.brain_id)

    def degrees(self, node_ids: list[str]) -> dict[str, int]:
        """Each node's number of edges, both ways."""
        return postgres_graph.degrees(self.conn, self.brain_id, node_ids)

    # --- merge, scopes, sweep ------------------------------------------------------------

    def merge(
        self,
        ids: list[str],
        content: str | None = None,
        actor: str | None = None,
        *,
        keep: str | None = None,
    ) -> Trace:
        """Merge live traces into `keep` (default: the most retrieved), which takes the
        others' links and knowledge-graph edges; the others are forgotten."""
        return shared_upkeep.merge(self._brain(), ids, content, actor, keep)

    def delete_scope(
        self, scope: str, scope_id: str, user_id: str | None = None, actor: str | None = None
    ) -> ChangesWithCount:
        return shared_upkeep.delete_scope(self._brain(), scope, scope_id, user_id, actor)

    def refile_scope(
        self, scope: str, from_scope_id: str, to_scope_id: str, actor: str | None = None
    ) -> ChangesWithCount:
        return shared_upkeep.refile_scope(self._brain(), scope, from_scope_id, to_scope_id, actor)

    def sweep(self, actor: str = "sweep") -> SweepReport:
        """Expire traces past their time to live (embedding is `backfill`'s, `memgui embed`)."""
        expired = shared_upkeep.expire(self._brain(), actor)
        return SweepReport(expired=expired.count, embedded=0, changes=expired)
