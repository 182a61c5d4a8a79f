"""Verdicts and record kinds are enums whose members read, print and serialise as their values."""

from __future__ import annotations

import json

import orjson

from memgui.core.io.records import NEW, TRACE, VERDICTS, RecordKind, Verdict


def test_verdicts_are_the_strings_plans_always_wrote() -> None:
    assert list(Verdict) == ["new", "duplicate", "update", "refused", "error", "skipped"]
    assert VERDICTS == ("new", "duplicate", "update", "refused", "error")
    assert NEW is Verdict.NEW and TRACE is RecordKind.TRACE


def test_members_serialise_and_format_as_their_values() -> None:
    document = {"verdict": Verdict.REFUSED, "counts": {Verdict.NEW: 2}, "kind": RecordKind.NODE}
    assert json.dumps(document) == '{"verdict": "refused", "counts": {"new": 2}, "kind": "node"}'
    assert orjson.dumps([Verdict.DUPLICATE, RecordKind.TRACE]) == b'["duplicate","trace"]'
    assert f"{Verdict.UPDATE} {RecordKind.LINE}" == "update line"
