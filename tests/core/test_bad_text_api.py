"""Text that is not Unicode (what Python makes of invalid UTF-8 bytes) is an InvalidArgument
naming its field at every core call that takes text, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export import ExportOptions, export
from memgui.core.io.planning.plan import plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end

BAD = "bad\udcff"


@pytest.mark.parametrize(
    ("field", "call"),
    [
        ("scope_id", lambda b, _p: b.delete_scope("user", BAD)),
        ("user_id", lambda b, _p: b.delete_scope("user", "u1", BAD)),
        ("from_scope_id", lambda b, _p: b.refile_scope("user", BAD, "u2")),
        ("to_scope_id", lambda b, _p: b.refile_scope("user", "u1", BAD)),
        ("batch_id", lambda b, _p: b.batch_entries(BAD)),
        ("batch_id", lambda b, _p: b.revert(BAD)),
        ("conversation_id", lambda b, _p: b.conversation(BAD)),
        (
            "selection[0]",
            lambda b, p: run_to_end(
                export(b, p / "o.json", "json", ExportOptions(selection=[BAD]))
            ),
        ),
        ("path", lambda b, p: run_to_end(export(b, p / f"{BAD}.json", "json"))),
        ("path", lambda b, p: run_to_end(export(b, p / "a\x00b.json", "json"))),
    ],
)
def test_text_that_is_not_unicode_is_refused_naming_its_field(
    brain: Brain, tmp_path: Path, field: str, call
) -> None:
    brain.add("kept", scope_id="u1")
    before = brain.last_journal_id()
    with pytest.raises(InvalidArgument) as refused:
        call(brain, tmp_path)
    assert refused.value.field == field
    assert brain.last_journal_id() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".json") == []


def test_a_blank_brain_id_is_refused_and_makes_no_file(tmp_path: Path) -> None:
    for brain_id in ("", " ", BAD):
        with pytest.raises(InvalidArgument, match="brain_id"):
            Brain.open(tmp_path / "new.sqlite", brain_id)
    assert not (tmp_path / "new.sqlite").exists()


@pytest.mark.parametrize(
    ("field", "call"),
    [
        ("filter", lambda b, _p: b.list_traces("user")),
        ("filter", lambda b, _p: b.count({"scope": "user"})),
        ("filter", lambda b, _p: b.search("kept", "user")),
        ("ids", lambda b, _p: b.merge(5)),
        ("size", lambda b, _p: list(b.list_id_slices(size="x"))),
        ("batch_id", lambda b, _p: b.batch_entries(2**63)),
        ("conversation_id", lambda b, _p: b.conversation(["x"])),
        (
            "clock",
            lambda b, p: run_to_end(export(b, p / "c.json", "json", ExportOptions(clock="x"))),
        ),
        ("path", lambda b, _p: run_to_end(plan(b, None))),
        ("options", lambda b, p: run_to_end(plan(b, p, options={"format": "json"}))),
        ("plan", lambda b, _p: run_to_end(commit(b, None))),
    ],
)
def test_a_wrong_type_is_an_invalid_argument_naming_its_field(
    brain: Brain, tmp_path: Path, field: str, call
) -> None:
    brain.add("kept", scope_id="u1")
    with pytest.raises(InvalidArgument) as refused:
        call(brain, tmp_path)
    assert refused.value.field == field


def test_an_export_clock_may_be_epoch_milliseconds(brain: Brain, tmp_path: Path) -> None:
    import json

    brain.add("kept")
    run_to_end(export(brain, tmp_path / "c.json", "json", ExportOptions(clock=1_700_000_000_000)))
    assert json.loads((tmp_path / "c.json").read_text())["meta"]["exported_at"] == "1700000000000"
