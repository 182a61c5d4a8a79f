"""Obsidian wikilinks resolve to the notes they name, as Obsidian resolves them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io import ImportOptions, commit, plan
from memgui.core.io.writing.wikilinks import NoteIndex
from memgui.core.progress import run_to_end
from tests.support.paths import CORPORA, FIXTURES

HELP_EN = CORPORA / "obsidian-help" / "en"


def _index() -> NoteIndex:
    notes = NoteIndex()
    for path, trace in (
        ("Home.md", "home"),
        ("Sync/Security and privacy.md", "sync-security"),
        ("Publish/Security and privacy.md", "publish-security"),
        ("Deep/Nested/Security and privacy.md", "deep-security"),
        ("Plugins/Templates.md", "plugin-templates"),
        ("Clipper/Templates.md", "clipper-templates"),
        ("Notes/Dog.md", "dog"),
    ):
        notes.add(path, trace, ["Doggo"] if trace == "dog" else ())
    return notes


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        ("home", "Sync/a.md", "home"),  # case does not matter
        ("Home.md", "Sync/a.md", "home"),  # nor the .md
        ("Security and privacy", "Sync/a.md", "sync-security"),  # the own folder first
        ("Security and privacy", "Publish/b.md", "publish-security"),
        ("Security and privacy", "Other/c.md", "sync-security"),  # else the shortest path
        ("Clipper/Templates", "Plugins/x.md", "clipper-templates"),  # a path names its note
        ("Nested/Security and privacy", "Home.md", "deep-security"),  # a path's ending
        ("./Dog", "Notes/x.md", "dog"),
        ("../Home", "Notes/x.md", "home"),
        ("/Home", "Notes/x.md", "home"),
        ("Doggo", "Home.md", "dog"),  # an alias, when no note has the name
        ("Cat", "Home.md", None),
        ("../../Home", "Notes/x.md", None),  # outside the vault
    ],
)
def test_a_target_names_the_note_obsidian_would_open(target, source, expected) -> None:
    assert _index().resolve(target, source) == expected


def test_a_vaults_links_join_its_notes(brain: Brain, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Sub").mkdir(parents=True)
    (vault / "A.md").write_text("Links [[b]], [[Sub/C|see C]], [[Nowhere]] and [[A]].\n")
    (vault / "B.md").write_text("---\naliases: [Bee]\n---\nBack to [[A#Top]].\n")
    (vault / "Sub" / "C.md").write_text("Names [[Bee]] by its alias.\n")
    run_to_end(
        commit(brain, run_to_end(plan(brain, vault, options=ImportOptions(format="obsidian"))))
    )
    assert outgoing(brain, "A.md") == ["B.md", "Sub/C.md", "unresolved:Nowhere"]
    assert outgoing(brain, "B.md") == ["A.md"]
    assert outgoing(brain, "Sub/C.md") == ["B.md"]


def outgoing(brain: Brain, note: str) -> list[str]:
    conn = brain.db.conn
    paths = {
        trace_id: json.loads(metadata).get("source_file")
        for trace_id, metadata in conn.execute("SELECT id, metadata FROM memory_traces")
    }
    trace = next(t for t, p in paths.items() if p == note)
    found = []
    for target, node_type, label in conn.execute(
        "SELECT e.target_id, n.type, n.label FROM knowledge_edges e JOIN knowledge_nodes n "
        "ON n.brain_id = e.brain_id AND n.id = e.target_id WHERE e.source_id = ?",
        (trace,),
    ):
        found.append(paths[target] if node_type == "memory_graph" else f"unresolved:{label}")
    return sorted(found)


@pytest.mark.skipif(not HELP_EN.is_dir(), reason="the shared corpora are not beside the project")
def test_the_help_vaults_links_are_the_ones_obsidian_resolves(brain: Brain) -> None:
    expected = json.loads((FIXTURES / "io" / "obsidian_help_links.json").read_text())["notes"]
    the_plan = run_to_end(plan(brain, HELP_EN, options=ImportOptions(format="obsidian")))
    run_to_end(commit(brain, the_plan))
    for note, links in expected.items():
        assert outgoing(brain, note) == links, note
