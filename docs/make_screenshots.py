"""Remake the user guide's screenshots (`make screenshots`), each with `memgui screenshot`.

    python docs/make_screenshots.py [--program PATH/TO/memgui] [--only NAME ...]

Each picture is one `Shot`: the file in docs/screenshots/, the view it shows (as the user
guide names it) and the `memgui screenshot` options that draw it. They are drawn from a
fresh sample brain (`memgui sample-brain`) in a scratch folder, after a few edits through
the command line (so History has something to show), from an empty brain (the welcome
page), from small import sources written here, and from a copy of the sample brain aged and
given exact copies (so a consolidation has something to propose). A new view of the app gets
its Shot here and its picture in docs/user-guide.md; tests/test_user_guide.py checks that the
two agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
SCREENSHOTS = DOCS / "screenshots"
SIZE = (1280, 800)


@dataclass(frozen=True)
class Shot:
    file: str  # in docs/screenshots/
    view: str  # what the picture shows
    options: tuple[str, ...] = ()  # `memgui screenshot BRAIN OUT.png OPTIONS`
    brain: str = "sample"  # a brain `prepare` makes: "sample" (edited), "empty", "consolidate"
    select: str = ""  # the words of the memory to select first (its id is looked up)
    size: tuple[int, int] = SIZE


SHOTS = (
    Shot("guide-welcome.png", "the welcome page of an empty brain", brain="empty"),
    Shot("guide-main.png", "the main window", select="Deploys run on Tuesdays"),
    Shot("guide-search.png", "a search, its words highlighted", ("--search", "deploy")),
    Shot(
        "guide-history.png",
        "a memory's history",
        ("--tab", "history"),
        select="Standup moves to 09:45",
    ),
    Shot(
        "guide-links.png",
        "a memory's links",
        ("--tab", "links"),
        select="Every update is compare-and-set",
    ),
    Shot(
        "guide-neighbours.png",
        "a memory's knowledge-graph neighbours",
        ("--tab", "neighbours"),
        select="SQLite access goes through apsw",
    ),
    Shot("guide-trash.png", "the trash", ("--trash",)),
    Shot(
        "guide-shared-brain.png",
        "File ▸ Open shared brain…: where a team's brain is on PostgreSQL",
        ("--view", "open-shared", "--size", "560x330"),
        size=(560, 330),
    ),
    Shot(
        "guide-graph.png",
        "the graph window on a memory, three hops out",
        ("--view", "graph", "--depth", "3"),
        select="SQLite access goes through apsw",
    ),
    Shot(
        "guide-activity.png",
        "the Agent activity panel: what agents and the command line wrote",
        ("--activity",),
        size=(1280, 860),
    ),
    Shot("guide-import-review.png", "the review of an import", ("--import", "{notes}")),
    Shot(
        "guide-import-refused.png",
        "a record the import refuses",
        ("--import", "{notes}", "--show", "refused"),
    ),
    Shot(
        "guide-consolidate.png",
        "the Consolidate dialog: a plan by step, a merge cluster and its survivor",
        ("--consolidate",),
        brain="consolidate",
        size=(1180, 720),
    ),
)

# A Markdown folder to import: two new notes, one the sample brain holds already (same text,
# scope and scope id), one whose id is no text (refused) and one with no text (skipped).
NOTES = {
    "release-checklist.md": "---\ntags: [release]\n---\nTag the release only after the "
    "changelog names every migration.\n",
    "oncall.md": "---\ntype: procedural\ntags: [ops]\n---\nThe on-call person answers pages "
    "within fifteen minutes, also at weekends.\n",
    "dark-mode.md": "---\nscope: organization\nscopeId: acme\n---\n"
    "Dark mode is the default in the team's tools.\n",
    "ids.md": "---\nid: [1, 2]\n---\nA note whose id is a list.\n",
    "empty.md": "---\ntags: [draft]\n---\n",
}

DAY_MS = 86_400_000
# For the consolidation's brain: (the words a memory starts with, its age in days, days since
# it was last used or None, times retrieved), and (words, how many exact copies, made hours ago).
AGED = (
    ("Scratch: try the new CSV importer", 21, None, 0),  # unused for weeks: a prune
    ("The importer crashed on a ChatGPT export", 30, None, 0),
    ("Standup moved to 09:30", 12, 1, 5),  # old, episodic, often used: a compaction
    ("Bob asked for the release notes", 9, 2, 3),
)
COPIED = (("Deploys run on Tuesdays", 2), ("Alice prefers short answers", 1))


def aged_with_copies(export: dict[str, Any], now: int) -> dict[str, Any]:
    """The sample brain's AgentOS JSON with the memories of AGED aged and those of COPIED
    copied (new ids, the same text, scope and type): what a consolidation proposes to prune,
    compact and merge."""
    traces = export["traces"]

    def starting(words: str) -> dict[str, Any]:
        return next(t for t in traces if t["content"].startswith(words))

    for words, days, used, retrievals in AGED:
        trace = starting(words)
        trace["created_at"] = trace["updated_at"] = now - days * DAY_MS
        trace["last_accessed"] = None if used is None else now - used * DAY_MS
        trace["retrieval_count"] = retrievals
    for words, copies in COPIED:
        trace = starting(words)
        for n in range(1, copies + 1):
            copy = dict(trace, id=f"mt_{uuid.uuid5(uuid.NAMESPACE_URL, f'{words}/{n}')}")
            copy["created_at"] = copy["updated_at"] = now - n * DAY_MS // 6
            traces.append(copy)
    return export


class Memgui:
    def __init__(self, program: list[str], scratch: Path) -> None:
        self.program = program
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMGUI_")}
        self.env.update(
            QT_QPA_PLATFORM="offscreen",
            HOME=str(scratch / "home"),
            XDG_STATE_HOME=str(scratch / "state"),
            MEMGUI_OLLAMA_URL="http://127.0.0.1:9",  # no Ollama: the light shows it down
        )

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            [*self.program, *args], env=self.env, capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            raise SystemExit(f"memgui {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def find(self, brain: Path, words: str) -> str:
        found = json.loads(self("--brain", str(brain), "--json", "search", f'"{words}"'))
        if not found["results"]:
            raise SystemExit(f"no memory of the sample brain says {words!r}")
        return found["results"][0]["id"]


def prepare(memgui: Memgui, scratch: Path) -> dict[str, Path]:
    """The brains and sources the shots draw: the sample brain with a history, an empty
    brain, the Markdown folder to import and the brain to consolidate."""
    sample = scratch / "sample.sqlite"
    memgui("sample-brain", str(sample))
    exported = scratch / "sample.json"
    memgui("--brain", str(sample), "export", str(exported), "--format", "json")
    now = int(time.time() * 1000)
    aged = aged_with_copies(json.loads(exported.read_text(encoding="utf-8")), now)
    exported.write_text(json.dumps(aged), encoding="utf-8")
    consolidate = scratch / "consolidate.sqlite"
    memgui("--brain", str(consolidate), "import", str(exported), "--no-dedup")
    standup = memgui.find(sample, "Standup moved to 09:30")
    memgui("--brain", str(sample), "update", standup, "--content", "Standup moves to 09:45.")
    memgui("--brain", str(sample), "update", standup, "--tag", "schedule", "--tag", "team")
    empty = scratch / "empty.sqlite"
    memgui("--brain", str(empty), "info")
    notes = scratch / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    return {"sample": sample, "empty": empty, "notes": notes, "consolidate": consolidate}


def draw(memgui: Memgui, shot: Shot, made: dict[str, Path]) -> Path:
    out = SCREENSHOTS / shot.file
    brain = made[shot.brain]
    options = [o.format(**{k: str(v) for k, v in made.items()}) for o in shot.options]
    if shot.select:
        options += ["--select", memgui.find(brain, shot.select)]
    size = f"{shot.size[0]}x{shot.size[1]}"
    memgui("screenshot", str(brain), str(out), "--size", size, *options)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description="Remake the user guide's screenshots.")
    parser.add_argument("--program", help="the memgui to run (default: this Python's)")
    parser.add_argument("--only", nargs="+", metavar="FILE", help="only these shots")
    args = parser.parse_args()
    program = [args.program] if args.program else [sys.executable, "-m", "memgui"]
    shots = [s for s in SHOTS if not args.only or s.file in args.only]
    with tempfile.TemporaryDirectory(prefix="memgui-screenshots-") as scratch_name:
        scratch = Path(scratch_name)
        memgui = Memgui(program, scratch)
        made = prepare(memgui, scratch)
        for shot in shots:
            out = draw(memgui, shot, made)
            print(f"{out.relative_to(DOCS.parent)}: {shot.view}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
