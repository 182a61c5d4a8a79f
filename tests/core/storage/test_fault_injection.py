"""Fault injection: jobs killed with SIGKILL at seeded points, and what each left judged.

An import (into the brain, and into a brain that does not exist yet), a merge, an update, a
revert and an export (every format) each run once to the end, which gives their number of
steps and the state they end in; then each is killed at `TRIALS` points drawn from those
steps by a seeded generator (the first and the last step always among them). After every
kill: SQLite's integrity check passes; the brain is exactly as before the job or as after
it (traces, links, journal, graph, meta), never between; both full-text indexes hold exactly
its rows; an export's file is absent or whole (a Markdown folder holds whole notes only);
and once the next job of the kind has run, nothing is left beside the brain, the export or
in the temporary folder. `MEMGUI_FAULT_SEED` picks other points; the figures are printed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.io.exporters.export import export
from memgui.core.progress import run_to_end
from tests.support.fault_injection import (
    Zygote,
    check_indexes,
    differences,
    listing,
    masked,
    rows_of,
    state_of,
)

SEED = int(os.environ.get("MEMGUI_FAULT_SEED", "20260101"))
TRIALS = 24  # per job; the export's are spread over its five formats
EXPORT_FORMATS = ("markdown", "obsidian", "json", "jsonl", "sqlite")
EXPORT_DEST = {
    "markdown": "notes",
    "obsidian": "vault",
    "json": "out.json",
    "jsonl": "out.jsonl",
    "sqlite": "out.sqlite",
}


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The brains the jobs start from, made once: a base brain with links, a forgotten
    trace and a graph edge; a JSON export of another brain to import; the base with that
    import in it, to revert."""
    root = tmp_path_factory.mktemp("templates")
    base = root / "base.sqlite"
    with Brain.open(base, actor="test") as brain:
        with brain.batch():
            ids = [
                brain.add(
                    f"memory {i} about harbours and tides, note {i * 7}",
                    tags=[f"t{i % 5}", "seed"],
                    category=("DECISION", "PATTERN", None)[i % 3],
                    scope_id=f"user-{i % 4}",
                ).id
                for i in range(60)
            ]
        brain.link(ids[0], ids[1], "relates_to")
        brain.link(ids[2], ids[0], "supersedes")
        brain.link(ids[1], ids[3], "caused_by")
        brain.forget(ids[10])
        node = brain.add_node("harbour", "concept").id
        brain.add_edge(node, brain.add_node("tide", "concept").id, "related_to")
    source_brain = root / "source.sqlite"
    with Brain.open(source_brain, actor="test") as brain, brain.batch():
        for i in range(40):
            brain.add(f"imported memory {i} about lighthouses", tags=["imported"])
    source = root / "source.json"
    with Brain.open(source_brain, actor="test") as brain:
        run_to_end(export(brain, source, "json"))
    imported = root / "imported.sqlite"
    shutil.copyfile(base, imported)
    with Brain.open(imported, actor="test") as brain:
        from memgui.core.io.planning.plan import plan
        from memgui.core.io.writing.commit import commit

        batch = run_to_end(commit(brain, run_to_end(plan(brain, source)))).batch_id
    return {"base": base, "imported": imported, "source": source, "ids": ids, "batch": batch}


@pytest.fixture(scope="module")
def zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    z = Zygote(tmp_path_factory.mktemp("zygote"))
    yield z
    z.close()


class Trials:
    """One job's trials: a fresh copy of its brain each time, in a folder of its own."""

    def __init__(self, zygote: Zygote, root: Path, name: str) -> None:
        self.zygote, self.root, self.name = zygote, root, name
        self.count = 0
        self.steps = 0  # of the job run to the end (of each, for several)
        self.figures: Counter[str] = Counter()

    def folders(self, template: Path | None) -> tuple[Path, Path]:
        self.count += 1
        trial = self.root / f"{self.name}-{self.count}"
        work, scratch = trial / "work", trial / "tmp"
        work.mkdir(parents=True)
        scratch.mkdir()
        if template is not None:
            shutil.copyfile(template, work / "brain.sqlite")
        return work, scratch

    def points(self, steps: int, trials: int) -> list[int]:
        """The steps to kill at: the first, the last, and the rest drawn with the seed."""
        rng = random.Random(f"{SEED}:{self.name}")
        drawn = [rng.randint(1, steps) for _ in range(max(0, trials - 2))]
        return [1, steps, *drawn][:trials]

    def say(self, started: float) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.figures.items()))
        return (
            f"fault injection, {self.name}: {self.count} trials over {self.steps} steps "
            f"(seed {SEED}): {counts}; {time.monotonic() - started:.1f} s"
        )


def _report(capsys: pytest.CaptureFixture[str], line: str) -> None:
    with capsys.disabled():
        print(f"\n{line}", end="")


def _brain_job(
    zygote: Zygote,
    tmp_path: Path,
    name: str,
    template: Path,
    op: str,
    args: Callable[[Path], dict[str, Any]],
) -> Trials:
    """Kill a job on the brain `TRIALS` times; each time it is as before or as after."""
    trials = Trials(zygote, tmp_path, name)
    work, scratch = trials.folders(template)
    before = state_of(work / "brain.sqlite")
    done = zygote.run(op, args(work), work, scratch, None)
    assert done.code == 0, zygote.log()
    trials.steps = done.steps
    after = state_of(work / "brain.sqlite")
    assert after != before
    for point in trials.points(done.steps, TRIALS):
        work, scratch = trials.folders(template)
        outcome = zygote.run(op, args(work), work, scratch, point)
        state = state_of(work / "brain.sqlite")  # the integrity check first
        assert state in (before, after), f"{name} killed at step {point}: " + differences(
            state, before, after
        )
        trials.figures["left as before" if state == before else "left as after"] += 1
        trials.figures["killed" if outcome.killed else "ran to the end"] += 1
        check_indexes(work / "brain.sqlite")
        assert listing(work) == ["brain.sqlite"] and listing(scratch) == []
    return trials


@pytest.mark.slow
def test_a_killed_merge_update_or_revert_leaves_the_brain_as_before_or_after(
    capsys, tmp_path: Path, zygote: Zygote, templates: dict[str, Any]
) -> None:
    ids = templates["ids"]
    jobs = [
        ("merge", templates["base"], lambda w: {"brain": str(w / "brain.sqlite"), "ids": ids[:3]}),
        (
            "update",
            templates["base"],
            lambda w: {
                "brain": str(w / "brain.sqlite"),
                "id": ids[1],
                "patch": {"content": "a changed memory about piers", "tags": ["edited"]},
            },
        ),
        (
            "revert",
            templates["imported"],
            lambda w: {"brain": str(w / "brain.sqlite"), "batch": templates["batch"]},
        ),
    ]
    for op, template, args in jobs:
        started = time.monotonic()
        trials = _brain_job(zygote, tmp_path, op, template, op, args)
        assert trials.count > TRIALS  # the run to the end, and each trial
        _report(capsys, trials.say(started))


def _import_argv(brain: str, source: Path) -> Callable[[Path], dict[str, Any]]:
    return lambda w: {"argv": ["--brain", str(w / brain), "import", str(source)]}


@pytest.mark.slow
def test_a_killed_import_leaves_the_brain_as_before_or_after(
    capsys, tmp_path: Path, zygote: Zygote, templates: dict[str, Any]
) -> None:
    started = time.monotonic()
    args = _import_argv("brain.sqlite", templates["source"])
    trials = _brain_job(zygote, tmp_path, "import", templates["base"], "cli", args)
    _report(capsys, trials.say(started))


@pytest.mark.slow
def test_a_killed_import_into_a_new_brain_leaves_no_brain_or_all_of_it(
    capsys, tmp_path: Path, zygote: Zygote, templates: dict[str, Any]
) -> None:
    started = time.monotonic()
    trials = Trials(zygote, tmp_path, "import into a new brain")
    args = _import_argv("new.sqlite", templates["source"])
    work, scratch = trials.folders(None)
    done = zygote.run("cli", args(work), work, scratch, None)
    assert done.code == 0, zygote.log()
    trials.steps = done.steps
    after = state_of(work / "new.sqlite")
    assert after is not None
    for point in trials.points(done.steps, TRIALS):
        work, scratch = trials.folders(None)
        outcome = zygote.run("cli", args(work), work, scratch, point)
        state = state_of(work / "new.sqlite")
        assert state in (None, after), f"killed at step {point}: a partial brain"
        trials.figures["no brain" if state is None else "the whole brain"] += 1
        trials.figures["killed" if outcome.killed else "ran to the end"] += 1
        again = zygote.run("cli", args(work), work, scratch, None)  # the next import
        assert again.code == 0, zygote.log()
        assert state_of(work / "new.sqlite") == after
        check_indexes(work / "new.sqlite")
        assert listing(work) == ["new.sqlite"] and listing(scratch) == []
    _report(capsys, trials.say(started))


# --- exports ---------------------------------------------------------------------------------


def _export_contents(dest: Path, fmt: str) -> Any:
    """What an export holds, with its clock readings masked (None: nothing there)."""
    if not os.path.lexists(dest):
        return None
    if fmt in ("markdown", "obsidian"):
        return {path: (dest / path).read_bytes() for path in listing(dest) if path.endswith(".md")}
    if fmt == "sqlite":
        conn = apsw.Connection(str(dest), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            return rows_of(conn)
        finally:
            conn.close()
    lines = dest.read_text(encoding="utf-8").splitlines()
    documents = (
        [json.loads(line) for line in lines] if fmt == "jsonl" else [json.loads("".join(lines))]
    )
    return [masked(document) for document in documents]


@pytest.mark.slow
def test_a_killed_export_leaves_the_brain_as_it_was_and_its_file_absent_or_whole(
    capsys, tmp_path: Path, zygote: Zygote, templates: dict[str, Any]
) -> None:
    started = time.monotonic()
    trials = Trials(zygote, tmp_path, "export")
    brain = templates["base"]
    before = state_of(brain)
    per_format = -(-TRIALS // len(EXPORT_FORMATS))
    for fmt in EXPORT_FORMATS:
        name = EXPORT_DEST[fmt]

        def args(w: Path, fmt: str = fmt, name: str = name) -> dict[str, Any]:
            return {"argv": ["--brain", str(w / "brain.sqlite"), "export", name, "--format", fmt]}

        work, scratch = trials.folders(brain)
        done = zygote.run("cli", args(work), work, scratch, None)
        assert done.code == 0, zygote.log()
        whole = _export_contents(work / name, fmt)
        files = listing(work)
        trials.steps += done.steps
        trials.name = f"export {fmt}"
        for point in trials.points(done.steps, per_format):
            work, scratch = trials.folders(brain)
            outcome = zygote.run("cli", args(work), work, scratch, point)
            assert state_of(work / "brain.sqlite") == before  # an export never writes it
            held = _export_contents(work / name, fmt)
            if fmt in ("markdown", "obsidian") and held is not None:
                assert all(whole[path] == data for path, data in held.items()), point
                trials.figures["whole notes only"] += 1
            else:
                assert held in (None, whole), f"{fmt} export killed at step {point}: partial"
                trials.figures["absent" if held is None else "whole"] += 1
            trials.figures["killed" if outcome.killed else "ran to the end"] += 1
            again = zygote.run("cli", args(work), work, scratch, None)  # the next export
            if fmt == "sqlite" and held is not None:
                assert again.code == 2  # it never replaces a file; it cleans up all the same
            else:
                assert again.code == 0, zygote.log()
            assert _export_contents(work / name, fmt) == whole
            check_indexes(work / "brain.sqlite")
            assert listing(work) == files and listing(scratch) == []
    trials.name = "export (all formats)"
    assert trials.count >= TRIALS
    _report(capsys, trials.say(started))
