"""Strength and decay (DESIGN.md §4; AgentOS DecayModel, upstream-notes §B.2).

`S(t) = S0 · exp(−Δt / stability)`, Δt from last access (else creation), stability from
`metadata.decay.stability`; without one, pinned categories get six times the default, as
agent-memory's pinned half-life is six times its default. Decay never deletes anything.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from memgui.core.model import DAY_MS, DEFAULT_STABILITY_MS, PINNED_CATEGORIES

PINNED_STABILITY_FACTOR = 6.0
HALF_LIFE_MS = 30 * DAY_MS  # agent-memory's default half-life
PINNED_HALF_LIFE_MS = 180 * DAY_MS


def default_stability(category: str | None) -> float:
    factor = PINNED_STABILITY_FACTOR if category in PINNED_CATEGORIES else 1.0
    return float(DEFAULT_STABILITY_MS) * factor


def positive_number(value: object) -> float | None:
    """`value` as a finite positive float, or None (a bool, text, NaN, ∞, 0, a negative or
    an integer too large for a float, as another program may have written)."""
    number = finite_number(value, 0.0)
    return number if number > 0 else None


def explicit_stability(metadata: dict[str, Any]) -> float | None:
    decay = metadata.get("decay") if isinstance(metadata, dict) else None
    return positive_number(decay.get("stability")) if isinstance(decay, dict) else None


def stability_of(metadata: dict[str, Any], category: str | None = None) -> float:
    """The explicit `metadata.decay.stability` (ms), else the default for the category."""
    explicit = explicit_stability(metadata)
    return explicit if explicit is not None else default_stability(category)


def repinned(metadata: dict[str, Any], old: str | None, new: str | None) -> dict[str, Any]:
    """The metadata after the category changes from `old` to `new`: an explicit stability
    (every recalled trace has one) is scaled by the pinned factor when the trace becomes
    pinned or stops being pinned, so pinning slows its decay as it does a trace's without."""
    was, now = old in PINNED_CATEGORIES, new in PINNED_CATEGORIES
    if was == now:
        return metadata
    explicit = explicit_stability(metadata)
    if explicit is None:
        return pinned_explicitly(metadata, new)
    factor = PINNED_STABILITY_FACTOR if now else 1 / PINNED_STABILITY_FACTOR
    return dict(metadata, decay=dict(metadata["decay"], stability=explicit * factor))


def _decay_of(metadata: dict[str, Any]) -> dict[str, Any]:
    decay = metadata.get("decay")
    return decay if isinstance(decay, dict) else {}


def pinned_explicitly(metadata: dict[str, Any], category: str | None) -> dict[str, Any]:
    """A pinned trace's slower decay written out (`metadata.decay.stability`, six days) when
    it has no stability of its own: AgentOS, which knows no categories, reads it there (and
    its consolidation would prune the trace at its one-day default)."""
    if category not in PINNED_CATEGORIES or explicit_stability(metadata) is not None:
        return metadata
    return dict(metadata, decay=dict(_decay_of(metadata), stability=default_stability(category)))


def merged_state(
    snaps: list[dict[str, Any]], survivor: dict[str, Any]
) -> tuple[float, dict[str, Any]]:
    """A merge's strength and decay state (upstream-notes §B.4): the highest stored strength,
    the highest stability, access counts summed, the latest reinforcement interval and time.
    Returns (stored strength, the survivor's metadata with that `decay`)."""
    strength = max(finite_number(s["strength"], 0.0) for s in snaps)
    found = (s["metadata"].get("decay") for s in snaps if isinstance(s["metadata"], dict))
    decays = [d for d in found if isinstance(d, dict)]
    metadata = survivor["metadata"]
    stability = max(stability_of(s["metadata"], s["category"]) for s in snaps)
    if not decays:
        # None has a decay state: only a slower default (a pinned one's) is written out.
        if stability > stability_of(metadata, survivor["category"]):
            return strength, dict(metadata, decay={"stability": stability})
        return strength, metadata
    merged = dict(_decay_of(metadata))
    merged["stability"] = stability
    merged["accessCount"] = sum(int(finite_number(d.get("accessCount"), 0)) for d in decays)
    for key in ("reinforcementInterval", "nextReinforcementAt"):
        values = [positive_number(d.get(key)) for d in decays]
        if any(v is not None for v in values):
            merged[key] = int(max(v for v in values if v is not None))
    return strength, dict(metadata, decay=merged)


def finite_number(value: object, default: float) -> float:
    """`value` as a finite float, else `default` (a bool, a non-number, inf, nan)."""
    if type(value) is float:  # the common case, first: this runs for every trace read
        return value if math.isfinite(value) else default
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    try:
        number = float(value)
    except OverflowError:
        return default
    return number if math.isfinite(number) else default


def current_strength(
    stored: float,
    created_at: int,
    last_accessed: int | None,
    metadata: dict[str, Any],
    category: str | None,
    now: int,
) -> float:
    stability = stability_of(metadata, category)
    since = last_accessed if last_accessed is not None else created_at
    elapsed = max(0.0, now - finite_number(since, float(now)))
    return finite_number(stored, 0.0) * math.exp(-elapsed / stability)


_MAX_FLOAT = "1.7976931348623157e308"  # a REAL past it is ±inf, which `finite_number` refuses


def _finite_sql(value: str) -> str:
    """`value` when it is a finite number (INTEGER or REAL), else NULL. (Not `abs(value)`:
    SQLite's abs of the least INTEGER fails the whole statement, "integer overflow".)"""
    return (
        f"(CASE WHEN typeof({value}) IN ('integer', 'real') "
        f"AND {value} BETWEEN -{_MAX_FLOAT} AND {_MAX_FLOAT} THEN {value} END)"
    )


@functools.lru_cache(maxsize=16)  # built once: every keyword search asks for it
def strength_sql(category: str, now: str) -> str:
    """`current_strength` of a `memory_traces` row as one SQL expression (`category`: its
    category column or NULL; `now`: a parameter in ms), so a search computes it in the
    statement that reads its candidates, with the same arithmetic (C's exp, as Python's):
    the stored strength, else 0; the time since last access, else creation, else none;
    `metadata.decay.stability` when a positive finite number, else the category's default.
    `tests/core/test_decay.py` compares it with `current_strength` row by row."""
    # The value's JSON text as a REAL: a number reads as itself, anything else (true, a
    # string, null, an object) as 0, which is not positive; ±1e400 reads as ±inf.
    stability = "CAST(metadata -> '$.decay.stability' AS REAL)"
    explicit = (
        "CASE WHEN instr(metadata, 'stability') AND json_valid(metadata) "
        f"THEN (CASE WHEN {stability} > 0 AND {stability} <= {_MAX_FLOAT} "
        f"THEN {stability} END) END"
    )
    pinned = ", ".join(f"'{name}'" for name in sorted(PINNED_CATEGORIES))
    fallback = (
        f"CASE WHEN {category} IN ({pinned}) THEN {default_stability('DECISION')!r} "
        f"ELSE {default_stability(None)!r} END"
    )
    chosen = f"CAST(coalesce({explicit}, {fallback}) AS REAL)"
    since = (
        "CASE WHEN last_accessed IS NOT NULL THEN "
        f"{_finite_sql('last_accessed')} ELSE {_finite_sql('coalesce(created_at, 0)')} END"
    )
    elapsed = f"max(0.0, {now} - coalesce({since}, {now}))"
    return f"coalesce({_finite_sql('strength')}, 0.0) * exp(-({elapsed}) / {chosen})"


def agent_memory_stability(category: str | None) -> float:
    """Stability that makes S(t) equal agent-memory's half-life decay score (`H / ln 2`)."""
    half_life = PINNED_HALF_LIFE_MS if category in PINNED_CATEGORIES else HALF_LIFE_MS
    return half_life / math.log(2)


def on_recall(
    stored: float,
    created_at: int,
    last_accessed: int | None,
    retrieval_count: int,
    metadata: dict[str, Any],
    emotions: dict[str, Any],
    category: str | None,
    now: int,
) -> tuple[float, dict[str, Any]]:
    """The spaced-repetition update of a recalled trace: (new S0, new metadata)."""
    current = current_strength(stored, created_at, last_accessed, metadata, category, now)
    difficulty_bonus = max(0.1, 1.0 - current)
    diminish = 1.0 / (1.0 + 0.1 * retrieval_count)
    intensity = emotions.get("intensity", 0) if isinstance(emotions, dict) else 0
    emotional_bonus = 1.0 + 0.3 * finite_number(intensity, 0.0)
    growth = (1.5 + 2.0 * difficulty_bonus) * diminish * emotional_bonus
    old = _decay_of(metadata)
    interval = int(positive_number(old.get("reinforcementInterval")) or DAY_MS) * 2
    new_meta = dict(metadata)
    new_meta["decay"] = {
        **old,
        "stability": stability_of(metadata, category) * growth,
        "accessCount": int(finite_number(old.get("accessCount"), 0)) + 1,
        "reinforcementInterval": interval,
        "nextReinforcementAt": now + interval,
    }
    return min(1.0, finite_number(stored, 0.0) + 0.1), new_meta
