"""A vault imported and exported again is the same vault: the obsidian-help corpus's notes
come back at their own paths, and every wikilink that found its note in the source finds it
in the export. A memory with a title and no note is named by its title, made safe and
unique; one with neither keeps `scope/type/id.md`."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.io import ExportOptions, ImportOptions, commit, export, plan
from memgui.core.progress import run_to_end
from tests.support.paths import SHARED

OBSIDIAN_HELP = SHARED / "corpora" / "obsidian-help"
_WIKILINK = re.compile(r"(?<!!)\[\[([^\[\]\n]+?)\]\]")


def notes_of(vault: Path) -> dict[str, str]:
    """Every note below `vault` by its path (POSIX, relative), hidden folders left out."""
    found = {}
    for path in vault.rglob("*.md"):
        relative = path.relative_to(vault)
        if not any(part.startswith(".") for part in relative.parts):
            found[relative.as_posix()] = path.read_text(encoding="utf-8")
    return found


class Resolver:
    """Obsidian's rule for a `[[link]]` to a note, case-insensitively: a path from the vault's
    root (`[[folder/Note]]`), a path ending in what the link names, or a note of that name
    anywhere (the one nearest the root, then the first by path, when several have it)."""

    def __init__(self, paths: list[str]) -> None:
        self.by_path = {p[:-3].lower(): p for p in paths}
        self.by_name: dict[str, list[str]] = {}
        self.by_end: dict[str, list[str]] = {}  # every tail of a path, to its paths
        for path in sorted(paths, key=lambda p: (p.count("/"), p)):
            parts = path[:-3].lower().split("/")
            self.by_name.setdefault(parts[-1], []).append(path)
            for start in range(1, len(parts)):
                self.by_end.setdefault("/".join(parts[start:]), []).append(path)

    @staticmethod
    def target(inner: str) -> str:
        target = inner.split("|", 1)[0].removesuffix("\\").split("#", 1)[0].strip()
        return target[:-3] if target.lower().endswith(".md") else target

    def resolve(self, inner: str) -> str | None:
        target = self.target(inner).lower()
        if not target:
            return None  # a link inside the same note (`[[#Heading]]`)
        if target in self.by_path:
            return self.by_path[target]
        if "/" in target:
            ends = self.by_end.get(target)
            return ends[0] if ends else None
        names = self.by_name.get(target)
        return names[0] if names else None

    def links(self, text: str) -> dict[str, str]:
        """Each wikilink of `text` that finds a note -> that note's path."""
        out = {}
        for match in _WIKILINK.finditer(text):
            found = self.resolve(match.group(1))
            if found is not None:
                out[match.group(1)] = found
        return out


def import_and_export(brain: Brain, source: Path, dest: Path, **options) -> None:
    the_plan = run_to_end(plan(brain, source, options=ImportOptions(**options)))
    run_to_end(commit(brain, the_plan))
    result = run_to_end(export(brain, dest, "obsidian", ExportOptions()))
    assert not result.refused


@pytest.mark.skipif(not OBSIDIAN_HELP.is_dir(), reason="the shared corpora are not here")
def test_the_obsidian_help_vault_comes_back_as_the_same_vault(brain: Brain, tmp_path: Path):
    dest = tmp_path / "export"
    import_and_export(brain, OBSIDIAN_HELP, dest, format="obsidian", dedup=False)
    source, exported = notes_of(OBSIDIAN_HELP), notes_of(dest)
    assert sorted(exported) == sorted(source)  # every note, at its own path
    before, after = Resolver(sorted(source)), Resolver(sorted(exported))
    resolved = 0
    for path, text in source.items():
        links = before.links(text)
        assert after.links(exported[path]).items() >= links.items(), path
        resolved += len(links)
    assert resolved > 12_000  # the distinct note links of each note (SOURCES.md: 16,470 in all)
    # Its title is the front matter's where the note has one, else its name.
    note = exported["Release notes/v1.7.7.md"]
    assert "\ntitle: " in note and "1.7.7" in note.split("---")[1]


def test_memories_without_a_note_are_named_by_title_safe_and_unique(
    brain: Brain, tmp_path: Path
) -> None:
    ticks = itertools.count(1_700_000_000_000, 1000)
    brain.clock = lambda: next(ticks)  # one after the other: the order names are given in
    chat = {"source": "chatgpt_export", "title": "Trip ideas"}
    first = brain.add("[user]: Where to?\n[assistant]: Lisbon.", metadata=chat)
    second = brain.add("[user]: When?\n[assistant]: May.", metadata=chat)
    odd = brain.add("A question", metadata={"title": "What's new: v1.5? [beta] #2"})
    case = brain.add("Lower case", metadata={"title": "trip IDEAS"})
    untitled = brain.add("No title at all", type="semantic")
    dots = brain.add("Only dots", metadata={"title": "..."})
    escaping = brain.add("Escaping", metadata={"source_file": "../outside.md", "title": "Out"})
    dest = tmp_path / "export"
    result = run_to_end(export(brain, dest, "markdown", ExportOptions()))
    assert [(r.id, r.field) for r in result.refused] == [(escaping.id, "source_file")]
    names = {p: t for p, t in notes_of(dest).items()}
    assert set(names) == {
        "Trip ideas.md",
        "Trip ideas (2).md",
        "What's new v1.5 beta 2.md",
        "trip IDEAS (3).md",
        f"user/semantic/{untitled.id}.md",
        f"user/episodic/{dots.id}.md",
    }
    assert f"id: {first.id}" in names["Trip ideas.md"]
    assert f"id: {second.id}" in names["Trip ideas (2).md"]
    assert "\ntitle: " not in names["Trip ideas.md"]  # its name is its title
    assert 'title: "Trip ideas"' in names["Trip ideas (2).md"] or (
        "title: Trip ideas\n" in names["Trip ideas (2).md"]
    )
    assert 'title: "What\'s new: v1.5? [beta] #2"' in names["What's new v1.5 beta 2.md"]
    assert odd.id and case.id


def test_an_exported_vault_imported_again_gives_the_same_titles_and_places(
    brain: Brain, tmp_path: Path
) -> None:
    brain.add("Chat text", metadata={"title": "Planning", "source": "chatgpt_export"})
    brain.add("Chat text two", metadata={"title": "Planning", "source": "chatgpt_export"})
    brain.add("A note", metadata={"title": "Front-matter title", "source_file": "a/b/note.md"})
    brain.add("No title", type="semantic")
    first = tmp_path / "first"
    run_to_end(export(brain, first, "obsidian", ExportOptions()))
    with Brain.open(tmp_path / "again.sqlite", actor="test") as again:
        second = tmp_path / "second"
        import_and_export(again, first, second, format="obsidian")
        assert sorted(t.title or "" for t in again.list_traces()) == sorted(
            t.title or "" for t in brain.list_traces()
        )
        assert notes_of(second).keys() == notes_of(first).keys()
