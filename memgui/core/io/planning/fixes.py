"""Carrying a person's fixes across a re-plan of an import.

A person fixes a refused record by hand (the app's "Fix record…"); changing the import's
options plans the source again, which would lose the fix. So what the person changed in a
record — each field set to a new value, or removed — is kept per source (`Fixes.collect`,
no brain needed) and laid over the new plan's record of the same source, which is then
checked again against the brain (`Fixes.reapply`: `revalidate` looks the brain up, so it
runs where the re-plan runs, off any GUI thread). The plan's "file under" options still win
over the source's scope, as for every other record. A fix whose source has no single trace
record in the new plan is dropped, and reported once.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memgui.core.io.records import ERROR, REFUSED, TRACE, ImportRecord
from memgui.core.io.writing.commit import revalidate
from memgui.core.progress import Progress

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.io.planning.plan import ImportPlan


class _Removed:
    """A field the person deleted."""

    def __repr__(self) -> str:
        return "<removed>"


REMOVED: Any = _Removed()


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """What the person changed: every field set to a new value, or removed (`REMOVED`)."""
    old, new = dict(before), dict(after)
    changed: dict[str, Any] = {k: v for k, v in new.items() if k not in old or old[k] != v}
    changed.update({k: REMOVED for k in old if k not in new})
    return changed


@dataclass
class Fixes:
    """The fields a person changed by hand, per record source."""

    by_source: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.by_source)

    def copy(self) -> Fixes:
        return Fixes({source: dict(changed) for source, changed in self.by_source.items()})

    def collect(self, plan: ImportPlan, originals: Mapping[int, Any]) -> None:
        """Note what the person changed in `plan`. `originals` holds, per plan row, the
        fields object the plan gave the record: an edit replaces the object, so a record
        holding another one was edited."""
        for row, original in originals.items():
            record = plan.records[row]
            if record.fields is not original:
                self.by_source.setdefault(record.source, {}).update(diff(original, record.fields))

    def reapply(self, brain: Brain, plan: ImportPlan) -> CarriedFixes:
        """Lay each fix over `plan`'s record of its source and check that record again."""
        rows_of: dict[str, list[int]] = {}
        for row, record in enumerate(plan.records):
            if record.kind == TRACE and record.source in self.by_source:
                rows_of.setdefault(record.source, []).append(row)
        carried = Fixes()
        kept: list[int] = []
        dropped: list[str] = []
        originals: dict[int, Any] = {}
        for source, changed in self.by_source.items():
            rows = rows_of.get(source, [])
            if len(rows) != 1:
                dropped.append(source)  # told once; not laid over a later plan
                continue
            row = rows[0]
            record = plan.records[row]
            originals[row] = record.fields
            record.fields = _fixed(record.fields, changed, plan)
            revalidate(brain, plan, row)
            kept.append(row)
            carried.by_source[source] = dict(changed)
        return CarriedFixes(tuple(kept), tuple(dropped), originals, carried)


def fix_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a person's fix of one record that applies to others alike: the fields
    they changed, not the text (each record keeps its own)."""
    changed = diff(before, after)
    changed.pop("content", None)
    return changed


def fix_alike(
    brain: Brain,
    plan: ImportPlan,
    rows: Sequence[int],
    changed: Mapping[str, Any],
    text_for: Callable[[ImportRecord], str],
) -> Generator[Progress, None, tuple[int, int]]:
    """Fix `rows` as one record was fixed (records refused for the same reason): `changed`
    (`fix_changes`) laid over each, and where the reader read no text, `text_for(record)`
    (the app gives the note's own text); each is checked again against the brain. A job;
    returns (now passing, still refused)."""
    passed = failed = 0
    total = len(rows)
    for done, row in enumerate(rows):
        yield Progress(done, total, f"fixing {done} of {total} records the same way")
        record = plan.records[row]
        fields = _fixed(record.fields, changed, plan)
        if not str(fields.get("content") or "").strip():
            fields["content"] = text_for(record)
        record.fields = fields
        if revalidate(brain, plan, row).verdict in (REFUSED, ERROR):
            failed += 1
        else:
            passed += 1
    return passed, failed


def _fixed(
    fields: Mapping[str, Any], changed: Mapping[str, Any], plan: ImportPlan
) -> dict[str, Any]:
    out = dict(fields)
    for key, value in changed.items():
        if value is REMOVED:
            out.pop(key, None)
        else:
            out[key] = value
    # The plan's "file under" option wins over the source, as for the other records.
    for key in ("scope", "scope_id"):
        wanted = getattr(plan.options, key)
        if wanted is not None and key not in changed:
            out[key] = wanted
    return out


@dataclass(frozen=True)
class CarriedFixes:
    """What `Fixes.reapply` did to a new plan."""

    kept: tuple[int, ...]  # plan rows whose record got its fix back (and was checked again)
    dropped: tuple[str, ...]  # sources the new plan holds no single trace record of
    originals: Mapping[int, Any]  # per kept row: the fields the plan gave it, before the fix
    fixes: Fixes  # the fixes still carried, to the plan after this one
