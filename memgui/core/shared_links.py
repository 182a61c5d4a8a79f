"""Links between traces of a shared brain: link, unlink, a trace's related traces, and
undoing a batch's link rows, with the rules of a file (`core/links.py`, `core/journal.py`):
a symmetric link stored one way, linking twice or unlinking nothing changes nothing, and a
revert that would undo a link someone changed since is a `Conflict`. The SQL is in
`storage/postgres_links.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import links
from memgui.core.errors import Conflict, NotFound
from memgui.core.journal import gone
from memgui.core.model import JournalEntry, RelatedSummary
from memgui.core.storage import postgres, postgres_links
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg


def checked(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, from_id: str, to_id: str, kind: str
) -> tuple[str, str]:
    """The link's two ids as stored; both traces must exist (forgotten ones too)."""
    links.check_ends(from_id, to_id, kind)
    for trace_id in (from_id, to_id):
        if postgres.fetch_row(conn, brain_id, trace_id) is None:
            raise NotFound(trace_id)
    return links.normalised(from_id, to_id, kind)


def link(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    ids: tuple[str, str],
    kind: str,
    now: int,
) -> None:
    """Make the link unless it is there (then nothing is written)."""
    a, b = ids
    if postgres_links.created_at(conn, brain_id, a, b, kind) is None:
        row = {"from_id": a, "to_id": b, "kind": kind, "created_at": now}
        postgres_links.insert(conn, batch, brain_id, row)


def unlink(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    ids: tuple[str, str],
    kind: str,
) -> None:
    """Remove the link if it is there (else nothing is written)."""
    a, b = ids
    made = postgres_links.created_at(conn, brain_id, a, b, kind)
    if made is not None:
        row = {"from_id": a, "to_id": b, "kind": kind, "created_at": made}
        postgres_links.delete(conn, batch, brain_id, row)


def related(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, trace_id: str, limit: int
) -> list[RelatedSummary]:
    rows = postgres_links.related_rows(conn, brain_id, trace_id, limit)
    return links.summaries(trace_id, rows)


def undo(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    entry: JournalEntry,
) -> None:
    """Remove a link the batch made, or put back one it removed, if nobody touched it since."""
    link_row = entry.after if entry.op == "link" else entry.before
    if link_row is None:
        return
    a, b, kind = link_row["from_id"], link_row["to_id"], link_row["kind"]
    name = f"link {a} -{kind}-> {b}"
    exists = postgres_links.created_at(conn, brain_id, a, b, kind) is not None
    if entry.op == "link" and not exists:
        raise Conflict.because(a, f"{name} no longer exists")
    if entry.op == "unlink":
        if exists:
            raise Conflict.because(a, f"{name} exists again")
        for trace_id in (a, b):
            if postgres.fetch_row(conn, brain_id, trace_id, lock=True) is None:
                raise gone(trace_id, -1)
    if postgres_links.changed_since(
        conn, brain_id, entry.id, (entry.batch_id, batch.batch_id), link_row
    ):
        raise Conflict.because(a, f"{name} was changed by a later batch")
    if entry.op == "link":
        postgres_links.delete(conn, batch, brain_id, link_row)
    else:
        postgres_links.insert(conn, batch, brain_id, link_row)


def carry_over(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    merged: list[str],
    survivor: str,
    now: int,
) -> None:
    """A merge's links move to the survivor, as on a file (`links.carry_over`): each one
    journaled as unlinked, then linked from the survivor unless it has that link already; a
    link among the merged traces themselves only goes."""
    group = {survivor, *merged}
    for absorbed in merged:
        for from_id, to_id, kind, made in postgres_links.links_of(conn, brain_id, absorbed):
            row = {"from_id": from_id, "to_id": to_id, "kind": kind, "created_at": made}
            postgres_links.delete(conn, batch, brain_id, row)
            if from_id in group and to_id in group:
                continue
            a, b = links.normalised(
                survivor if from_id == absorbed else from_id,
                survivor if to_id == absorbed else to_id,
                kind,
            )
            if postgres_links.created_at(conn, brain_id, a, b, kind) is None:
                new = {"from_id": a, "to_id": b, "kind": kind, "created_at": now}
                postgres_links.insert(conn, batch, brain_id, new)
