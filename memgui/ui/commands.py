"""Undoable edits: one `QUndoCommand` per mutation, each a call on the core.

A command does its work once in `execute()` (before it is pushed, so a refused edit — a
bad value, a conflict — never reaches the stack) and remembers the journal batch it wrote.
Undo reverts that batch through the core (`Brain.revert`), which restores the exact prior
rows — content, tags, links and a version chain that keeps counting up — and fails with a
`Conflict`, changing nothing, if someone else changed the trace since (see
`undo_revert.py` for versions moved only by this stack). Redo reverts the revert.
Purging is not a command: it cannot be undone, and the window says so before it runs.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtGui import QUndoCommand

from memgui.core.errors import MemguiError
from memgui.core.model import Trace
from memgui.ui.session import ACTOR, BrainSession
from memgui.ui.undo_revert import revert_batch


class CoreCommand(QUndoCommand):
    """Base: subclasses implement `_perform()` returning (result, batch id)."""

    def __init__(self, session: BrainSession, text: str) -> None:
        super().__init__(text)
        self.session = session
        self.batch_id = ""  # the batch that made the current "done" state
        self._undo_batch_id = ""
        self._pushed = False

    def execute(self) -> Any:
        """Apply the edit now; raises the core's error (and writes nothing) when refused."""
        result, self.batch_id = self._perform()
        return result

    @property
    def changed_something(self) -> bool:
        return bool(self.batch_id)

    def _perform(self) -> tuple[Any, str]:
        raise NotImplementedError

    def redo(self) -> None:
        if not self._pushed:
            self._pushed = True  # QUndoStack.push calls redo(); execute() already did it
            return
        self.batch_id = self._revert(self._undo_batch_id, "redo")

    def undo(self) -> None:
        self._undo_batch_id = self._revert(self.batch_id, "undo")

    def _revert(self, batch_id: str, verb: str) -> str:
        try:
            return revert_batch(self.session, batch_id, self)
        except MemguiError as exc:
            self.session.error_reported.emit(f"Could not {verb} “{self.text()}”: {exc}")
            self.setObsolete(True)  # the stack drops a step it cannot replay
            return batch_id

    def _batch(self, call) -> tuple[Any, str]:
        return self.session.record_batch(call, self)


def push(session: BrainSession, command: CoreCommand) -> Any:
    """Execute `command` and put it on the undo stack if it changed anything."""
    result = command.execute()
    if command.changed_something:
        session.undo_stack.push(command)
    return result


def memories(count: int) -> str:
    return "1 memory" if count == 1 else f"{count} memories"


class NewTraceCommand(CoreCommand):
    def __init__(self, session: BrainSession, fields: dict[str, Any]) -> None:
        super().__init__(session, "New memory")
        self.fields = dict(fields)
        self.trace_id = ""

    def _perform(self) -> tuple[Trace, str]:
        trace, batch = self._batch(lambda: self.session.brain.add(**self.fields))
        self.trace_id = trace.id
        return trace, batch


class SaveTraceCommand(CoreCommand):
    """A compare-and-set update: a stale `expect_version` raises `Conflict`."""

    def __init__(
        self, session: BrainSession, trace_id: str, patch: dict[str, Any], expect_version: int
    ) -> None:
        super().__init__(session, f"Edit {', '.join(sorted(patch))}")
        self.trace_id = trace_id
        self.patch = dict(patch)
        self.expect_version = expect_version

    def _perform(self) -> tuple[Trace, str]:
        brain = self.session.brain
        return self._batch(
            lambda: brain.update(self.trace_id, self.patch, expect_version=self.expect_version)
        )


class SetDeletedCommand(CoreCommand):
    """Move traces to the trash (`deleted=True`) or restore them from it."""

    def __init__(self, session: BrainSession, ids: list[str], deleted: bool) -> None:
        verb = "Delete" if deleted else "Restore"
        super().__init__(session, f"{verb} {memories(len(ids))}")
        self.ids = list(ids)
        self.deleted = deleted

    def _perform(self) -> tuple[None, str]:
        brain = self.session.brain
        call = brain.forget if self.deleted else brain.restore

        def apply_all() -> None:
            for trace_id in self.ids:
                call(trace_id, actor=ACTOR)

        return self._batch(apply_all)


class MergeCommand(CoreCommand):
    def __init__(
        self,
        session: BrainSession,
        ids: list[str],
        content: str | None,
        survivor: str | None = None,
    ) -> None:
        super().__init__(session, f"Merge {memories(len(ids))}")
        self.ids = list(ids)
        self.content = content
        self.survivor = survivor  # None: the core's rule (the most recalled)

    def _perform(self) -> tuple[Trace, str]:
        brain = self.session.brain
        return self._batch(
            lambda: brain.merge(self.ids, content=self.content, survivor=self.survivor)
        )


class TagCommand(CoreCommand):
    """Add or remove one tag on many traces (each a compare-and-set on what was read)."""

    def __init__(self, session: BrainSession, ids: list[str], tag: str, add: bool) -> None:
        verb = "Add tag" if add else "Remove tag"
        super().__init__(session, f"{verb} “{tag}”")
        self.ids = list(ids)
        self.tag = tag
        self.add = add

    def _perform(self) -> tuple[int, str]:
        brain = self.session.brain

        def apply_all() -> int:
            touched = 0
            for trace in brain.get_many(self.ids).values():
                tags = list(trace.tags)
                if self.add and self.tag not in tags:
                    tags.append(self.tag)
                elif not self.add and self.tag in tags:
                    tags.remove(self.tag)
                else:
                    continue
                brain.update(trace.id, {"tags": tags}, expect_version=trace.version)
                touched += 1
            return touched

        return self._batch(apply_all)


class LinkCommand(CoreCommand):
    def __init__(
        self, session: BrainSession, from_id: str, to_id: str, kind: str, add: bool
    ) -> None:
        super().__init__(session, f"{'Link' if add else 'Unlink'} ({kind})")
        self.from_id, self.to_id, self.kind, self.add = from_id, to_id, kind, add

    def _perform(self) -> tuple[bool, str]:
        brain = self.session.brain
        call = brain.link if self.add else brain.unlink
        return self._batch(lambda: call(self.from_id, self.to_id, self.kind))


RESTORABLE_FIELDS = ("content", "tags", "type", "scope", "scope_id", "category")


def patch_towards(
    current: Trace, snapshot: dict[str, Any], now_ms: int | None = None
) -> dict[str, Any]:
    """The update patch that brings `current` back to a journal snapshot's fields.

    The expiry travels as a TTL from now: no expiry comes back as none, a future one as the
    seconds left until it; one already past is left as it is (it would expire at once).
    """
    patch: dict[str, Any] = {}
    if "expires_at" in snapshot and snapshot["expires_at"] != current.expires_at:
        wanted_expiry = snapshot["expires_at"]
        now = int(time.time() * 1000) if now_ms is None else now_ms
        if wanted_expiry is None:
            patch["ttl_secs"] = None
        elif isinstance(wanted_expiry, int) and wanted_expiry > now:
            patch["ttl_secs"] = -(-(wanted_expiry - now) // 1000)  # whole seconds, rounded up
    for name in RESTORABLE_FIELDS:
        if name not in snapshot:
            continue
        wanted = snapshot[name]
        have = getattr(current, name)
        if name == "tags":
            wanted, have = list(wanted or []), list(have)
        if wanted != have:
            patch[name] = wanted
    return patch


class RestoreVersionCommand(SaveTraceCommand):
    """Bring a trace back to a version from its history (as a new version)."""

    def __init__(self, session: BrainSession, current: Trace, snapshot: dict[str, Any]) -> None:
        super().__init__(session, current.id, patch_towards(current, snapshot), current.version)
        self.setText(f"Restore version {snapshot.get('version', '?')}")

    def _perform(self) -> tuple[Trace | None, str]:
        if not self.patch:
            return None, ""  # already equal: nothing to do, nothing on the stack
        return super()._perform()
