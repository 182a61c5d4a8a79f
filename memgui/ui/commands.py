"""Undoable edits: one `QUndoCommand` per mutation, each a call on the core.

A command does its work once in `execute()` (before it is pushed, so a refused edit — a
bad value, a conflict — never reaches the stack) and keeps the journal batch from what the
core call returned. Undo reverts that batch through the core (`Brain.undo`), which restores
the exact prior rows — content, tags, links and a version chain that keeps counting up —
and fails with a `Conflict`, changing nothing, if someone else changed the trace since
(versions moved only by this stack's own steps are tolerated: `core/undo.py`). Redo reverts
the revert. Each step publishes what it changed on the session's bus, the command as its
initiator. Purging is not a command: it cannot be undone, and the window says so before it
runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtGui import QUndoCommand

from memgui.core.errors import MemguiError
from memgui.core.model import Changes, Trace, changes_of
from memgui.ui.session import ACTOR, BrainSession

T = TypeVar("T")


class CoreCommand(QUndoCommand):
    """Base: subclasses implement `_perform()` returning (result, what it changed)."""

    def __init__(self, session: BrainSession, text: str) -> None:
        super().__init__(text)
        self.session = session
        self.batch_id = ""  # the batch that made the current "done" state
        self._undo_batch_id = ""
        self._pushed = False

    def execute(self) -> Any:
        """Apply the edit now; raises the core's error (and writes nothing) when refused."""
        self.session.check_may_write()  # an AgentOS brain: asked before it is migrated
        result, changes = self._perform()
        self.batch_id = changes.batch_id
        self.session.publish(changes, self)
        return result

    @property
    def changed_something(self) -> bool:
        return bool(self.batch_id)

    def _perform(self) -> tuple[Any, Changes]:
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
            changes = self.session.brain.undo(batch_id, actor=ACTOR)
        except MemguiError as exc:
            self.session.error_reported.emit(f"Could not {verb} “{self.text()}”: {exc}")
            self.setObsolete(True)  # the stack drops a step it cannot replay
            return batch_id
        self.session.publish(changes, self)
        return changes.batch_id

    def _batch(self, call: Callable[[], T]) -> tuple[T, Changes]:
        return self.session.batched(call)


def push(session: BrainSession, command: CoreCommand) -> Any:
    """Execute `command` and put it on the undo stack if it changed anything."""
    result = command.execute()
    if command.changed_something:
        session.undo_stack.push(command)
    return result


def memories(count: int) -> str:
    return "1 memory" if count == 1 else f"{count} memories"


def _with_changes(trace: Trace) -> tuple[Trace, Changes]:
    return trace, changes_of(trace)


class NewTraceCommand(CoreCommand):
    def __init__(self, session: BrainSession, fields: dict[str, Any]) -> None:
        super().__init__(session, "New memory")
        self.fields = dict(fields)
        self.trace_id = ""

    def _perform(self) -> tuple[Trace, Changes]:
        trace = self.session.brain.add(**self.fields, actor=ACTOR)
        self.trace_id = trace.id
        return _with_changes(trace)


class SaveTraceCommand(CoreCommand):
    """A compare-and-set update: a stale `expect_version` raises `Conflict`."""

    def __init__(
        self, session: BrainSession, trace_id: str, patch: dict[str, Any], expect_version: int
    ) -> None:
        super().__init__(session, f"Edit {', '.join(sorted(patch))}")
        self.trace_id = trace_id
        self.patch = dict(patch)
        self.expect_version = expect_version

    def _perform(self) -> tuple[Trace, Changes]:
        brain = self.session.brain
        trace = brain.update(self.trace_id, self.patch, self.expect_version, actor=ACTOR)
        return _with_changes(trace)


class SetDeletedCommand(CoreCommand):
    """Move traces to the trash (`deleted=True`) or restore them from it."""

    def __init__(self, session: BrainSession, ids: list[str], deleted: bool) -> None:
        verb = "Delete" if deleted else "Restore"
        super().__init__(session, f"{verb} {memories(len(ids))}")
        self.ids = list(ids)
        self.deleted = deleted

    def _perform(self) -> tuple[None, Changes]:
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

    def _perform(self) -> tuple[Trace, Changes]:
        brain = self.session.brain
        return _with_changes(brain.merge(self.ids, self.content, actor=ACTOR, keep=self.survivor))


class TagCommand(CoreCommand):
    """Add or remove one tag on many traces (each a compare-and-set on what was read)."""

    def __init__(self, session: BrainSession, ids: list[str], tag: str, add: bool) -> None:
        verb = "Add tag" if add else "Remove tag"
        super().__init__(session, f"{verb} “{tag}”")
        self.ids = list(ids)
        self.tag = tag
        self.add = add

    def _perform(self) -> tuple[int, Changes]:
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

    def _perform(self) -> tuple[bool, Changes]:
        brain = self.session.brain
        call = brain.link if self.add else brain.unlink
        changes = call(self.from_id, self.to_id, self.kind, actor=ACTOR)
        return bool(changes), changes


class RestoreVersionCommand(CoreCommand):
    """Bring a trace back to a version from its history (as a new version); a version the
    trace already holds changes nothing and stays off the stack."""

    def __init__(self, session: BrainSession, current: Trace, snapshot: dict[str, Any]) -> None:
        super().__init__(session, f"Restore version {snapshot.get('version', '?')}")
        self.trace_id = current.id
        self.snapshot = dict(snapshot)
        self.expect_version = current.version

    def _perform(self) -> tuple[Trace, Changes]:
        brain = self.session.brain
        trace = brain.restore_version(
            self.trace_id, self.snapshot, self.expect_version, actor=ACTOR
        )
        return _with_changes(trace)
