"""What a consolidation would do: its options, its candidates step by step, and its counts.

A `ConsolidationPlan` holds one list of candidates per step of AgentOS's loop (seed 000,
`memory_reflect`; upstream-notes §B.4). Every candidate says why it is there — the score,
the evidence, the threshold it passed — and can be accepted or rejected; a merge cluster's
survivor can be picked and its merged text edited, a derived insight's text too. Nothing
here writes: `consolidate.apply` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.model import DAY_MS, check_content, check_int_range

PRUNE, MERGE, STRENGTHEN, DERIVE, COMPACT, REINDEX = (
    "prune", "merge", "strengthen", "derive", "compact", "reindex",
)  # fmt: skip
STEPS = (PRUNE, MERGE, STRENGTHEN, DERIVE, COMPACT, REINDEX)

# AgentOS's defaults (ConsolidationLoop.ts; upstream-notes §B.4).
PRUNE_THRESHOLD = 0.05
MERGE_THRESHOLD = 0.95
COMPACT_AGE_DAYS = 7.0
COMPACT_MIN_RETRIEVALS = 3
MIN_CLUSTER_SIZE = 5
MAX_DERIVED = 5
LEARNING_RATE = 0.1  # a co-activation edge's weight step (SqlMemoryGraph.recordCoActivation)
INSIGHT_STRENGTH = 0.7
DERIVE_PROMPT = "Given these related memories, derive one concise higher-level insight:\n\n"


def _fraction(name: str, value: object, low_open: bool = True) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not (0 < value <= 1 if low_open else 0 <= value <= 1):  # type: ignore[operator]
        bound = "greater than 0 and at most 1" if low_open else "between 0 and 1"
        raise InvalidArgument(name, f"must be a number {bound} (got {value!r})", value)
    return float(value)  # type: ignore[arg-type]


@dataclass
class ConsolidationOptions:
    """Which steps run and their thresholds (AgentOS's defaults); `llm` derives insights."""

    steps: tuple[str, ...] = STEPS
    prune_threshold: float = PRUNE_THRESHOLD
    merge_threshold: float = MERGE_THRESHOLD
    merge_across_scopes: bool = False  # AgentOS merges exact copies across scopes; memgui asks
    merge_across_types: bool = False
    compact_age_days: float = COMPACT_AGE_DAYS
    compact_min_retrievals: int = COMPACT_MIN_RETRIEVALS
    min_cluster_size: int = MIN_CLUSTER_SIZE
    max_derived: int = MAX_DERIVED
    llm: Any = None  # core.llm.OllamaChat, or anything with `.chat(system, user)` and `.status()`

    def validated(self) -> ConsolidationOptions:
        if isinstance(self.steps, str) or not isinstance(self.steps, list | tuple):
            raise InvalidArgument("steps", f"must be a list of steps (got {self.steps!r})")
        for step in self.steps:
            if step not in STEPS:
                raise InvalidArgument(
                    "steps", f"must name steps of {', '.join(STEPS)} (got {step!r})", step
                )
        self.steps = tuple(s for s in STEPS if s in self.steps)
        self.prune_threshold = _fraction("prune_threshold", self.prune_threshold)
        self.merge_threshold = _fraction("merge_threshold", self.merge_threshold)
        for name in ("merge_across_scopes", "merge_across_types"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgument(name, f"must be True or False (got {getattr(self, name)!r})")
        age = self.compact_age_days
        if isinstance(age, bool) or not isinstance(age, int | float) or not 0 <= age <= 36_500:
            raise InvalidArgument(
                "compact_age_days", f"must be a number of days from 0 to 36500 (got {age!r})", age
            )
        check_int_range("compact_min_retrievals", self.compact_min_retrievals, 0, 2**31)
        check_int_range("min_cluster_size", self.min_cluster_size, 2, 10_000)
        check_int_range("max_derived", self.max_derived, 0, 100)
        return self

    @property
    def compact_age_ms(self) -> int:
        return int(self.compact_age_days * DAY_MS)


@dataclass
class PruneCandidate:
    trace_id: str
    content: str
    strength: float  # current, decayed
    threshold: float
    stability_ms: float
    idle_days: float  # since the last access (else since it was made)
    accepted: bool = True

    @property
    def key(self) -> str:
        return f"{PRUNE}:{self.trace_id}"

    @property
    def why(self) -> str:
        return (
            f"strength {self.strength:.4f} < {self.threshold:g} "
            f"(unused {self.idle_days:.1f} days, stability {self.stability_ms / DAY_MS:.2f} days)"
        )


@dataclass
class MergeMember:
    trace_id: str
    content: str
    type: str
    scope: str
    scope_id: str
    retrieval_count: int
    created_at: int
    tags: tuple[str, ...]
    evidence: str = ""  # how it joined the cluster: "same text as …", "similarity 0.97 to …"
    similarity: float | None = None  # to the member it joined through (None: same text)


@dataclass
class MergeCluster:
    """Traces that say the same thing: merged into `survivor_id`, the others soft-deleted."""

    number: int
    members: list[MergeMember]
    survivor_id: str
    content: str  # the survivor's text after the merge (editable)
    threshold: float
    excluded: set[str] = field(default_factory=set)  # members kept out by the person
    accepted: bool = True
    content_edited: bool = False

    @property
    def key(self) -> str:
        return f"{MERGE}:{self.number}"

    @property
    def basis(self) -> str:
        return "same text" if all(m.similarity is None for m in self.members) else "similar"

    @property
    def merging(self) -> list[MergeMember]:
        return [m for m in self.members if m.trace_id not in self.excluded]

    @property
    def losers(self) -> list[str]:
        return [m.trace_id for m in self.merging if m.trace_id != self.survivor_id]

    @property
    def effective(self) -> bool:
        """Accepted and still at least two traces with the survivor among them."""
        ids = [m.trace_id for m in self.merging]
        return self.accepted and len(ids) >= 2 and self.survivor_id in ids

    @property
    def why(self) -> str:
        if self.basis == "same text":
            return f"{len(self.members)} traces with the same text (SHA-256)"
        low = min(m.similarity for m in self.members if m.similarity is not None)
        return (
            f"{len(self.members)} traces with cosine similarity > {self.threshold:g} "
            f"(lowest link {low:.4f})"
        )

    def member(self, trace_id: str) -> MergeMember:
        for m in self.members:
            if m.trace_id == trace_id:
                return m
        raise InvalidArgument(
            "survivor", f"must be a member of cluster {self.number} (got {trace_id!r})", trace_id
        )

    def choose_survivor(self, trace_id: str) -> None:
        """Keep `trace_id`; its text becomes the merged text unless the text was edited."""
        member = self.member(trace_id)
        self.survivor_id = trace_id
        self.excluded.discard(trace_id)
        if not self.content_edited:
            self.content = member.content

    def set_content(self, text: str) -> None:
        self.content = check_content(text)
        self.content_edited = text != self.member(self.survivor_id).content

    def exclude(self, trace_id: str, excluded: bool = True) -> None:
        self.member(trace_id)
        if excluded:
            self.excluded.add(trace_id)
        else:
            self.excluded.discard(trace_id)


@dataclass
class StrengthenPair:
    source_id: str
    target_id: str
    edge_id: str
    weight_before: float | None  # None: no co-activation edge yet
    weight_after: float
    uses: int  # times both were used for the query (the fewer of their 'used' rows)


@dataclass
class StrengthenCandidate:
    """Traces an agent used together for one query: their co-activation edges grow."""

    query: str
    query_key: str  # what an edge's metadata remembers as counted
    trace_ids: list[str]
    pairs: list[StrengthenPair]
    accepted: bool = True

    @property
    def key(self) -> str:
        return f"{STRENGTHEN}:{self.query_key}"

    @property
    def why(self) -> str:
        return (
            f"{len(self.trace_ids)} traces marked 'used' for the query {self.query!r}: "
            f"{len(self.pairs)} co-activation edge(s) +{LEARNING_RATE:g}"
        )


@dataclass
class DeriveCandidate:
    """A cluster of linked traces and the insight an LLM drew from it (editable)."""

    number: int
    centroid_id: str
    member_ids: list[str]
    member_contents: list[str]
    insight: str
    model: str
    accepted: bool = True

    @property
    def key(self) -> str:
        return f"{DERIVE}:{self.number}"

    @property
    def why(self) -> str:
        return f"a cluster of {len(self.member_ids)} linked traces; insight by {self.model}"

    def set_insight(self, text: str) -> None:
        self.insight = check_content(text)


@dataclass
class CompactCandidate:
    trace_id: str
    content: str
    age_days: float
    retrieval_count: int
    min_age_days: float
    min_retrievals: int
    accepted: bool = True

    @property
    def key(self) -> str:
        return f"{COMPACT}:{self.trace_id}"

    @property
    def why(self) -> str:
        return (
            f"episodic, {self.age_days:.1f} days old (> {self.min_age_days:g}) and retrieved "
            f"{self.retrieval_count} times (>= {self.min_retrievals}): becomes semantic"
        )


Candidate = PruneCandidate | MergeCluster | StrengthenCandidate | DeriveCandidate | CompactCandidate


@dataclass
class ConsolidationPlan:
    """Every candidate of every step, with why; nothing written yet."""

    brain_id: str
    options: ConsolidationOptions
    made_at: int
    prune: list[PruneCandidate] = field(default_factory=list)
    merge: list[MergeCluster] = field(default_factory=list)
    strengthen: list[StrengthenCandidate] = field(default_factory=list)
    derive: list[DeriveCandidate] = field(default_factory=list)
    compact: list[CompactCandidate] = field(default_factory=list)
    reindex_pending: int = 0  # rows waiting for the full-text indexes
    notes: list[str] = field(default_factory=list)  # steps skipped and why
    busy: str | None = None  # another consolidation held the brain: nothing was planned
    # What planning read of each trace a candidate touches: (version, last_accessed, deleted).
    seen: dict[str, tuple[int, int | None, bool]] = field(default_factory=dict)
    # ... and of each co-activation edge: (weight, metadata) or None when there was none.
    seen_edges: dict[str, tuple[float, dict[str, Any]] | None] = field(default_factory=dict)
    duration_ms: int = 0
    applied_batch: str | None = None  # set once applied: a plan is applied once

    def candidates(self) -> list[Candidate]:
        return [*self.prune, *self.merge, *self.strengthen, *self.derive, *self.compact]

    def candidate(self, key: str) -> Candidate:
        for c in self.candidates():
            if c.key == key:
                return c
        raise InvalidArgument("accepted", f"names no candidate of this plan (got {key!r})", key)

    @property
    def counts(self) -> dict[str, int]:
        """What the plan would change, by step planned (merge: traces merged away)."""
        every = {
            PRUNE: len(self.prune),
            MERGE: sum(len(c.losers) for c in self.merge),
            STRENGTHEN: len(self.strengthen),
            DERIVE: len(self.derive),
            COMPACT: len(self.compact),
            REINDEX: self.reindex_pending,
        }
        return {step: n for step, n in every.items() if step in self.options.steps}

    def accepted_counts(self, keys: set[str] | None = None) -> dict[str, int]:
        """What applying would change with these candidates accepted (None: their flags)."""

        def on(c: Candidate) -> bool:
            return c.accepted if keys is None else c.key in keys

        return {
            PRUNE: sum(1 for c in self.prune if on(c)),
            MERGE: sum(len(c.losers) for c in self.merge if on(c) and c.effective),
            STRENGTHEN: sum(1 for c in self.strengthen if on(c)),
            DERIVE: sum(1 for c in self.derive if on(c)),
            COMPACT: sum(1 for c in self.compact if on(c)),
            REINDEX: self.reindex_pending,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "brain_id": self.brain_id,
            "steps": list(self.options.steps),
            "counts": self.counts,
            "busy": self.busy,
            "notes": list(self.notes),
            "durationMs": self.duration_ms,
            "prune": [
                {"key": c.key, "id": c.trace_id, "strength": round(c.strength, 6), "why": c.why}
                for c in self.prune
            ],
            "merge": [
                {
                    "key": c.key,
                    "basis": c.basis,
                    "survivor": c.survivor_id,
                    "content": c.content,
                    "why": c.why,
                    "members": [
                        {
                            "id": m.trace_id,
                            "similarity": None if m.similarity is None else round(m.similarity, 6),
                            "evidence": m.evidence,
                        }
                        for m in c.members
                    ],
                }
                for c in self.merge
            ],
            "strengthen": [
                {"key": c.key, "query": c.query, "ids": c.trace_ids, "why": c.why}
                for c in self.strengthen
            ],
            "derive": [
                {"key": c.key, "ids": c.member_ids, "insight": c.insight, "why": c.why}
                for c in self.derive
            ],
            "compact": [{"key": c.key, "id": c.trace_id, "why": c.why} for c in self.compact],
            "reindex": {"pending": self.reindex_pending},
        }
