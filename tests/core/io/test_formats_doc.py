"""docs/formats.md stays true: its import examples, taken from the page as written, plan to
the memories the page says they give."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io import ImportOptions, plan
from memgui.core.progress import run_to_end
from tests.support.paths import ROOT

PAGE = (ROOT / "docs" / "formats.md").read_text()


def example(heading: str, language: str, index: int = 0) -> str:
    """The `index`-th ```language block after `## heading` (a block may hold `##` lines)."""
    after = PAGE[PAGE.index(f"\n## {heading}\n") :]
    return re.findall(rf"```{language}\n(.*?)```", after, re.S)[index]


def planned(brain: Brain, source: Path, **options: object) -> list[tuple[str, dict]]:
    the_plan = run_to_end(plan(brain, source, options=ImportOptions(**options)))
    return [(str(r.verdict), dict(r.fields)) for r in the_plan.records if str(r.kind) == "trace"]


@pytest.fixture
def fresh(tmp_path: Path):
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        yield brain


def test_the_csv_example(fresh: Brain, tmp_path: Path) -> None:
    source = tmp_path / "notes.csv"
    source.write_text(example("CSV", "csv"))
    records = planned(fresh, source)
    assert [v for v, _ in records] == ["new", "new"]
    first = records[0][1]
    assert (first["content"], first["category"], first["tags"]) == (
        "Deploys go through staging first.",
        "DECISION",
        ["deploy", "ops"],
    )
    assert first["created_at"] == 1793611800000  # 2026-11-02T09:30:00Z


def test_the_gsd_example(fresh: Brain, tmp_path: Path) -> None:
    source = tmp_path / "proj" / ".planning" / "STATE.md"
    source.parent.mkdir(parents=True)
    source.write_text(example("GSD `STATE.md`", "markdown"))
    found = {
        f["content"]: (f["type"], f["category"], f["tags"], f["scope_id"])
        for _, f in planned(fresh, source)
    }
    assert found == {
        "[01-02]: Use apsw, not sqlite3: extensions must load.": (
            "semantic",
            "DECISION",
            ["gsd"],
            "proj",
        ),
        "The CI machine has two cores.": ("semantic", "CONSTRAINT", ["gsd"], "proj"),
        "Write the user guide.": ("prospective", "TODO", ["gsd"], "proj"),
        "Windows build — no Windows machine yet": (
            "prospective",
            "TODO",
            ["gsd", "deferred"],
            "proj",
        ),
    }


def test_the_chatgpt_example(fresh: Brain, tmp_path: Path) -> None:
    source = tmp_path / "conversations.json"
    source.write_text(example("ChatGPT export", "json"))
    records = planned(fresh, source)
    assert [f["content"] for _, f in records] == [
        "[user]: Do deploys go through staging?\n"
        "[assistant]: Yes: every deploy goes through staging first."
    ]
    assert [f["metadata"]["title"] for _, f in records] == ["Staging"]


def test_the_jsonl_example(fresh: Brain, tmp_path: Path) -> None:
    source = tmp_path / "export.jsonl"
    source.write_text(example("agent-memory JSONL", "json"))
    found = [(f["category"], f["type"], f["scope_id"]) for _, f in planned(fresh, source)]
    assert found == [("DECISION", "semantic", "acme"), ("ERROR", "episodic", "acme")]


def test_the_obsidian_example(fresh: Brain, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "people").mkdir()
    (vault / "people" / "Carol.md").write_text(example("Obsidian vault", "markdown", 0))
    (vault / "Deploys.md").write_text(example("Obsidian vault", "markdown", 1))
    found = {
        f["content"].split(" ")[0]: (f["metadata"]["title"], sorted(f["tags"]))
        for _, f in planned(fresh, vault)
    }
    assert found == {"Carol": ("Carol", ["org-chart", "people"]), "Deploys": ("Deploys", [])}
