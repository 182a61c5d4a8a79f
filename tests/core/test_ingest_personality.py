"""Wunderland's HEXACO rules (seed 000's table; upstream-notes §C.2), row by row, with numbers:
first as the config they derive, then as what the pipeline's filter keeps because of them."""

from __future__ import annotations

import math
import re

import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.ingest import Fact, filter_facts
from memgui.core.ingest_config import (
    CATEGORIES,
    AutoIngestConfig,
    PersonalityMemoryConfig,
    config_from_json,
    derive_personality_memory_config,
    load_agent_config,
)

BASE = PersonalityMemoryConfig()


def derived(**traits: float) -> PersonalityMemoryConfig:
    return derive_personality_memory_config(traits)


def test_the_base_is_threshold_0_4_three_a_turn_five_categories():
    assert BASE.importance_threshold == 0.4 and BASE.max_memories_per_turn == 3
    assert BASE.enabled_categories == (
        "user_preference",
        "episodic",
        "goal",
        "knowledge",
        "correction",
    )
    assert BASE.category_boosts == {} and not BASE.enable_sentiment_tracking
    assert (BASE.deduplication_threshold, BASE.compaction_interval_turns) == (0.85, 50)
    assert BASE.retrieval_top_k == 5
    assert derived() == BASE
    every = dict.fromkeys(("honesty", "emotionality", "extraversion"), 0.5)
    assert derived(**every, agreeableness=0.5, conscientiousness=0.5, openness=0.5) == BASE


def test_openness_high_lowers_the_threshold_allows_one_more_and_emotional_context():
    c = derived(openness=1.0)
    assert c.importance_threshold == pytest.approx(0.2)  # the floor: max(0.2, 0.4 - 0.2)
    assert c.max_memories_per_turn == 4
    assert c.enabled_categories == (*CATEGORIES, "emotional_context")
    c = derived(openness=0.7)
    assert c.importance_threshold == pytest.approx(0.32) and c.max_memories_per_turn == 4


def test_openness_low_raises_the_threshold_and_allows_one_fewer():
    c = derived(openness=0.0)
    assert c.importance_threshold == pytest.approx(0.6)  # 0.6000000000000001 upstream
    assert c.max_memories_per_turn == 2 and c.enabled_categories == CATEGORIES
    assert derived(openness=0.3).importance_threshold == pytest.approx(0.48)


def test_conscientiousness_enables_action_item_and_boosts_goal():
    c = derived(conscientiousness=0.8)
    assert c.enabled_categories == (*CATEGORIES, "action_item")
    assert c.category_boosts == {"action_item": 0.15, "goal": 0.1}
    assert c.deduplication_threshold == pytest.approx(0.9) and c.compaction_interval_turns == 30


def test_agreeableness_boosts_user_preference():
    c = derived(agreeableness=0.8)
    assert c.category_boosts == {"user_preference": 0.15} and c.retrieval_top_k == 7


def test_emotionality_enables_emotional_context_and_boosts_episodic():
    c = derived(emotionality=0.8)
    assert c.enable_sentiment_tracking
    assert c.enabled_categories == (*CATEGORIES, "emotional_context")
    assert c.category_boosts == {"emotional_context": 0.1, "episodic": 0.1}


def test_honesty_boosts_correction():
    c = derived(honesty=0.8)
    assert c.category_boosts == {"correction": 0.2}
    assert c.deduplication_threshold == pytest.approx(0.8)
    assert derived(conscientiousness=0.8, honesty=0.8).deduplication_threshold == pytest.approx(
        0.85
    )


def test_every_trait_high_at_once():
    c = derived(**dict.fromkeys(("honesty", "emotionality", "extraversion", "agreeableness",
                                 "conscientiousness", "openness"), 1.0))  # fmt: skip
    assert c.importance_threshold == pytest.approx(0.2) and c.max_memories_per_turn == 4
    assert c.retrieval_top_k == 7 and c.enable_sentiment_tracking
    assert c.deduplication_threshold == pytest.approx(0.85) and c.compaction_interval_turns == 30
    assert c.enabled_categories == (*CATEGORIES, "emotional_context", "action_item")
    assert c.category_boosts == pytest.approx(
        {
            "action_item": 0.15,
            "goal": 0.1,
            "user_preference": 0.15,
            "emotional_context": 0.1,
            "episodic": 0.1,
            "correction": 0.2,
        }
    )


@pytest.mark.parametrize(
    "traits",
    [
        {"openness": 0.6},
        {"openness": 0.4},  # strict bounds: exactly 0.6 and 0.4 change nothing
        {"conscientiousness": 0.6, "agreeableness": 0.6, "emotionality": 0.6, "honesty": 0.6},
        {"extraversion": 1.0},  # no rule reads it
        {"openness": math.nan, "honesty": math.nan},  # NaN compares false everywhere
        {"openness": None},  # missing: 0.5
    ],
)
def test_what_changes_nothing(traits):
    assert derive_personality_memory_config(traits) == BASE


def test_traits_are_clamped_and_overrides_come_last():
    assert derived(openness=7.0) == derived(openness=1.0)
    assert derived(openness=-3.0) == derived(openness=0.0)
    c = derive_personality_memory_config({"agreeableness": 0.9}, {"category_boosts": {}})
    assert c.category_boosts == {} and c.retrieval_top_k == 7  # replaced wholesale


# --- what the filter keeps because of each rule --------------------------------------------


def kept(config: AutoIngestConfig, *facts: tuple[str, float]) -> list[tuple[str, float]]:
    candidates = [
        Fact(f"a {category} fact", category, importance) for category, importance in facts
    ]
    return [(f.category, round(f.importance, 6)) for f in filter_facts(candidates, config)]


def test_the_base_filter_keeps_three_facts_at_0_4_and_above():
    config = AutoIngestConfig()
    assert kept(config, ("goal", 0.39), ("goal", 0.4)) == [("goal", 0.4)]
    facts = [("knowledge", 0.9)] * 5
    assert kept(config, *facts) == [("knowledge", 0.9)] * 3
    assert kept(config, ("emotional_context", 0.9), ("action_item", 0.9)) == []


def test_the_filter_under_each_rule():
    open_mind = AutoIngestConfig(traits={"openness": 1.0})
    assert kept(open_mind, ("episodic", 0.2), ("emotional_context", 0.5)) == [
        ("episodic", 0.2),
        ("emotional_context", 0.5),
    ]
    # one more a turn, when storage.autoIngest allows it (the lower of the two limits wins)
    assert len(kept(open_mind, *[("knowledge", 0.9)] * 6)) == 3
    roomy = AutoIngestConfig(max_per_turn=10, traits={"openness": 1.0})
    assert len(kept(roomy, *[("knowledge", 0.9)] * 6)) == 4
    closed = AutoIngestConfig(traits={"openness": 0.0})  # 0.6, but storage's 0.4 is lower
    assert kept(closed, ("goal", 0.45), *[("knowledge", 0.9)] * 3) == [
        ("goal", 0.45),
        ("knowledge", 0.9),
    ]  # two a turn
    careful = AutoIngestConfig(traits={"conscientiousness": 0.8})
    assert kept(careful, ("action_item", 0.3), ("goal", 0.35)) == [
        ("action_item", 0.45),
        ("goal", 0.45),
    ]
    kind = AutoIngestConfig(traits={"agreeableness": 0.8})
    assert kept(kind, ("user_preference", 0.3), ("knowledge", 0.3)) == [("user_preference", 0.45)]
    feeling = AutoIngestConfig(traits={"emotionality": 0.8})
    assert kept(feeling, ("emotional_context", 0.35), ("episodic", 0.3)) == [
        ("emotional_context", 0.45),
        ("episodic", 0.4),
    ]
    honest = AutoIngestConfig(traits={"honesty": 0.8})
    assert kept(honest, ("correction", 0.25), ("correction", 0.9)) == [
        ("correction", 0.45),
        ("correction", 1.0),  # boosted importance is capped at 1
    ]


def test_storage_settings_win_when_more_permissive():
    config = AutoIngestConfig(importance_threshold=0.1, max_per_turn=1)
    assert config.threshold == 0.1 and config.per_turn == 1
    assert kept(config, ("goal", 0.15), ("goal", 0.9)) == [("goal", 0.15)]


# --- agent.config.json ------------------------------------------------------------------------


def test_an_agent_config_file_is_read(tmp_path):
    path = tmp_path / "agent.config.json"
    path.write_text(
        '{"name": "helper", "storage": {"autoIngest": {"enabled": true, '
        '"importanceThreshold": 0.5, "maxPerTurn": 2}}, '
        '"personality": {"openness": 0.9, "honesty": 0.8}}'
    )
    config = load_agent_config(path)
    assert (config.enabled, config.importance_threshold, config.max_per_turn) == (True, 0.5, 2)
    assert config.traits == {"openness": 0.9, "honesty": 0.8}
    assert config.threshold == pytest.approx(0.24) and config.per_turn == 2
    assert load_agent_config(None) == AutoIngestConfig()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "config must be a JSON object"),
        (
            {"storage": {"autoIngest": {"maxPerturn": 2}}},
            "storage.autoIngest has no key 'maxPerturn'",
        ),
        (
            {"storage": {"autoIngest": {"maxPerTurn": 0}}},
            "maxPerTurn must be between 1 and 100 (got 0)",
        ),
        (
            {"storage": {"autoIngest": {"enabled": "yes"}}},
            "enabled must be true or false (got 'yes')",
        ),
        (
            {"storage": {"autoIngest": {"importanceThreshold": 1.5}}},
            "importanceThreshold must be a number from 0 to 1 (got 1.5)",
        ),
        ({"personality": {"opennes": 0.5}}, "personality has no key 'opennes' (it takes honesty"),
        (
            {"personality": {"openness": 2}},
            "personality.openness must be a number from 0 to 1 (got 2)",
        ),
        ({"personality": {"honesty": True}}, "personality.honesty must be a number from 0 to 1"),
    ],
)
def test_a_bad_config_is_refused_naming_the_key(document, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        config_from_json(document)


def test_an_unreadable_config_file_says_why(tmp_path):
    with pytest.raises(InvalidArgument, match="config cannot be read"):
        load_agent_config(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(InvalidArgument, match="config is not JSON"):
        load_agent_config(broken)
