"""Auto-ingest's configuration: Wunderland's `agent.config.json` and its HEXACO rules.

`derive_personality_memory_config(traits)` is Wunderland's `derivePersonalityMemoryConfig`
(seed 000, *HEXACO Personality Modulation*; upstream-notes §C.2), rule for rule: a base of
threshold 0.4, three facts a turn and five categories, adjusted for each trait above 0.6
(openness also below 0.4), with its floors and caps. A trait is clamped to 0–1, a missing one
counts as 0.5, NaN changes nothing, and 0.6 and 0.4 themselves change nothing (the bounds are
strict). `load_agent_config(path)` reads `storage.autoIngest` and `personality` from an
`agent.config.json`; there, a value out of its bounds or a misspelt key is refused, naming the
key, the bound and the value (the function itself clamps, as Wunderland's does).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memgui.core.errors import InvalidArgument

CATEGORIES = ("user_preference", "episodic", "goal", "knowledge", "correction")
EMOTIONAL_CONTEXT, ACTION_ITEM = "emotional_context", "action_item"
TRAITS = (
    "honesty",
    "emotionality",
    "extraversion",
    "agreeableness",
    "conscientiousness",
    "openness",
)
STORAGE_KEYS = ("enabled", "importanceThreshold", "maxPerTurn")
MAX_PER_TURN_BOUND = 100


@dataclass(frozen=True)
class PersonalityMemoryConfig:
    """Wunderland's PersonalityMemoryConfig; the pipeline reads the first four fields."""

    importance_threshold: float = 0.4
    max_memories_per_turn: int = 3
    enabled_categories: tuple[str, ...] = CATEGORIES
    category_boosts: dict[str, float] = field(default_factory=dict)
    enable_sentiment_tracking: bool = False
    deduplication_threshold: float = 0.85
    compaction_interval_turns: int = 50
    retrieval_top_k: int = 5


def _trait(traits: dict[str, Any], name: str) -> float:
    value = traits.get(name)
    if value is None:
        return 0.5
    number = float(value)
    return number if math.isnan(number) else min(1.0, max(0.0, number))


def derive_personality_memory_config(
    traits: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None
) -> PersonalityMemoryConfig:
    """Wunderland's rules, in its order: openness, conscientiousness, agreeableness,
    emotionality, honesty (extraversion changes nothing); `overrides` replace fields last."""
    traits = traits or {}
    o, c = _trait(traits, "openness"), _trait(traits, "conscientiousness")
    a, e, h = (
        _trait(traits, "agreeableness"),
        _trait(traits, "emotionality"),
        _trait(traits, "honesty"),
    )
    threshold, per_turn = 0.4, 3
    categories = list(CATEGORIES)
    boosts: dict[str, float] = {}
    sentiment, dedup, compaction, top_k = False, 0.85, 50, 5

    def enable(category: str) -> None:
        if category not in categories:
            categories.append(category)

    if o > 0.6:
        threshold = max(0.2, threshold - (o - 0.5) * 0.4)
        per_turn = min(5, per_turn + 1)
        enable(EMOTIONAL_CONTEXT)
    elif o < 0.4:
        threshold = min(0.7, threshold + (0.5 - o) * 0.4)
        per_turn = max(1, per_turn - 1)
    if c > 0.6:
        enable(ACTION_ITEM)
        boosts[ACTION_ITEM] = 0.15
        boosts["goal"] = 0.1
        compaction = max(20, compaction - 20)
        dedup = min(0.92, dedup + 0.05)
    if a > 0.6:
        boosts["user_preference"] = boosts.get("user_preference", 0.0) + 0.15
        top_k = min(10, top_k + 2)
    if e > 0.6:
        sentiment = True
        enable(EMOTIONAL_CONTEXT)
        boosts[EMOTIONAL_CONTEXT] = 0.1
        boosts["episodic"] = boosts.get("episodic", 0.0) + 0.1
    if h > 0.6:
        boosts["correction"] = boosts.get("correction", 0.0) + 0.2
        dedup = max(0.75, dedup - 0.05)
    config = PersonalityMemoryConfig(
        importance_threshold=threshold,
        max_memories_per_turn=per_turn,
        enabled_categories=tuple(categories),
        category_boosts=boosts,
        enable_sentiment_tracking=sentiment,
        deduplication_threshold=dedup,
        compaction_interval_turns=compaction,
        retrieval_top_k=top_k,
    )
    return replace(config, **overrides) if overrides else config


@dataclass(frozen=True)
class AutoIngestConfig:
    """`storage.autoIngest` and the personality of one agent (Wunderland's defaults)."""

    enabled: bool = True
    importance_threshold: float = 0.4
    max_per_turn: int = 3
    traits: dict[str, float] = field(default_factory=dict)
    source: str = ""  # the file it was read from, for messages

    @property
    def personality(self) -> PersonalityMemoryConfig:
        return derive_personality_memory_config(self.traits)

    @property
    def threshold(self) -> float:
        """The lower of the two: the more permissive value wins (Wunderland)."""
        return min(self.personality.importance_threshold, self.importance_threshold)

    @property
    def per_turn(self) -> int:
        return min(self.personality.max_memories_per_turn, self.max_per_turn)

    def to_json(self) -> dict[str, Any]:
        p = self.personality
        return {
            "enabled": self.enabled,
            "importanceThreshold": self.threshold,
            "maxPerTurn": self.per_turn,
            "enabledCategories": list(p.enabled_categories),
            "categoryBoosts": dict(p.category_boosts),
            "personality": dict(self.traits),
        }


def _fraction(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidArgument(name, f"must be a number from 0 to 1 (got {value!r})", value)
    return float(value)


def _object(name: str, value: object, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidArgument(name, f"must be a JSON object (got {value!r:.80})", value)
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise InvalidArgument(
            name, f"has no key {unknown[0]!r} (it takes {', '.join(allowed)})", unknown[0]
        )
    return value


def config_from_json(document: object, source: str = "") -> AutoIngestConfig:
    """An AutoIngestConfig from an `agent.config.json` document (other keys are not read)."""
    if not isinstance(document, dict):
        raise InvalidArgument("config", f"must be a JSON object (got {document!r:.80})")
    storage = document.get("storage", {})
    if not isinstance(storage, dict):
        raise InvalidArgument("storage", f"must be a JSON object (got {storage!r:.80})")
    auto = _object("storage.autoIngest", storage.get("autoIngest", {}), STORAGE_KEYS)
    enabled = auto.get("enabled", True)
    if not isinstance(enabled, bool):
        raise InvalidArgument(
            "storage.autoIngest.enabled", f"must be true or false (got {enabled!r})", enabled
        )
    threshold = _fraction(
        "storage.autoIngest.importanceThreshold", auto.get("importanceThreshold", 0.4)
    )
    per_turn = auto.get("maxPerTurn", 3)
    if isinstance(per_turn, bool) or not isinstance(per_turn, int):
        raise InvalidArgument(
            "storage.autoIngest.maxPerTurn",
            f"must be an integer from 1 to {MAX_PER_TURN_BOUND} (got {per_turn!r})",
            per_turn,
        )
    if not 1 <= per_turn <= MAX_PER_TURN_BOUND:
        raise InvalidArgument(
            "storage.autoIngest.maxPerTurn",
            f"must be between 1 and {MAX_PER_TURN_BOUND} (got {per_turn})",
            per_turn,
        )
    personality = _object("personality", document.get("personality", {}), TRAITS)
    traits = {name: _fraction(f"personality.{name}", v) for name, v in personality.items()}
    return AutoIngestConfig(enabled, threshold, per_turn, traits, source)


def load_agent_config(path: str | Path | None) -> AutoIngestConfig:
    """The config an `agent.config.json` file holds; None: Wunderland's defaults."""
    if path is None:
        return AutoIngestConfig()
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InvalidArgument("config", f"cannot be read: {reason} (got '{source}')") from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise InvalidArgument("config", f"is not JSON: {exc} (got '{source}')") from None
    return config_from_json(document, str(source))
