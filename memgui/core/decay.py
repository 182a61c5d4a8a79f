"""Strength and decay (DESIGN.md §4; AgentOS DecayModel, upstream-notes §B.2).

`S(t) = S0 · exp(−Δt / stability)`, Δt from last access (else creation), stability from
`metadata.decay.stability`; without one, pinned categories get six times the default, as
agent-memory's pinned half-life is six times its default. Decay never deletes anything.
"""

from __future__ import annotations

import math
from typing import Any

from memgui.core.model import DAY_MS, DEFAULT_STABILITY_MS, PINNED_CATEGORIES

PINNED_STABILITY_FACTOR = 6.0
HALF_LIFE_MS = 30 * DAY_MS  # agent-memory's default half-life
PINNED_HALF_LIFE_MS = 180 * DAY_MS


def default_stability(category: str | None) -> float:
    factor = PINNED_STABILITY_FACTOR if category in PINNED_CATEGORIES else 1.0
    return float(DEFAULT_STABILITY_MS) * factor


def stability_of(metadata: dict[str, Any], category: str | None = None) -> float:
    """The explicit `metadata.decay.stability` (ms), else the default for the category."""
    decay = metadata.get("decay") if isinstance(metadata, dict) else None
    if isinstance(decay, dict):
        value = decay.get("stability")
        if isinstance(value, int | float) and value > 0 and math.isfinite(value):
            return float(value)
    return default_stability(category)


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
    elapsed = max(0, now - (since or now))
    return float(stored) * math.exp(-elapsed / stability)


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
    if not isinstance(intensity, int | float):
        intensity = 0
    emotional_bonus = 1.0 + 0.3 * float(intensity)
    growth = (1.5 + 2.0 * difficulty_bonus) * diminish * emotional_bonus
    old = metadata.get("decay") if isinstance(metadata.get("decay"), dict) else {}
    interval = old.get("reinforcementInterval", DAY_MS)
    if not isinstance(interval, int | float) or interval <= 0:
        interval = DAY_MS
    interval = int(interval * 2)
    new_meta = dict(metadata)
    new_meta["decay"] = {
        **old,
        "stability": stability_of(metadata, category) * growth,
        "accessCount": int(old.get("accessCount", 0) or 0) + 1,
        "reinforcementInterval": interval,
        "nextReinforcementAt": now + interval,
    }
    return min(1.0, float(stored) + 0.1), new_meta
