"""What one mutating call changed (`Changes`), as Anki's `OpChanges`, and how a write
transaction learns it.

Every row a write journals is noted on its `WriteBatch` as an event (`note_*` below) by the
function that writes the journal row, so the record and the journal cannot disagree. When
the call's write ends, `changes_from` folds the events into one frozen `Changes`: the net
effect of the call (a trace added and then edited in one batch is *added*; one removed and
put back is *edited*; one added and removed again is in neither). A call inside a
`Brain.batch()` gets the events from where it joined to where it left, so it names only
what it did itself; the batch as a whole gets them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

# Event categories (the first item of an event tuple).
TRACE, LINK, NODE, EDGE, ROW = range(5)
# (category, key, existed before, exists after): key is a trace, node or edge id, a LinkKey,
# or for another AgentOS row (document, chunk, conversation, …) its (kind, id).
Event = tuple[int, Any, bool, bool]

_NONE: frozenset[Any] = frozenset()


class LinkKey(NamedTuple):
    """A link as `memory_links` keys it (`relates_to` stored smaller id first)."""

    from_id: str
    to_id: str
    kind: str


@dataclass(frozen=True)
class Changes:
    """What one mutating call changed; the app routes it to every view.

    Trace ids are split by what happened to the row: `added` (it did not exist before),
    `removed` (it no longer exists: purged, expired, deleted with its scope, a revert of its
    add) and `edited` (it exists before and after: an update, a forget or restore — the
    `deleted` flag is a field —, a merge, a re-file). `links_added` / `links_removed` name
    links; `nodes` / `edges` the knowledge-graph rows written (added, changed or removed:
    a view reads them again by id); `rows` other AgentOS rows as (kind, id). `batch_id` is
    the journal batch holding these rows, or "" when nothing changed (nothing was
    journaled). True when anything changed.
    """

    kind: str
    batch_id: str = ""
    actor: str = ""
    added: frozenset[str] = _NONE
    edited: frozenset[str] = _NONE
    removed: frozenset[str] = _NONE
    links_added: frozenset[LinkKey] = _NONE
    links_removed: frozenset[LinkKey] = _NONE
    nodes: frozenset[str] = _NONE
    edges: frozenset[str] = _NONE
    rows: frozenset[tuple[str, str]] = _NONE

    def __bool__(self) -> bool:
        return bool(
            self.added
            or self.edited
            or self.removed
            or self.links_added
            or self.links_removed
            or self.nodes
            or self.edges
            or self.rows
        )

    @cached_property
    def traces(self) -> frozenset[str]:
        """Every trace a view may show differently: added, edited, removed, and both ends of
        each link made or removed."""
        ends = {end for link in self.links for end in (link.from_id, link.to_id)}
        return self.added | self.edited | self.removed | ends

    @property
    def links(self) -> frozenset[LinkKey]:
        return self.links_added | self.links_removed

    def to_json(self) -> dict[str, Any]:
        def links(keys: frozenset[LinkKey]) -> list[dict[str, str]]:
            return [key._asdict() for key in sorted(keys)]

        return {
            "kind": self.kind,
            "batch_id": self.batch_id,
            "actor": self.actor,
            "traces": sorted(self.traces),
            "added": sorted(self.added),
            "edited": sorted(self.edited),
            "removed": sorted(self.removed),
            "links_added": links(self.links_added),
            "links_removed": links(self.links_removed),
            "nodes": sorted(self.nodes),
            "edges": sorted(self.edges),
            "rows": [list(row) for row in sorted(self.rows)],
        }


@dataclass(frozen=True)
class ChangesWithId(Changes):
    """`Changes` of a call that made one new row, and its id (`add_node`, `add_edge`)."""

    id: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(super().to_json(), id=self.id)


@dataclass(frozen=True)
class ChangesWithCount(Changes):
    """`Changes` of a call over many traces, and how many it touched (`delete_scope`,
    `refile_scope`)."""

    count: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(super().to_json(), count=self.count)


def with_id(changes: Changes, row_id: str) -> ChangesWithId:
    return _build(ChangesWithId, dict(vars(changes), id=row_id))


def with_count(changes: Changes, count: int) -> ChangesWithCount:
    return _build(ChangesWithCount, dict(vars(changes), count=count))


def _build(cls: type[Any], fields: dict[str, Any]) -> Any:
    # As `trace_from_fields`: the frozen dataclass's `__init__` sets each field through
    # `object.__setattr__`, ~2 µs of every write; one dict update is one C call.
    fields.pop("traces", None)  # a cached property, not a field
    out = object.__new__(cls)
    out.__dict__.update(fields)
    return out


_NOTHING = {
    "added": _NONE,
    "edited": _NONE,
    "removed": _NONE,
    "links_added": _NONE,
    "links_removed": _NONE,
    "nodes": _NONE,
    "edges": _NONE,
    "rows": _NONE,
}
_ONE_TRACE = {(False, True): "added", (True, True): "edited", (True, False): "removed"}


def changes_from(events: Sequence[Event], kind: str, batch_id: str, actor: str) -> Changes:
    """The net effect of a write's events (see the module docstring)."""
    if len(events) == 1 and events[0][0] == TRACE:
        # The one row of an add, an update, a forget: ~0.5 µs instead of ~1.5 µs.
        _, key, before, after = events[0]
        fields = dict(_NOTHING, kind=kind, batch_id=batch_id, actor=actor)
        fields[_ONE_TRACE[before, after]] = frozenset((key,))
        return _build(Changes, fields)
    added: set[str] = set()
    edited: set[str] = set()
    removed: set[str] = set()
    links_added: set[LinkKey] = set()
    links_removed: set[LinkKey] = set()
    nodes: set[str] = set()
    edges: set[str] = set()
    rows: set[tuple[str, str]] = set()
    for category, key, before, after in events:
        if category == TRACE:
            if not before:
                if key in removed:  # removed and put back: it exists before and after
                    removed.discard(key)
                    edited.add(key)
                else:
                    added.add(key)
            elif not after:
                if key in added:  # made and removed in one call: nothing to show
                    added.discard(key)
                else:
                    edited.discard(key)
                    removed.add(key)
            elif key not in added:
                edited.add(key)
        elif category == LINK:
            made, gone = (links_added, links_removed) if after else (links_removed, links_added)
            if key in gone:
                gone.discard(key)
            else:
                made.add(key)
        elif category == NODE:
            nodes.add(key)
        elif category == EDGE:
            edges.add(key)
        else:
            rows.add(key)
    changed = added or edited or removed or links_added or links_removed or nodes or edges or rows
    return _build(
        Changes,
        {
            "kind": kind,
            "batch_id": batch_id if changed else "",
            "actor": actor,
            "added": frozenset(added) if added else _NONE,
            "edited": frozenset(edited) if edited else _NONE,
            "removed": frozenset(removed) if removed else _NONE,
            "links_added": frozenset(links_added) if links_added else _NONE,
            "links_removed": frozenset(links_removed) if links_removed else _NONE,
            "nodes": frozenset(nodes) if nodes else _NONE,
            "edges": frozenset(edges) if edges else _NONE,
            "rows": frozenset(rows) if rows else _NONE,
        },
    )
