"""The common shape every format reader produces and the import planner consumes.

A reader is a generator: it yields `Progress` events and `ImportRecord`s, one per thing it
read (a trace, a knowledge node or edge, a conversation, a message, …) or could not read.
Readers never touch a brain; `plan.py` classifies records against one and `commit` writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar


class Verdict(StrEnum):
    """What a plan would do with a record. A `str`: JSON, SQL and comparisons see the value."""

    NEW = "new"
    DUPLICATE = "duplicate"
    UPDATE = "update"
    REFUSED = "refused"
    ERROR = "error"
    SKIPPED = "skipped"


class RecordKind(StrEnum):
    """What a record holds. A `str`: JSON, SQL and comparisons see the value."""

    TRACE = "trace"
    NODE = "node"
    EDGE = "edge"
    CONVERSATION = "conversation"
    MESSAGE = "message"
    DOCUMENT = "document"
    CHUNK = "chunk"
    IMAGE = "image"
    UNREAD = "unread"  # a file the reader saw and did not read, or a source that cannot be read
    LINE = "line"  # a defective line of a source that reads otherwise (agent-memory JSONL)


# The members under short names, as readers and the planner use them.
NEW, DUPLICATE, UPDATE, REFUSED, ERROR, SKIPPED = tuple(Verdict)
VERDICTS = (NEW, DUPLICATE, UPDATE, REFUSED, ERROR)
TRACE, NODE, EDGE, CONVERSATION, MESSAGE, DOCUMENT, CHUNK, IMAGE, UNREAD, LINE = tuple(RecordKind)


NO_LINKS: tuple[()] = ()  # shared by the records of a reader that never adds links


class LazyFields(MutableMapping[str, Any]):
    """A record's fields kept in a compact form and built when read (a big plan's records).

    Reading works as on a dict, but each value read is built afresh (a new `metadata` dict):
    change a field by assigning it, not by changing a value read from it. The first
    assignment or deletion turns the fields into an ordinary dict, held from then on.
    Subclasses map each field's name to the function that builds its value, in `GETTERS`.
    """

    __slots__ = ("_own",)
    GETTERS: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    def __init__(self) -> None:
        self._own: dict[str, Any] | None = None

    @property
    def afresh(self) -> bool:
        """True while every value read is built anew (no field assigned yet)."""
        return self._own is None

    def take_id(self, trace_id: str) -> bool:
        """Hold `trace_id`, the id planning chose for a record its source gave none, as the
        record's `id`; False when these fields cannot (the plan notes it in `resolved`)."""
        return False

    def build(self) -> dict[str, Any]:
        """Every field as a new dict (the one the fields are held as once edited)."""
        own = self._own
        if own is not None:
            return dict(own)
        return {key: getter(self) for key, getter in self.GETTERS.items()}

    def __getitem__(self, key: str) -> Any:
        own = self._own
        if own is not None:
            return own[key]
        return self.GETTERS[key](self)

    def get(self, key: str, default: Any = None) -> Any:
        own = self._own
        if own is not None:
            return own.get(key, default)
        getter = self.GETTERS.get(key)
        return default if getter is None else getter(self)

    def __contains__(self, key: object) -> bool:
        own = self._own
        return key in (own if own is not None else self.GETTERS)

    def __iter__(self) -> Iterator[str]:
        own = self._own
        return iter(own if own is not None else self.GETTERS)

    def __len__(self) -> int:
        own = self._own
        return len(own if own is not None else self.GETTERS)

    def _owned(self) -> dict[str, Any]:
        if self._own is None:
            self._own = self.build()
        return self._own

    def __setitem__(self, key: str, value: Any) -> None:
        self._owned()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._owned()[key]

    def items(self) -> Any:
        return self.build().items()

    def values(self) -> Any:
        return self.build().values()

    def copy(self) -> dict[str, Any]:
        return self.build()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.build()!r})"


def plain_fields(fields: Any) -> dict[str, Any]:
    """A record's fields as a dict: the dict itself, or one built from lazy fields."""
    if type(fields) is dict:
        return fields
    return fields.build() if isinstance(fields, LazyFields) else dict(fields)


def built_afresh(fields: Any) -> bool:
    """True when reading `fields` builds new values, which nothing else holds."""
    return type(fields) is not dict and isinstance(fields, LazyFields) and fields.afresh


@dataclass(slots=True)  # a big plan holds ~500k of them: no per-record attribute dict
class ImportRecord:
    """One thing read from a source.

    `fields` for a trace uses the core's names: id (optional), content, type, scope,
    scope_id, category, tags (list), metadata (dict), emotions (dict), strength (S0),
    created_at / last_accessed (epoch ms), retrieval_count, deleted (bool), expires_at,
    embedding (float32 little-endian bytes or None), stability_ms. Other kinds carry their
    table's columns (JSON columns as dicts). `links` holds wikilink targets / relations.
    A big source's records may hold `LazyFields` instead of a dict (read them as a mapping;
    `plain_fields` gives a dict).
    """

    source: str  # "path:line", "path#conversation-id", "path" — where a person finds it
    kind: RecordKind
    fields: dict[str, Any] | LazyFields = field(default_factory=dict)
    verdict: Verdict = NEW
    reason: str = ""
    problem_field: str | None = None
    value: Any = None
    existing_id: str | None = None  # for duplicate / update: the trace already there
    links: list[dict[str, Any]] | tuple[()] = field(default_factory=list)
    accepted: bool = True
    # Obsidian: what the reader cut from the note's body after `content` (tag line, Related
    # list), so the planner can read the body whole against its trace's text (seed 000).
    note_tail: str = ""
    # A trace with a vector: the model the source says made it (its export's meta, its
    # brain's pin), so the brain pins that model and never mixes another one's vectors in.
    embedding_model: str | None = None

    def refuse(self, field_name: str, reason: str, value: Any = None) -> ImportRecord:
        self.verdict = REFUSED
        self.problem_field = field_name
        self.reason = reason
        self.value = value
        return self

    def fail(self, reason: str) -> ImportRecord:
        self.verdict = ERROR
        self.reason = reason
        return self

    def add_link(self, link: dict[str, Any]) -> None:
        if isinstance(self.links, tuple):  # the shared NO_LINKS
            self.links = []
        self.links.append(link)
