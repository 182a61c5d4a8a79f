"""Value types of the core and the validation rules every entry point shares."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# Re-exported: what a mutation returns is part of every caller's vocabulary.
from memgui.core.changes import Changes as Changes
from memgui.core.changes import LinkKey as LinkKey
from memgui.core.errors import InvalidArgument
from memgui.core.search import snippets

TYPES = ("episodic", "semantic", "procedural", "prospective", "relational")
SCOPES = ("thread", "user", "persona", "organization")
CATEGORIES = ("DECISION", "PATTERN", "ERROR", "TODO", "ARCHITECTURE", "CONSTRAINT")
# Auto-ingest's fact categories (seed 000, Wunderland): the five its prompt asks for and the
# two a personality can enable (emotional_context, action_item).
INGEST_CATEGORIES = (
    "user_preference",
    "episodic",
    "goal",
    "knowledge",
    "correction",
    "emotional_context",
    "action_item",
)
PINNED_CATEGORIES = frozenset({"DECISION", "ARCHITECTURE", "CONSTRAINT"})
LINK_KINDS = ("relates_to", "supersedes", "caused_by")
# What a person edits of a trace (an update's patch also takes `ttl_secs`: the expiry).
EDITABLE_FIELDS = ("content", "tags", "type", "scope", "scope_id", "category")

MIN_LIMIT, MAX_LIMIT = 1, 200
MIN_TTL_SECS, MAX_TTL_SECS = 1, 3_155_760_000
MAX_DEPTH = 3
MAX_NEIGHBOURS = 500  # the default; a caller may ask for up to NEIGHBOURS_CAP
NEIGHBOURS_CAP = 5_000
DAY_MS = 86_400_000
DEFAULT_STABILITY_MS = DAY_MS


@dataclass(frozen=True)
class Trace:
    id: str
    type: str
    scope: str
    scope_id: str
    content: str
    tags: tuple[str, ...]
    strength: float  # current, decayed
    stored_strength: float  # S0 as stored
    created_at: int
    last_accessed: int | None
    retrieval_count: int
    expires_at: int | None
    deleted: bool
    version: int
    category: str | None = None
    updated_at: int | None = None
    embedding_status: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    emotions: dict[str, Any] = field(default_factory=dict)
    rowid: int = 0
    # What the mutation that returned this trace changed; None on a trace that was read.
    changes: Changes | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The wire shape of a trace (CLI `--json`, REST, MCP)."""
        return {
            "id": self.id,
            "type": self.type,
            "scope": self.scope,
            "scope_id": self.scope_id,
            "category": self.category,
            "content": self.content,
            "tags": list(self.tags),
            "strength": round(self.strength, 6),
            "created_at": self.created_at,
            "last_accessed": self.last_accessed,
            "retrieval_count": self.retrieval_count,
            "expires_at": self.expires_at,
            "deleted": self.deleted,
            "version": self.version,
        }


def now_ms() -> int:
    """The time as the brain stores it: milliseconds since the epoch."""
    return int(time.time() * 1000)


def new_trace_id() -> str:
    """`mt_` and a random (version 4) UUID, as AgentOS names a trace.

    Formatted from 16 random bytes by hand: building a `uuid.UUID` costs ~8 µs, a good part
    of a whole add. The version nibble is set to 4 and the variant bits to 10.
    """
    h = os.urandom(16).hex()
    variant = "89ab"[int(h[16], 16) & 3]
    return f"mt_{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{h[20:]}"


class TraceIds:
    """Fresh trace ids for one import, cheaply: one `new_trace_id()`, its last 48 bits
    counting up.

    Counting keeps the ids unique (74 random bits per import) and in order, so the brain's
    id index grows at one end instead of at random.
    """

    def __init__(self) -> None:
        first = new_trace_id()
        self.head = first[:-12]
        self.next = int(first[-12:], 16) & (2**47 - 1)  # room to count without wrapping

    def __call__(self) -> str:
        self.next += 1
        return f"{self.head}{self.next:012x}"


def with_changes(trace: Trace, changes: Changes) -> Trace:
    """A trace a mutation just built, carrying what the mutation changed."""
    object.__setattr__(trace, "changes", changes)
    return trace


def changes_of(trace: Trace) -> Changes:
    """What the mutation that returned `trace` changed; a trace that was read has none."""
    if trace.changes is None:
        raise ValueError(f"trace {trace.id} was read, not returned by a mutation")
    return trace.changes


def trace_from_fields(fields: dict[str, Any]) -> Trace:
    """A Trace from a value for every field, without the frozen dataclass's `__init__`.

    That `__init__` sets each of the 20 fields through `object.__setattr__` (~7 µs a trace);
    filling the instance dict at once is one C call. Reads and every add build Traces.
    """
    trace = object.__new__(Trace)
    trace.__dict__.update(fields)
    return trace


@dataclass(frozen=True)
class TraceFilter:
    """Filters shared by list, search, count and the app's table."""

    type: str | None = None
    scope: str | None = None
    scope_id: str | None = None
    category: str | None = None
    tag: str | None = None
    deleted: bool = False  # True: the trash (deleted only)
    include_deleted: bool = False  # True: live and deleted

    def validated(self) -> TraceFilter:
        if self.type is not None:
            check_choice("type", self.type, TYPES)
        if self.scope is not None:
            check_choice("scope", self.scope, SCOPES)
        if self.category is not None:
            check_category(self.category)
        if self.scope_id is not None:
            # A non-string scope id would bind as a number and silently match nothing.
            if not isinstance(self.scope_id, str):
                raise InvalidArgument(
                    "scope_id", f"must be a string (got {self.scope_id!r})", self.scope_id
                )
            check_text("scope_id", self.scope_id)
        if self.tag is not None:
            if not isinstance(self.tag, str) or not self.tag:
                raise InvalidArgument(
                    "tag", f"must be a non-empty string (got {self.tag!r})", self.tag
                )
            check_text("tag", self.tag)
        for name in ("deleted", "include_deleted"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise InvalidArgument(name, f"must be True or False (got {value!r})", value)
        return self


@dataclass(frozen=True)
class Link:
    from_id: str
    to_id: str
    kind: str
    created_at: int


_STORED_KIND = {"superseded_by": "supersedes", "caused": "caused_by"}


@dataclass(frozen=True)
class RelatedSummary:
    """A link seen from one trace: the other side, a snippet, and the kind read from here."""

    id: str
    kind: str
    direction: str  # "in" | "out"
    snippet: str
    created_at: int

    @property
    def stored_kind(self) -> str:
        """The kind as the link is stored, read from its source (`superseded_by` is
        `supersedes`): what `link` and `unlink` take."""
        return _STORED_KIND.get(self.kind, self.kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "direction": self.direction,
            "snippet": self.snippet,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class Neighbour:
    node_id: str
    label: str
    node_type: str
    edge_type: str
    hop: int
    via: str = ""  # the label of the node it was reached through (none at hop 1)
    trace_id: str | None = None  # the memory the node stands for, if it stands for one

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node_id,
            "label": self.label,
            "type": self.node_type,
            "edge_type": self.edge_type,
            "hop": self.hop,
            "via": self.via,
            "trace_id": self.trace_id,
        }


@dataclass(frozen=True)
class JournalEntry:
    id: int
    at: int
    actor: str
    batch_id: str
    op: str
    trace_id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "actor": self.actor,
            "batch_id": self.batch_id,
            "op": self.op,
            "trace_id": self.trace_id,
            "before": self.before,
            "after": self.after,
        }


@dataclass(frozen=True)
class Facets:
    """How many memories of a view (live, or in the trash) have each value of a filter:
    what a filter list shows beside its choices, and the tags a tag field completes."""

    types: dict[str, int] = field(default_factory=dict)
    scopes: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    tags: dict[str, int] = field(default_factory=dict)  # the most used, most used first
    total: int = 0


@dataclass(frozen=True)
class SearchHit:
    trace: Trace
    score: float
    related: tuple[RelatedSummary, ...] = ()
    query: str = field(default="", repr=False)  # what found it, for `snippet`
    # The cognitive mode's score by part (similarity, strength, recency, emotionalCongruence,
    # graphActivation, importance), `similaritySource` ("vector" | "keyword") and `why` (the
    # score spelled out, a line for a person); None in the other modes.
    parts: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def snippet(self) -> str:
        """A line of the memory around where the query matched it (made when asked)."""
        return snippets.snippet(self.trace.content, self.query)


@dataclass(frozen=True)
class SearchResult:
    hits: tuple[SearchHit, ...]
    search_mode: str

    @property
    def traces(self) -> list[Trace]:
        return [h.trace for h in self.hits]


# --- validation -------------------------------------------------------------------------


def shown(value: object) -> str:
    """A value for a message: its repr, but a huge integer by its size (Python refuses to
    print one past 4300 digits, and 400 digits say nothing a person can read)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        digits = int(value.bit_length() * 0.30103) + 1  # log10(2): about this many digits
        return f"{'-' if value < 0 else ''}an integer of about {digits} digits"
    return repr(value)


def check_text(field_name: str, value: str) -> str:
    """Refuse a str that is not Unicode text: a lone surrogate (what Python makes of invalid
    UTF-8 bytes in argv) cannot be stored as UTF-8 and would fail as SQLite binds it."""
    if value.isascii():  # O(1) in CPython: most text stops here without a copy
        return value
    try:
        value.encode()
    except UnicodeEncodeError as exc:
        # Show the value as given, or the part around the bad character when it is long.
        part = value if len(value) <= 80 else value[max(0, exc.start - 30) : exc.start + 30]
        where = "" if part is value else f" at character {exc.start}"
        raise InvalidArgument(
            field_name, f"must be valid Unicode text (got {part!r}{where})", value
        ) from None
    return value


def check_choice(field_name: str, value: object, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise InvalidArgument(
            field_name, f"must be one of {', '.join(choices)} (got {value!r})", value
        )
    return value


def check_category(value: object) -> str | None:
    if value is None:
        return None
    allowed = CATEGORIES + INGEST_CATEGORIES
    if value not in allowed:
        raise InvalidArgument(
            "category", f"must be one of {', '.join(allowed)} (got {value!r})", value
        )
    return value


def check_int_range(field_name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(
            field_name, f"must be an integer between {low} and {high} (got {value!r})", value
        )
    if not low <= value <= high:
        raise InvalidArgument(
            field_name, f"must be between {low} and {high} (got {shown(value)})", value
        )
    return value


def check_seconds(field_name: str, value: object, high: float) -> float:
    """A duration in seconds: a finite number from 0 to `high`."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise InvalidArgument(
            field_name, f"must be a number of seconds from 0 to {high:g} (got {value!r})", value
        )
    if not 0 <= value <= high:
        raise InvalidArgument(
            field_name, f"must be between 0 and {high:g} seconds (got {shown(value)})", value
        )
    return float(value)


def check_limit(value: object) -> int:
    return check_int_range("limit", value, MIN_LIMIT, MAX_LIMIT)


def check_ttl(value: object) -> int:
    return check_int_range("ttl_secs", value, MIN_TTL_SECS, MAX_TTL_SECS)


def check_content(value: object, field_name: str = "content") -> str:
    if not isinstance(value, str):
        raise InvalidArgument(field_name, f"must be a string (got {type(value).__name__})", value)
    if not value or value.isspace():  # what strip() would leave empty, without the copy
        # Show the value as given: '   ' is refused as empty too, and should say so.
        raise InvalidArgument(field_name, f"must not be empty (got {value!r})", value)
    return check_text(field_name, value)


def check_filter(value: object) -> TraceFilter:
    """A filter argument: a TraceFilter whose values are each valid."""
    if not isinstance(value, TraceFilter):
        raise InvalidArgument("filter", f"must be a TraceFilter (got {value!r:.80})", value)
    return value.validated()


def check_id(field_name: str, value: object, what: str = "trace id") -> str:
    """An id argument: an empty one is a caller's mistake, never an id to look up."""
    if not isinstance(value, str) or not value or value.isspace():
        raise InvalidArgument(field_name, f"must be a non-empty {what} (got {value!r})", value)
    return check_text(field_name, value)


def check_tags(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidArgument("tags", f"must be a list of strings (got {value!r})", value)
    out: dict[str, None] = {}  # in order, each once (a list's `in` took time squared)
    for i, tag in enumerate(value):
        if not isinstance(tag, str) or not tag.strip():
            raise InvalidArgument(f"tags[{i}]", f"must be a non-empty string (got {tag!r})", tag)
        check_text(f"tags[{i}]", tag)
        out[tag] = None
    return tuple(out)


def check_strength(value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and math.isnan(value))  # isnan() of a huge int overflows
    ):
        raise InvalidArgument("strength", f"must be a number between 0 and 1 (got {value!r})")
    if not 0 <= value <= 1:  # compared as given: float() of a huge int overflows too
        raise InvalidArgument("strength", f"must be between 0 and 1 (got {shown(value)})", value)
    return float(value)


def check_depth(value: object) -> int:
    return check_int_range("depth", value, 1, MAX_DEPTH)


def check_link_kind(value: object) -> str:
    if value not in LINK_KINDS:
        raise InvalidArgument(
            "kind", f"must be one of {', '.join(LINK_KINDS)} (got {value!r})", value
        )
    return value


def check_lookup_ids(ids: object) -> list[str]:
    """Ids to look up (`get_many`): an unknown id is simply absent from the answer, but a
    value that is no id at all is the caller's mistake."""
    if isinstance(ids, str) or not isinstance(ids, list | tuple):
        raise InvalidArgument("ids", f"must be a list of trace ids (got {ids!r})", ids)
    for i, trace_id in enumerate(ids):
        if not isinstance(trace_id, str):
            raise InvalidArgument(
                f"ids[{i}]", f"must be a trace id string (got {trace_id!r})", trace_id
            )
        check_text(f"ids[{i}]", trace_id)
    return list(ids)


def check_after(after: object, order: str) -> tuple[int, str]:
    """A keyset page's start: (created_at, id) of a trace already seen, in created_at order."""
    if order != "created_at":
        raise InvalidArgument("after", f"needs order created_at (got {order!r})", order)
    if not isinstance(after, tuple) or len(after) != 2 or not isinstance(after[1], str):
        raise InvalidArgument("after", f"must be (created_at, id) (got {after!r})", after)
    check_int_range("after[0]", after[0], -(2**63), 2**63 - 1)
    check_text("after[1]", after[1])
    return after[0], after[1]
