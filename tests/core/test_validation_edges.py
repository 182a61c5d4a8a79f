"""Edge values at every core entry point: a typed `InvalidArgument` (or `NotFound`) naming the
field, the bound and the value, never a raw Python error, and nothing written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.model import TraceFilter
from tests.support.cli import snapshot

BAD = "bad\udcff"  # what Python makes of the invalid UTF-8 byte 0xff in argv
HUGE = 10**400
UNICODE = "must be valid Unicode text (got 'bad\\udcff')"
FIVE: Any = 5  # values of the wrong type, typed Any so the calls below type-check
NONE: Any = None
YES: Any = "yes"
LIST: Any = ["episodic"]

Call = Callable[[Brain, dict[str, str]], Any]

# (name, call with {a, b} the ids of two linked traces, field, words the message must hold)
REFUSALS: list[tuple[str, Call, str, list[str]]] = [
    # 1. text that is not valid Unicode, wherever text goes in
    ("add content", lambda b, ids: b.add(BAD), "content", [UNICODE]),
    ("add tag", lambda b, ids: b.add("x", tags=["ok", BAD]), "tags[1]", [UNICODE]),
    ("add scope_id", lambda b, ids: b.add("x", scope_id=BAD), "scope_id", [UNICODE]),
    ("add id", lambda b, ids: b.add("x", id=BAD), "id", [UNICODE]),
    ("add category", lambda b, ids: b.add("x", category=BAD), "category", ["DECISION"]),
    ("add metadata value", lambda b, ids: b.add("x", metadata={"k": BAD}), "metadata", ["Unicode"]),
    ("add metadata key", lambda b, ids: b.add("x", metadata={BAD: 1}), "metadata", ["Unicode"]),
    ("update content", lambda b, ids: b.update(ids["a"], {"content": BAD}), "content", [UNICODE]),
    ("update tag", lambda b, ids: b.update(ids["a"], {"tags": [BAD]}), "tags[0]", [UNICODE]),
    ("update scope_id", lambda b, ids: b.update(ids["a"], {"scope_id": BAD}), "scope_id", []),
    ("update id", lambda b, ids: b.update(BAD, {"content": "q"}), "id", [UNICODE]),
    ("merge content", lambda b, ids: b.merge([ids["a"], ids["b"]], content=BAD), "content", []),
    ("get id", lambda b, ids: b.get(BAD), "id", [UNICODE]),
    ("search query", lambda b, ids: b.search(BAD), "query", [UNICODE]),
    ("filter tag", lambda b, ids: b.list_traces(TraceFilter(tag=BAD)), "tag", [UNICODE]),
    ("filter scope_id", lambda b, ids: b.count(TraceFilter(scope_id=BAD)), "scope_id", [UNICODE]),
    ("get_many id", lambda b, ids: b.get_many([ids["a"], BAD]), "ids[1]", [UNICODE]),
    # 2. a number too large for a float
    ("strength huge", lambda b, ids: b.add("x", strength=HUGE), "strength", ["between 0 and 1"]),
    ("ttl huge", lambda b, ids: b.add("x", ttl_secs=10**5000), "ttl_secs", ["about 5001 digits"]),
    # 3. metadata that JSON cannot hold
    ("metadata set", lambda b, ids: b.add("x", metadata={"k": {1, 2}}), "metadata", ["{1, 2}"]),
    ("metadata object", lambda b, ids: b.add("x", metadata={"k": object()}), "metadata", ["JSON"]),
    ("metadata tuple key", lambda b, ids: b.add("x", metadata={(1,): 1}), "metadata", ["JSON"]),
    # 4. patch keys of mixed types
    ("patch mixed keys", lambda b, ids: b.update(ids["a"], {1: 2, "a": 3}), "patch", ["['a', 1]"]),
    # 5. an unhashable order
    ("order list", lambda b, ids: b.list_traces(order=["id"]), "order", ["created_at", "['id']"]),
    ("order list ids", lambda b, ids: b.list_ids(order=["id"]), "order", ["created_at"]),
    # 6. filter fields of the wrong type
    (
        "filter scope_id int",
        lambda b, ids: b.list_traces(TraceFilter(scope_id=FIVE)),
        "scope_id",
        ["5"],
    ),
    ("search scope_id", lambda b, ids: b.search("t", TraceFilter(scope_id=FIVE)), "scope_id", []),
    ("filter deleted str", lambda b, ids: b.count(TraceFilter(deleted=YES)), "deleted", ["'yes'"]),
    ("filter type list", lambda b, ids: b.count(TraceFilter(type=LIST)), "type", ["episodic"]),
    # 7. get_many without a list
    ("get_many None", lambda b, ids: b.get_many(NONE), "ids", ["list of trace ids", "None"]),
    ("get_many str", lambda b, ids: b.get_many(ids["a"]), "ids", ["list of trace ids"]),
    ("get_many int elem", lambda b, ids: b.get_many([FIVE]), "ids[0]", ["5"]),
    # 8. related and journal_since bounds
    ("related limit 0", lambda b, ids: b.related(ids["a"], limit=0), "limit", ["200 (got 0)"]),
    ("related limit -1", lambda b, ids: b.related(ids["a"], limit=-1), "limit", ["(got -1)"]),
    ("related id empty", lambda b, ids: b.related(""), "id", ["non-empty trace id"]),
    ("journal_since str", lambda b, ids: b.journal_since(YES), "after_id", ["integer", "'yes'"]),
    ("journal_since -1", lambda b, ids: b.journal_since(-1), "after_id", ["(got -1)"]),
    ("journal limit 0", lambda b, ids: b.journal_since(0, limit=0), "limit", ["(got 0)"]),
    ("journal limit -1", lambda b, ids: b.journal_since(0, limit=-1), "limit", ["(got -1)"]),
]  # fmt: skip


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("edges") / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        ids = {name: brain.add(f"trace {name}", tags=["t"]).id for name in "ab"}
        brain.link(ids["a"], ids["b"], "relates_to")
    return path, ids


@pytest.fixture
def edge_brain(template, tmp_path: Path):
    source, ids = template
    path = tmp_path / "brain.sqlite"
    path.write_bytes(source.read_bytes())
    brain = Brain.open(path, actor="test")
    yield brain, path, ids
    brain.close()


def _state(brain: Brain, path: Path) -> tuple[Any, ...]:
    brain.flush_index()
    return snapshot(path), brain.count(TraceFilter(include_deleted=True)), brain.last_journal_id()


@pytest.mark.parametrize(
    ("call", "field", "words"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_bad_value_is_invalid_argument_and_writes_nothing(edge_brain, call, field, words):
    brain, path, ids = edge_brain
    before = _state(brain, path)
    with pytest.raises(InvalidArgument) as caught:
        call(brain, ids)
    assert caught.value.field == field
    message = str(caught.value)
    assert message.startswith(f"invalid argument: {field} ")
    for word in words:
        assert word in message
    assert _state(brain, path) == before


def test_related_of_an_unknown_trace_is_not_found(edge_brain):
    brain, _path, _ids = edge_brain
    with pytest.raises(NotFound) as caught:
        brain.related("mt_nope")
    assert caught.value.missing_id == "mt_nope"


def test_valid_edges_still_answer(edge_brain):
    brain, _path, ids = edge_brain
    # The limits the app and the CLI use stay valid.
    assert [r.id for r in brain.related(ids["a"], limit=200)] == [ids["b"]]
    assert len(brain.journal_since(0, limit=200, states=False)) == len(brain.journal_since(0))
    assert brain.get_many((ids["a"],)).keys() == {ids["a"]}
    assert brain.get_many([]) == {}
    # Non-ASCII text that is valid Unicode, and JSON that only json (not orjson) writes.
    trace = brain.add("naïve café ☕", tags=["ünï"], scope_id="søren", metadata={"k": HUGE})
    assert brain.get(trace.id).metadata["k"] == HUGE
    assert brain.count(TraceFilter(scope_id="søren", tag="ünï")) == 1
    assert brain.add("x", strength=1).stored_strength == 1.0


def test_long_bad_text_shows_the_part_around_the_bad_character(brain: Brain):
    content = "a" * 1000 + "\udcff" + "b" * 1000
    with pytest.raises(InvalidArgument) as caught:
        brain.add(content)
    message = str(caught.value)
    assert "at character 1000" in message and "\\udcff" in message
    assert len(message) < 200
