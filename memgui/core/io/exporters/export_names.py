"""Where each note of a Markdown or Obsidian export goes: the vault it came from, kept.

- A memory imported from a note (`metadata.source_file`, the note's path below the folder it
  was imported from) goes back to that path: its folder and its file's name, so a vault
  imported and exported again is the same vault and its wikilinks find their notes.
- Any other memory with a title (a chat's) is named by its title, in the export folder.
- A memory with neither keeps `{scope}/{type}/{id}.md`.

Names another note took already (on a case-insensitive or normalising file system as well)
are made unique with ` (2)`, ` (3)`…; the notes imported from files claim their paths first.
A title is made a safe file name (characters no file system or Obsidian link takes become
spaces); a source path that is not safe is refused with its rule, as ids are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memgui.core.io.exporters.export_paths import (
    MAX_NAME_BYTES,
    Skip,
    fold,
    fold_folder,
    name_problem,
)
from memgui.core.model import title_of

NOTE_SUFFIXES = (".md", ".markdown")
# Reserved on some file system, or breaking an Obsidian link to the note (`# ^ [ ] |`).
_UNSAFE_IN_TITLE = re.compile(r'[/\\:"*<>?|#^\[\]\x00-\x1f\x7f-\x9f]+')
_TITLE_BYTES = MAX_NAME_BYTES - 24  # room for " (n)" and the suffix


@dataclass(frozen=True)
class NotePlace:
    folders: tuple[str, ...]
    fields: tuple[str, ...]  # the field each folder comes from, for a refusal
    name: str  # the file's name, suffix included
    title: str | None  # the memory's title, written in the front matter if not the name

    @property
    def stem(self) -> str:
        for suffix in NOTE_SUFFIXES:
            if self.name.lower().endswith(suffix):
                return self.name[: -len(suffix)]
        return self.name


def source_path(metadata: object) -> tuple[str, ...] | None:
    """The relative path a memory's note came from, as parts; None when it has none that
    can be one (no `source_file`, an absolute path as AgentOS's import keeps, no note).
    Raises Skip when the path names a file or folder no export may write."""
    raw = metadata.get("source_file") if isinstance(metadata, dict) else None
    if not isinstance(raw, str) or not raw or raw.startswith(("/", "\\")):
        return None
    if re.match(r"[A-Za-z]:", raw) or not raw.lower().endswith(NOTE_SUFFIXES):
        return None
    parts = tuple(raw.split("/"))
    for part in parts:
        problem = name_problem(part)
        if problem is not None:
            raise Skip("source_file", f"{problem}, in {raw!r}")
    return parts


def title_file_stem(title: str) -> str | None:
    """A title as a safe file name (without suffix), or None when nothing of it is left."""
    stem = " ".join(_UNSAFE_IN_TITLE.sub(" ", title).split()).strip(". ")
    while len(stem.encode("utf-8")) > _TITLE_BYTES:
        stem = stem[:-1]
    stem = stem.rstrip(". ")
    if not stem or name_problem(stem + ".md") is not None:
        return None
    return stem


def _key(folders: Iterable[str], name: str) -> str:
    return "/".join((*(fold_folder(part) for part in folders), fold(name)))


class NoteNames:
    """Gives each exported memory its place (see the module docstring)."""

    def __init__(self, claimed_sources: Iterable[tuple[str, ...]]) -> None:
        # Paths the notes imported from files take, before any title is given a name.
        self._claimed = {_key(parts[:-1], parts[-1]) for parts in claimed_sources}
        self._used: set[str] = set()

    def place(self, snap: dict[str, Any]) -> NotePlace:
        """The place of one memory (raises Skip for a source path that cannot be one)."""
        title = title_of(snap["metadata"])
        parts = source_path(snap["metadata"])
        if parts is not None:
            folders, name = parts[:-1], parts[-1]
            return NotePlace(folders, ("source_file",) * len(folders),
                             self._unique(folders, name, free_of_claims=False), title)  # fmt: skip
        stem = title_file_stem(title) if title else None
        if stem is not None:
            return NotePlace((), (), self._unique((), stem + ".md", free_of_claims=True), title)
        return NotePlace(
            (snap["scope"], snap["type"]), ("scope", "type"), snap["id"] + ".md", title
        )

    def _unique(self, folders: tuple[str, ...], name: str, free_of_claims: bool) -> str:
        stem, dot, suffix = name.rpartition(".")
        candidate, number = name, 1
        while True:
            key = _key(folders, candidate)
            taken = key in self._used or (free_of_claims and key in self._claimed)
            if not taken:
                self._used.add(key)
                return candidate
            number += 1
            candidate = f"{stem} ({number}){dot}{suffix}"
