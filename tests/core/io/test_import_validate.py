"""The commit's check of a trace record and the row it builds: quick for the common case,
and never taking a record the field-by-field check refuses."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.io.planning.validate import (
    _check_each,
    check_trace_fields,
    fresh_text,
    trace_snapshot,
)
from memgui.core.io.records import REFUSED, TRACE, ImportRecord
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end


class Text(str):
    """A str subclass: not the exact type, still a string."""


def good(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": "mt_1",
        "content": "Deploys go out on Tuesdays",
        "type": "semantic",
        "scope": "user",
        "scope_id": "ada",
        "category": "DECISION",
        "tags": ["deploy", "deploy", "ops"],
        "metadata": {"source": "notes", "decay": {"floor": 0.1}},
        "emotions": {"calm": 0.5},
        "strength": 0.75,
        "created_at": 1_700_000_000_000,
        "last_accessed": None,
        "retrieval_count": 3,
        "deleted": False,
        "expires_at": None,
        "embedding": None,
        "stability_ms": 3_738_603_305,
    }
    fields.update(changes)
    return fields


BAD = [
    ("content", None),
    ("content", ""),
    ("content", " \n\t"),
    ("content", 12),
    ("type", "dream"),
    ("type", ["semantic"]),
    ("scope", "galaxy"),
    ("scope_id", 7),
    ("id", 7),
    ("category", "HOBBY"),
    ("category", ["DECISION"]),
    ("tags", "deploy"),
    ("tags", ["ok", ""]),
    ("tags", ["ok", "  "]),
    ("tags", ["ok", 3]),
    ("tags", 0),
    ("strength", 1.5),
    ("strength", -0.1),
    ("strength", True),
    ("strength", math.nan),
    ("strength", "0.5"),
    ("created_at", 1.5),
    ("last_accessed", "yesterday"),
    ("expires_at", True),
    ("retrieval_count", -1),
    ("retrieval_count", False),
    ("metadata", ["a"]),
    ("emotions", "calm"),
    ("embedding", b"abc"),
    ("embedding", [0.1, 0.2]),
    ("stability_ms", 0),
    ("stability_ms", -5.0),
    ("stability_ms", math.inf),
    ("stability_ms", math.nan),
    ("stability_ms", True),
]


@pytest.mark.parametrize(("name", "value"), BAD, ids=[f"{n}={v!r}" for n, v in BAD])
def test_a_bad_field_is_refused_naming_it(name: str, value: Any) -> None:
    with pytest.raises(InvalidArgument) as caught:
        check_trace_fields(good(**{name: value}))
    assert caught.value.field.split("[")[0] == name
    with pytest.raises(InvalidArgument) as each:
        _check_each(good(**{name: value}))
    assert str(each.value) == str(caught.value)  # the same words as the full check


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"type": None, "scope": "", "category": None, "tags": None, "strength": None},
        {"tags": ("a", "b"), "strength": 1, "stability_ms": 2.5, "embedding": b"\0" * 8},
        {"content": Text("a subclass of str"), "metadata": None, "emotions": None},
        {"stability_ms": 2**70},  # past the quick check's bound: the full check decides
        {"strength": 0, "retrieval_count": 0, "created_at": None, "deleted": True},
    ],
)
def test_valid_records_pass(changes: dict[str, Any]) -> None:
    check_trace_fields(good(**changes))


def test_the_snapshot_leaves_the_record_as_it_was() -> None:
    fields = good()
    snap = trace_snapshot(fields, "mt_new", now=42)
    assert snap["tags"] == ["deploy", "ops"] and snap["id"] == "mt_new"
    assert snap["metadata"]["decay"] == {"floor": 0.1, "stability": 3_738_603_305}
    assert fields["metadata"] == {"source": "notes", "decay": {"floor": 0.1}}
    assert fields["tags"] == ["deploy", "deploy", "ops"]
    assert snap["strength"] == 0.75 and snap["updated_at"] == 42 and snap["version"] == 1


def test_the_snapshot_fills_defaults() -> None:
    snap = trace_snapshot({"content": "x"}, "mt_2", now=7)
    assert snap == {
        "id": "mt_2",
        "type": "episodic",
        "scope": "user",
        "scope_id": "",
        "content": "x",
        "strength": 1.0,
        "created_at": 7,
        "last_accessed": None,
        "retrieval_count": 0,
        "tags": [],
        "emotions": {},
        "metadata": {},
        "deleted": False,
        "expires_at": None,
        "category": None,
        "version": 1,
        "updated_at": 7,
        "embedding_status": 0,
    }


def test_an_import_record_keeps_its_fields_and_methods() -> None:
    names = [f.name for f in dataclass_fields(ImportRecord)]
    assert names == [
        "source",
        "kind",
        "fields",
        "verdict",
        "reason",
        "problem_field",
        "value",
        "existing_id",
        "links",
        "accepted",
        "note_tail",
        "embedding_model",
    ]
    record = ImportRecord(source="a.csv:2", kind=TRACE)
    assert not hasattr(record, "__dict__")  # slots: a big plan holds many
    assert record.refuse("tags", "tags must be a list", 3) is record
    assert (record.verdict, record.problem_field, record.value) == (REFUSED, "tags", 3)
    with pytest.raises(AttributeError):
        record.note = "no such field"  # type: ignore[attr-defined]


def test_fresh_text_is_an_equal_copy_of_non_ascii_text() -> None:
    ascii_text = "plain words"
    assert fresh_text(ascii_text) is ascii_text and fresh_text(7) == 7
    for text in ("Grüße aus Köln", "日本語のメモ", "lone \udc80 surrogate"):
        copy = fresh_text(text)
        assert copy == text and copy is not text


def test_committing_leaves_the_plans_text_as_small_as_it_was(brain: Brain, tmp_path: Path) -> None:
    # Binding a str caches its UTF-8 form on it; the plan's own strings must not get one.
    mapping: dict[str, Any] = {"root": {"id": "root", "parent": None, "children": ["a"]}}
    texts = ["Wie spät ist es in Zürich?", "Es ist drei Uhr — 三時です。"]
    for number, (node, text) in enumerate(zip(("a", "b"), texts, strict=True)):
        mapping[node] = {
            "id": node,
            "parent": "root" if node == "a" else "a",
            "children": ["b"] if node == "a" else [],
            "message": {
                "id": node,
                "author": {"role": ("user", "assistant")[number]},
                "content": {"content_type": "text", "parts": [text]},
                "create_time": 1_700_000_000 + number,
            },
        }
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps([{"id": "c1", "title": "Zeit", "mapping": mapping}]))
    the_plan = run_to_end(plan(brain, source, options=ImportOptions(format="chatgpt")))
    texts_held = [r.fields["content"] for r in the_plan.records if "content" in r.fields]
    sizes = [sys.getsizeof(text) for text in texts_held]
    result = run_to_end(commit(brain, the_plan))
    assert result.imported == 4  # the conversation, two messages, one trace
    assert [sys.getsizeof(text) for text in texts_held] == sizes
