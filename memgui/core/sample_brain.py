"""The sample brain: a small team's agent memory to look around in before using a real one.

`build(path)` writes it through the core (so it has a journal, links, a knowledge graph, a
trash and an edit history like a real brain). The app builds a fresh copy each time the
person opens it, so the sample itself never changes.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from memgui.core.brain import Brain

SAMPLE_BRAIN_ID = "sample"

# The memories, links and graph: data, kept in resources/sample-brain.json and shipped as a
# copy beside the package's other files (`make resources` copies it).
DATA_FILE = Path(__file__).resolve().parents[1] / "resources" / "sample_brain.json"
_DATA = json.loads(DATA_FILE.read_text(encoding="utf-8"))

# (content, type, scope, scope_id, category, tags)
MEMORIES: list[tuple[str, str, str, str, str | None, list[str]]] = [
    (m["content"], m["type"], m["scope"], m["scope_id"], m["category"], m["tags"])
    for m in _DATA["memories"]
]
# Stored strength (importance) varies as it does in a used brain.
STRENGTHS: tuple[float, ...] = tuple(_DATA["strengths"])
# (from, to, kind) by index into MEMORIES
LINKS: list[tuple[int, int, str]] = [tuple(link) for link in _DATA["links"]]
# Knowledge graph: entities and which memories mention them.
ENTITIES: dict[str, tuple[int, ...]] = {name: tuple(v) for name, v in _DATA["entities"].items()}
EDGES: list[tuple[str, str, str]] = [tuple(edge) for edge in _DATA["edges"]]


def build(path: str | Path) -> Path:
    """Write the sample brain to `path` (a new file) and return the path."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists; the sample brain is only written to a new file")
    with Brain.open(path, SAMPLE_BRAIN_ID, actor="sample") as brain:
        with brain.batch(actor="import:sample"):  # one transaction: quick to build
            ids = []
            for n, (content, type_, scope, scope_id, category, tags) in enumerate(MEMORIES):
                trace = brain.add(
                    content,
                    type=type_,
                    scope=scope,
                    scope_id=scope_id,
                    category=category,
                    tags=tags,
                    strength=STRENGTHS[n % len(STRENGTHS)],
                )
                ids.append(trace.id)
            for source, target, kind in LINKS:
                brain.link(ids[source], ids[target], kind)
            nodes = {name: brain.add_node(name, "entity").id for name in ENTITIES}
            for name, mentioned in ENTITIES.items():
                for index in mentioned:
                    memory = brain.add_node(
                        MEMORIES[index][0][:40], "memory", {"trace_id": ids[index]}
                    ).id
                    brain.add_edge(memory, nodes[name], "mentions")
            for from_name, to_name, type_ in EDGES:
                brain.add_edge(nodes[from_name], nodes[to_name], type_)
        # Reviewed up to here by its person (the Agent activity view); what follows is not.
        brain.mark_reviewed(through=brain.last_journal_id(), actor="gui")
        # A little history: an edit by an agent, a recall-free correction, a trashed note.
        first = brain.get(ids[19])
        edited = brain.update(
            first.id,
            {"content": first.content.replace("a second", "one second")},
            expect_version=first.version,
            actor="mcp:planner",
        )
        brain.update(
            edited.id, {"tags": ["performance", "goal"]}, expect_version=edited.version, actor="cli"
        )
        brain.forget(ids[21], actor="consolidate")
        brain.add(
            "Scratch: try the new CSV importer on the support export.",
            type="episodic",
            scope="thread",
            scope_id="t-150",
            ttl_secs=7 * 86_400,
            tags=["import"],
            actor="mcp:planner",
        )
    return path


def fresh_copy(directory: str | Path | None = None) -> Path:
    """Build a new sample brain in a new temporary folder (or in `directory`)."""
    folder = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="memgui-sample-"))
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "sample-brain.sqlite"
    counter = 1
    while target.exists():
        counter += 1
        target = folder / f"sample-brain-{counter}.sqlite"
    return build(target)
