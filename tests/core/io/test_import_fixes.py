"""A person's fixes of an import's records carried across a re-plan (`core.io.Fixes`), with
no window: collected from one plan, laid over the next and checked against the brain."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io import Fixes, ImportOptions, ImportPlan, Verdict, plan
from memgui.core.io.planning.fixes import REMOVED, diff
from memgui.core.progress import run_to_end

NOTES = {
    "template.md": "---\ntitle: Album\ncreated: {{date}}\n---\nTracks I liked: none yet\n",
    "other.md": "Backups live in the north bucket\n",
}
FIXED = "Tracks I liked: fixed by hand"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def planned(brain: Brain, folder: Path, **options: object) -> ImportPlan:
    return run_to_end(plan(brain, folder, options=ImportOptions(format="markdown", **options)))


def row_of(the_plan: ImportPlan, name: str) -> int:
    return next(i for i, r in enumerate(the_plan.records) if r.source.startswith(name))


def fixed_by_hand(the_plan: ImportPlan, name: str, **fields: object) -> Fixes:
    """Edit a record as the app's editor does (a new fields object), then collect."""
    row = row_of(the_plan, name)
    record = the_plan.records[row]
    original = record.fields
    record.fields = dict(original, **fields)
    fixes = Fixes()
    fixes.collect(the_plan, {row: original})
    return fixes


def test_diff_names_values_set_and_fields_removed() -> None:
    before = {"content": "a", "tags": ["x"], "category": "TODO"}
    after = {"content": "b", "tags": ["x"], "type": "semantic"}
    assert diff(before, after) == {"content": "b", "type": "semantic", "category": REMOVED}


def test_collect_notes_only_the_records_the_person_edited(brain: Brain, notes: Path) -> None:
    first = planned(brain, notes)
    originals = {i: r.fields for i, r in enumerate(first.records)}
    fixes = Fixes()
    fixes.collect(first, originals)
    assert not fixes
    fixes = fixed_by_hand(first, "template.md", content=FIXED)
    assert fixes.by_source == {
        first.records[row_of(first, "template.md")].source: {"content": FIXED}
    }


def test_a_fix_is_laid_over_the_new_plan_checked_again_and_filed_as_it_says(
    brain: Brain, notes: Path
) -> None:
    first = planned(brain, notes)
    assert first.records[row_of(first, "template.md")].verdict == Verdict.REFUSED
    fixes = fixed_by_hand(first, "template.md", content=FIXED)
    second = planned(brain, notes, scope="thread")  # the person changed an option
    carried = fixes.reapply(brain, second)
    row = row_of(second, "template.md")
    record = second.records[row]
    assert carried.kept == (row,) and carried.dropped == ()
    assert record.verdict == Verdict.NEW  # checked again against the brain
    assert (record.fields["content"], record.fields["scope"]) == (FIXED, "thread")
    assert carried.originals[row].get("content") != FIXED  # the plan's own: later edits diff it
    assert carried.fixes.by_source == fixes.by_source  # carried on to the next plan


def test_a_fix_still_refused_says_why(brain: Brain, notes: Path) -> None:
    first = planned(brain, notes)
    fixes = fixed_by_hand(first, "template.md", content="   ")
    second = planned(brain, notes)
    fixes.reapply(brain, second)
    record = second.records[row_of(second, "template.md")]
    assert record.verdict == Verdict.REFUSED and "content" in record.reason


def test_a_fix_whose_source_is_gone_is_dropped_once(brain: Brain, notes: Path) -> None:
    first = planned(brain, notes)
    fixes = fixed_by_hand(first, "template.md", content=FIXED)
    (notes / "template.md").unlink()
    carried = fixes.reapply(brain, planned(brain, notes))
    assert carried.kept == () and len(carried.dropped) == 1
    assert carried.dropped[0].startswith("template.md")
    assert not carried.fixes  # not laid over a later plan


def test_a_removed_field_stays_removed(brain: Brain, notes: Path) -> None:
    first = planned(brain, notes)
    row = row_of(first, "other.md")
    original = first.records[row].fields
    first.records[row].fields = {k: v for k, v in original.items() if k != "tags"}
    fixes = Fixes()
    fixes.collect(first, {row: original})
    second = planned(brain, notes)
    fixes.reapply(brain, second)
    assert "tags" not in second.records[row_of(second, "other.md")].fields
