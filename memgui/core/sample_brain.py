"""The sample brain: a small team's agent memory to look around in before using a real one.

`build(path)` writes it through the core (so it has a journal, links, a knowledge graph, a
trash and an edit history like a real brain). The app builds a fresh copy each time the
person opens it, so the sample itself never changes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from memgui.core.brain import Brain

SAMPLE_BRAIN_ID = "sample"

# (content, type, scope, scope_id, category, tags)
MEMORIES: list[tuple[str, str, str, str, str | None, list[str]]] = [
    (
        "The build uses Python 3.11 and a venv in .venv; `make test` runs everything.",
        "semantic",
        "organization",
        "acme",
        "DECISION",
        ["build", "python"],
    ),
    (
        "SQLite access goes through apsw: the stdlib sqlite3 here cannot load extensions.",
        "semantic",
        "organization",
        "acme",
        "ARCHITECTURE",
        ["sqlite", "python"],
    ),
    (
        "Every update is compare-and-set on `version`; a stale write fails with a conflict.",
        "semantic",
        "organization",
        "acme",
        "CONSTRAINT",
        ["sqlite", "concurrency"],
    ),
    (
        "Alice prefers short answers with code first and the explanation after.",
        "semantic",
        "user",
        "alice",
        "PREFERENCE",
        ["style"],
    ),
    (
        "Alice works in Berlin (CET) and is offline after 18:00 her time.",
        "semantic",
        "user",
        "alice",
        "FACT",
        ["schedule"],
    ),
    (
        "Bob asked for the release notes to list every migration.",
        "episodic",
        "user",
        "bob",
        None,
        ["release"],
    ),
    (
        "Deploys run on Tuesdays and Thursdays, never on Fridays.\n"
        "A deploy needs the staging checks green and one approval.",
        "procedural",
        "organization",
        "acme",
        "PATTERN",
        ["deploy", "ops"],
    ),
    (
        "To rotate the API key: create the new key, deploy it, wait an hour, revoke the old one.",
        "procedural",
        "organization",
        "acme",
        "PATTERN",
        ["ops", "security"],
    ),
    (
        "Flaky test: test_sync_timeout fails under load because the fake clock is shared.",
        "episodic",
        "thread",
        "t-142",
        "ERROR",
        ["tests", "flaky"],
    ),
    (
        "The importer crashed on a ChatGPT export with an empty `mapping`; fixed by skipping it.",
        "episodic",
        "thread",
        "t-137",
        "ERROR",
        ["import", "chatgpt"],
    ),
    (
        "Write the migration guide for schema 2 before the 0.3 release.",
        "prospective",
        "organization",
        "acme",
        "TODO",
        ["docs", "release"],
    ),
    (
        "Ask Carol whether the REST server may listen beyond 127.0.0.1.",
        "prospective",
        "user",
        "carol",
        "TODO",
        ["security"],
    ),
    (
        "Carol owns the infrastructure budget; Dave reports to Carol.",
        "relational",
        "organization",
        "acme",
        "RELATIONSHIP",
        ["people"],
    ),
    (
        "Search must find words in every script: Ελληνικά, русский, العربية, 日本語, ไทย.",
        "semantic",
        "organization",
        "acme",
        "CONSTRAINT",
        ["search", "i18n"],
    ),
    (
        "Der Kunde möchte Rechnungen als PDF, nicht als Excel-Tabelle.",
        "episodic",
        "user",
        "bob",
        None,
        ["billing", "i18n"],
    ),
    (
        "Hybrid search fuses keyword and vector rankings with RRF (k = 60).",
        "semantic",
        "organization",
        "acme",
        "ARCHITECTURE",
        ["search"],
    ),
    (
        "Memories decay: strength halves after about a day unless recalled again.",
        "semantic",
        "persona",
        "helper",
        None,
        ["memory"],
    ),
    (
        "The assistant persona answers in the language of the question.",
        "procedural",
        "persona",
        "helper",
        "PREFERENCE",
        ["style", "i18n"],
    ),
    (
        "Standup moved to 09:30 from next Monday.",
        "episodic",
        "organization",
        "acme",
        "EVENT",
        ["schedule"],
    ),
    (
        "Goal for this quarter: open a 1M-memory brain in under a second.",
        "prospective",
        "organization",
        "acme",
        "GOAL",
        ["performance"],
    ),
    (
        "Dark mode is the default in the team's tools.",
        "semantic",
        "organization",
        "acme",
        None,
        ["style", "ui"],
    ),
    ("Old note: the build used Python 3.9.", "semantic", "organization", "acme", None, ["build"]),
]

# Stored strength (importance) varies as it does in a used brain.
STRENGTHS = (1.0, 0.9, 0.75, 0.95, 0.6, 0.45, 0.85, 0.3, 1.0, 0.7, 0.2)
# (from, to, kind) by index into MEMORIES
LINKS = [
    (0, 21, "supersedes"),
    (1, 2, "relates_to"),
    (8, 2, "caused_by"),
    (6, 7, "relates_to"),
    (13, 15, "relates_to"),
    (10, 5, "relates_to"),
]
# Knowledge graph: entities and which memories mention them.
ENTITIES = {
    "Python": (0, 1, 21),
    "SQLite": (1, 2),
    "Alice": (3, 4),
    "Carol": (11, 12),
    "Dave": (12,),
    "Release 0.3": (5, 10),
}
EDGES = [("Carol", "Dave", "manages"), ("Python", "SQLite", "binds")]


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
            nodes = {name: brain.add_node(name, "entity") for name in ENTITIES}
            for name, mentioned in ENTITIES.items():
                for index in mentioned:
                    memory = brain.add_node(
                        MEMORIES[index][0][:40], "memory", {"trace_id": ids[index]}
                    )
                    brain.add_edge(memory, nodes[name], "mentions")
            for source, target, type_ in EDGES:
                brain.add_edge(nodes[source], nodes[target], type_)
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
