"""Helpers both profiles use: live-trace reads, compare-and-set retries, list cursors."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from memgui.core.errors import Conflict, InvalidArgument, NotFound, NotOnPostgres
from memgui.core.model import Trace, changes_of, check_id, shown

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.tools.registry import ToolContext

T = TypeVar("T")
CAS_ATTEMPTS = 8  # re-reads of a trace another writer keeps changing, before giving up


def file_brain(ctx: ToolContext, operation: str) -> Brain:
    """The brain, for a tool only a brain file serves yet: on a shared (PostgreSQL) brain,
    `NotOnPostgres` naming the operation, before anything is read or written."""
    from memgui.core.brain import Brain

    if isinstance(ctx.brain, Brain):
        return ctx.brain
    raise NotOnPostgres(operation)


def auto_embeds(brain: Brain | SharedBrain) -> bool:
    """Whether a write embeds its text as it lands (a file with an embedder); a shared
    brain does not embed yet."""
    return bool(getattr(brain, "auto_embed", False))


def live_trace(brain: Brain | SharedBrain, trace_id: str) -> Trace | None:
    """The trace if it exists and is not forgotten; forgotten reads as gone to an agent."""
    try:
        trace = brain.get(trace_id)
    except NotFound:
        return None
    return None if trace.deleted else trace


def on_live_trace(
    brain: Brain | SharedBrain,
    trace_id: str,
    expect_version: int | None,
    write: Callable[[int], T],
    *,
    as_read: bool = False,
) -> T | None:
    """Run `write(version)` as a compare-and-set on the live trace; None if there is none.

    With `expect_version` (the caller's own read), or `as_read` (the version this call
    reads first is the one it must find), a stale version is a `Conflict` for the caller.
    Otherwise the call is a blind write, as agent-memory's are: made against the version
    just read, and read again if another writer got in between, so it never lands on a
    trace that was forgotten meanwhile.
    """
    conflict: Conflict | None = None
    for _ in range(CAS_ATTEMPTS):
        trace = live_trace(brain, trace_id)
        if trace is None:
            return None
        try:
            return write(expect_version if expect_version is not None else trace.version)
        except NotFound:
            return None  # purged between the read and the write
        except Conflict as error:
            if expect_version is not None or as_read:
                raise
            conflict = error
    assert conflict is not None
    raise conflict


def update_live(
    ctx: ToolContext,
    trace_id: str,
    patch: dict[str, Any],
    expect_version: int | None,
    *,
    as_read: bool = False,
) -> Trace | None:
    """`on_live_trace` for a merge-patch: the updated trace, or None if there is none."""
    brain = ctx.brain
    return on_live_trace(
        brain,
        trace_id,
        expect_version,
        lambda version: brain.update(trace_id, patch, expect_version=version, actor=ctx.actor),
        as_read=as_read,
    )


def forget_live(
    ctx: ToolContext, trace_id: str, expect_version: int | None, *, as_read: bool = False
) -> Trace | None:
    """`on_live_trace` for a forget: the trace forgotten, or None if there was no live one.

    Without a version to compare, the forget reads the row in its own transaction: no read
    before it (a forgotten trace is left as it is, and nothing changed says there was no
    live one)."""
    brain = ctx.brain
    if expect_version is None:
        try:
            trace = brain.forget(trace_id, actor=ctx.actor)
        except NotFound:
            return None
        return trace if changes_of(trace) else None
    return on_live_trace(
        brain,
        trace_id,
        expect_version,
        lambda version: brain.forget(trace_id, expect_version=version, actor=ctx.actor),
        as_read=as_read,
    )


def checked_id(field: str, value: int | str) -> str:
    """An id argument as the brain keys it (a number is looked up by its digits)."""
    return check_id(field, value if isinstance(value, str) else str(value))


def sent(value: object) -> str:
    """A value as a message quotes what the client sent: a number bare, text quoted."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else shown(value)


# --- list cursors ---------------------------------------------------------------------------


def encode_cursor(trace: Trace) -> str:
    """Where the next page starts: just past this trace (newest first)."""
    raw = orjson.dumps([trace.created_at, trace.id])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(value: str) -> tuple[int, str]:
    try:
        padded = value + "=" * (-len(value) % 4)
        decoded = orjson.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeEncodeError, orjson.JSONDecodeError):
        decoded = None
    if (
        isinstance(decoded, list)
        and len(decoded) == 2
        and isinstance(decoded[0], int)
        and not isinstance(decoded[0], bool)
        and -(2**63) <= decoded[0] < 2**63
        and isinstance(decoded[1], str)
    ):
        return decoded[0], decoded[1]
    raise InvalidArgument(
        "cursor", f"is not a cursor a previous page returned (got {value[:80]!r})", value
    )
