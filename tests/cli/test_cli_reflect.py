"""`memgui reflect`: the plan with --dry-run, else one applied, revertible batch."""

from __future__ import annotations

from memgui.core.consolidate_lock import ConsolidationLock
from tests.support.cli import add, run_cli, run_text, snapshot


def test_dry_run_prints_the_plan_and_writes_nothing(capsys, brain_path):
    first = add(capsys, brain_path, "The staging server is Kestrel")["id"]
    second = add(capsys, brain_path, "The staging server is Kestrel")["id"]
    before = snapshot(brain_path)
    plan = run_cli(capsys, brain_path, "reflect", "--dry-run")
    assert plan.code == 0 and snapshot(brain_path) == before
    document = plan.json()
    assert document["dry_run"] is True and document["counts"]["merge"] == 1
    [cluster] = document["merge"]
    assert cluster["survivor"] == first and cluster["basis"] == "same text"
    assert [m["id"] for m in cluster["members"]] == [first, second]
    text = run_text(capsys, brain_path, "reflect", "--dry-run", "--steps", "merge,prune")
    assert text.out.splitlines()[0] == ("plan: prune 0, merge 1 (a dry run: nothing was written)")
    assert f"{second}  same text as {first}" in text.out


def test_reflect_applies_one_batch_that_revert_undoes(capsys, brain_path):
    for _ in range(3):
        add(capsys, brain_path, "The staging server is Kestrel")
    done = run_cli(capsys, brain_path, "reflect")
    assert done.code == 0, done.err
    result = done.json()
    assert {k: result[k] for k in ("pruned", "merged", "derived", "compacted")} == {
        "pruned": 0,
        "merged": 2,
        "derived": 0,
        "compacted": 0,
    }
    assert result["batch_id"].startswith("b_") and result["personalityDecayed"] == 0
    listed = run_cli(capsys, brain_path, "list").json()["results"]
    assert len(listed) == 1
    history = run_cli(capsys, brain_path, "history", listed[0]["id"]).json()["entries"]
    assert (history[-1]["actor"], history[-1]["op"]) == ("consolidation", "merge")
    assert run_cli(capsys, brain_path, "revert", result["batch_id"]).code == 0
    assert len(run_cli(capsys, brain_path, "list").json()["results"]) == 3
    again = run_text(capsys, brain_path, "reflect")
    assert again.out.startswith("consolidated: pruned 0, merged 2, derived 0")
    assert "memgui revert b_" in again.out


def test_while_another_consolidation_runs_nothing_is_done_exit_5(capsys, brain_path):
    add(capsys, brain_path, "twice")
    add(capsys, brain_path, "twice")
    with ConsolidationLock(brain_path) as holder:
        assert holder is None
        busy = run_cli(capsys, brain_path, "reflect")
        dry = run_text(capsys, brain_path, "reflect", "--dry-run")
    assert busy.code == 5 and busy.json()["merged"] == 0
    assert "another consolidation of this brain is running" in busy.json()["busy"]
    assert dry.code == 5 and dry.out.startswith("nothing planned: another consolidation")
    assert len(run_cli(capsys, brain_path, "list").json()["results"]) == 2


def test_bad_options_name_the_field(capsys, brain_path):
    bad = run_cli(capsys, brain_path, "reflect", "--steps", "prune,dream")
    assert bad.code == 2 and "steps must name steps of prune, merge" in bad.err
    bad = run_cli(capsys, brain_path, "reflect", "--prune-threshold", "2")
    assert bad.code == 2 and "prune_threshold must be a number greater than 0" in bad.err
