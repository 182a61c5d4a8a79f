"""`memgui search --mode cognitive`: AgentOS's composite score, and why, for each result, on
both engines (a file, a real PostgreSQL server)."""

from __future__ import annotations

from tests.support.cli import add, run_cli, run_text


def test_each_result_carries_its_parts_and_why(capsys, any_brain):
    tea = add(capsys, any_brain, "The user likes green tea")["id"]
    add(capsys, any_brain, "Coffee machine is broken")
    found = run_cli(capsys, any_brain, "search", "tea", "--mode", "cognitive", "--mood", "0.3")
    assert found.code == 0, found.err
    document = found.json()
    assert document["search_mode"] == "cognitive"
    [hit] = document["results"]
    assert hit["id"] == tea and set(hit["parts"]) == {
        "similarity", "strength", "recency", "emotionalCongruence", "graphActivation",
        "importance", "similaritySource",
    }  # fmt: skip
    assert hit["why"].startswith(f"{hit['score']:.2f} = similarity 1.00×0.35 + strength")
    text = run_text(capsys, any_brain, "search", "tea", "--mode", "cognitive")
    assert "    why: " in text.out and text.out.rstrip().endswith("(1 found, cognitive)")


def test_a_mood_out_of_range_or_without_the_mode_is_refused(capsys, any_brain):
    add(capsys, any_brain, "tea")
    bad = run_cli(capsys, any_brain, "search", "tea", "--mode", "cognitive", "--mood", "2")
    assert bad.code == 2 and "mood must be between -1 and 1 (got 2.0)" in bad.err
    bad = run_cli(capsys, any_brain, "search", "tea", "--mood", "0.5")
    assert bad.code == 2 and "mood is for the cognitive mode only (got mode 'auto')" in bad.err
