"""Strength and decay: odd stored values, pinning after a recall, and a merge's decay state."""

from __future__ import annotations

import json
import math

import pytest

from memgui.core.brain import Brain
from memgui.core.decay import PINNED_STABILITY_FACTOR, current_strength
from memgui.core.model import DAY_MS, TraceFilter

NOW = 1_800_000_000_000


@pytest.mark.parametrize(
    "stability",
    [10**400, True, "3", float("nan"), float("inf"), -5, 0, None, [1], {"x": 1}],
)
def test_an_unusable_stability_falls_back_to_the_default(stability) -> None:
    meta = {"decay": {"stability": stability}}
    one_day_later = current_strength(1.0, NOW - DAY_MS, None, meta, None, NOW)
    assert one_day_later == pytest.approx(math.exp(-1))


def test_time_counts_from_creation_even_at_epoch_zero() -> None:
    assert current_strength(1.0, 0, None, {}, None, NOW) == pytest.approx(0.0)
    assert current_strength(1.0, NOW, None, {}, None, NOW) == 1.0


def test_a_huge_stability_in_added_metadata_leaves_the_brain_usable(brain: Brain) -> None:
    trace = brain.add("odd metadata", metadata={"decay": {"stability": 10**400}})
    assert trace.strength == pytest.approx(1.0)
    assert [t.id for t in brain.list_traces(TraceFilter())] == [trace.id]
    assert [t.id for t in brain.search("odd").traces] == [trace.id]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("strength", "abc"),
        ("retrieval_count", "many"),
        ("created_at", "yesterday"),
        ("last_accessed", "12.5x"),
        ("version", 1e400),
    ],
)
def test_one_row_with_odd_numbers_never_stops_a_list(brain: Brain, column, value) -> None:
    odd = brain.add("odd row")
    fine = brain.add("fine row")
    brain.db.conn.execute(f"UPDATE memory_traces SET {column} = ? WHERE id = ?", (value, odd.id))
    assert {t.id for t in brain.list_traces(TraceFilter())} == {odd.id, fine.id}
    assert {t.id for t in brain.search("row").traces} == {odd.id, fine.id}
    assert brain.get(odd.id).id == odd.id


def test_pinning_a_recalled_trace_slows_its_decay(brain: Brain) -> None:
    now = [NOW]
    brain.clock = lambda: now[0]
    trace = brain.add("recalled once, then pinned")
    brain.search("recalled")  # the recall writes an explicit stability
    stability = brain.get(trace.id).metadata["decay"]["stability"]
    pinned = brain.update(trace.id, {"category": "DECISION"})
    assert pinned.metadata["decay"]["stability"] == pytest.approx(
        stability * PINNED_STABILITY_FACTOR
    )
    now[0] += 10 * DAY_MS
    slow = brain.get(trace.id).strength
    back = brain.update(trace.id, {"category": "PATTERN"})
    assert back.metadata["decay"]["stability"] == pytest.approx(stability)
    assert brain.get(trace.id).strength < slow
    same = brain.update(trace.id, {"category": "ERROR"})  # unpinned to unpinned: unchanged
    assert same.metadata["decay"]["stability"] == pytest.approx(stability)


def test_merge_keeps_the_strongest_decay_state(brain: Brain) -> None:
    def with_decay(text, count, stability, access, s0, emotions):
        trace = brain.add(
            text,
            strength=s0,
            metadata={
                "decay": {
                    "stability": stability,
                    "accessCount": access,
                    "reinforcementInterval": stability // 10,
                    "nextReinforcementAt": NOW + stability,
                }
            },
        )
        brain.db.conn.execute(
            "UPDATE memory_traces SET retrieval_count = ?, emotions = ? WHERE id = ?",
            (count, emotions, trace.id),
        )
        return trace.id

    c = with_decay("c", 5, 2_000_000, 1, 0.9, '{"valence": 0.5}')
    a = with_decay("a", 2, 1_000_000, 3, 0.5, '{"valence": -0.5, "intensity": 0.3}')
    b = with_decay("b", 5, 9_000_000, 4, 1.0, "{}")
    merged = brain.merge([c, a, b])
    assert merged.id == c
    decay = merged.metadata["decay"]
    assert decay["stability"] == 9_000_000 and decay["accessCount"] == 8
    assert decay["reinforcementInterval"] == 900_000
    assert decay["nextReinforcementAt"] == NOW + 9_000_000
    stored = brain.db.conn.execute(
        "SELECT strength, emotions FROM memory_traces WHERE id = ?", (c,)
    ).fetchone()
    assert stored[0] == 1.0
    assert json.loads(stored[1]) == pytest.approx({"valence": 0.0, "intensity": 0.1})


@pytest.mark.parametrize("column", ["retrieval_count", "version", "created_at"])
def test_a_number_too_big_for_sqlite_is_read_within_bounds(brain: Brain, column) -> None:
    odd = brain.add("heron by the pond")
    brain.db.conn.execute(f"UPDATE memory_traces SET {column} = 1e20 WHERE id = ?", (odd.id,))
    assert [t.id for t in brain.search("heron").traces] == [odd.id]  # a recall writes it back
    brain.update(odd.id, {"content": "heron by the lake"})
    assert brain.get(odd.id).content == "heron by the lake"


def test_a_memory_added_pinned_writes_its_slower_decay_for_agentos(brain: Brain) -> None:
    pinned = brain.add("a decision", category="DECISION")
    assert pinned.metadata["decay"]["stability"] == DAY_MS * PINNED_STABILITY_FACTOR
    plain = brain.add("a plain note")
    assert "decay" not in plain.metadata
    own = brain.add("kept", category="DECISION", metadata={"decay": {"stability": 5}})
    assert own.metadata["decay"]["stability"] == 5
    pinned_later = brain.update(plain.id, {"category": "CONSTRAINT"})
    assert pinned_later.metadata["decay"]["stability"] == DAY_MS * PINNED_STABILITY_FACTOR


def test_reverting_a_pin_after_a_recall_takes_the_pin_out_of_the_stability(
    brain: Brain,
) -> None:
    trace = brain.add("recalled, pinned, recalled, unpinned")
    brain.search("recalled")
    start = brain.last_journal_id()
    brain.update(trace.id, {"category": "DECISION"})
    (batch,) = {e.batch_id for e in brain.journal_since(start)}
    brain.search("recalled")  # the second recall grows the pinned stability
    grown = brain.get(trace.id).metadata["decay"]["stability"]
    brain.revert(batch)
    after = brain.get(trace.id)
    assert after.category is None
    assert after.metadata["decay"]["stability"] == pytest.approx(grown / PINNED_STABILITY_FACTOR)


def test_an_imported_pinned_memory_and_a_merge_without_decay_state_keep_the_pin(
    brain: Brain, tmp_path
) -> None:
    from memgui.core.io.planning.plan import plan
    from memgui.core.io.writing.commit import commit
    from memgui.core.progress import run_to_end

    source = tmp_path / "pinned.csv"
    source.write_text("content,category\nimported decision,DECISION\nimported pattern,PATTERN\n")
    run_to_end(commit(brain, run_to_end(plan(brain, source, format="csv"))))
    by_text = {t.content: t for t in brain.list_traces(TraceFilter())}
    decision, pattern = by_text["imported decision"], by_text["imported pattern"]
    assert decision.metadata["decay"]["stability"] == DAY_MS * PINNED_STABILITY_FACTOR
    assert "decay" not in pattern.metadata
    # Without it (a row another program wrote), a merge still keeps the slower decay.
    brain.db.conn.execute("UPDATE memory_traces SET metadata = '{}' WHERE id = ?", (decision.id,))
    merged = brain.merge([pattern.id, decision.id])
    assert merged.id == pattern.id and merged.category == "PATTERN"
    assert merged.metadata["decay"]["stability"] == DAY_MS * PINNED_STABILITY_FACTOR


def test_the_sql_strength_is_current_strength_to_the_last_bit(tmp_path) -> None:
    """`decay.strength_sql` (a keyword search's candidates) gives what `current_strength`
    gives the row as memgui reads it, for ordinary rows and for what another program may
    have stored: text numbers, no access time, odd stabilities, pinned categories, times
    of REAL, of the least and greatest INTEGER (SQLite's abs of the least fails)."""
    import apsw

    from memgui.core.decay import strength_sql
    from memgui.core.storage import store

    rows = []
    metas = [
        "{}", '{"decay": {"stability": 3600000}}', '{"decay": {"stability": 1.5e9}}',
        '{"decay": {"stability": true}}', '{"decay": {"stability": "9"}}',
        '{"decay": {"stability": -4}}', '{"decay": {"stability": 1e400}}', "not json",
        '{"decay": "stability"}', '{"decay": {"stability": 0}}', '{"decay": {"stability": null}}',
    ]  # fmt: skip
    for meta in metas:
        for strength in (1.0, 0.37, 0, "high", None, 1e308, -(2**63)):
            for created, accessed in ((NOW - 5 * DAY_MS, None), (NOW - DAY_MS, NOW - 3_600_000),
                                      (NOW + 60_000, None), ("yesterday", None), (0, "soon"),
                                      (NOW - 7 * DAY_MS, NOW - 2.5 * DAY_MS), (None, None),
                                      (-(2**63), None), (2**63 - 1, 2**62), (3, 1e400),
                                      (NOW - 2.5, None), (NOW - 3 * DAY_MS, -7)):  # fmt: skip
                for category in (None, "DECISION", "PATTERN"):
                    rows.append((strength, created, accessed, category, meta))
    conn = apsw.Connection(str(tmp_path / "rows.sqlite"))
    conn.execute(
        "CREATE TABLE memory_traces (strength, created_at, last_accessed, category, metadata)"
    )
    conn.executemany("INSERT INTO memory_traces VALUES (?, ?, ?, ?, ?)", rows)
    got = [
        r[0]
        for r in conn.execute(
            f"SELECT {strength_sql('category', '?1')} FROM memory_traces ORDER BY rowid", (NOW,)
        )
    ]
    stored = conn.execute(
        "SELECT strength, created_at, last_accessed, category, metadata "
        "FROM memory_traces ORDER BY rowid"
    ).fetchall()
    for (strength, created, accessed, category, meta), sql_value in zip(stored, got, strict=True):
        expected = current_strength(
            strength or 0.0, created or 0, accessed, store._loads(meta, {}), category, NOW
        )
        assert sql_value == expected, (strength, created, accessed, category, meta)
    conn.close()
