"""A merge keeps the memory the person picks (the most recalled by default) and gives it the
union of the merged memories' neighbours: links and knowledge-graph edges move to it, none
twice, none to itself; a revert puts every row back as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.io import ImportOptions, commit, plan
from memgui.core.progress import run_to_end

NOTES = {
    "Alpha.md": "Alpha links [[Kiwi]] and [[Mango]].\n",
    "Beta.md": "Beta links [[Mango]], [[Papaya]] and [[Alpha]].\n",
    "Gamma.md": "Gamma stands apart, with [[Lime]].\n",
}
GRAPH_TABLES = ("knowledge_nodes", "knowledge_edges", "memory_links")


def vault_brain(brain: Brain, tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "vault"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    the_plan = run_to_end(plan(brain, folder, options=ImportOptions(format="obsidian")))
    run_to_end(commit(brain, the_plan))
    return {t.title: t.id for t in brain.list_traces(limit=10)}


def rows(brain: Brain) -> dict[str, list[tuple]]:
    conn = brain.db.conn
    return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in GRAPH_TABLES}


def labels(brain: Brain, trace_id: str) -> list[str]:
    """The neighbours' labels, a memory's node named by its title ([[Alpha]] joins a note)."""
    return sorted(
        brain.get(n.trace_id).title or n.label if n.trace_id else n.label
        for n in brain.neighbours(trace_id)
    )


def test_the_survivor_is_the_one_picked_and_takes_every_neighbour(
    brain: Brain, tmp_path: Path
) -> None:
    ids = vault_brain(brain, tmp_path)
    alpha, beta, gamma = ids["Alpha"], ids["Beta"], ids["Gamma"]
    other = brain.add("A memory linked to Alpha").id
    brain.link(alpha, other, "relates_to")
    brain.link(beta, alpha, "supersedes")  # between the merged: it only goes
    brain.search("Alpha")  # Alpha is the most recalled: the default survivor
    before = rows(brain)
    start = brain.last_journal_id()

    merged = brain.merge([alpha, beta], keep=beta)

    assert merged.id == beta and merged.title == "Beta"
    assert brain.get(alpha).deleted
    # Mango once; [[Alpha]] joined the Alpha note, so its edge, now to itself, goes
    assert labels(brain, beta) == ["Kiwi", "Mango", "Papaya"]
    assert labels(brain, alpha) == []
    edges = brain.db.conn.execute(
        "SELECT source_id, target_id, type, count(*) FROM knowledge_edges GROUP BY 1, 2, 3"
    ).fetchall()
    assert all(count == 1 for *_, count in edges)
    assert all(source != target for source, target, *_ in edges)
    assert [(r.id, r.kind) for r in brain.related(beta)] == [(other, "relates_to")]
    assert labels(brain, gamma) == ["Lime"]  # untouched

    batch = brain.journal_since(start)[0].batch_id
    brain.revert(batch)
    assert rows(brain) == before
    assert not brain.get(alpha).deleted and labels(brain, alpha) == ["Beta", "Kiwi", "Mango"]


def test_the_default_survivor_is_the_most_recalled(brain: Brain, tmp_path: Path) -> None:
    ids = vault_brain(brain, tmp_path)
    brain.search("Gamma")
    merged = brain.merge([ids["Alpha"], ids["Gamma"]])
    assert merged.id == ids["Gamma"]
    # Gamma had a memory-graph node already: Alpha's edges joined it.
    assert labels(brain, merged.id) == ["Beta", "Kiwi", "Lime", "Mango"]


def test_a_survivor_without_a_graph_node_gets_one(brain: Brain, tmp_path: Path) -> None:
    ids = vault_brain(brain, tmp_path)
    plain = brain.add("A memory an agent wrote, with no node").id
    start = brain.last_journal_id()
    brain.merge([ids["Alpha"], plain], keep=plain)
    assert labels(brain, plain) == ["Beta", "Kiwi", "Mango"]
    node = brain.db.conn.execute(
        "SELECT type, label FROM knowledge_nodes WHERE id = ?", (plain,)
    ).fetchone()
    assert node == ("memory_graph", plain)
    brain.revert(brain.journal_since(start)[0].batch_id)
    node_sql = "SELECT 1 FROM knowledge_nodes WHERE id = ?"
    assert brain.db.conn.execute(node_sql, (plain,)).fetchone() is None
    assert labels(brain, ids["Alpha"]) == ["Beta", "Kiwi", "Mango"]


@pytest.mark.parametrize("keep", ["mt_elsewhere", ""])
def test_a_survivor_not_among_the_merged_is_refused(brain: Brain, keep: str) -> None:
    a, b = brain.add("one").id, brain.add("two").id
    start = brain.last_journal_id()
    with pytest.raises(InvalidArgument, match="keep must be one of ids"):
        brain.merge([a, b], keep=keep)
    assert brain.last_journal_id() == start and not brain.get(a).deleted
